"""The hook spool: agent hooks append one JSON line; the watcher drains it into state.db.

Appending one short line with O_APPEND is atomic on POSIX and costs far less than opening
SQLite, so hooks stay within their budget. Standard library only (hot path).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SPOOL = "hooks.jsonl"
MAX_LINE = 64 * 1024


def append(spool_dir: Path, record: dict) -> None:
    """Append one record (a single write of one line; never a partial line for readers)."""
    record.setdefault("at", time.time())
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    data = line.encode("utf-8", "replace")
    if len(data) > MAX_LINE:
        return
    try:
        fd = os.open(spool_dir / SPOOL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except FileNotFoundError:
        spool_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(spool_dir / SPOOL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


@contextmanager
def drain(spool_dir: Path) -> Iterator[list[dict]]:
    """Yield every complete record, oldest first; the files go only if the block succeeds.

    The spool is renamed aside first, so appends racing with the drain land in a fresh
    file. A crash leaves `*.draining` files that the next drain reads again (consumers are
    idempotent: invocations dedupe on tool-use id, impressions on skill and session).
    """
    from evolve.store.locks import FileLock

    if not spool_dir.is_dir():
        yield []
        return
    with FileLock(spool_dir / "drain.lock", timeout=30):
        live = spool_dir / SPOOL
        try:
            live.rename(spool_dir / f"{SPOOL}.{os.getpid()}.{time.monotonic_ns()}.draining")
        except FileNotFoundError:
            pass
        taken = sorted(spool_dir.glob(f"{SPOOL}.*.draining"))
        records: list[dict] = []
        for path in taken:
            for line in path.read_bytes().split(b"\n"):
                try:
                    record = json.loads(line) if line.strip() else None
                except ValueError:
                    record = None
                if isinstance(record, dict):
                    records.append(record)
        records.sort(key=lambda r: r["at"] if isinstance(r.get("at"), (int, float)) else 0)
        yield records
        for path in taken:
            path.unlink(missing_ok=True)
