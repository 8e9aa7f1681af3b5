"""Hearing a standing preference: the person says how things are done from now on.

"Always …", "from now on …", "we use X here", "answer in German": the cues of cues.toml
(`standing`, `standing_lead`, `rule`, `speak` with `in_language`), weighed by where they
stand in the message. Its parts: reminders (a rule said again, a reminder, a thing forgotten),
lookalikes (cues that say what holds now or for another: the step at hand, a thing's default,
the person's own plan, a one-off wish, what something does) and answer_language (which language
to talk in). Standard library only (the observer's path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evolve.transcripts.answer_language import answer_in_a_language
from evolve.transcripts.lookalikes import (
    a_things_default,
    describes,
    fails_after,
    later_for_another,
    said_of_the_step_at_hand,
    wishes_once,
)
from evolve.transcripts.reminders import (
    SAID_AGAIN,
    a_reminder,
    forgot_by_another,
    of_a_thing,
    reminds,
    tells_a_failure,
)
from evolve.transcripts.sentences import (
    CLAUSE_BREAK,
    SENTENCE,
    SENTENCE_END,
    SHORT,
    Spans,
    is_question_at,
    opens_a_sentence,
    sentence_end_at,
    sentence_start,
    sentence_stop,
    size,
)


def preference(
    words: str,
    found: Spans,
    first: bool = False,
    offered: Callable[[], bool] = lambda: False,
    agent_words: Callable[[], str] = lambda: "",
) -> tuple[str, str] | None:
    """(language, cue) when the message states how things should be done from now on.

    In a session's first message, a language to speak in counts in its opening sentence only
    ("Talk to me in Portuguese, …" sets the session; ".md files all in Japanese" deep in a
    long first task is about its documents). `offered`: whether the agent's text before offered
    options ("I prefer the second one" then picks one); `agent_words`: the agent's text before,
    folded (read only where a language stands alone).
    """
    if found.keys().isdisjoint(_STATED_BY):  # most messages: no cue a preference is stated by
        return None
    spans = [
        span
        for span in found.get("standing", ())
        if not _only_reminds(words, span, found)
        and not of_a_thing(words, span)
        and not forgot_by_another(words, span)
        and not tells_a_failure(words, span, found)
    ]
    rules = found.get("rule", []) if size(words) < SHORT else []  # a rule of a long new request is its spec
    stops = [span for span in rules if _of_the_moment(words, span) and not _scoped(words, span)]
    rules = [span for span in rules if not said_of_the_step_at_hand(words, span)]
    spans += [span for span in rules if span not in stops]

    leads = found.get("standing_lead", ())
    long_task = bool(leads) and size(words) >= LONG  # a long task (LONG, below)
    spans += [
        span
        for span in leads
        if (
            opens_a_sentence(words, span[1])
            or _after_ne(words, span)
            or _after_an_order(words, span, found)
            or _after_a_scope(words, span, found)
            or _instead_of_a_stop(words, span, stops, found.get("failure", ()))
        )
        and not describes(words, span)
        and not _only_reminds(words, span, found)
        and not said_of_the_step_at_hand(words, span)
        and not _means_still(words, span, found)
        and not wishes_once(words, span, found)
        and not _settles_for_this_task(words, span, found)
        and not (span[1] == 0 and _picks(words, found, offered))
        and not (long_task and not _opening(words, span) and not _said_as_a_rule(words, span, leads))
    ]
    spans = [span for span in spans if not _configures(words, span) and not a_things_default(words, span)]
    languages = answer_in_a_language(words, found, agent_words)
    spans += [span for span in languages if not first or _opening(words, span)]
    for lang, start, end in sorted(spans, key=lambda span: span[1]):
        if later_for_another(words, start, end):
            continue
        if not is_question_at(words, end) or SAID_AGAIN.search(words, start, end):
            return lang, f"states a standing preference: “{words[start:end].strip()}”"
    return None


# The cues whose spans a preference is one of (a "speak" or "whole" counts beside a language only)
_STATED_BY = frozenset(("standing", "rule", "standing_lead", "in_language"))


def _only_reminds(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a "remember" cue only reminds, with no other standing cue after it in its sentence.

    "Remember we currently deploy through the CI only, never by hand" still states its rule.
    """
    if not reminds(words, span):
        return False
    _, _, end = span
    stop = sentence_stop(words, end)
    cues = (cue for kind in ("standing", "standing_lead") for cue in found.get(kind, ()))
    return not any(end <= at < stop for _, at, _ in cues)


