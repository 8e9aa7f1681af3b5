"""Incremental, memory-bounded reading of the complete lines appended to a JSONL file.

Transcripts are appended live, can be truncated or rewritten in place, and grow to hundreds
of megabytes, so the observer must read only new bytes, never hold the file, leave a line
that is still being written for next time, and notice when what it read before is gone.
"""

from __future__ import annotations

import hashlib
import json
import json.scanner
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from evolve.regular import open_regular
from evolve.transcripts.overlong import Condenser, condense

HASH_WINDOW = 4096
# Bytes read at a time. Small enough that a chunk is reused from the heap: a megabyte one
# was given back to the system and faulted in again (~1 ms a hundred MB); lines longer
# than a chunk are joined across chunks as before.
CHUNK = 64 << 10
MAX_LINE = 64 << 20  # a longer line is read with its texts cut (`overlong`), never held whole


@dataclass
class Cursor:
    """Where reading a file stopped, and enough about the file to notice it changed.

    `offset` is the byte offset just after the last complete line consumed. `prefix_hash` is
    the sha256 of the first min(offset, 4096) bytes followed by the 4096 bytes before `offset`
    (so a rewrite near either end is noticed). `parser_state` is opaque JSON state owned by
    the caller (adapter + RunBuilder), reset together with the offset.
    """

    dev: int = 0
    inode: int = 0
    size: int = 0
    offset: int = 0
    prefix_hash: str = ""
    parser_state: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """A JSON-serialisable copy."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Cursor:
        """Inverse of to_dict; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _window_hash(handle, offset: int) -> str:
    """Hash of the first and last HASH_WINDOW bytes of handle[:offset]."""
    digest = hashlib.sha256()
    handle.seek(0)
    digest.update(handle.read(min(offset, HASH_WINDOW)))
    digest.update(b"|")
    tail_start = max(0, offset - HASH_WINDOW)
    handle.seek(tail_start)
    digest.update(handle.read(offset - tail_start))
    return digest.hexdigest()


class LineReader:
    """Yields the complete lines of `path` after `cursor`; then `.cursor` says where it stopped.

    `reset` is True when the file was truncated, rewritten or replaced since the cursor was
    taken: reading restarted at byte 0 and everything derived from the file must be rebuilt
    (the returned cursor's parser_state is then empty). A line longer than `max_line` is
    yielded with each JSON string cut short (`overlong`), counted in `cut`; one that cannot
    be cut to fit is dropped, counted in `skipped`.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        cursor: Cursor | None = None,
        chunk_size: int = CHUNK,
        max_line: int | None = None,
    ):
        self.path = Path(path)
        self.chunk_size = max(1, chunk_size)
        self.max_line = MAX_LINE if max_line is None else max_line
        self.reset = False
        self.skipped = 0
        self.cut = 0
        self._start = cursor or Cursor()
        self._offset = self._start.offset
        self._dev = self._start.dev
        self._inode = self._start.inode
        self._size = self._start.size
        self._state = self._start.parser_state
        self._hash: str | None = self._start.prefix_hash
        self._done = False

    @property
    def cursor(self) -> Cursor:
        """The cursor after the lines consumed so far."""
        if self._hash is None:  # offset moved and the generator did not finish
            try:
                with open_regular(self.path) as handle:
                    self._hash = _window_hash(handle, self._offset)
            except OSError:
                self._hash = ""
        return Cursor(
            self._dev,
            self._inode,
            max(self._size, self._offset),
            self._offset,
            self._hash,
            self._state,
        )

    def _check(self, handle, stat: os.stat_result) -> None:
        start = self._start
        replaced = start.offset > 0 and (stat.st_dev, stat.st_ino) != (start.dev, start.inode)
        truncated = stat.st_size < start.offset
        rewritten = (
            not replaced
            and not truncated
            and start.offset > 0
            and _window_hash(handle, start.offset) != start.prefix_hash
        )
        if replaced or truncated or rewritten:
            self.reset = True
            self._offset = 0
            self._state = {}
            self._hash = ""
        self._dev, self._inode, self._size = stat.st_dev, stat.st_ino, stat.st_size

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(start_offset, line_without_newline) for each complete new line.

        The file is checked (and `reset` set) by this call, before the first line is pulled.
        """
        if self._done:
            return iter(())
        with open_regular(self.path) as handle:
            self._check(handle, os.fstat(handle.fileno()))
        return self._iter()

    @property
    def start(self) -> int:
        """The offset reading starts at (0 after a reset); known once `lines()` was called."""
        return self._start.offset if not self.reset else 0

    def _iter(self) -> Iterator[tuple[int, bytes]]:
        # Newlines are found with bytes.find (memchr): bytes.split(b"\n") walks byte by byte
        # and costs more than all the per-line bookkeeping together. The offset after a line
        # is recorded before it is yielded: a consumer may stop after any line.
        max_line = self.max_line
        with open_regular(self.path) as handle:
            handle.seek(self._offset)
            base = self._offset  # file offset of the chunk's first byte
            pending: list[bytes] = []  # the start of a line begun in earlier chunks
            pending_len = 0
            overlong: Condenser | None = None  # that line is over max_line: read with its texts cut
            while chunk := handle.read(self.chunk_size):
                find = chunk.find
                at = 0  # start of the next line in this chunk
                newline = find(b"\n")
                if newline >= 0:
                    self._hash = None
                    if pending or overlong:  # a line begun in an earlier chunk ends here
                        start = base - pending_len
                        self._offset = base + newline + 1
                        at = newline + 1
                        if overlong is None and pending_len + newline > max_line:
                            overlong = Condenser(max_line)
                            overlong.feed(b"".join(pending))
                        if overlong is not None:
                            overlong.feed(chunk[:newline])
                            yield from self._over_cap(start, overlong.result())
                        else:
                            pending.append(chunk[:newline])
                            yield start, b"".join(pending)
                        pending, pending_len, overlong = [], 0, None
                        newline = find(b"\n", at)
                while newline >= 0:
                    line = chunk[at:newline]
                    self._offset = base + newline + 1
                    if newline - at > max_line:
                        yield from self._over_cap(base + at, condense(line, max_line))
                    else:
                        yield base + at, line
                    at = newline + 1
                    newline = find(b"\n", at)
                if at < len(chunk):  # the start of a line the next chunk completes
                    pending_len += len(chunk) - at
                    if overlong is None and pending_len > max_line:
                        overlong = Condenser(max_line)
                        overlong.feed(b"".join(pending))
                        pending = []
                    if overlong is not None:
                        overlong.feed(chunk[at:])
                    else:
                        pending.append(chunk[at:])
                base += len(chunk)
            self._size = max(self._size, handle.tell())
            if self._hash is None:
                self._hash = _window_hash(handle, self._offset)
        self._done = True

    def _over_cap(self, start: int, line: bytes | None) -> Iterator[tuple[int, bytes]]:
        """A line over the cap: yielded with its texts cut (`cut`), or dropped (`skipped`)."""
        if line is None:
            self.skipped += 1
            return
        self.cut += 1
        yield start, line


