"""Observe-time judgements on text: is an error transient, and the lexicons an agent hears with.

They decide what evolve may learn from: a transient error is the environment failing,
never a lesson; a correction (`hearing`, over `lexicons`) is the strongest signal there
is. A `Classifier` holds one agent's `[signals]` additions and is passed to whatever
derives facts, so every reader of a transcript judges it alike. Standard library only,
data files read on first use, regexes compiled on need.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from evolve.errors import ConfigError
from evolve.transcripts.gated import GatedPattern
from evolve.transcripts.lexicons import Lexicons, load_lexicons

if TYPE_CHECKING:
    from evolve.config import SignalsConfig

_DATA = os.path.dirname(__file__) + "/data"  # noqa: PTH120 - pathlib costs ms of import

# Long error texts are judged by head and tail, where tools say what failed
ERROR_HEAD_CHARS = ERROR_TAIL_CHARS = 8000


class TransientPatterns:
    """Transient patterns plus the `!` overrides that win over them."""

    def __init__(self, positive: list[GatedPattern], overrides: list[GatedPattern]) -> None:
        from evolve.transcripts.literals import Literals  # lazily: only judging errors needs it

        self._positive = positive
        self._overrides = overrides
        self._by_anchor: dict[str, list[int]] = {}  # a first-group literal -> patterns
        for index, pattern in enumerate(self._positive):
            for anchor in pattern.anchors[0] if pattern.anchors else ():
                self._by_anchor.setdefault(anchor, []).append(index)
        self._anchorless = [i for i, p in enumerate(self._positive) if not p.anchors]
        # Which of those literals a text holds, in about one pass (`Literals`): most error
        # texts hold none, and ~60 substring tests cost more than the pass.
        self._anchors = Literals(self._by_anchor)

    def reason(self, text: str) -> str | None:
        """The matched words that make `text` transient, or None (not transient)."""
        if not text:
            return None
        if len(text) > ERROR_HEAD_CHARS + ERROR_TAIL_CHARS:
            text = text[:ERROR_HEAD_CHARS] + "\n" + text[-ERROR_TAIL_CHARS:]
        lowered = text.lower()
        # One pass over the text picks the few patterns worth a look (those one of whose
        # most selective literals it holds), then they are tried in their order.
        candidates = set(self._anchorless)
        for anchor in self._anchors.present(lowered):
            candidates.update(self._by_anchor[anchor])
        if not candidates:
            return None
        for index in sorted(candidates):
            pattern = self._positive[index]
            if pattern.possible(lowered) and (found := pattern.regex.search(text)):
                break
        else:
            return None  # most error texts: the overrides need no look
        for pattern in self._overrides:
            if pattern.possible(lowered) and pattern.regex.search(text):
                return None
        return text[found[0] : found[1]].strip() or "transient"


_TRANSIENT_CACHE: dict[tuple[str, ...], TransientPatterns] = {}


def load_transient_patterns(extra: Iterable[str] = ()) -> TransientPatterns:
    """Built-in patterns plus `extra` (from `[signals] transient_patterns`), cached.

    An entry starting with `!` is an override: a match means "a real error", whatever
    else matched. Raises ValueError naming a user pattern that does not compile.
    """
    key = tuple(extra)
    if key not in _TRANSIENT_CACHE:
        from evolve.signal_entries import check_regex  # lazily: only user patterns need it

        for entry in key:
            check_regex(entry.removeprefix("!"), "transient pattern")
        with open(f"{_DATA}/transient_patterns.txt", encoding="utf-8") as f:
            entries = [(ln, False) for ln in map(str.strip, f) if ln and not ln.startswith("#")]
        entries += [(entry, True) for entry in key]
        _TRANSIENT_CACHE[key] = TransientPatterns(
            [GatedPattern(e, user=user) for e, user in entries if e[0] != "!"],
            [GatedPattern(e[1:], user=user) for e, user in entries if e[0] == "!"],
        )
    return _TRANSIENT_CACHE[key]


class Classifier:
    """The built-in lists plus one agent's `[signals]` additions: what is transient, what corrects.

    Passed explicitly to whatever derives facts (RunBuilder, the bundle, scoring), so the
    same transcript gives the same facts whichever process reads it. Cheap to make: the
    data files and regexes are loaded (and cached) on first use.
    """

    __slots__ = ("transient_patterns", "correction_phrases")

    def __init__(
        self,
        transient_patterns: Iterable[str] = (),
        correction_phrases: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.transient_patterns: tuple[str, ...] = tuple(transient_patterns)
        self.correction_phrases: dict[str, tuple[str, ...]] | None = {
            k: tuple(v) for k, v in (correction_phrases or {}).items()
        } or None

    def check(self) -> Classifier:
        """Load both lists now; ValueError names a pattern or phrase that is invalid."""
        load_transient_patterns(self.transient_patterns)
        load_lexicons(self.correction_phrases)
        return self

    def is_transient(self, text: str) -> bool:
        """True when an error text is the environment's fault (timeouts, 429/5xx, resets…)."""
        return bool(text) and is_transient(text, self.transient_patterns)

    def api_error_transient(self, text: str) -> bool:
        """API failures are transient unless they name a request/auth/permission problem."""
        return self.is_transient(text) or not _PERMANENT_API.search(text)

    def lexicons(self) -> Lexicons:
        """The built-in lexicons and cues plus this agent's correction phrases (cached)."""
        return load_lexicons(self.correction_phrases)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Classifier) and (self.transient_patterns, self.correction_phrases) == (
            other.transient_patterns,
            other.correction_phrases,
        )

    def __hash__(self) -> int:
        return hash(self.transient_patterns)


def for_signals(signals: SignalsConfig) -> Classifier:
    """An agent's classifier from its `[signals]`; ConfigError names an invalid pattern or phrase."""
    try:
        return Classifier(signals.transient_patterns, signals.correction_phrases).check()
    except ValueError as exc:
        raise ConfigError(f"[signals]: {exc}") from None


_PERMANENT_API = re.compile(
    r"invalid_request|authentication|permission|not_found|billing|credit balance"
    r"|prompt is too long|invalid api key|\b(?:400|401|403|404|413)\b",
    re.IGNORECASE,
)


def transient_reason(text: str, extra: Iterable[str] = ()) -> str | None:
    """Why `text` is a transient failure (the matched words), or None."""
    return load_transient_patterns(extra).reason(text)


def is_transient(text: str, extra: Iterable[str] = ()) -> bool:
    """True when an error text is a timeout, network, rate-limit or overload failure."""
    return transient_reason(text, extra) is not None


BUILT_IN = Classifier()  # no user additions: what a fresh config gives
