"""Which of many literals a text holds, in about one pass: the secret rules' keywords.

All the literals as one trie regex cost ~300 instructions a character: sre tries the trie
wherever a letter opens one of them, nearly everywhere. Here each literal is looked for by
an anchor instead, two to four of its characters opening at its rarest one. The anchors
that open with an uncommon character make one regex whose first-character set lets sre skip
most of a text in C; the few opening with a common character are looked for with `in`. Only
a literal whose anchor is there is confirmed, with `in`: the answer is exactly the literals
the text holds. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Characters from the most to the least common in what transcripts hold (lower-cased prose,
# paths, commands, code); any other character is rarer than all of them.
_COMMON_CHARS = " \netaoinsr/.lhdc_u-m:pf\"gw,y=b'v0k12x\\3456789jqz~\t"
_SCANNED = 16  # an anchor opening with one of this many most common characters: `in`, not the regex
_ANCHOR = 4  # characters of an anchor at most; at least 2 (a shorter literal: itself)


def _rarity(char: str) -> int:
    found = _COMMON_CHARS.find(char)
    return len(_COMMON_CHARS) if found < 0 else found


def _anchor(literal: str) -> str:
    """The literal's characters from its rarest one that still leaves two (the earliest of equals)."""
    least = min(2, len(literal))
    start = max(range(len(literal) - least + 1), key=lambda i: (_rarity(literal[i]), -i))
    return literal[start : start + _ANCHOR]


def _trie_pattern(words: Iterable[str]) -> str:
    """One regex matching any of `words`, shared prefixes written once (the longest wins)."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return pattern(trie)


def _prefixes_in(text: str, known: dict) -> set[str]:
    """The prefixes of `text` that are keys of `known`."""
    return {text[:end] for end in range(1, len(text) + 1) if text[:end] in known}


def _literals(by_anchor: dict[str, set[str]], anchors: Iterable[str]) -> tuple[str, ...]:
    return tuple({lit for anchor in anchors for lit in by_anchor[anchor]})


class Literals:
    """A set of literals; `present(text)`: those the text holds."""

    def __init__(self, literals: Iterable[str]) -> None:
        by_anchor: dict[str, set[str]] = {}
        for literal in set(literals):
            if literal:
                by_anchor.setdefault(_anchor(literal), set()).add(literal)
        rare = [anchor for anchor in by_anchor if _rarity(anchor[0]) >= _SCANNED]
        # The anchors each string opens (every prefix of every anchor): which could start where.
        opening: dict[str, set[str]] = {}
        for anchor in rare:
            for end in range(1, len(anchor) + 1):
                opening.setdefault(anchor[:end], set()).add(anchor)
        # a match is the longest anchor at its start: the shorter ones it opens with are there too
        self._holds = {anchor: _literals(by_anchor, _prefixes_in(anchor, by_anchor)) for anchor in rare}
        self._scanned = {
            anchor: tuple(found) for anchor, found in by_anchor.items() if _rarity(anchor[0]) < _SCANNED
        }
        self._scanned_anchors = tuple(self._scanned)
        self._regex = re.compile(_trie_pattern(rare) if rare else "(?!)")
        # The literals of the anchors that may start inside a match of another (its tail opens
        # one, or one is its tail's start): matches do not overlap, those are confirmed instead.
        self._inside = {
            anchor: _literals(
                by_anchor,
                {
                    other
                    for tail in (anchor[start:] for start in range(1, len(anchor)))
                    for other in opening.get(tail, set()) | _prefixes_in(tail, self._holds)
                },
            )
            for anchor in rare
        }

    def present(self, text: str) -> frozenset[str]:
        """The literals `text` holds (most texts: none, told after one scan and a few `in`).

        The scan finds the longest anchor at each position it stops at, in C; a literal
        whose anchor starts inside a match is among the candidates of that match. Every
        candidate is confirmed with `in`: the answer is exact.
        """
        held = [*filter(text.__contains__, self._scanned_anchors)]  # in C
        found = self._regex.findall(text)
        if not found and not held:
            return frozenset()
        candidates = {lit for anchor in held for lit in self._scanned[anchor]}
        for anchor in set(found):
            candidates.update(self._holds[anchor])
            candidates.update(self._inside[anchor])
        return frozenset(lit for lit in candidates if lit in text)
