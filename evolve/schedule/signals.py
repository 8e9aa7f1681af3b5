"""Score a finished run from its facts: which weighted signals fire, is it worth reflecting on.

Pure (no I/O beyond reading evolve's own stopword list once): observe stores facts, this
turns them into `Scored`, the scheduler and bundle read the result. Transient errors are
the environment, never a lesson, so they never fire an error signal here, even when
upstream facts were not careful about them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve.config import SignalsConfig
from evolve.transcripts import classify
from evolve.transcripts.words import content_words
from evolve.workspace import memo

# Names and default weights are an interface (config keys, commit trailers, reports); the
# numbers live in evolve.config, like every default.
DEFAULT_WEIGHTS: dict[str, float] = dict(SignalsConfig().weights)


@dataclass(frozen=True)
class SignalSettings:
    """Weights, threshold and limits; built from `[signals]` in config.toml."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    threshold: float = SignalsConfig.threshold
    complexity_tool_calls: int = SignalsConfig.complexity_tool_calls
    transient_patterns: tuple[str, ...] = ()  # the user's extra ones, for error texts

    @classmethod
    def from_config(cls, signals: SignalsConfig) -> SignalSettings:
        """From the agent's `[signals]`."""
        return cls(
            weights={**DEFAULT_WEIGHTS, **signals.weights},
            threshold=signals.threshold,
            complexity_tool_calls=signals.complexity_tool_calls,
            transient_patterns=tuple(getattr(signals, "transient_patterns", ())),
        )


@dataclass(frozen=True)
class Scored:
    """The signals that fired (name -> weight), their sum, and whether it passes."""

    signals: dict[str, float]
    score: float
    reflect: bool


def weakness_keywords(memo_first_section_text: str) -> list[frozenset[str]]:
    """One keyword set per bullet of the memo's "What I do well and where I often stumble"."""
    return [frozenset(content_words(item)) for item in memo.bullets(memo_first_section_text)]


def _fact(facts: Any, name: str, default: Any) -> Any:
    value = facts.get(name) if isinstance(facts, Mapping) else getattr(facts, name, None)
    return default if value is None else value


def _number(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def matched_weakness(weaknesses: Iterable[frozenset[str]], texts: Iterable[str]) -> frozenset[str] | None:
    """The first bullet's keywords of which at least two occur in `texts`, or None."""
    bullets = [w for w in weaknesses if len(w) >= 2]
    if not bullets:
        return None
    seen: set[str] = set()
    for text in texts:
        if text:
            seen |= content_words(text)
    for keywords in bullets:
        if len(keywords & seen) >= 2:
            return keywords
    return None


def score_run(
    facts: Any,
    settings: SignalSettings | None = None,
    weaknesses: Iterable[frozenset[str]] = (),
    ignored: Sequence[object] = (),
) -> Scored:
    """Which signals fire for one run (a dict or an object with the fact attributes).

    `ignored`: the lessons the run ignored (observe.adherence's verdicts): lesson_ignored.

    Facts (as `transcripts.model.Run` holds them): tool_calls, errors (real ones only),
    transient_errors (counted apart), aborted, correction (by the request or a typed reply),
    preference (a standing instruction the person stated),
    skills, ended_in_error, recovered, request, replies, tool_inputs_text, error_texts (of
    real errors, maybe capped).
    Missing facts count as absent. An error text that classifies as transient after all
    (user patterns may have changed since) is not counted as real.
    """
    settings = settings or SignalSettings()
    extra = settings.transient_patterns
    error_texts = [str(t) for t in _fact(facts, "error_texts", []) if t]
    real_texts = [t for t in error_texts if not classify.is_transient(t, extra)]
    real_errors = _number(_fact(facts, "errors", 0))
    complete = bool(error_texts) and len(error_texts) >= real_errors  # no text was capped
    if complete:
        real_errors = len(real_texts)
    ended_real = bool(_fact(facts, "ended_in_error", False)) and real_errors > 0
    if ended_real and complete and classify.is_transient(error_texts[-1], extra):
        ended_real = False  # the last error was transient: the run did not end in a real one
    correction = bool(_fact(facts, "correction", False))

    fired = []
    if correction:
        fired.append("user_correction")
    if _fact(facts, "preference", False):
        fired.append("user_preference")
    if ignored:
        fired.append("lesson_ignored")
    if _fact(facts, "skills", []) and ended_real and not _fact(facts, "aborted", False):
        fired.append("skill_ineffective")
    if _fact(facts, "recovered", False) and real_errors > 0:
        fired.append("error_recovered")
    if real_errors > 0 or correction:
        texts = [str(_fact(facts, "request", "")), str(_fact(facts, "tool_inputs_text", ""))]
        texts += [str(t) for t in _fact(facts, "replies", [])]
        if matched_weakness(weaknesses, texts + real_texts) is not None:
            fired.append("known_weakness")
    if _number(_fact(facts, "tool_calls", 0)) > settings.complexity_tool_calls:
        fired.append("complexity")

    signals = {}
    for name in fired:
        weight = float(settings.weights.get(name, DEFAULT_WEIGHTS[name]))
        if weight > 0:
            signals[name] = weight
    score = round(sum(signals.values()), 6)  # 0.35 + 0.35 must equal 0.7, not exceed it
    return Scored(signals=signals, score=score, reflect=score > settings.threshold)
