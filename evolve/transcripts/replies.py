"""How a reply opens: a yes, a "still", a "why", a first message's lead-in, the agent's cut-off tail.

What these say depends on the few words around them ("still, let's ship it" is no failure; "why
not, go ahead" asks nothing; "Hi! You broke the build" opens at its second sentence), so hearing
asks these questions of a message's shape before it weighs a cue. Standard library only (the
observer's path).
"""

from __future__ import annotations

import re

from evolve.transcripts.sentences import (
    CLAUSE_BREAK,
    SENTENCE,
    SENTENCE_END,
    Spans,
    is_question_at,
    opens_the_reply,
    pasted_at,
    sentence_end,
    sentence_stop,
    size,
)
from evolve.transcripts.stopped import BUT, CARRY_ON, PRAISE

# A brief acknowledgment before an objection ("ok. but …", "好的，但是 …")
ACKNOWLEDGED = re.compile(
    r"(?:ok|okay|yes|yeah|ya|yep|yup|right|sure|alright|fine|好的|好|嗯|はい|да|oui|ja|si)[ ,.!，。]*"
)

# A reply opening with praise of the agent's work or thanks ("Great!", "nice.", "完美", "отлично",
# "¡Gracias!"): it took the work, and what follows asks for more (not "nice try", not "ok": a bare
# yes may still object)
PRAISED = re.compile(
    r"¡?(?:so,? )?(?:nice(?! try)|great|perfect|excellent|awesome|amazing|good|cool|very good|"
    r"parfait|génial|genial|perfecto|excelente|perfeito|ótimo|otimo|perfekt|prima|super|"
    r"很好|太好了|不错|完美|완벽|좋아|完璧|отлично|супер|świetnie|ottimo|"
    r"thanks|thank you|danke|gracias|merci|grazie|obrigad[oa]|valeu|спасибо|дякую|dzieki|tesekkurler|"
    r"cam on|谢谢|ありがとうございます|감사합니다)[ ,.!，。！]"
)
# A "no" opening a reply: it may answer the agent's question
ANSWER_WORDS = re.compile(
    r"(?:no|nope|non|nein|nee|не|нет|ні|ne|nie|não|nao|hayır|hayir|khong|不|いいえ|아니요|아뇨)\b[ ,.!、，]*",
    re.IGNORECASE,
)
# A failure said in the negative ("can't compile", "不行", "не работает"): asked after a claim, it doubts it
NEGATED = re.compile(
    r"n'?t\b|\bnot?\b|\bpas\b|\bcannot\b|\bnao\b|\bkhong\b|\btidak\b"
    r"|不|没|無|无|не\b|ne\b|nie\b|non\b|nicht\b|안 ?|ない"
)


def past_a_cut_fence(agent_tail: str) -> str:
    """The agent's last words from the end of a code block its tail opens inside (an odd number of fences).

    The tail kept of the agent's text may start inside a code block: read as is, its closing
    fence would open a block that runs to the end and hide the agent's closing words. Its
    first fence is "```" or "~~~" (prose reads both); it closes a block only if nothing
    follows it on its line: "```python" opens one, its prose before it is the agent's. A fence
    opens or closes a block only at a line's start: one inside the code (`marker = '```'`) is code.
    """
    if "```" not in agent_tail and "~~~" not in agent_tail:  # sre would try _FENCE at every character
        return agent_tail
    fences = list(_FENCE.finditer(agent_tail))
    if not fences:
        return agent_tail
    first = fences[0]
    fence = first.group(1)
    after = agent_tail[first.end() :]
    info = after.partition("\n")[0].strip("`~ \t")
    odd = sum(found.group(1) == fence for found in fences) % 2
    return after if odd and not info else agent_tail


_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.MULTILINE)


# "Task: …", "Issues: - …; - …": what follows is a brief or a list (not the colon of a link or a
# time: "http://localhost:3000/login - you broke it", "at 10:30 you broke it")
_LEAD_IN = re.compile(r";|:(?![/\d])")


