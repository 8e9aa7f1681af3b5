"""Atomic file writes (a reader sees the old bytes or the new, never a torn file), scratch folders."""

from __future__ import annotations

import os
from functools import cache

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from pathlib import Path


def atomic_write(path: Path, data: bytes, executable: bool | None = None) -> None:
    """Temp + fsync + rename: a reader sees the old bytes or the new, never a torn file.

    The file keeps its permissions; `executable` (True/False) sets them as git would.
    """
    import tempfile  # here: a command that writes nothing never loads it
    from pathlib import Path  # here too: the session hook reads through this module without it

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".evolve-tmp")
    try:
        if executable is not None:
            mode = (0o777 if executable else 0o666) & ~_umask()
        else:
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


def atomic_symlink(path: Path, target: bytes) -> None:
    """A symlink to `target` made aside and renamed over `path` (never followed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.evolve-tmp")
    tmp.symlink_to(os.fsdecode(target))
    try:
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def scratch(git_dir: Path, prefix: str) -> AbstractContextManager[str]:
    """A scratch folder inside .git (same filesystem as the index), removed after."""
    import tempfile  # here: a command that only reads never loads it

    return tempfile.TemporaryDirectory(dir=git_dir, prefix=prefix)


def sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