# A message this long (in Latin characters, a CJK one counting three) is a task's spec: a sentence
# past its first that opens with "Always …", "Never …", "Remember …", 记住 or 以后 is a line of that
# spec ("sub-step 3: … never mutate profiles on toggle", a pasted prompt's "NEVER claim done"), as a
# rule cue is past SHORT; "from now on", "each time you", "as a rule" still rule anywhere
LONG = 400


def _said_as_a_rule(words: str, span: tuple[str, int, int], leads: Sequence[tuple[str, int, int]]) -> bool:
    """Whether a cue's sentence says a rule, however deep in a long task: its scope, or said both ways.

    "…, build the login page. Always use pnpm in this repo." names the repo, "Oh and always use pnpm,
    never npm", "Remember: we never push to main" stack a second cue: they hold beyond the task, as
    "from now on" does; "never mutate profiles on toggle" is a line of the task's spec.
    """
    _, at, end = span
    opening, stop = sentence_start(words, at), sentence_stop(words, end)
    others = [
        words[other:other_end] for _, other, other_end in leads if opening <= other < stop and other != at
    ]
    if a_reminder(words[at:end]):  # "Remember the API returns 401, never 403" reminds of a fact
        others = [cue for cue in others if _A_HOUSE.match(cue)]
    return bool(others) or _STANDING_SCOPE.search(words, opening, stop) is not None


# The house's way said after "remember": "Remember: we never push to main", 记住，我们一律用 pnpm
_A_HOUSE = re.compile(r"we |nosotros|nous|wir |noi |nos |我们|私たち|我々")


# The repo or the project (_STANDING_SCOPE, below, holds it too), or the house's way, opening a
# sentence before its "always" / "never": "In this repo, always use pnpm", "In this codebase we never
# use default exports", "In general, always ask before deleting", 在这个项目里永远用 pnpm, このリポジトリ
# では常に … (a place in the product is no scope: "On mobile, never show the sidebar" is its spec)
_REPO = (
    r"\b(?:(?:in|for|across) (?:this|our|the whole) (?:project|repo|repository|codebase|monorepo)"
    r"|en (?:este|nuestro) (?:proyecto|repo|repositorio)|(?:neste|no nosso) (?:projeto|repo|repositorio)"
    r"|in (?:questo|nostro) (?:progetto|repo)|in (?:diesem|unserem) (?:projekt|repo|repository)"
    r"|dans (?:ce|notre) (?:projet|repo|depot))\b"
    r"|(?:在)?(?:这个|本|我们的?)(?:项目|仓库|代码库)(?:里面|里|中)?"
    r"|(?:この|本|うちの)(?:リポジトリ|リポ|プロジェクト|コードベース)(?:では|で|は)?"
)
_SCOPE_LEAD = re.compile(
    r"(?:" + _REPO + r"|\b(?:in general|generally|as a rule of thumb|when in doubt))[ ,:，：]*\Z"
)
_SCOPE_SPAN = 32  # characters: the longest lead above and its comma