# A first sentence this brief ("Hi!", "Good morning.", "¡Hola!", "你好！") greets or names the
# agent, and so does a longer one of greetings and a name or two ("Hi there Claude, hello!", "Hey
# Claude, good morning."; not "Hi, I need a login page"): the opening is the sentence after it
# ("Hi! You broke the build yesterday")
_GREETING_WORDS, _GREETING_SIZE, _GREETED_SIZE = 2, 15, 40
_GREETS = re.compile(
    r"(?<![^\W_])(?:hi|hello|hey|howdy|greetings|good (?:morning|afternoon|evening)|bonjour|salut|hola"
    r"|buenos dias|buenas|ola|oi|bom dia|boa tarde|hallo|guten (?:morgen|tag)|moin|servus|ciao|buongiorno"
    r"|salve|привет|здравствуй(?:те)?|здравствуи(?:те)?|добр(?:ый|ыи) день|доброе утро|cze[sś][cć]"
    r"|dzie[nń] dobry|ahoj|dobr[yý] den|你好|您好|嗨|こんにちは|おはよう|안녕)(?![^\W_])"
)


def _greets(sentence: str) -> bool:
    """Whether a first sentence only greets or names the agent."""
    if len(sentence.split()) <= _GREETING_WORDS and size(sentence) <= _GREETING_SIZE:
        return True
    if size(sentence) > _GREETED_SIZE:
        return False
    lowered = sentence.lower()
    rest = _GREETS.sub(" ", lowered)
    return rest != lowered and len(rest.replace(",", " ").split()) <= _GREETING_WORDS


def opening_end(words: str) -> int:
    """Where a message's opening ends: its first sentence mark, or a colon or semicolon before it.

    Not a colon of pasted program output ("TypeError: …"): the person's lead-in comes before it.
    """
    end = sentence_end(words, 0)
    if end and _greets(words[: end.start()]):
        end = sentence_end(words, end.end())
    stop = end.start() if end else len(words)
    lead_in = _LEAD_IN.search(words, 0, min(stop, pasted_at(words)))
    return lead_in.start() if lead_in else stop


def urgent(words: str, forbid: list[tuple[str, int, int]]) -> bool:
    """A "don't" opening a brief reply whose opening sentence ends with "!" ("don't delete it!")."""
    end = sentence_end(words, 0)
    bang = end is not None and end.group() == "!" or words.rstrip().endswith(("!", "！"))
    return bang and opens_the_reply(words, forbid[0][1])


# After a "still" opening a reply: a clause mark makes it "nevertheless" ("still, let's ship it",
# "Still — good work", "всё равно, спасибо", "まだ、大丈夫です")
_CONCESSIVE = re.compile(r" ?(?:[,;:—–，、；：]|- )")


def still_so(words: str, still: tuple[str, int, int]) -> bool:
    """Whether the "still" opening a brief reply says things are still so, with nothing else said.

    Not "still here?" (it asks), "还是用 npm 吧" (rather: a suggestion), praise in its clause ("still
    looks good", not "still the old logo, thanks"), nor what `says_nothing_still` leaves out.
    ("toujours" means "always" too, but "toujours le vieux titre" is still so: the word alone
    cannot tell.)
    """
    if is_question_at(words, 0) or says_nothing_still(words, still):
        return False
    clause_end = _CLAUSE_MARK.search(words, still[2])
    clause = words[still[2] : clause_end.start() if clause_end else len(words)]
    return not PRAISE.search(clause) and not words.rstrip(" .!。！").endswith("吧")


# "super" before another word intensifies it: the praise, if any, is that word's ("super lento")
_INTENSIFIER = re.compile(r"(?:super|супер) (?=[^\W\d_])")


def says_nothing_still(words: str, still: tuple[str, int, int]) -> bool:
    """Whether a "still" opening the reply says nothing is still so, even after the agent's claim.

    "still, …" (nevertheless), praise right after it ("immer noch super", "还是很好") or a go-ahead
    in its clause ("still fine, go ahead"); not "still looks too good to be true", nor "super"
    intensifying a word of no praise ("still super slow", "immer noch super langsam").
    """
    after = words[still[2] :].lstrip()
    intensified = _INTENSIFIER.match(after)
    if _CONCESSIVE.match(words, still[2]) or PRAISED.match(after, intensified.end() if intensified else 0):
        return True
    clause_end = _CLAUSE_MARK.search(words, still[2])
    return CARRY_ON.search(words, still[2], clause_end.start() if clause_end else len(words)) is not None


# the person speaks of themselves before the "still" ("I still should be able to …", "we will still
# need …", "we're still on 3.8", "我还没建仓库")
_SELF_BEFORE = re.compile(
    r"(?:\b(?:i|we|eu|nos|je|nous|ich|wir|yo|я|мы)(?:'ll|'re|'m| will| would| can| should| do| may| are| am)?"
    r"|我们?|私は?) ?\Z"
)


