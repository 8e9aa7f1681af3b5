"""The lexicons hearing reads: corrections.toml and cues.toml, per language, and how a text is read.

Entries are literals matched as whole words (CJK: substrings) through an index keyed by
their words, or `re:` patterns gated by their literals (`gated.GatedPattern`). A text is
read as `prose`: lowered, without accents, full-width forms as ASCII, Traditional Chinese
folded to Simplified, code, quotes and pasted lines left out. Standard library only, data
files read on first use.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Iterable, Iterator, Mapping

from evolve.transcripts.gated import GatedPattern, by_prefix

_DATA = os.path.dirname(__file__) + "/data"  # noqa: PTH120 - pathlib costs ms of import

# Long requests (mostly pasted material) are read by their start (a paste with a question on
# top); anything else by its first READ_CHARS, where people say what went wrong (and what
# reading costs stays flat, however long the message).
LONG_REQUEST_CHARS, LONG_REQUEST_WINDOW, READ_CHARS = 1500, 300, 600
# Matches of one `re:` entry counted in a request: enough for any vote or guard, and what
# keeps a person's pattern linear (each further match may cost one more pass of the text).
MAX_REGEX_MATCHES = 32


_KEYS = ("phrases", "weak", "guards")  # corrections.toml; the user's entries go to these
_PHRASES = ("phrases", "weak")
# cues.toml: what hearing.py weighs together with the agent's text before the message
CUES = (
    "failure", "persist", "again", "pushback", "why", "challenge", "opener", "scorn", "contrast",
    "contrast_before", "observe", "rule", "scope", "standing", "standing_lead", "speak", "in_language",
    "whole", "retry", "yours", "changed", "exists", "repair", "undo", "halt", "forbid", "dont", "dont_before",
    "refuse", "subject",
    "works_now", "claim", "asks",
)  # fmt: skip
_NOISE = (
    r"(```|~~~).*?(?:\1|\Z)"  # fenced code
    r"|`[^`\n]*`"  # inline code
    r"|^[ \t]*>[^\n]*"  # quoted lines (each a line: DOTALL's "." would run to the text's end)
    # indented code, pasted logs; not a nested Markdown bullet, the person's own words ("- Style:\n
    # - always use pnpm"); an indented numbered list stays out (a pasted prompt's "1. Never …")
    r"|^(?: {4}|\t)(?![ \t]*[-*+•] +[^\W\d_])[^\n]*"
    # quoted text; a quote ends at the next opening mark too: a run of "“" is not read 200 times
    # (German and Polish open low: „…“, „…”)
    r'|"[^"\n]{0,200}"|“[^“”\n]{0,200}”|«[^«»\n]{0,200}»|„[^„“”\n]{0,200}[“”]'
)
# Every noise span starts with one of these characters, or spaces at a line start: a text
# without them is left alone, and the lookahead spares sre each branch at other positions.
_NOISE_CHARS = '`~>"“«„\t'
_NOISE_RE = re.compile('(?=[`~>"“«„]|^[ \t])(?:' + _NOISE + ")", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]{1,80})`")
_TOKEN = r"[\w\u0900-\u097f']+"  # a word, Devanagari vowel signs and apostrophes included
_TOKEN_RE = re.compile(_TOKEN)
# ASCII text: every character that is not a token character becomes a space (a full
# table: a missing key costs translate a KeyError), so
# set(text.translate(_ASCII_GAPS).split()) == set(_TOKEN_RE.findall(text)), in C.
_ASCII_GAPS = {c: chr(c) if chr(c).isalnum() or chr(c) in "_'" else " " for c in range(128)}
_CJK = "[\u2e80-\ua4cf\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0010ffff]"  # no spaces


@functools.cache
def _cjk() -> re.Pattern[str]:
    """`_CJK` compiled once, on first need: a class up to U+10FFFF costs ms to compile (not at import)."""
    return re.compile(_CJK)


def _strip_marks(text: str) -> str:
    """Compatibility forms without Latin accents or the Devanagari nukta."""
    if text.isascii():  # already in both normal forms, no marks: most requests
        return text
    import unicodedata  # lazily: only requests need it

    text = _MARKS.sub("", unicodedata.normalize("NFKD", text))
    return unicodedata.normalize("NFC", text)


_MARKS = re.compile("[\u0300-\u036f\u093c]")  # compiled once: re.sub looks it up in re's cache each call


# A letter with a stroke (and Turkish dotless ı) keeps it through NFKD, and people who type
# Polish, Vietnamese or Turkish without their marks write "blad" for "błąd", "yanlis" for
# "yanlış": an entry is indexed both ways (no cost a message).
_UNSTROKED = str.maketrans("łđøı", "ldoi")


def _normalize(text: str) -> str:
    """Lower case, no Latin accents, full-width forms as ASCII, Traditional Chinese as Simplified."""
    if text.isascii():
        return text.lower()
    text = _strip_marks(text).lower().replace("’", "'").replace("‘", "'")
    return text.translate(_zh_fold()) if _HAN.search(text) else text


_HAN = re.compile("[\u4e00-\u9fff]")


@functools.cache
def _zh_fold() -> dict[int, int]:
    """Traditional -> Simplified for the characters the lexicons use (data/zh_fold.txt)."""
    with open(f"{_DATA}/zh_fold.txt", encoding="utf-8") as handle:
        pairs = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    return {ord(pair[0]): ord(pair[1]) for pair in pairs if len(pair) == 2}


def _tokens(text: str) -> list[str]:
    """The words of a text as the index keys them (see `_ASCII_GAPS`)."""
    return text.translate(_ASCII_GAPS).split() if text.isascii() else _TOKEN_RE.findall(text)


def _is_word(char: str) -> bool:  # Devanagari vowel signs too, unlike \w
    return char.isalnum() or char == "_" or "\u0900" <= char <= "\u097f"


def _joins(char: str) -> bool:
    """Whether a character beside a Latin word makes it part of a longer word.

    CJK text holds no spaces, so a CJK character is an edge ("显示Not Found" holds "not found");
    a hyphen joins ("fail-fast", "error-free" name no failure).
    """
    if char.isascii():
        return char.isalnum() or char in "_-"
    return _is_word(char) and not _cjk().match(char)


class Lexicons:
    """All languages' entries; literals match whole words (CJK: substrings), by index.

    A `re:` entry is a regex. The guards of all languages apply to every language.
    """

    def __init__(self, tables: Mapping[str, Mapping[str, list[tuple[str, bool]]]]) -> None:
        # longest word (or first character) -> (language, kind, literal, word edge at start, at end)
        self._index: dict[str, list[tuple[str, str, str, bool, bool]]] = {}
        self._by_kinds: dict[tuple[str, ...], tuple] = {}  # see _for_kinds
        self._words: tuple[str | None, set[str]] = (None, set())  # the last text's words
        self._regexes: list[tuple[str, str, GatedPattern]] = []
        self.languages = list(tables)
        for lang, table in tables.items():
            for kind, entries in table.items():
                for entry, user in entries:
                    self._add(lang, kind, entry, user)

    def _add(self, lang: str, kind: str, entry: str, user: bool) -> None:
        """`user`: a person's entry, its marks already stripped where they can be (`_tables`)."""
        if entry.startswith("re:"):
            source = entry[3:] if user else _strip_marks(entry[3:])
            self._regexes.append((lang, kind, GatedPattern(source, user=user)))
            return
        phrase = " ".join(_normalize(entry).split())
        cjk = _cjk()
        literals = [phrase]
        if not phrase.isascii() and (plain := phrase.translate(_UNSTROKED)) != phrase:
            literals.append(plain)
        if "'" in phrase:
            literals += [form.replace("'", "") for form in literals]
        for literal in literals:
            if not literal:
                continue
            first, last = literal[0], literal[-1]
            start = _is_word(first) and not cjk.match(first)
            glued = _is_word(last) and cjk.match(last) is not None
            end = _is_word(last) and not glued
            tokens = _tokens(literal) if start else []
            if tokens and glued:
                tokens.pop()  # glued to CJK text: the text may hold it inside a longer word
            # The longest whole word keys it: "i said" by "said", not by every text's "i"
            key = max(tokens, key=len) if tokens else literal[0]
            self._index.setdefault(key, []).append((lang, kind, literal, start, end))

    def matches(self, text: str, kinds: tuple[str, ...]) -> Iterator[tuple[str, str, int, int]]:
        """(language, kind, start, end) of every match of entries of these kinds (any order)."""
        found = self._by_kinds.get(kinds)
        if found is None:
            found = self._by_kinds[kinds] = self._for_kinds(kinds)
        index, ascii_chars, chars, regexes, gates, anchorless = found
        # The entries keyed by a word of the text or by one of its characters (as set(text)
        # would find them); set operations and `in` run in C, a miss costs no find(). The
        # words are kept for the next pass over the same text (phrases, then guards).
        words = self._words  # one read: another thread may replace it
        if words[0] is not text:
            words = self._words = (text, set(_tokens(text)))
        keys = index.keys() & words[1]
        is_ascii = text.isascii()
        if not is_ascii:
            keys |= chars.intersection(text)  # in C, however many CJK keys there are
        elif ascii_chars:
            keys.update(char for char in ascii_chars if char in text)
        contains = text.__contains__
        for key in keys:
            by_literal = index[key]
            # in C: most keys ("i", "you") match nothing, the others a literal or two of many
            for literal in filter(contains, by_literal):
                size = len(literal)
                starts = [start := text.find(literal)]
                while (start := text.find(literal, start + 1)) != -1:
                    starts.append(start)
                for lang, kind, at_start, at_end in by_literal[literal]:
                    for start in starts:
                        end = start + size
                        if not (at_start and start and _joins(text[start - 1])) and not (
                            at_end and end < len(text) and _joins(text[end])
                        ):
                            yield lang, kind, start, end
        # The regexes one of whose most selective literals the text holds (each literal
        # tested once, in C; an ASCII text holds no other literal), and those without literals.
        prefixes, groups = gates[is_ascii]
        picked = {
            i
            for prefix in filter(contains, prefixes)  # in C: a text holds few of them
            for anchor, found in groups[prefix]
            if anchor in text
            for i in found
        }
        for i in sorted(picked.union(anchorless)) if picked else anchorless:
            lang, kind, pattern = regexes[i]
            if not pattern.possible(text):
                continue
            for start, end in itertools.islice(pattern.regex.finditer(text), MAX_REGEX_MATCHES):
                if end > start:
                    yield lang, kind, start, end

    def _for_kinds(self, kinds: tuple[str, ...]) -> tuple:
        """(entries by key then literal, ASCII key characters, key characters, regexes, gates, anchorless).

        A gate holds each regex's most selective literals (by a prefix they share, tested
        first: see `by_prefix`) with the regexes they belong to: a text with none of them can
        only match the regexes without literals. `gates[True]`, for an ASCII text, leaves
        out the literals it cannot hold.
        """
        index: dict[str, dict[str, list[tuple[str, str, bool, bool]]]] = {}
        for key, entries in self._index.items():
            for lang, kind, literal, at_start, at_end in entries:
                if kind in kinds:  # entries of one literal keep their order: the first language wins a span
                    index.setdefault(key, {}).setdefault(literal, []).append((lang, kind, at_start, at_end))
        chars = [k for k in index if len(k) == 1]
        regexes = [(lang, kind, pattern) for lang, kind, pattern in self._regexes if kind in kinds]
        gate: dict[str, list[int]] = {}
        for i, (_, _, pattern) in enumerate(regexes):
            for literal in pattern.anchors[0] if pattern.anchors else ():
                gate.setdefault(literal, []).append(i)
        anchorless = [i for i, (_, _, pattern) in enumerate(regexes) if not pattern.anchors]
        gates = (_gate(gate, ascii_only=False), _gate(gate, ascii_only=True))
        return index, [k for k in chars if k.isascii()], frozenset(chars), regexes, gates, anchorless


