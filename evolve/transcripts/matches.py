"""What a message is read for, and what its matches say before any rule weighs them.

Which cue kinds are looked for where (a session's first message, a reply right after a stop,
a brief urgent one, the note after a long paste, the agent's words), every match by kind with
the guards hiding their own words, the language with the most matches, what the matches
alone say (a failure that is over, a "go on" that is a "still"), and what in the agent's
words offers a choice. Split from hearing.py, whose rules weigh these matches.
Standard library only (the observer's path).
"""

from __future__ import annotations

import re

from evolve.transcripts.lexicons import CUES, Lexicons, prose
from evolve.transcripts.preferences import preference as standing_preference
from evolve.transcripts.sentences import Spans, closing_note

# "which do you prefer", "ou prefere descartá-las", "¿cuál prefieres?" in the agent's words (folded);
# not the agent's own taste ("I prefer to keep helpers private", "je préfère …"), which offers nothing
PREFERS = re.compile(
    r"(?<!\bi )(?<!\bi'd )(?<!would )(?<!\bwe )(?<!\bje )\bpref(?:er|ere|eres|erisc|ier|eri)[a-z]*"
)

# An open question closing the agent's text ("Anything else?", "Mais alguma coisa?") offers no
# options: a person's "I prefer …" after it states how to work (folded words, the text's last chars)
OPEN_QUESTION = re.compile(
    r"(?:anything else|something else|any other (?:questions?|changes?)|mais alguma coisa|algo mais"
    r"|algo mas|autre chose|sonst noch (?:etwas|was)|что-(?:то|нибудь) еще|还有(?:什么|其他|别的)"
    r"|他に何か)[^.!?\n]*\?\W*\Z"
)
OPEN_QUESTION_TAIL = 80


def language_of(lexicons: Lexicons, found: Spans) -> str | None:
    """The language with the most matches in the message (the lexicons' order breaks ties)."""
    counts = dict.fromkeys(lexicons.languages, 0)
    for spans in found.values():
        for lang, *_ in spans:
            counts[lang] += 1
    best = max(counts, key=counts.__getitem__, default=None)
    return best if best is not None and counts[best] else None


def by_kind(lexicons: Lexicons, words: str, kinds: tuple[str, ...], guards: bool = True) -> Spans:
    """Every match of these kinds in `words`, by kind (one pass over the lexicons).

    A guard ("no problem", "没问题") hides its own words: a match that overlaps one is left
    out, and a correction elsewhere in the same message still counts.
    """
    found: Spans = {}
    seen = set()
    matched = list(lexicons.matches(words, kinds))
    if matched and guards:  # only a text with a match needs its guards looked for
        guarded = [(start, end) for _, _, start, end in lexicons.matches(words, ("guards",))]
    else:
        guarded = []
    for lang, kind, start, end in matched:
        if (kind, start, end) in seen:  # one word in several languages' lists
            continue
        if guarded and any(start < g_end and g_start < end for g_start, g_end in guarded):
            continue
        seen.add((kind, start, end))
        found.setdefault(kind, []).append((lang, start, end))
    for spans in found.values():
        spans.sort(
            key=lambda span: (span[1], -span[2])
        )  # the longest of those opening alike first: a stable cue
    return found


def over(found: Spans) -> bool:
    """A failure that is over ("it didn't work before, now it does"): every cue precedes "now it works"."""
    works_now = found.get("works_now")
    if not works_now or "persist" in found:
        return False
    end = works_now[-1][2]
    return all(start < end for spans in found.values() for _, start, _ in spans)


def still_fails(found: Spans) -> bool:
    """Whether every "go on" word is a "still" before a failure too ("sigue el mismo error")."""
    failure = found.get("failure")
    if not failure:
        return False
    again = {start for kind in ("again", "persist") for _, start, _ in found.get(kind, ())}
    return all(start in again and start < failure[-1][1] for _, start, _ in found["retry"])


def in_a_closing_note(lexicons: Lexicons, text: str) -> tuple[str, str] | None:
    """A standing preference in the note typed after a long pasted output, read as a reply.

    A traceback, then "Can you fix it? Never use print, use the logger.": what is read of a long
    message (its opening; its sentences weighed as a task's spec) would miss it. A rule's cue or a
    word on asking there ("No toques nada más", "Proceed autonomously. Do not ask for confirmation
    between tasks") still closes the task: how to run this one.
    """
    note = prose(closing_note(text))
    if not note:
        return None
    found = by_kind(lexicons, note, _IN_A_NOTE)
    standing = found.get("standing", ())
    found["standing"] = [span for span in standing if not _ASKING.search(note, span[1], span[2])]
    return standing_preference(note, found)


_ASKING = re.compile(r"\bask")


# What is read in the person's message: the phrases of corrections.toml and the cues of
# cues.toml; the agent's text is read for "claim" and "asks" only.
AGENT_KINDS = ("claim", "asks")
# The cues hearing.py's rules weigh with the agent's words (standing ones make preferences only)
WEIGHED = frozenset(
    "weak failure persist again pushback why challenge opener scorn contrast contrast_before observe rule "
    "scope changed exists undo halt forbid dont dont_before refuse subject".split()
)
_AFTER_STOP = ("forbid", "refuse", "subject")
# the cues read in the note after a long paste (a rule's cue there closes the task)
_IN_A_NOTE = tuple(kind for kind in CUES if kind not in (*AGENT_KINDS, "rule", "dont", "dont_before"))
BESIDE_A_LANGUAGE = ("whole",)  # looked for only in a message that names a language
MESSAGE_KINDS = (
    "phrases",
    "weak",
    *(kind for kind in CUES if kind not in (*AGENT_KINDS, *_AFTER_STOP, *BESIDE_A_LANGUAGE)),
)
AFTER_ERROR_KINDS = (
    *MESSAGE_KINDS,
    "refuse",
    "subject",
)  # a reply right after an interruption or API error
AFTER_STOP_KINDS = (*AFTER_ERROR_KINDS, "forbid")  # a brief one
# a session's first words (and the language to talk in, said in its opening sentence)
FIRST_KINDS = ("phrases", "standing", "standing_lead", "rule", "speak", "in_language")