# what the person cannot do ("can't log in", "登不上去", "не могу войти", "não consigo"): the work fails them
_UNABLE = re.compile(
    r"\b(?:can'?t|cannot|can not|couldn'?t|unable|nao consigo|no puedo|no consigo|kann nicht|ne peux pas"
    r"|не могу|не можем|nie moge)\b|[\u4e00-\u9fff]不[上开去到了进出动起]|不能"
)


def persists_up_front(words: str, still: tuple[str, int, int]) -> bool:
    """Whether a "still" in a reply's opening sentence says the agent's work is still so.

    Up front it reports, however long the reply ("测试速度依然非常慢，…请你解决");
    not in a question ("…？还是你有正式英文名？" offers a choice) nor said of the person themselves,
    unless of what they cannot do ("我还是登不上去", "we still cannot deploy").
    """
    start = still[1]
    end = SENTENCE_END.search(words, start)  # "？" leaves "?" with no space before the next CJK sentence
    clause_end = _CLAUSE_MARK.search(words, still[2])
    unable = _UNABLE.search(words, still[2], clause_end.start() if clause_end else len(words))
    return (
        start < SENTENCE
        and not (end and end.group() in "?？")
        and (unable is not None or not _SELF_BEFORE.search(words[max(0, start - 16) : start]))
    )


# what should be: a clause that says it is a spec, not a report ("still on the title: it should read …")
_WANTED = re.compile(
    r"\b(?:should|needs?|must|want|debe|deveria|precisa|soll|doit|faut|нужно|надо)\b|应该|要"
)


def still_so_unasked(words: str, still: tuple[str, int, int]) -> bool:
    """Whether a "still" up front says the work is still so with no claim of the agent's before it.

    Without the claim only its own sentence tells: not praise around it ("the header is fine, still …",
    "still looks fine"), not what should be in its clause ("still the footer needs a link"; a later
    clause says what was expected: "it still overlaps the nav, it should sit below"), nor what
    `still_so` leaves out.
    """
    end = SENTENCE_END.search(words, still[2])
    clause_end = CLAUSE_BREAK.search(words, still[2], end.start() if end else len(words))
    stop = clause_end or end
    return (
        still_so(words, still)
        and not _praised_before(words, still[1])
        and not _WANTED.search(words, still[2], stop.start() if stop else len(words))
    )


def _praised_before(words: str, start: int) -> bool:
    """Whether praise comes before a "still" in its sentence, with no "but" between.

    "the header is fine, still …" praises; "looks good, but … still …" and "Thanks for looking.
    … still …" report.
    """
    sentence_start = max((mark.end() for mark in SENTENCE_END.finditer(words, 0, start)), default=0)
    praise = PRAISE.search(words, sentence_start, start)
    return praise is not None and not BUT.search(words, praise.end(), start)


# a request to keep what is still so ("…is still used by the app, keep it", "поэтому оставь его",
# "所以先保留它"): not "keep looking", which carries on the work
_KEEP = re.compile(
    r"\b(?:keep|leave|preserve)\b(?! (?:\w+ing|on|at)\b)"
    r"|\b(?:manten|conserve|garde|behalte|lass (?:sie|es|ihn) drin|оставь|сохрани)"
    r"|保留|留着|残して|残しておいて|그대로 두"
)


def asks_to_keep(words: str, still: tuple[str, int, int], failures: list[tuple[str, int, int]]) -> bool:
    """Whether the sentence of a "still" asks to keep what is still so, with no failure word in it.

    "The old API is still used by the app, keep it" sets a constraint on the next work; "it still
    fails on Safari, so keep the old build" reports a failure all the same.
    """
    stop = sentence_stop(words, still[2])
    return _KEEP.search(words, still[2], stop) is not None and not any(
        still[2] <= start < stop for _, start, _ in failures
    )


# a few words after a "still" opening the reply, then a colon: a heading ("Still on the plan for today:")
_HEADING = re.compile(r"(?: [^\W\d_]+){1,5}:")


def heads_a_list(words: str, still: tuple[str, int, int], cues: list[tuple[str, int, int]]) -> bool:
    """Whether a "still" opening the reply heads a list of what is left ("Still open: …").

    Not with a failure or "same" in the heading: "Still broken: …", "Still the same: …" report.
    """
    heading = _HEADING.match(words, still[2]) if still[1] == 0 else None
    return heading is not None and not any(still[2] <= start < heading.end() for _, start, _ in cues)


