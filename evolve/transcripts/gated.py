"""A regex tried only on texts that hold the literals every match of it must hold.

The transient-error patterns and the lexicons' `re:` entries are many and most texts match
none of them: substring tests reject those texts for a few µs (see `GatedPattern`).
Standard library only; each regex compiled on first need.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evolve.patterns import LinearPattern

_FLAGS = re.IGNORECASE | re.MULTILINE


class _Builtin:
    """One of evolve's own patterns (its data files): Python's re, answering as the door does."""

    def __init__(self, source: str) -> None:
        self._regex = re.compile(source, _FLAGS)

    def search(self, text: str) -> tuple[int, int] | None:
        found = self._regex.search(text)
        return found.span() if found else None

    def finditer(self, text: str) -> Iterator[tuple[int, int]]:
        return (found.span() for found in self._regex.finditer(text))


class GatedPattern:
    r"""A regex compiled on first need, skipped when its required literals are absent.

    Python's re cannot skip ahead on a case-insensitive pattern starting with `\b`: a
    16 kB text costs ~1 ms per pattern. Substring tests on the lowered text cost µs.
    A person's pattern (`user`: it came from a config file, maybe a server's) is matched
    through `evolve.patterns`, in linear time; evolve's own ones through Python's re.
    """

    def __init__(self, source: str, *, user: bool = False) -> None:
        self.source = source
        self.user = user
        # The most selective group first: a text without it is rejected after one test.
        # Numbers (status codes) are rarer in error output than words ("error", "with"),
        # and short words (" in", "en ", "で") are in most texts.
        self.anchors = tuple(
            sorted(
                _anchor_groups(source),
                key=lambda g: (
                    not any(char.isdigit() for literal in g for char in literal),
                    _shortest(g) < _RARE_CHARS and all(literal.isascii() for literal in g),
                    -min(_shortest(g), _RARE_CHARS),
                    len(g),
                ),
            )
        )

    @functools.cached_property
    def regex(self) -> _Builtin | LinearPattern:
        if self.user:
            from evolve import patterns  # lazily: only a person's patterns need it

            return patterns.compile(self.source, ignore_case=True)
        return _Builtin(self.source)

    def possible(self, lowered: str) -> bool:
        """False when a required literal is missing from the lower-cased text."""
        for group in self.anchors:
            for anchor in group:
                if anchor in lowered:
                    break
            else:
                return False
        return True


def by_prefix(literals: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The literals by a prefix they share (their first three characters or more).

    A text without the prefix holds none of them: testing the prefixes first costs most
    texts fewer passes ("not " for "not a", "not that", "not the" ...).
    """
    groups: dict[str, list[str]] = {}
    for literal in sorted(set(literals)):
        groups.setdefault(literal[:3], []).append(literal)
    return {os.path.commonprefix(members): tuple(members) for members in groups.values()}


def _anchor_groups(source: str) -> tuple[tuple[str, ...], ...]:
    """Groups of lower-case literals; every match holds one literal of each group."""
    try:
        from re import _parser  # type: ignore[attr-defined]  # private: hence the fallback

        with warnings.catch_warnings():  # a person's "[[:alpha:]]" would print re's FutureWarning
            warnings.simplefilter("ignore")
            groups = _literal_groups(_parser.parse(source, _FLAGS))
    except Exception:
        return ()
    return tuple(tuple(sorted(g)) for g in groups if all(map(_selective, g)))


def _selective(literal: str) -> bool:
    """Rare enough to gate a regex: three characters, or one CJK character or more."""
    return len(literal) >= 3 or not literal.isascii()


_RARE_CHARS = 5  # an ASCII literal this long is rarely in a text that does not match


def _shortest(group: Iterable[str]) -> int:
    return min(map(len, group))


def _literal_groups(items: Iterable[tuple]) -> list[set[str]]:
    groups: list[set[str]] = []
    run = ""
    for op, arg in items:
        name = getattr(op, "name", "")
        if name == "LITERAL":
            run += chr(arg).lower()
        if name in ("LITERAL", "AT", "ASSERT", "ASSERT_NOT"):  # zero-width: the run goes on
            continue
        if name == "BRANCH" and run:  # "do(?:n't| not)": the run goes on into each branch
            leads = [_lead(branch) for branch in arg[1]]
            if all(leads):
                groups.append({run + lead for lead in leads})
        if run:
            groups.append({run})
            run = ""
        if name == "SUBPATTERN":
            groups += _literal_groups(arg[-1])
        elif name.endswith("REPEAT") and arg[0] >= 1:
            groups += _literal_groups(arg[2])
        elif name == "BRANCH":
            best = [max(_literal_groups(b), key=_shortest, default=None) for b in arg[1]]
            if all(best):
                groups.append({literal for group in best if group for literal in group})
    if run:
        groups.append({run})
    return groups


def _lead(items: Iterable[tuple]) -> str:
    """The literal characters a branch starts with (lower-cased)."""
    lead = ""
    for op, arg in items:
        if getattr(op, "name", "") != "LITERAL":
            break
        lead += chr(arg).lower()
    return lead
