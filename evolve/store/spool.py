"""The hook spool: agent hooks append one JSON line; the watcher drains it into state.db.

Appending one short line with O_APPEND is atomic on POSIX and costs far less than opening
SQLite, so hooks stay within their budget. No line is lost when a drain takes the spool
while a hook writes: the writer holds a shared flock on the file it opened, checks that it
is still the live spool (a drain renames it aside) and otherwise opens the new one; the
drain renames first, then takes the exclusive flock before reading, so every writer that
opened the old file has written its line or will find it gone. The kernel drops the lock of
a killed process. Without flock (no fcntl, or a file system that refuses locks) a hook
still appends, unlocked. Light (os, time): the hooks import it.
"""

# pathlib costs more than a hook may: os.path it is; nor `from __future__` (a module too).
# ruff: noqa: PTH103, PTH114, PTH116, PTH118
import os
import stat  # os imports it: free
import time

try:
    import fcntl
except ImportError:  # no flock on this platform (Windows): hooks still append, unlocked
    fcntl = None  # type: ignore[assignment]

TYPE_CHECKING = False  # typing's own flag without importing typing (the hooks import this)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path

SPOOL = "hooks.jsonl"
MAX_LINE = 64 * 1024
ATTEMPTS = 100  # each retry needs a drain between a writer's open and its check: never this many
SETTLE_S = 0.5  # how long a drain waits for the writers of a renamed spool


def append(spool_dir: "Path", record: dict) -> None:
    """Append one record (a single write of one line; never a partial line for readers)."""
    import json

    record.setdefault("at", time.time())
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    data = line.encode("utf-8", "replace")
    if len(data) <= MAX_LINE:
        write_line(str(spool_dir), data)


def write_line(spool_dir: str, data: bytes) -> None:
    """One write of `data` to the live spool, in one file a drain reads after it (hot path)."""
    path = os.path.join(spool_dir, SPOOL)
    # read too: NFS emulates flock with fcntl locks; never through a link (it would append elsewhere)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
    for _ in range(ATTEMPTS):
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(spool_dir, exist_ok=True)
            fd = os.open(path, flags, 0o600)
        except OSError:
            if os.path.islink(path):
                raise OSError(
                    f"{path} is a link, not a regular file; remove it (the hooks make a new one)"
                ) from None
            raise
        try:
            _lock(fd, shared=True)  # released by close, or by the kernel if killed
            if _is_live(fd, path):
                os.write(fd, data)
                return
        finally:
            os.close(fd)
    raise OSError(f"{path} was drained away {ATTEMPTS} times while a line was being written")


def _lock(fd: int, shared: bool) -> bool:
    """Shared (waiting) or exclusive (False while a writer holds it); True where flock is missing."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks (an NFS mount without lockd): as without fcntl
        pass
    return True


def _is_live(fd: int, path: str) -> bool:
    """Whether the file `fd` opened is still the one at `path` (not renamed aside by a drain)."""
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode):  # a FIFO there takes the line and loses it
        raise OSError(f"{path} is not a regular file; remove it (the hooks make a new one)")
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (opened.st_dev, opened.st_ino) == (now.st_dev, now.st_ino)


def _settled(path: "Path") -> list[dict] | None:
    """The records of a renamed spool once every writer that opened it let go (None: one still holds it).

    A writer holds it for microseconds; one stopped right then (Ctrl-Z) would stall the
    watcher, so its file waits for a later drain instead. A FIFO put there is never read
    (it would never end), nor a folder, a socket or a link: None too, and doctor
    names each.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:  # a folder (EISDIR), a socket (ENXIO), a link (ELOOP), a file not ours
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        deadline = time.monotonic() + SETTLE_S
        while not _lock(fd, shared=False):
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.002)
        return _records(fd)
    finally:
        os.close(fd)


def _lines(fd: int) -> "Iterator[bytes]":
    """The file's lines, but none longer than a hook writes: a sparse or foreign file is never held whole."""
    pending = b""
    skipping = False  # in a line already longer than MAX_LINE: up to its end it is dropped
    while chunk := os.read(fd, 1 << 20):
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            if not skipping:
                yield line
            skipping = False
        if len(pending) > MAX_LINE:
            pending, skipping = b"", True
    if not skipping:
        yield pending


def _records(fd: int) -> list[dict]:
    """The file's records (a torn or foreign line is none)."""
    import json

    records = []
    for line in _lines(fd):
        try:
            record = json.loads(line) if line.strip() else None
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _regular(path: "Path") -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)  # a link is no spool: it would send lines elsewhere
    except FileNotFoundError:
        return False


def not_regular(spool_dir: "Path") -> list["Path"]:
    """The spool's files that are no regular file (a FIFO, a link): lines sent there are lost, none is read.

    The folder itself when it is none (a file, a dangling link): every hook's line is lost.
    """
    if not spool_dir.is_dir():
        return [spool_dir] if spool_dir.exists() or spool_dir.is_symlink() else []
    found = [spool_dir / SPOOL, *sorted(spool_dir.glob(f"{SPOOL}.*.draining"))]
    return [path for path in found if (path.exists() or path.is_symlink()) and not _regular(path)]


def drain(spool_dir: "Path") -> "AbstractContextManager[list[dict]]":
    """Every complete record, oldest first; the files go only if the `with` block succeeds.

    The spool is renamed aside first, so appends racing with the drain land in a fresh
    file. A crash leaves `*.draining` files that the next drain reads again (consumers are
    idempotent: invocations dedupe on tool-use id, impressions on skill and session).
    """
    from contextlib import contextmanager  # here: the hooks that append never load it

    return contextmanager(_drain)(spool_dir)


def _drain(spool_dir: "Path") -> "Iterator[list[dict]]":
    from evolve.store.locks import FileLock

    if not spool_dir.is_dir():
        yield []
        return
    with FileLock(spool_dir / "drain.lock", timeout=30):
        live = spool_dir / SPOOL
        try:
            if _regular(live):  # a FIFO stays where doctor names it, not renamed into a backlog
                live.rename(spool_dir / f"{SPOOL}.{os.getpid()}.{time.monotonic_ns()}.draining")
        except FileNotFoundError:
            pass
        taken = []
        records: list[dict] = []
        for path in sorted(spool_dir.glob(f"{SPOOL}.*.draining")):
            settled = _settled(path)
            if settled is None:
                continue
            taken.append(path)
            records.extend(settled)
        records.sort(key=lambda r: r["at"] if isinstance(r.get("at"), (int, float)) else 0)
        yield records
        for path in taken:
            path.unlink(missing_ok=True)
