"""Atomic file writes: a reader sees the old bytes or the new, never a torn file."""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> None:
    """Temp + fsync + rename: a reader sees the old bytes or the new, never a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".evolve-tmp")
    try:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@cache
def _umask() -> int:
    """The process umask, read once (os.umask can only be read by setting it)."""
    current = os.umask(0)
    os.umask(current)
    return current


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