def _after_a_scope(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a cue follows a scope opening its sentence ("In this repo, always …"), and no failure."""
    lead = _SCOPE_LEAD.search(words, max(0, span[1] - _SCOPE_SPAN), span[1])
    opened = lead is not None and opens_a_sentence(words, lead.start())
    return opened and not fails_after(words, span, found)


# "I prefer …", "prefiro …" opening the answer to the agent's question: it picks one of the options
# offered, for this task ("I prefer to drop them", "prefiro a segunda")
_CHOICE = re.compile(
    r"(?:i|we|je|on) (?:prefer|prefere)\b|(?:i'd|i would) rather\b|prefiro|prefiero|preferisco|preferimos"
    r"|preferiamo|prefere|preferuj"
)


def _picks(words: str, found: Spans, offered: Callable[[], bool]) -> bool:
    """Whether "I prefer …" opening the message picks one of the options the agent offered.

    An "always" / "never" in its sentence makes it a rule for later, whatever was asked ("I prefer
    you always ask before installing", "prefiro que você sempre escreva os testes primeiro").
    """
    if not _CHOICE.match(words):
        return False
    stop = sentence_end_at(words, 0)
    for span in found.get("standing_lead", ()):
        if 0 < span[1] < stop and not describes(words, span) and not _means_still(words, span, found):
            return False
    return offered()


# "I'd rather just add a small badge", "I prefer simpler approach: just enlarge the chunk size to
# 100": "just" in the clause of a choice names the least to do for this task, chosen over what was
# proposed; after a comma it qualifies a way of working ("I prefer small commits, just one change
# each"), and an "always" / "never", the repo or "in general" in the sentence make it a rule ("I'd
# rather you always just ask", _HABITUAL below)
_JUST = re.compile(r"\bjust\b")


def _settles_for_this_task(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether "I prefer" / "I'd rather" chooses "just" one thing to do now, with no word of every time."""
    _, start, end = span
    if not _CHOICE.fullmatch(words[start:end].strip()):
        return False
    stop = sentence_end_at(words, end)
    clause = CLAUSE_BREAK.search(words, end, stop)
    if _JUST.search(words, end, clause.start() if clause else stop) is None:
        return False
    leads = found.get("standing_lead", ())
    every_time = any(words_of.search(words, end, stop) for words_of in (_STANDING_SCOPE, _HABITUAL))
    return not every_time and not any(start <= at < stop and at != start for _, at, _ in leads)


# Words of every time or everywhere in a choice's sentence: "I'd rather we just use pnpm in this
# repo", "I'd rather just keep PRs small in general", "I prefer to just use pnpm everywhere"
_HABITUAL = re.compile(r"\b(?:in general|generally|everywhere|every time|each time|as a rule)\b")


# "configure it to always use this key", "set up so we never have to log in", "настроить …
# без моего разрешения", "今後は…設定ファイルを書き換えて": a setting is asked for and will hold the
# rule; the agent has nothing to keep in mind (the words are folded: "設定" is read as "设定", "й" as "и").
# A settings file or page named is no setting asked for unless it is changed ("いつも設定ファイルを
# 確認してから始めて" is how to work, as "Always keep the config in sync" is)
_CONFIGURE = re.compile(
    r"\b(?:configure[ds]?|configuring|set (?:it |this |that |things |everything )?up so|gitignore"
    r"|configur(?:ar|er|ez|a|e)|konfigurier[a-z]*|einstellen|настро(?:и|ите|ить|ил|ила|или))\b"
    r"|(?:设定|配置)(?!ファイル|文件|档|画面|页|项|值|値)|全局"
    r"|(?:设定|配置)(?:ファイル|文件|档)[^。!?]{0,40}?(?:書き换|変更|变更|編集|编辑|修改|更新|改成|写入|書い)"
    r"|(?:修改|更新|编辑|改)(?:一下)?(?:设定|配置)"
)


# Between a standing cue and the configuring verb it rules: "always configure", "from now on always
# configure", "never, configure" (at most one word: "from now on, configure git so …" is too far off)
_BEFORE_THE_VERB = re.compile(r"[ ,]*(?:[^\W\d_]+ )?")


def _configures(words: str, span: tuple[str, int, int]) -> bool:
    """Whether the sentence holding a standing cue asks to configure something that will keep it.

    A cue just before the configuring verb ("always configure new services with TLS", "nunca
    configures nada globalmente") makes configuring the habit asked for, not a setting that keeps
    a rule.
    """
    _, at, end = span
    opening = sentence_start(words, at)
    framed = _after_ne(words, span)  # "Ne configure jamais …": the verb inside "ne … jamais" is the habit
    return any(
        not (framed and verb.end() <= at)
        and (verb.start() < end or _BEFORE_THE_VERB.fullmatch(words, end, verb.start()) is None)
        for verb in _CONFIGURE.finditer(words, opening, sentence_end_at(words, at))
    )


# French puts "jamais" after its verb: "Ne configure jamais le proxy", "N'utilise jamais var" and
# "Ne jamais utiliser var" open a sentence with a rule as "Never …" does; not a verb of working
# whose subject was dropped ("(ça) ne marche jamais sur Firefox": it reports, it asks no habit)
_NE = re.compile(r"(?:ne |n')(?!(?:marche|fonctionne) )(?:[^\W\d_]+ )?")


def _after_ne(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a standing cue comes right after the "ne" (and one verb) opening its sentence."""
    _, at, _ = span
    return words[at:].startswith("jamais") and _NE.fullmatch(words, sentence_start(words, at), at) is not None


# Where "always" follows the verb it rules: "Usa siempre pnpm", "Utilise toujours pnpm", "Verwende
# immer pnpm", "Usa sempre pnpm", "Używaj zawsze pnpm": the order opens its sentence as "Always use
# pnpm" does. A verb of working said to the agent, in its imperative (folded: "Pregúntame" is read as
# "preguntame", "Używaj" as "uzywaj", "й" as "и"); not a description ("Funciona siempre así", "Falla
# siempre en el login": a failure after it)
_ORDER = re.compile(
    r"\b(?:usa|utiliza|ejecuta|corre|escribe|preguntame|pregunta|haz|pon|prueba|responde|contesta|revisa"
    r"|comprueba|anade|agrega|crea|sigue|habla"
    r"|use|utilize|execute|executa|rode|roda|escreva|pergunte|faca|faz|coloque|teste|testa|responda"
    r"|verifique|crie|siga|fale"
    r"|utilizza|esegui|scrivi|chiedimi|chiedi|fai|metti|prova|rispondi|controlla|verifica|aggiungi|segui|parla"
    r"|utilise|lance|ecris|demande-moi|demande|fais|mets|reponds|verifie|ajoute|cree|suis|parle"
    r"|benutze|benutz|verwende|nutze|nutz|schreibe|schreib|frage|frag|mache|mach|fuhre|antworte|prufe"
    r"|erstelle|folge|sprich"
    r"|uzywaj|pisz|pytaj|uruchamiaj|odpowiadaj|sprawdzaj|используи|пиши|спрашиваи|запускаи|отвечаи"
    r"|проверяи|використовуи|питаи|відповідаи|перевіряи) \Z"
)
_ALWAYS_AFTER_A_VERB = frozenset("siempre sempre toujours immer zawsze всегда завжди".split())
_ONGOING = re.compile(r" (?:weiter|adelante|avanti)\b")  # "Mach immer weiter": keep going, no rule


def _after_an_order(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether "always" follows the imperative verb opening its sentence ("Usa siempre …")."""
    _, at, end = span
    if words[at:end] not in _ALWAYS_AFTER_A_VERB:
        return False
    verb = _ORDER.search(words, max(0, at - _VERB), at)
    ordered = verb is not None and opens_a_sentence(words, verb.start())
    return ordered and not _ONGOING.match(words, end) and not fails_after(words, span, found)


_VERB = 16  # characters: the longest verb above and its space


# "toujours" is "always" and "still", "immer" opens "immer noch" ("still"): inside a "still", a
# standing cue says still when the sentence ends there, a negation, "the same" or a noun's article
# follows (what is still there, not what to do: "toujours le vieux titre" against "toujours utiliser
# const"), or the sentence reports a failure ("toujours pas", "toujours la même erreur", "toujours ...")
_STILL_AFTER = re.compile(
    r" *(?:[.…!?,;:]|\Z)| +(?:pas|rien|aucune?|plus|pareil|pareille"
    r"|le|la|les|l|un|une|des|du|ce|cet|cette|ces)\b"
)


def says_always(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a "still" (persist) cue opening a sentence is a standing "always" cue here."""
    leads = found.get("standing_lead", ())
    return span in leads and opens_a_sentence(words, span[1]) and not _means_still(words, span, found)


def _means_still(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a cue that is also a "still" (persist) cue reads as "still" here, not "always"."""
    _, start, end = span
    holding = [p_end for _, p_start, p_end in found.get("persist", ()) if p_start <= start and end <= p_end]
    if not holding:
        return False
    stop = sentence_end_at(words, end)
    fails = any(end <= f_start < stop for _, f_start, _ in found.get("failure", ()))
    still_after = _STILL_AFTER.match(words, end) is not None and not _FIRST.search(words, end, stop)
    return max(holding) > end or fails or still_after


# An order of work says how to work, not what is still there: "toujours les tests d'abord" (always
# tests first), "immer die Doku zuerst", against "toujours le vieux titre"
_FIRST = re.compile(r"\b(?:d'abord|en premier|avant tout|en priorite|zuerst|als erstes)\b")


# "stop using X", "deja de …", "хватит …": an order to stop what the agent is doing now (a
# correction of the moment), not how to work from now on ("never use X", "without asking me" and
# "stop asking me" are)
_STOP_ORDER = re.compile(
    r"(?:stop|hor auf|deja de|arrete de|pare de|para de|prestan|перестань|хватит|berhenti|smetti(?:la)? di"
    r"|досить|przestan),? "
    r"(?!(?:zu |se |me |mi )?(?:ask|frag|pregunt|demand|pergunt|спраш|питат|pyta|chied|bertanya|pt))"
)


# "내 시간 낭비하지 마" ("don't waste my time"), "추측하지 마" ("stop guessing"), "거짓말하지 마": what
# the agent does wrong now, like English "stop guessing"; its "하지 마" ("don't") is no rule for later
_WASTING = re.compile(r"(?:낭비(?:하게 )?|추측|짐작|가정|거짓말|지어내|무시|과장)\Z")


def _of_the_moment(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a rule cue orders the agent to stop what it does now, or to stop wasting time."""
    start = span[1]
    return (
        _STOP_ORDER.match(words, start) is not None
        or _WASTING.search(words, max(0, start - 8), start) is not None
    )


# Beyond the moment, in the stop order's sentence: "stop using tabs in this project", "stop adding
# emojis, ever" (the other lexicon languages' "en este proyecto", "nie wieder" are standing cues)
# "stop using em dashes in anything you write" (what the agent writes, from now on); in a long
# task's sentence, what makes "Always use pnpm for this repo" a rule and not a line of its spec
_STANDING_SCOPE = re.compile(
    _REPO + r"|\b(?:ever|(?:any|every)thing you (?:write|say|send|produce|generate))\b"
)


def _scoped(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a stop order's sentence says it holds beyond this task."""
    end = span[2]
    return _STANDING_SCOPE.search(words, end, sentence_end_at(words, end)) is not None


def _instead_of_a_stop(
    words: str,
    span: tuple[str, int, int],
    stops: Sequence[tuple[str, int, int]],
    failures: Sequence[tuple[str, int, int]],
) -> bool:
    """Whether an "always" / "never" cue follows a stop order in its sentence: what to do instead.

    "stop using var, always use const", "deja de usar var, usa siempre const": the stop order
    sets a rule for later once the same sentence says how to work from now on. Not what the
    stopped thing does: "…, it's always wrong", "…, siempre falla" (a failure right after).
    """
    _, start, end = span
    after = [
        stop_end
        for _, _, stop_end in stops
        if stop_end <= start and sentence_end_at(words, stop_end) >= start
    ]
    if not after:
        return False
    clause = CLAUSE_BREAK.split(words[max(after) : start])[-1].strip()
    fails = any(0 <= f_start - end <= 1 for _, f_start, _ in failures)
    return not _SUBJECT.match(clause) and not fails


# A subject opening the clause before "always": it tells what something does, not how to work
_SUBJECT = re.compile(
    r"(?:it|it's|that|that's|this|they|which|he|she|eso|esto|c'est|il|elle|das|es|er|sie|это|он|она|оно)\b"
)


def _opening(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a cue stands in the message's opening sentence."""
    end = SENTENCE_END.search(words)
    return span[1] < SENTENCE and (end is None or span[2] <= end.start())
