"""Process locks on files: held through the kernel (flock), so a dead holder frees them.

Lock files are never deleted: deleting a lock another live process holds would let two
writers in. The holder's pid is written into the file for messages only.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from evolve.errors import LockBusy


class FileLock:
    """An exclusive advisory lock; `timeout=0` tries once."""

    def __init__(self, path: Path, timeout: float = 30.0, poll: float = 0.02) -> None:
        self.path = path
        self.timeout = timeout
        self.poll = poll
        self._fd: int | None = None

    def acquire(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    who = holder(self.path) or "another process"
                    raise LockBusy(f"{self.path} is held by {who}") from None
                time.sleep(self.poll)
        try:  # the pid is for messages only: a full disk must not keep the lock held
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(path: Path) -> str | None:
    """'pid N' of the last holder recorded in the lock file, if any."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return f"pid {text}" if text.isdigit() else None


def is_locked(path: Path) -> bool:
    """Whether some live process holds the lock right now."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:  # a read-only home: flock needs no write access (NFS's emulation would)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
