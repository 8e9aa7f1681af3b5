"""Transcript adapters → one normalized event model → runs with facts.

The names below live in `evolve.transcripts.adapters` and load on first use: a process
that needs one submodule alone (the pre-commit hook's secret rules in `redact`) does not
pay for every adapter (~80 ms of CPU at each commit of a memo or skill). Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag without importing typing
if TYPE_CHECKING:
    from evolve.transcripts.adapters import (
        ADAPTERS,
        SOURCES,
        Adapter,
        Classifier,
        Cursor,
        Event,
        LineReader,
        Run,
        RunBuilder,
        Update,
        follow,
        parse_file,
        parse_messages,
    )

__all__ = [
    "ADAPTERS",
    "SOURCES",
    "Adapter",
    "Classifier",
    "Cursor",
    "Event",
    "LineReader",
    "Run",
    "RunBuilder",
    "Update",
    "follow",
    "parse_file",
    "parse_messages",
]


def __getattr__(name: str) -> object:
    """A name of `__all__`, from `adapters` (imported now); any other name is no attribute."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from evolve.transcripts import adapters

    return getattr(adapters, name)
