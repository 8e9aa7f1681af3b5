"""Reads of a person's files that never wait: a FIFO or a device where a file belongs is refused.

In the kernel: config.toml and agent.toml are read here too, and the session's hooks read
through it (os and stat only).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO


class NotRegular(OSError):
    """A FIFO, device, socket or folder where a person's file belongs."""


class TooLarge(OSError):
    """A person's file longer than any such file is (a log, or one that never ends: /proc)."""


def open_regular(path: Path | str, encoding: str | None = None, errors: str | None = None) -> IO:
    """A regular file opened to read (text with an `encoding`, else bytes); NotRegular for anything else.

    A FIFO or a device where a memo, SKILL.md or guards.toml belongs would make a plain open
    wait forever (the session's hooks with it, and the agent behind them): opened without
    blocking, it is refused before any read.
    """
    import errno  # here: only readers of a person's files need them
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device with no driver) cannot even be opened
            raise NotRegular(f"{path} is not a regular file") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path} is not a regular file")
        return os.fdopen(fd, "r" if encoding else "rb", encoding=encoding, errors=errors)
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, cap: int | None = None) -> bytes:
    """A regular file's bytes (`open_regular`); TooLarge past `cap` bytes, read no further."""
    with open_regular(path) as handle:
        data: bytes = handle.read(-1 if cap is None else cap + 1)
    if cap is not None and len(data) > cap:
        raise TooLarge(f"{path} is over {cap:,} bytes")
    return data
