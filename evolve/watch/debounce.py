"""Debouncing of file-system hints, pure: keys become due after a quiet delay.

Events are hints, never counted: a burst of writes to one file is one piece of work once
the file has been quiet for `delay` seconds. `max_wait` bounds the wait for a file that is
written without pause (a live transcript), so it is still handled every so often.
"""

from __future__ import annotations

from collections.abc import Hashable


class Debouncer:
    """Keys with the time of their first and last hint; `due(now)` pops the settled ones."""

    def __init__(self, delay: float, max_wait: float | None = None) -> None:
        self.delay = delay
        self.max_wait = max_wait
        self._seen: dict[Hashable, tuple[float, float]] = {}

    def hint(self, key: Hashable, at: float) -> None:
        first, _ = self._seen.get(key, (at, at))
        self._seen[key] = (min(first, at), at)

    def __contains__(self, key: object) -> bool:
        return key in self._seen

    def __len__(self) -> int:
        return len(self._seen)

    def discard(self, key: Hashable) -> None:
        self._seen.pop(key, None)

    def _deadline(self, first: float, last: float) -> float:
        deadline = last + self.delay
        if self.max_wait is not None:
            deadline = min(deadline, first + self.max_wait)
        return deadline

    def due(self, now: float) -> list:
        """Keys whose deadline has passed, oldest first; they are forgotten."""
        ready = sorted(
            (item for item in self._seen.items() if self._deadline(*item[1]) <= now),
            key=lambda item: item[1][0],
        )
        for key, _ in ready:
            del self._seen[key]
        return [key for key, _ in ready]

    def postpone(self, key: Hashable, now: float) -> None:
        """Try again one delay from now (the work could not be done yet)."""
        self._seen[key] = (now, now)

    def next_deadline(self) -> float | None:
        if not self._seen:
            return None
        return min(self._deadline(first, last) for first, last in self._seen.values())
