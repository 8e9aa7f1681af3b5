"""The shape of a message: how long it is, where its sentences open and whether they ask.

Shared by hearing (is it a correction?) and preferences with its parts (does it state a
standing rule?): none reads a word's meaning here, only its place. Standard library only;
every pattern is a literal class or an anchored alternation (linear time).
"""

from __future__ import annotations

import re

SENTENCE, SENTENCE_END = 60, re.compile(r"[.!?\n。！？]")
SHORT = 200  # characters: a message this short is a reply, not a new task's spec
_WIDE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # kana, CJK, Hangul
_LINK = re.compile(r"\b\w+://\S+")  # \b: a run of letters is tried once (linear)
_SENTENCE_MARK = re.compile(r"[.!?](?=\s|\Z)|\n")


def size(words: str) -> int:
    """A message's length in Latin characters: a CJK character says about as much as three.

    A link is no prose: a short reply that pastes one ("it should still return <url>") is short.
    """
    links = sum(map(len, _LINK.findall(words))) if "://" in words else 0
    wide = 0 if words.isascii() else len(_WIDE.findall(words))  # isascii: a flag, no pass
    return len(words) - links + 2 * wide


def sentence_end(words: str, index: int) -> re.Match[str] | None:
    """The mark that ends the sentence holding `index` (the dot of ".env" ends none)."""
    return _SENTENCE_MARK.search(words, index)


def is_question_at(words: str, index: int) -> bool:
    """Whether the sentence holding `index` ends with a question mark."""
    end = sentence_end(words, index)
    return end is not None and end.group() == "?"


def opens_a_sentence(words: str, start: int) -> bool:
    """Whether a cue at `start` opens a sentence (or follows "please", "and", "you should" …)."""
    before = words[max(0, start - 30) : start]
    if start <= 30 and not before.strip(" \"'*-([“«"):
        return True  # the message's first words
    return _LEAD.search(before) is not None


# What may stand before a sentence-start cue ("Always", "Please always", "And never",
# "Thanks, always …", "好的，以后 …").
_LEAD = re.compile(
    r"(?:[.!?;:\n。！？；：]|\b(?:please|pls|and|so|but|also|just|you should|you must|make sure to|"
    r"s'il te plait|bitte|por favor|per favore|пожалуйста|prosím|tolong|ok|okay|thanks|thank you|thx|"
    r"great|perfect|好的|好|谢谢|gracias|merci|danke|grazie|obrigado|спасибо|дякую))\W*\Z"
)


# What may come before a "no" that opens the reply (not "si", "ja", "да": "si no …" is "if not")
_INTERJECTION = re.compile(r"(?:ok|okay|wait|hmm|um|uh|ah|oh|sorry|well|好的|嗯)[ ,.!，。]*")
_ASK_WORDS = 12  # the agent's last words a question mark must be among to be its question


def opens_the_reply(words: str, start: int, after: re.Pattern[str] = _INTERJECTION) -> bool:
    """Whether a cue opens the message, or follows only a brief word (`after`: "ok", "wait" …)."""
    return start == 0 or after.fullmatch(words, 0, start) is not None


def ends_asking(agent_words: str) -> bool:
    """A question mark among the agent's last dozen words."""
    mark = max(agent_words.rfind("?"), agent_words.rfind("？"))
    return mark != -1 and len(agent_words[mark + 1 :].split()) <= _ASK_WORDS


# Where a pasted program output starts ("Traceback", "TypeError:", "[Errno 98]", "Caused by:",
# a compiler's coded diagnostic, "error CS1513:", "error[E0308]:", a shell prompt opening the
# message): a failure word after it is the tool's, not the person's report.
_PASTED = re.compile(
    r"\btraceback\b|\b[a-z]+(?:error|exception):|\bcaused by:|\bat [\w.$]+\("
    r"|\[(?:errno|info|warn|warning|debug)\b|\A\$ |\berror ?\[?[a-z]{1,4}\d{2,5}\]?:"
)
# Every match holds one of these (an "at …(" frame both): most texts are left alone after a few
# substring tests, where sre would try each form at every character (a form opening with \b has no
# literal for it to skip ahead to: ~40 µs for 400 characters)
_PASTED_WORDS = ("traceback", "error", "exception", "caused by", "[", "$ ")