def _gate(regexes_by_literal: dict[str, list[int]], ascii_only: bool) -> tuple:
    """(prefixes, {prefix: ((literal, regexes), ...)}): the literals by a prefix they share."""
    literals = [literal for literal in regexes_by_literal if literal.isascii() or not ascii_only]
    groups = {
        prefix: tuple((literal, tuple(regexes_by_literal[literal])) for literal in group)
        for prefix, group in by_prefix(literals).items()
    }
    return tuple(groups), groups


def prose(text: str, keep_code: bool = False) -> str:
    """What matching reads: normalized (see `_normalize`), spaces collapsed, the start of a long text.

    Code blocks, inline code, quoted lines and "quoted text" are left out (the person's own
    words decide, not what they paste); `keep_code` keeps inline code's words, where the
    words a person rejects often are ("not `npm`").
    """
    text = _normalize(text)
    if (
        any(map(text.__contains__, _NOISE_CHARS)) or "\n    " in text or text.startswith("    ")
    ):  # else no noise span can start: skip the regex
        if keep_code and "`" in text:
            text = _INLINE_CODE.sub(lambda m: f" {m.group(1)} ", text)
        text = _NOISE_RE.sub(" ", text)
    text = " ".join(text.split())
    if " ," in text:  # "no , not that": no language sets a space before its comma
        text = text.replace(" ,", ",")
    return text[:LONG_REQUEST_WINDOW] if len(text) > LONG_REQUEST_CHARS else text[:READ_CHARS]


