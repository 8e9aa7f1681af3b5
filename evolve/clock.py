"""Time as evolve writes it: UTC stamps `YYYY-MM-DDTHH:MM:SSZ`, and back to seconds.

One definition for the stores, the metrics and the commands (the hook keeps its own
one-liner: it imports nothing). Transcripts' own stamps are normalised by the adapters
(`transcripts.model.iso_utc`), which accepts many more forms.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_CANONICAL = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z", re.ASCII)


def stamp(seconds: float) -> str:
    """Seconds since the epoch → `2026-01-02T03:04:05Z`."""
    return datetime.fromtimestamp(seconds, UTC).strftime(FORMAT)


def now_stamp() -> str:
    return datetime.now(UTC).strftime(FORMAT)


def seconds(value: str | None) -> float | None:
    """A stamp → seconds since the epoch; None when absent or not a time.

    The canonical form (every stamp evolve stores) skips the general parser: observing
    calls this for every stored run.
    """
    if not value:
        return None
    try:
        found = _CANONICAL.fullmatch(value)
        if found:
            year, month, day, hour, minute, second = map(int, found.groups())
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
    except ValueError:
        return None
