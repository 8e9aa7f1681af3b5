"""A negated order whose verb is what the agent just reported doing: "don't rename the files".

After "I renamed the files to kebab-case", "don't rename the files" forbids what the agent did:
it was wrong to. The order opens a sentence ("I don't rename by hand" speaks of the person); its
verb is the word after the negation ("don't", "не", "不要") or, where the negation follows it
("変更しないで", "수정하지 마"), the word before; it matches a word of the agent's text by its stem
("add" ↔ "added", "stop renaming" ↔ "renamed"), a shared prefix of five letters or more
("reformat" ↔ "reformatted"), or, in CJK text, its characters. Not a word the agent said it did
not do or only offers to ("I did not rename …", "没有删除", "I could rename …"). Pure functions
on folded words (`lexicons.prose`); standard library only (the observer's path).
"""

from __future__ import annotations

import re

from evolve.transcripts.sentences import SHORT, Spans, opens_a_sentence
from evolve.transcripts.words import stopwords

ORDERS = ("dont", "dont_before")  # the cue kinds: the verb after the negation, the verb before it

# Words between the negation and its verb ("don't ever touch", "不要再改", "не надо", "ne les renomme")
_FILLER = re.compile(
    r"(?:\s|(?:please|pls|ever|even|just|again|you|more|anymore|bitte|mehr|plus|надо|нужно|больше"
    r"|le|la|les|l'|lui|leur|me|te|nous|vous|se)\b"
    r"|再|去|要|给我|帮我|随便|乱|擅自|自己)*"
)
_LATIN_VERB = re.compile(r"[^\W\d_][\w'-]*")
_CJK = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af]")
_CJK_VERB = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af]{2}")  # two ideographs (or Hangul syllables)
_CJK_BEFORE = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af]{2}\Z")
_PREFIX = 5  # letters two forms of one verb share at least ("reformat" ↔ "reformatted")
_ENDINGS = ("", "s", "es", "d", "ed", "ing")
# Verbs every request says (an order about how to talk or think, not about the work just done),
# and the short words a negation meets before its verb or instead of one ("stop for a while")
_GENERAL = frozenset(
    "be is are have has do does did get go make let know think worry forget mind hesitate want need "
    "see say tell ask try care like understand bother wait "
    "the a an for to in on of at by with and or it its this that my your all any pas".split()
)
# The agent's own negation or offer shortly before the word: it did not do it ("I did not rename",
# "没有删"), or only offers to ("I could rename them", "want me to rename")
_NOT_DONE = re.compile(
    r"(?:\b(?:not|never|no|without|won't|didn't|don't|haven't|wasn't|could|would|should|can|may|"
    r"might|shall|want me to|if you(?: want| like)?|suggest|recommend)\b|n't\b|不|没|未|않|안 )"
    r"[^.!?\n。！？]{0,40}\Z"
)
_NOT_DONE_REACH = 60  # characters before the agent's word its negation or offer is looked for in


def keep_orders(words: str, found: Spans) -> None:
    """Leave in `found` only the negations that give an order: opening a sentence of a brief reply."""
    for kind in ORDERS:
        spans = found.pop(kind, ())
        orders = [span for span in spans if span[1] < SHORT and opens_a_sentence(words, span[1])]
        if orders:
            found[kind] = orders


def verbs(words: str, found: Spans) -> list[tuple[int, re.Match[str]]]:
    """Each order's verb that can name the agent's work, and its negation's far edge (what a quote spans).

    Not a negated failure word: "не работает", "non funziona" after "it works now" report, order nothing.
    """
    after = ((span[1], _verb_after(words, span[2])) for span in found.get("dont", ()))
    before = ((span[2], _verb_before(words, span[1])) for span in found.get("dont_before", ()))
    failures = found.get("failure", ())
    return [
        (edge, verb)
        for edge, verb in (*after, *before)
        if verb
        and _telling(verb.group())
        and not any(start < verb.end() and verb.start() < end for _, start, end in failures)
    ]


def _telling(verb: str) -> bool:
    """Whether a verb can name the agent's work: CJK, or a Latin word no request says anyway."""
    if _CJK_VERB.fullmatch(verb):
        return True
    return len(verb) >= 3 and verb not in _GENERAL and verb not in stopwords()


def _verb_after(words: str, end: int) -> re.Match[str] | None:
    """The verb right after a negation ending at `end` ("don't ever *rename*", "不要*删除*")."""
    at = _FILLER.match(words, end)
    start = at.end() if at else end
    if _CJK.match(words, end - 1):  # "别Docker": a CJK negation's verb is CJK, a Latin word is a thing
        return _CJK_VERB.match(words, start)
    return _CJK_VERB.match(words, start) or _LATIN_VERB.match(words, start)


def _verb_before(words: str, start: int) -> re.Match[str] | None:
    """The verb right before a negation that follows it ("*変更*しないで", "*수정*하지 마")."""
    return _CJK_BEFORE.search(words, max(0, start - 2), start)


def done_by_agent(verb: str, agent_words: str) -> str | None:
    """The agent's word that is a form of `verb`, where its text does not deny doing it; else None."""
    if _CJK_VERB.fullmatch(verb):
        spots = [(found.start(), verb) for found in re.finditer(re.escape(verb), agent_words)]
    else:
        stem = _stem(verb)
        words = _LATIN_VERB.finditer(agent_words)
        spots = [(word.start(), word.group()) for word in words if _same_verb(stem, word.group())]
    for at, word in spots:
        if not _NOT_DONE.search(agent_words, max(0, at - _NOT_DONE_REACH), at):
            return word
    return None


def _stem(word: str) -> str:
    """An English form without its -ing / -ed / -s ("adding" → "add", "renames" → "renam")."""
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            base = word[: -len(ending)]
            return base[:-1] if len(base) > 3 and base[-1] == base[-2] else base
    return word


def _same_verb(stem: str, word: str) -> bool:
    """Whether `word` is a form of the verb `stem`: a long enough shared prefix, or the same stem."""
    if len(stem) >= _PREFIX:
        return word[:_PREFIX] == stem[:_PREFIX]
    if not word.startswith(stem[:-1] if stem.endswith("e") else stem):
        return False
    return _stem(word) == stem or word in {stem + ending for ending in _ENDINGS} or word == stem[:-1] + "ing"
