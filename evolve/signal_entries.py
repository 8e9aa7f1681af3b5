"""A person's `[signals]` patterns and phrases, checked as the classifier will read them.

A pattern goes through the linear-time door (evolve.patterns); one that matches every
message, or a phrase with no word in it, is refused with the reason, and a refused entry
is dropped with a warning while the rest of the file still applies (agent.toml may come
from the server an agent syncs with).
"""

from __future__ import annotations

from evolve.errors import ConfigError

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any


def check_regex(source: str, what: str) -> None:
    """Compile a pattern as the classifier will: through the linear-time door, evolve.patterns.

    ValueError names it and the problem (what the door cannot run in linear time included).
    """
    if not source.strip():  # would match every text
        raise ValueError(f"{what} {source!r} is empty")
    from evolve import patterns  # lazily: most commands read no pattern

    try:
        patterns.compile(source, ignore_case=True)
    except patterns.PatternError as exc:
        raise ValueError(f"{what} {source!r}: {exc}") from None


_CORRECTION_KINDS = {"weak": "weak", "guard": "guards"}  # an entry's prefix -> its list


def check_correction_entry(entry: str, language: str) -> tuple[str, str]:
    """("phrases", "weak" or "guards"; the entry without its prefix) of a correction entry.

    ValueError if it is empty or its `re:` pattern is refused.
    """
    prefix, _, rest = entry.partition(":")
    kind = _CORRECTION_KINDS.get(prefix, "phrases")
    entry = rest if kind != "phrases" else entry
    if entry.startswith("re:"):
        check_regex(entry[3:], f"{language}: correction pattern")
        if _matches_every_message(entry[3:]):
            sweep = _SWEEP[kind]
            raise ValueError(f"{language}: correction pattern {entry!r} matches every message ({sweep})")
    elif not _letters(entry):
        raise ValueError(f"{language}: correction phrase {entry!r} is empty (nothing but marks)")
    elif not any(char.isalnum() for char in _letters(entry)):
        raise ValueError(f"{language}: correction phrase {entry!r} holds no word ({_SWEEP[kind]})")
    return kind, entry


# Messages no correction is made of: a pattern matching them all matches every message
ORDINARY_MESSAGES = ("ok", "thanks!", "add a footer to the page", "merci", "ja bitte")
_SWEEP = {
    "phrases": "every message would count as a correction",
    "weak": "every reply would count as pushing back",
    "guards": "it would hide every correction",
}


def _matches_every_message(source: str) -> bool:
    """Whether a person's pattern matches whatever is typed (`.*`, `.`, `[a-z]`, `^` …)."""
    from evolve import patterns  # lazily: most commands read no pattern

    compiled = patterns.compile(source, ignore_case=True)  # checked by check_regex first
    return all(compiled.matches(message) for message in ORDINARY_MESSAGES)


def _letters(phrase: str) -> str:
    """A phrase as matching reads it, less spaces and apostrophes: texts lose their accent marks too."""
    import unicodedata  # lazily: only phrases need it

    kept = (c for c in unicodedata.normalize("NFKD", phrase) if not unicodedata.combining(c))
    return "".join(c for c in kept if c not in "'’‘").strip()


def without_refused(key: str, value: Any, where: str) -> tuple[Any, list[str]]:
    """`[signals]` patterns and phrases, less those refused: each dropped with a warning.

    A pattern from agent.toml may come from the server an agent syncs with; one that this
    evolve refuses must not stop everything else the file sets. A value of the wrong type
    is still an error.
    """
    warnings: list[str] = []

    def kept(check: Any, *args: str) -> bool:
        try:
            check(*args)
        except ValueError as exc:
            warnings.append(f"{where}: {exc}; ignored (fix or remove it)")
            return False
        return True

    if key == "transient_patterns":
        value = [entry for entry in value if kept(check_regex, entry.removeprefix("!"), "pattern")]
    if key == "correction_phrases":
        for language, entries in value.items():
            if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
                raise ConfigError(
                    f"{where}: {language}: must be a list of strings (phrases, or 're:' patterns)"
                )
        value = {
            language: [entry for entry in entries if kept(check_correction_entry, entry, language)]
            for language, entries in value.items()
        }
    return value, warnings