def pasted_at(words: str) -> int:
    """Where pasted program output starts in the message, or its length."""
    maybe = any(map(words.__contains__, _PASTED_WORDS)) or "at " in words and "(" in words
    found = _PASTED.search(words) if maybe else None
    return found.start() if found else len(words)


# A blank line: what sets a block of a message apart (a pasted log, then what the person asks)
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n")


def closing_note(text: str) -> str:
    """What a person typed after pasting program output, or "" when it is not short (SHORT).

    The message's last block past a blank line (looked for in its last SHORT * 3 characters, CJK
    counting three) with the paste before it (a traceback, then "Can you fix it? Never use print,
    use the logger."): a note of its own, read as a reply is. The last block of a long task is still
    the task, and a paste's own last lines ("WARNING: never call …") are no note.
    """
    text = text.rstrip()
    window = len(text) - SHORT * 3
    opening = max((found.end() for found in _BLOCK_BREAK.finditer(text, max(0, window))), default=0)
    note = text[opening:]
    if not opening or size(note) >= SHORT:
        return ""
    return note if pasted_at(text.lower()) < opening else ""  # its patterns read folded words


# Where a message's cues stand, and the sentence and the clause around one (preferences and its parts)
Spans = dict[str, list[tuple[str, int, int]]]  # kind -> (language, start, end), in text order


def sentence_start(words: str, at: int) -> int:
    """Where the sentence holding `at` opens, past its spaces."""
    opening = max((m.end() for m in SENTENCE_END.finditer(words, max(0, at - SENTENCE), at)), default=0)
    return len(words) - len(words[opening:].lstrip()) if opening < at else opening


def sentence_end_at(words: str, index: int) -> int:
    """Where the sentence holding `index` ends (the dot of "moment.js" ends none)."""
    mark = sentence_end(words, index)
    return mark.start() if mark else len(words)


_WIDE_STOP = re.compile("[。！？]")


def sentence_stop(words: str, index: int) -> int:
    """Where the sentence holding `index` ends, at a CJK full stop too (sentence_end_at reads none)."""
    stop = sentence_end_at(words, index)
    wide = _WIDE_STOP.search(words, index, stop)
    return wide.start() if wide else stop


# A comma or a semicolon: what breaks a clause inside a sentence
CLAUSE_BREAK = re.compile(r"[,;，；]")


def clause_before(words: str, at: int) -> str:
    """The words of the clause holding `at`, up to it (at most SENTENCE characters).

    A comma, a colon or a "but" closes the clause: "as a product manager, answer me in English",
    "我是产品经理，用中文回答我" and "the app is in Spanish but answer me in English" name the
    person or the product, not what speaks in the language.
    """
    window = words[max(0, at - SENTENCE) : at]
    ends = [*_CLAUSE_END.finditer(window)]
    return window[ends[-1].end() :] if ends else window


_CLAUSE_END = re.compile(
    r"[.!?\n。！？,;:，；：、]|\b(?:but|pero|mais|aber|ma|mas|но|але|ale|ama|tapi)\b|但是|可是|不过"
)


# A clause opened by a condition ("if the build fails", "si falla", "如果注入异常", "만약"), or,
# in Japanese, Korean and Chinese, closed by one right after its verb ("失敗した場合", "오류가 발생할
# 경우", "失败时"). Not "when", "cuando", "когда": they tell what happened as often ("when I ran it I got
# an error"); nor the "if" of "check if", "verifique se" (whether); nor a reproach of what the agent
# did not do ("if you had run the tests you'd see they fail", "si hubieras", "如果你测试过就知道"); nor
# what the person does ("if I click save it crashes", "wenn ich speichere", "如果我"), nor "even if"
_CONDITION_OPENS = re.compile(
    r"(?<!check )(?<!see )(?<!verify )(?<!verifique )(?<!verifica )(?<!veja )(?<!verifie )(?<!mira )"
    r"(?<!comprueba )(?<!prufe )(?<!schau )(?<!even )"
    r"\b(?:if|whenever|unless|in case|si|wenn|falls|se|caso|если|якщо|jesli|jezeli|pokud|kalau|jika"
    r"|apabila|neu|eger)\b(?! you had\b| you'd (?!like\b)| (?:lo |la |los )?hubieras\b| (?:voce )?tivesse\b"
    r"| (?:i|i'm|we|ich|je|j'|yo|eu|я)\b)"
    r"|(?:如果|假如|要是)(?!你[^，。,]{0,8}?过|我)|若是|一旦|もし|万一|만약|만일"
)
_CONDITION_CLOSES = re.compile(r"[^。！？,，、]{0,8}?(?:場合|とき|時に|时|時|경우|때)")