def read_lines(
    path: str | os.PathLike, cursor: Cursor | None = None, chunk_size: int = CHUNK
) -> Iterator[tuple[int, bytes]]:
    """Yield (start_offset, line) for the complete lines after `cursor` (see LineReader)."""
    yield from LineReader(path, cursor, chunk_size).lines()


# --- cheap JSON for one line ------------------------------------------------------------

# scan_value(text, index) -> (value, end): parse one JSON value starting at `index` (the C
# scanner json.loads uses; typeshed mistypes make_scanner's argument).
scan_value: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]
)
BLOB_MIN = 4096  # base64 payloads longer than this are dropped before parsing


def elide_blobs(line: bytes) -> bytes:
    """Drop long base64 payloads (images, documents) from a raw line: never read, costly."""
    for key in (b'"data":"', b'"base64":"'):
        at = line.find(key)
        while at >= 0:
            start = at + len(key)
            close = line.find(b'"', start)
            if close < 0:
                break
            if close - start > BLOB_MIN and line.find(b"\\", start, close) < 0:
                line = line[:start] + line[close:]
                close = start
            at = line.find(key, close)
    return line


def loads_object(line: bytes | str) -> dict | None:
    """One JSONL line as a dict; None for bad JSON or a non-object.

    Calls the C scanner directly: json.loads(bytes) adds encoding detection and a whitespace
    regex per call, which is measurable at millions of lines. Long base64 blobs are elided.
    A byte that is not UTF-8 becomes U+FFFD: one stray Latin-1 byte must not lose a run's request.
    """
    if isinstance(line, bytes) and b"base64" in line:
        line = elide_blobs(line)
    if isinstance(line, bytes):
        try:
            text = line.decode()
        except UnicodeDecodeError:
            text = line.decode("utf-8", "replace")
    else:
        text = line
    try:
        obj, end = scan_value(text, 0)
        if end != len(text) and text[end:].strip():
            return None
    except (UnicodeDecodeError, StopIteration, ValueError, RecursionError):
        try:  # leading whitespace and other oddities: the slow, complete path
            obj = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None
    return obj if isinstance(obj, dict) else None
