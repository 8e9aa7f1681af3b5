"""The watcher's wake-up: a pipe its loop sleeps on, written from a signal handler or a thread.

The loop waits in `select` on the pipe's read end until its next deadline; a file event
(a watchdog thread) or a stop request (SIGTERM/SIGINT) writes one byte so it wakes at
once. Both ends are non-blocking: a write to a full pipe is dropped (a wake-up is pending
anyway), and writing is async-signal-safe.
"""

from __future__ import annotations

import os
import select


class Wakeup:
    """A self-pipe: `wake()` from anywhere, `wait(timeout)` on the loop's thread, then `clear()`."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def wake(self) -> None:
        try:
            os.write(self._write, b"!")
        except OSError:  # the pipe is full (a wake-up is pending anyway) or closed
            pass

    def wait(self, timeout: float) -> None:
        """Until woken, or `timeout` seconds."""
        select.select([self._read], [], [], max(0.0, timeout))

    def clear(self) -> None:
        """Forget the wake-ups so far (before the work they asked for)."""
        try:
            while os.read(self._read, 512):
                pass
        except OSError:
            pass

    def close(self) -> None:
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
        self._read = self._write = -1
