"""Observe: read what transcripts gained since last time and store runs with their facts.

Only new bytes are read (a cursor per agent and file in state.db). A file's new lines are
read in batches of at most BATCH_BYTES, each written in one short transaction together with
the cursor after it, so a crash never loses or double-counts a run, memory stays flat
whatever the file size, and the agent is marked dirty only when runs were added or changed.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evolve.clock import seconds
from evolve.config import SourcesConfig
from evolve.names import own_skill
from evolve.regular import open_regular
from evolve.store import codex_rollouts, ledger
from evolve.transcripts.classify import BUILT_IN, Classifier
from evolve.transcripts.reader import loads_object

if TYPE_CHECKING:
    from evolve.transcripts import Cursor, Run, Update

FORMATS = ("claude_code", "codex", "generic")  # what a person may name; "api" is the Python API's


@dataclass
class FileResult:
    path: str
    runs: int = 0  # runs added or changed
    bad_lines: int = 0  # corrupt
    over_cap: int = 0  # over the line cap, read with each text cut short
    over_cap_skipped: int = 0  # over the line cap and skipped
    reset: bool = False
    error: str | None = None


@dataclass
class ObserveResult:
    files: list[FileResult] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return sum(f.runs for f in self.files)

    @property
    def bad_lines(self) -> int:
        return sum(f.bad_lines for f in self.files)

    @property
    def over_cap(self) -> int:
        return sum(f.over_cap for f in self.files)

    @property
    def over_cap_skipped(self) -> int:
        return sum(f.over_cap_skipped for f in self.files)

    def to_dict(self) -> dict:
        return {
            "files": len(self.files),
            "runs": self.runs,
            "bad_lines": self.bad_lines,
            "over_cap_lines": self.over_cap,
            "over_cap_skipped": self.over_cap_skipped,
            "errors": {f.path: f.error for f in self.files if f.error},
            "reset": [f.path for f in self.files if f.reset],
        }


def source_files(sources: SourcesConfig) -> list[tuple[str, str]]:
    """(path, format) of every file the agent's `[sources]` match, sorted.

    Globs for Claude Code and the generic format; for Codex, the rollouts whose first line
    names a folder one of the `codex` rules covers.
    """
    found: dict[str, str] = {}
    for fmt, patterns in (("claude_code", sources.claude_code), ("generic", sources.generic)):
        for pattern in patterns:
            expanded = str(Path(pattern).expanduser())
            for match in glob.glob(expanded, recursive=True):  # noqa: PTH207 - absolute patterns
                if Path(match).is_file():
                    found.setdefault(str(Path(match).absolute()), fmt)
    if sources.codex:
        folders = [codex_rollouts.rule_folder(rule) for rule in sources.codex]
        for path in codex_rollouts.rollouts():
            if codex_rollouts.belongs(path, folders):
                found.setdefault(path, "codex")
    return sorted(found.items())


def guess_format(path: Path) -> str:
    """The format of a file by its first line: a Codex rollout, evolve's generic format or Claude Code."""
    try:
        with open_regular(path) as handle:  # a FIFO put there since discovery: never waited on
            head = handle.readline(65536)
    except OSError:
        return "claude_code"
    if b'"type":"session_meta"' in head[:300].replace(b": ", b":") and b'"payload"' in head:
        return "codex"  # its first line may be longer than what is read here
    first = loads_object(head)  # never raises: bad JSON, deep nesting → None
    generic_types = {
        "user",
        "human",
        "assistant",
        "tool_call",
        "tool_result",
        "skill",
        "interrupt",
        "api_error",
    }
    if isinstance(first, dict) and "payload" in first and first.get("type") in ("response_item", "event_msg"):
        return "codex"
    if (
        isinstance(first, dict)
        and first.get("type") in generic_types
        and "message" not in first
        and "uuid" not in first
    ):
        return "generic"
    return "claude_code"


BATCH_BYTES = 32 << 20  # bytes of transcript per transaction: ~300 runs, a few MB, ~20 ms held


