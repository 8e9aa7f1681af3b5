"""Cues that look like a standing rule and are not one: they say what holds now, or for another.

"Always use npm for now" (the step at hand), "By default the API returns 20 items" (a thing's
default), "Next time I'll run it myself" (the person's own plan), 我希望把报表导出成 CSV (one
result wished for), "it always returns null" and "falla siempre" (what something does): a rule
cue in each, and nothing for the agent to keep doing. Preferences weighs its standing cues with
these. Standard library only (the observer's path).
"""

from __future__ import annotations

import re

from evolve.transcripts.reminders import for_the_step_at_hand
from evolve.transcripts.sentences import (
    CLAUSE_BREAK,
    SENTENCE,
    Spans,
    opens_a_sentence,
    sentence_end_at,
    sentence_start,
    sentence_stop,
)


def said_of_the_step_at_hand(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a cue's clause limits it to the step at hand ("Always use npm for now", 目前不要动).

    Or the words opening its sentence ("For now, don't ask me before running tests"); not another
    clause ("Always run the linter, this time you forgot", "This step is done; always run …").
    """
    _, at, end = span
    opening, stop = sentence_start(words, at), sentence_stop(words, end)
    clause = max((found.end() for found in CLAUSE_BREAK.finditer(words, opening, at)), default=opening)
    after = CLAUSE_BREAK.search(words, end, stop)
    fronted = for_the_step_at_hand(words, opening, clause, alone=True)
    return fronted or for_the_step_at_hand(words, clause, after.start() if after else stop)


# "in the future", "going forward", "next time" say when the agent works again only in a sentence
# that speaks to it ("next time, ask me first", "please run the linter going forward", "in the
# future you should …") or that the cue opens ("Going forward, we use pnpm."); with the person or
# the team as the actor and no "you", it is their own plan or what the product does ("in the future
# I want to add offline search", "I'll check the keys myself going forward", "when I quit, next time
# the client starts …"); "I want / I'd like / I expect <something> going forward" still asks the
# agent ("I'd prefer that we use pnpm going forward"). Opening the sentence, the cue rules ("Going
# forward, we use pnpm") unless the person's own plan follows it ("Next time I'll run it myself")
# The same cues and words in the other lexicon languages (folded: "À l'avenir" is read as "a
# l'avenir", "Künftig" as "kunftig", 今後 as 今后): "À l'avenir, je veux ajouter …" is the person's
# plan, as "À l'avenir on va …" and 以后我会自己跑测试 ("I'll run the tests myself") are; "À l'avenir,
# je veux que tu …" and "以后我想让你 …" still ask the agent
_LATER = re.compile(
    r"in the future|going forward|next time|a l'avenir|en el futuro|no futuro|in futuro"
    r"|(?:zu)?kunftig|in zukunft|以后|今后"
)
_TO_THE_AGENT = re.compile(
    r"\b(?:you|your|yours|yourself|please|pls|plz|tu|te|toi|vous|stp|svp|usted|voce|por favor"
    r"|per favore|du|dich|dir|dein|deine|bitte)\b|你|您|请"
)
_WISHED = re.compile(r"\b(?:i|we)(?:'d| would)? (?:want|like|prefer|need|expect|require|insist)\b(?! to\b)")
# an order after the team's way, in its sentence: "We squash every PR going forward, so do that",
# "I'll review PRs going forward, so leave them open", "…, make sure the commits are tidy"
_ORDERED = re.compile(r"[,;:—–] *(?:so |then )?(?:do|follow|apply|stick to|keep to|make sure|leave|mind)\b")
_ONESELF = re.compile(r"\b(?:i|we)(?:'ll|'m|'ve|'d)?(?!')\b")
_OWN_PLAN = re.compile(
    r"[ ,，]*(?:i(?:'ll| will|'m going to| am going to| want to| plan to| intend to| need to| might| may)\b"
    r"|(?:je|nous|on) (?:vais|va|veux|voudrais|compte|allons|voulons)\b(?! que\b| qu')"
    r"|(?:yo |eu |io )?(?:voy a|vamos|quiero|queremos|pienso|planeo|vou|quero|pretendo"
    r"|voglio|vogliamo|vorrei|ho intenzione di)\b(?! que\b| che\b)"
    r"|(?:will|werde|mochte|wollen|werden|plane) (?:ich|wir)\b(?!,? dass\b)"
    r"|我们?(?:想|打算|准备|计划)(?!让|请|你)|我(?:会|将)(?!让|请|你))"
)


def later_for_another(words: str, start: int, end: int) -> bool:
    """Whether a cue of later names the person's or the product's later, not the agent's work."""
    if not _LATER.fullmatch(words[start:end].strip()):
        return False
    opening, stop = sentence_start(words, start), sentence_end_at(words, end)
    if any(said.search(words, opening, stop) for said in (_TO_THE_AGENT, _WISHED, _ORDERED)):
        return False
    if opens_a_sentence(words, start):
        return _OWN_PLAN.match(words, end) is not None
    return _ONESELF.search(words, opening, stop) is not None


# "我希望" ("I wish") asks for a result of this task ("我希望能把报表导出成 CSV", "我希望设置页用 Vue
# 重写"); with a word of every time in its sentence ("以后", "每次", "总是" …) it asks how
# to work from now on ("我希望以后每次提交前都先跑测试")
def wishes_once(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a "我希望" cue wishes for one result, with no word of every time in its sentence."""
    _, start, end = span
    if words[start:end].strip() != "我希望":
        return False
    opening, stop = sentence_start(words, start), sentence_end_at(words, end)
    habitual = (cue for kind in ("standing", "standing_lead") for cue in found.get(kind, ()))
    return not any(opening <= at < stop and at != start for _, at, _ in habitual)


# "by default" before a subject and its verb tells what something does unless set otherwise ("by
# default it should scan the repo", "By default, tokens are not sent to forks"): the product's
# default, not how the agent works ("By default, answer in English", "by default use pnpm")
_AUXILIARIES = frozenset(
    "is are was were should shall will would must can could has have does".split()
    + "isn't aren't wasn't doesn't won't".split()
)
_THE_AGENT = frozenset(("you", "your", "u", "ur"))
# a thing named by its article ("By default, the API returns 20 items", "by default this flag …") or
# a subject with its verb in one word ("by default it's off"): what it does, whatever the verb
_A_THING = frozenset(
    ("the", "this", "these", "those", "its", "their", "it's", "that's", "there's", "they're")
)


# The same in the other lexicon languages (folded): an article or "se" opens the thing's sentence in
# Spanish, Portuguese, Italian and French ("Por defecto, la API devuelve …"; "se usa pnpm" is a convention);
# German puts its verb first ("Standardmäßig gibt die API …", not "Standardmäßig die Tests zuerst
# ausführen", a rule); 默认 before "is", "value", "as" or "will" (默认是关闭的, 默认值为 20; not 默认用中文).
# After the thing too: "El botón está desactivado por defecto", "Il pulsante è disattivato di default"
# (against "Usa pnpm por defecto", an order opening with its verb)
_ROMANCE_DEFAULTS = frozenset(("por defecto", "por padrao", "di default", "par defaut"))
_ROMANCE_THING = frozenset(
    "el la los las lo le les il gli o os este esta estos esse essa questo questa un una uno um uma une"
    " ce cet cette ces".split()
)
_GERMAN_THING = frozenset("der die das den dem des ein eine einen es er".split())
_CHINESE_THING = re.compile(r"(?:值|是|为|会)")


def a_things_default(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a "by default" cue goes on to tell what something does: a subject, then its verb."""
    _, start, end = span
    cue = words[start:end].strip()
    subject, *verbs = words[end : end + SENTENCE].lstrip(" ,").split(" ", 3)[:3]
    if cue == "默认":
        return _CHINESE_THING.match(words, end) is not None
    if cue in _ROMANCE_DEFAULTS:
        named_first = words[sentence_start(words, start) : start].split(" ", 1)[0]
        return any(word in _ROMANCE_THING or word.startswith("l'") for word in (subject, named_first))
    if cue == "standardmaßig":
        return subject not in _GERMAN_THING and verbs[:1] != [] and verbs[0] in _GERMAN_THING
    if cue != "by default":
        return False
    if subject in _A_THING:
        return True
    # "by default you should run the tests", "by default your answers should be short": the agent's
    return subject not in _THE_AGENT and any(word in _AUXILIARIES for word in verbs)


# A finished verb after "always" / "never" ("but never used", "so it always returns null", "Never
# seen this before", "Never had this issue") or "the same" ("Always the same error"): what something
# does or did, not how to work ("never embed", "always pass" are instructions)
_DESCRIBED = re.compile(
    r" +(?:the same|seen|had|been|got|gotten|saw|done|gone|heard|known|thought|found|understood"
    r"|[a-z]+(?:(?<![eb])ed|(?<![sui])s))\b"
)


def describes(words: str, span: tuple[str, int, int]) -> bool:
    """Whether an "always" / "never" cue goes on describing, not instructing."""
    _, start, end = span
    return words[start:end].strip() in ("always", "never") and _DESCRIBED.match(words, end) is not None


def fails_after(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a failure follows a cue in its sentence: what something always does ("falla siempre …")."""
    end = span[2]
    stop = sentence_end_at(words, end)
    return any(end <= f_start < stop for _, f_start, _ in found.get("failure", ()))