# what still works, its clause ending there ("the tests still pass and …", "всё ещё работает,", "仍然通过，");
# not "still works without the token", "still do not pass"
_WORKS = re.compile(
    r" ?(?:pass|passes|passing|works|compiles|builds|проходят|проходит|работает|работают"
    r"|passam|passa|funciona|funcionam|fonctionne|marche|passent|funktioniert|通过|能用|正常)"
    r"(?= ?[,.;!。，；]| (?:and|e|и|et|und|y)\b|\Z|也)"
)


def still_works(words: str, still: tuple[str, int, int]) -> bool:
    """Whether a "still" says what still works: nothing broke."""
    return _WORKS.match(words, still[2]) is not None


def suggests(words: str, still: tuple[str, int, int]) -> bool:
    """Whether a "还是" suggests ("还是用 React 吧，…": rather …, let's): its clause closes with 吧.

    Not "…吧？", which asks whether it is still so ("还是有不光那么小的吧？").
    """
    clause_end = _CLAUSE_MARK.search(words, still[2])
    clause = words[still[2] : clause_end.start() if clause_end else len(words)]
    asked = clause_end is not None and clause_end.group() in "?？"
    return words[still[1] : still[2]] == "还是" and clause.rstrip().endswith("吧") and not asked


def offers_a_choice(words: str, still: tuple[str, int, int]) -> bool:
    """Whether a "还是" asks "or" ("用 npm 还是 pnpm？", "…吗？还是你来？"): in a question, past its start."""
    return still[1] > 0 and words[still[1] : still[2]] == "还是" and is_question_at(words, still[1])


def accepts(words: str) -> bool:
    """Whether the reply opens with a yes ("ja, bitte …", "ok, …"), not a word that starts alike ("jak")."""
    opening = ACKNOWLEDGED.match(words)
    return opening is not None and not opening.group()[-1].isalpha()


_CLAUSE_MARK = re.compile(r"[.!?,;:\n。！？，]")


_BECAUSE_TOO = frozenset({"perche"})  # Italian "perché" (as matched: no accent) is "why" and "because"


def opens_a_question(words: str, span: tuple[str, int, int]) -> bool:
    """Whether the cue opens a clause that asks more than "why not?" (a yes, not a doubt).

    One word may come first ("so why …", "bunu neden …", "你这里为什么 …"); further into a
    clause it names a reason ("can you explain why this works?"). Opening the message, it asks
    without its question mark too ("why is the old logo back"), up to its clause's end: "why
    not, go ahead", "why, thank you", "why yes, it works", "为什么不呢" say yes. Not a word that
    means "because" too ("perché serve in produzione"): that one asks with its question mark only.
    """
    if len(_CLAUSE_MARK.split(words[: span[1]])[-1].split()) > 1:
        return False
    end = sentence_end(words, span[2])
    if span[1] == 0 and words[: span[2]] not in _BECAUSE_TOO:
        clause_end = _CLAUSE_MARK.search(words, span[2])
        asked = words[span[2] : clause_end.start() if clause_end else len(words)].strip(" ,")
    else:
        asked = words[span[2] : end.start()].strip(" ,") if end is not None and end.group() == "?" else ""
    asked = asked.rstrip("呢吧啊呀")  # a closing particle asks nothing of its own ("为什么不呢")
    return bool(asked) and not NEGATED.fullmatch(asked) and not ACKNOWLEDGED.fullmatch(asked)


# Thanks (folded words): a brief reply that opens with "no" and thanks declines an offer
_THANKS = re.compile(
    r"\b(?:thanks|thank you|thx|merci|danke|gracias|grazie|obrigad[oa]|valeu|спасибо|дякую|dzieki|dziekuje"
    r"|tesekkur\w*|sag ol|cam on)\b|谢谢|多谢|ありがと|감사|고마워"
)
_DECLINING = 80  # characters: a reply this brief that thanks says no more than "no, thanks"


def declines_with_thanks(words: str, found: Spans) -> bool:
    """A "no" that only thanks declines an offer ("No, all good, thanks!", "Nie, dzięki").

    Whatever the agent said (its words may be unknown): every cue is the opening "no" itself.
    """
    opening = ANSWER_WORDS.match(words)
    return (
        opening is not None
        and size(words) < _DECLINING
        and all(start < opening.end() for spans in found.values() for _, start, _ in spans)
        and _THANKS.search(words) is not None
    )


def only_an_answer(words: str, strong: list[tuple[str, int, int]]) -> bool:
    """The only outright word is a "no" that opens the message: an answer to the agent's question."""
    [(_, start, end), *more] = strong
    return not more and start == 0 and ANSWER_WORDS.fullmatch(words[start:end] + " ") is not None