def observe_file(
    conn: sqlite3.Connection,
    agent: str,
    path: Path,
    fmt: str,
    now: float | None = None,
    batch_bytes: int | None = None,
    classifier: Classifier = BUILT_IN,
) -> FileResult:
    """Advance one file; store its runs, invocations and cursor, a batch per transaction.

    Each transaction holds the runs of at most `batch_bytes` of new lines together with
    the cursor after them, so a crash never loses or double-counts a run, memory stays
    flat whatever the file size, and hooks never wait long on the database. `classifier`
    carries the agent's `[signals]` (`classify.for_signals`): facts depend on it.
    """
    from evolve.transcripts import Cursor, follow

    now = now or time.time()
    batch_bytes = batch_bytes or BATCH_BYTES
    key = str(path)
    result = FileResult(key)
    row = conn.execute("SELECT cursor FROM cursors WHERE agent = ? AND path = ?", (agent, key)).fetchone()
    cursor = Cursor.from_dict(json.loads(row["cursor"])) if row else None
    touched: set[int] = set()  # indices of the runs added or changed (a run may span batches)
    known: dict[int, tuple[int, float]] = {}  # before a reset: idx -> (hash of facts, observed_at)
    while True:
        try:
            update = follow(path, cursor, fmt, max_bytes=batch_bytes, classifier=classifier)
        except FileNotFoundError:
            result.error = "file disappeared"
            break
        except OSError as exc:
            result.error = f"cannot read: {exc.strerror or exc}"
            break
        if update.reset:
            touched.clear()
        touched |= _store_update(conn, agent, key, fmt, cursor, update, result, now, known)
        progressed = cursor is None or update.reset or update.cursor.offset > cursor.offset
        if not (update.more and progressed):
            break
        cursor = update.cursor
    result.runs = len(touched)
    return result


def _store_update(
    conn: sqlite3.Connection,
    agent: str,
    key: str,
    fmt: str,
    cursor: Cursor | None,
    update: Update,
    result: FileResult,
    now: float,
    known: dict[int, tuple[int, float]],
) -> set[int]:
    """One transaction: the runs an Update completed or changed, and the cursor after them.

    Returns the indices of the runs that were added or whose facts changed. On a reset the
    file's runs are dropped and re-read; `known` remembers them so that a run read again
    with the same facts (a file rewritten or replaced with the same lines) keeps its
    observed_at and does not count as new.
    """
    runs = update.runs + ([update.open_run] if update.open_run else [])
    for run, following in zip(update.runs, runs[1:], strict=False):
        run.user_edited_files = user_edited_files(run, following)
    moved = cursor is None or update.reset or update.cursor.offset != cursor.offset
    result.reset = result.reset or update.reset
    result.bad_lines += update.bad_lines
    result.over_cap += update.over_cap
    result.over_cap_skipped += update.over_cap_skipped
    with ledger.transaction(conn):
        if update.reset:
            rows = conn.execute(
                "SELECT idx, facts, observed_at FROM runs WHERE agent = ? AND path = ?", (agent, key)
            ).fetchall()
            known.update({r["idx"]: (hash(_canonical(r["facts"])), r["observed_at"]) for r in rows})
            conn.execute("DELETE FROM runs WHERE agent = ? AND path = ?", (agent, key))
        added = _store_runs(conn, agent, key, runs, now, known)
        for index in update.superseded:
            conn.execute(
                "UPDATE runs SET superseded = 1 WHERE agent = ? AND path = ? AND idx = ?", (agent, key, index)
            )
        conn.execute(
            "INSERT INTO cursors (agent, path, adapter, cursor, skipped, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent, path) DO UPDATE SET "
            "adapter = excluded.adapter, cursor = excluded.cursor, "
            "skipped = cursors.skipped * (1 - ?) + excluded.skipped, updated_at = excluded.updated_at",
            (
                agent,
                key,
                fmt,
                _to_json(update.cursor),
                update.bad_lines + update.over_cap_skipped,  # every line skipped
                now,
                int(update.reset),
            ),
        )
        if moved and (added or update.superseded):
            ledger.mark_dirty(conn, agent, now)
    return added


_FIELDS: dict[type, tuple[str, ...]] = {}


def _to_json(obj: Any, sort: bool = False) -> str:
    """The JSON of a Run's or Cursor's fields, without asdict's deep copy.

    asdict copies a cursor's whole parser state first (~20 ms on a big file); msgspec
    encodes a run's facts ~6x faster than json.dumps (one run is stored per call). A
    cursor's dicts keep their order (the adapter evicts its oldest entries first).
    """
    names = _FIELDS.get(type(obj))
    if names is None:
        names = _FIELDS[type(obj)] = tuple(f.name for f in dataclasses.fields(obj))
    return _encoders()[sort]({name: getattr(obj, name) for name in names}).decode()


def _canonical(facts: str) -> str:
    """Stored facts in today's encoding (older rows were written by json.dumps)."""
    return _encoders()[True](json.loads(facts)).decode()