def in_a_condition(words: str, start: int, end: int) -> bool:
    """Whether the words at start..end sit in a condition, a case a spec names, not a report.

    "If the build is broken, notify Slack", "如果上传失败，显示重试按钮", "エラーが発生した場合は":
    the failure is what to handle. The clause up to the word holds the condition, or (Japanese,
    Korean, Chinese) one closes it a few characters after.
    """
    return bool(_CONDITION_OPENS.search(clause_before(words, start))) or bool(
        _CONDITION_CLOSES.match(words, end)
    )


# A message opening with a verb of new work ("implement the missing folders", "write a commit message
# that doesn't …", "añade …", "添加 …"): its opening sentence describes what to make. Not "build",
# "fix" or "check": a noun ("build fails") or a request about a failure (hearing's `repair` cues);
# nor "Update: it still fails", a heading over a report; nor "write it again", a pronoun for the
# agent's own work to redo
_NEW_WORK = re.compile(
    r"(?:(?:ok|okay|now|so|next|then|also|and|great|good|cool|alright)[ ,.!]+)*"
    r"(?:please |pls |can you |could you |let's |lets |now )?"
    r"(?:implement|add|create|write|set ?up|generate|update|design|draft|introduce|integrate"
    r"|anade|agrega|crea|implementa|escribe|ajoute|cree|implemente|ecris|fuge|erstelle|implementiere"
    r"|schreibe|adicione|crie|escreva|добавь|создай|реализуй|напиши|dodaj|stworz|napisz) "
    r"(?!(?:it|them|this|these|those|es|das|его|ее|их|это)\b)"
    r"|(?:请|帮我)?(?:添加|新增|创建|实现|写一个|生成)"
)
# A new clause with its own subject spliced on by a comma ("write the tests properly, they don't
# pass"): past the request, a report
_SPLICED_CLAUSE = re.compile(r"[,;] (?:it|it's|its|they|they're|il|ils|elle|er|sie|он|она|оно|они)\b")


def new_work_until(words: str) -> int:
    """Where the opening sentence of a request for new work ends (0: the message opens otherwise)."""
    if not _NEW_WORK.match(words):
        return 0
    stop = sentence_stop(words, 0)
    spliced = _SPLICED_CLAUSE.search(words, 0, stop)
    return spliced.start() if spliced else stop


# A failure word a request asks to find or list ("list any that are missing", "check what is wrong",
# "告诉我哪些失败", "是否有问题"), or that "whether" closes after it ("エラーがあるかどうか", "오류가
# 있는지"). Not "what you did is wrong", "which is why it broke", "what I see is an error", "what it
# prints is …" (a word between: "what I get wrong" asks), 那些 (also "those"), nor 无论是否 / 不管是否
# ("no matter whether … it crashes"): they report
_ASKED_WHICH = re.compile(
    r"\b(?:which|what|whether|any that|for any)\b"
    r"(?! you| u | is why| means| (?:i|we) (?:see|get|got) (?=\S)| it (?:shows|prints|says|does)\b)"
    r"|有没有|哪些|(?<!无论)(?<!不管)是否"
)
_WHETHER_CLOSES = re.compile(r"[^。！？,，、]{0,6}?(?:かどうか|있는지|있나)")


def asked_which(words: str, start: int, end: int) -> bool:
    """Whether a failure word is what a request asks to find, not one the person saw."""
    return bool(_ASKED_WHICH.search(clause_before(words, start))) or bool(_WHETHER_CLOSES.match(words, end))