def _tables(extra: Mapping[str, Iterable[str]]) -> dict[str, dict[str, list[tuple[str, bool]]]]:
    """Built-in lexicons plus the user's, as (entry, from the user); `weak:` / `guard:` pick the list.

    A person's `re:` pattern loses its accents like the text it is matched against, unless
    they are part of its syntax (then it is matched as written).
    """
    import tomllib  # lazily; loading the config has usually imported it already

    from evolve.signal_entries import check_correction_entry, check_regex

    tables: dict[str, dict[str, list[tuple[str, bool]]]] = {}
    for name, keys in (("corrections.toml", _KEYS), ("cues.toml", CUES)):
        with open(f"{_DATA}/{name}", "rb") as handle:
            for lang, table in tomllib.load(handle).items():
                tables.setdefault(lang, {key: [] for key in _KEYS + CUES}).update(
                    {key: [(entry, False) for entry in table.get(key, [])] for key in keys}
                )
    for lang, entries in extra.items():
        table = tables.setdefault(lang, {key: [] for key in _KEYS + CUES})
        for entry in entries:
            kind, entry = check_correction_entry(entry, lang)
            if entry.startswith("re:"):
                try:
                    check_regex(stripped := _strip_marks(entry[3:]), "correction pattern")
                    entry = "re:" + stripped
                except ValueError:
                    pass
            table[kind].append((entry, True))
    return tables


_LEXICON_CACHE: dict[tuple[tuple[str, tuple[str, ...]], ...], Lexicons] = {}


def load_lexicons(extra_phrases: Mapping[str, Iterable[str]] | None = None) -> Lexicons:
    """Built-in lexicons plus `extra_phrases` (language -> entries); ValueError if bad."""
    key = tuple(sorted((lang, tuple(v)) for lang, v in (extra_phrases or {}).items()))
    if key not in _LEXICON_CACHE:
        _LEXICON_CACHE[key] = Lexicons(_tables(dict(key)))
    return _LEXICON_CACHE[key]