@functools.cache
def _encoders() -> tuple[Callable[[Any], bytes], Callable[[Any], bytes]]:
    """(insertion order, sorted keys) JSON encoders; msgspec is imported on first use."""
    import msgspec

    return msgspec.json.Encoder().encode, msgspec.json.Encoder(order="sorted").encode


_UPSERT_RUN = (
    "INSERT INTO runs (agent, path, session, idx, started_at, ended_at, cwd, complete, "
    "superseded, tail_uuid, facts, observed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT (agent, path, idx) DO UPDATE SET session = excluded.session, "
    "started_at = excluded.started_at, ended_at = excluded.ended_at, cwd = excluded.cwd, "
    "complete = excluded.complete, superseded = excluded.superseded, "
    "tail_uuid = excluded.tail_uuid, facts = excluded.facts, observed_at = excluded.observed_at, "
    "judged = 0"
)


def _store_runs(
    conn: sqlite3.Connection,
    agent: str,
    path: str,
    runs: list,
    now: float,
    known: dict[int, tuple[int, float]],
) -> set[int]:
    """Upsert runs (one file's, consecutive indices); the indices added or changed.

    The stored facts of the whole range are read in one query and the rows written in one
    executemany: a batch holds dozens of runs, and a statement per run doubled the cost.
    """
    if not runs:
        return set()
    stored = dict(
        conn.execute(
            "SELECT idx, facts FROM runs WHERE agent = ? AND path = ? AND idx BETWEEN ? AND ?",
            (agent, path, min(r.index for r in runs), max(r.index for r in runs)),
        ).fetchall()
    )
    rows, changed = [], set()
    for run in runs:
        for skill in run.skills:  # a session through the agent's plugin names them `<agent>:<skill>`
            skill["name"] = own_skill(agent, skill.get("name", ""))
        facts = _to_json(run, sort=True)
        old = stored.get(run.index)
        if old == facts or old is not None and _canonical(old) == facts:
            continue
        observed = now
        before = known.get(run.index) if old is None else None
        if before is not None and before[0] == hash(facts):
            observed = before[1]  # the same run read again after a reset: not new
        else:
            changed.add(run.index)
        rows.append(
            (
                agent,
                path,
                run.session_id,
                run.index,
                run.started_at,
                run.ended_at,
                run.cwd,
                int(run.complete),
                int(run.superseded),
                run.tail_uuid,
                facts,
                observed,
            )
        )
        if run.skills:  # used when it happened, not when read
            used_at = seconds(run.ended_at or run.started_at) or now
        for number, skill in enumerate(run.skills):
            name = skill.get("name", "")
            call_id = skill.get("tool_use_id") or f"run:{path}:{run.index}:{number}:{name}"
            ledger.record_invocation(
                conn, agent, name, run.session_id, run.index, call_id, "transcript", used_at
            )
    conn.executemany(_UPSERT_RUN, rows)
    return changed


def observe(
    conn: sqlite3.Connection,
    agent: str,
    files: Iterable[tuple[str, str]],
    progress: Callable[[int, int], None] | None = None,
    now: float | None = None,
    classifier: Classifier = BUILT_IN,
) -> ObserveResult:
    """Observe every (path, format); one file failing never stops the others."""
    ledger.ensure_agent(conn, agent, now)
    result = ObserveResult()
    items = list(files)
    for number, (path, fmt) in enumerate(items, 1):
        result.files.append(observe_file(conn, agent, Path(path), fmt, now, classifier=classifier))
        if progress:
            progress(number, len(items))
    return result


def user_edited_files(run: Run, following: Run) -> list[str]:
    """Files the run wrote that changed between its end and the next human request.

    Nobody but the person works in between (the agent had answered), so a newer mtime in
    that window is the user's edit: the post-use edit signal for every transcript source.
    A second of slack after the run's end absorbs the timestamps' one-second precision.
    """
    if not run.files_written:  # most runs: no need to parse their timestamps
        return []
    end, nxt = seconds(run.ended_at), seconds(following.started_at)
    if end is None or nxt is None:
        return []
    edited = []
    for name in run.files_written:  # os.path: pathlib costs ~25 µs a file on the hot path
        path = name if os.path.isabs(name) or not run.cwd else os.path.join(run.cwd, name)  # noqa: PTH117, PTH118
        try:
            mtime = os.stat(path).st_mtime  # noqa: PTH116
        except (OSError, ValueError):
            continue
        if end + 1.0 < mtime <= nxt + 1.0:
            edited.append(name)
    return edited
