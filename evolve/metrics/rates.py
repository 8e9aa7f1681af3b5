"""Skill metrics from state.db: impressions, invocations and the three rates (docs/metrics.md).

The counting is pure (`tally`, over plain run records) so hand-built histories test it
exactly; the loaders read only the columns it needs (JSON1 `json_extract`, no
`json.loads` over 100,000 facts). Every rate is computed over a stated window
(`[limits] retention_days` by default) and is None where there is no data. The rates
the session-start hook ranks by are written to a small cache (`write_rates_cache`), so
the hot path never computes them.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evolve.clock import seconds, stamp
from evolve.config import LimitsConfig
from evolve.store import ledger
from evolve.store.files import atomic_write

DAY = 86_400.0
RATE_KEYS = ("invocation_rate", "post_use_edit_rate", "ineffective_rate")


@dataclass(slots=True)
class RunRecord:
    """The facts of one run that the rates need (see docs/metrics.md)."""

    session: str
    path: str
    idx: int
    started_at: str | None = None
    correction: bool = False
    aborted: bool = False
    ended_real: bool = False  # ended in a real (not transient) error
    transient: bool = False  # had transient errors
    real_error: bool = False  # had at least one real error
    files_written: tuple[str, ...] = ()
    user_edited: tuple[str, ...] = ()  # files the run wrote that the user changed before the next request
    source: str = "generic"  # the harness whose transcript holds it (claude_code, codex, generic, api)


@dataclass(slots=True)
class Counts:
    """Run counts behind one skill's rates (in one bucket)."""

    shown: int = 0  # runs whose session had an impression of the skill
    shown_invoked: int = 0  # of those, runs that invoked it
    invoked: int = 0  # runs that invoked it
    edited_after: int = 0  # invoked runs the user corrected afterwards
    judged: int = 0  # invoked runs neither aborted nor ending in transient trouble
    ineffective: int = 0  # judged runs that ended in a real error

    def rates(self) -> dict[str, float | None]:
        return {
            "invocation_rate": _ratio(self.shown_invoked, self.shown),
            "post_use_edit_rate": _ratio(self.edited_after, self.invoked),
            "ineffective_rate": _ratio(self.ineffective, self.judged),
        }


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def judged(run: RunRecord) -> bool:
    """Counts for ineffectiveness: not aborted, and no transient trouble unless it ended in a real error.

    Facts do not say whether a transient error came last, so a run with transient errors
    that did not end in a real one is left out of both parts: the environment never
    counts for or against a skill.
    """
    return not run.aborted and (run.ended_real or not run.transient)


def edited_after(run: RunRecord, following: RunRecord | None) -> bool:
    """Whether the user corrected the run's result afterwards.

    The next request is a correction, or before it the user changed a file the run wrote
    (observe compares those files' mtimes with the run's end and the next request).
    """
    if run.user_edited:
        return True
    return following is not None and following.correction


def tally(
    runs: Iterable[RunRecord],
    shown: dict[str, set[str]],
    invoked: dict[tuple[str, int], set[str]],
    bucket: Callable[[RunRecord], object] | None = None,
) -> dict[tuple[str, object], Counts]:
    """(skill, bucket) → Counts. `runs` sorted by (path, idx); superseded runs left out.

    `shown`: session → skills with an impression; `invoked`: (session, run idx) → skills.
    Runs shown are counted per session, then spread over its skills (a session shown 120
    skills costs 120 additions, not 120 per run).
    """
    counts: dict[tuple[str, object], Counts] = {}
    runs_of: dict[str, dict[object, int]] = {}  # session → bucket → runs
    ordered = list(runs)
    for position, run in enumerate(ordered):
        key = bucket(run) if bucket else None
        if run.session in shown:
            per = runs_of.setdefault(run.session, {})
            per[key] = per.get(key, 0) + 1
        used = invoked.get((run.session, run.idx))
        if not used:
            continue
        seen = shown.get(run.session, ())
        nxt = ordered[position + 1] if position + 1 < len(ordered) else None
        after = edited_after(run, nxt if nxt is not None and nxt.path == run.path else None)
        fair = judged(run)
        for skill in used:
            entry = counts.setdefault((skill, key), Counts())
            entry.invoked += 1
            entry.shown_invoked += skill in seen
            entry.edited_after += after
            if fair:
                entry.judged += 1
                entry.ineffective += run.ended_real
    for session, per in runs_of.items():
        for skill in shown[session]:
            for key, number in per.items():
                found = counts.get((skill, key))
                if found is None:
                    found = counts[(skill, key)] = Counts()
                found.shown += number
    return counts


# -- time --------------------------------------------------------------------------------
def iso_week(run: RunRecord) -> str | None:
    """`2026-W07` for the week the run started (the report's buckets)."""
    when = seconds(run.started_at)
    if when is None:
        return None
    year, week, _ = datetime.fromtimestamp(when, UTC).isocalendar()
    return f"{year}-W{week:02d}"


# -- loading from state.db ---------------------------------------------------------------
_FACTS = (  # one JSON parse per run, in SQLite: the facts the rates need as a small array
    "json_extract(facts, '$.correction', '$.aborted', '$.ended_in_error', '$.errors', "
    "'$.transient_errors', '$.files_written', '$.user_edited_files')"
)
_RUN_COLUMNS = (
    f"SELECT session, path, idx, started_at, {_FACTS} FROM runs WHERE agent = ? AND superseded = 0 "
    "AND (started_at >= ? OR (started_at IS NULL AND observed_at >= ?))"
)


def _rows(conn: sqlite3.Connection, sql: str, args: tuple | list) -> list[tuple]:
    """Plain tuples (sqlite3.Row costs ~4x more over 100,000 rows)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, args).fetchall()


def _paths(value: object) -> tuple[str, ...]:
    if not value or not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _record(row: tuple) -> RunRecord:
    session, path, idx, started, raw = row
    try:
        correction, aborted, ended, errors, transient, written, edited = json.loads(raw)
    except (TypeError, ValueError):  # facts that are not an object: nothing to count
        correction = aborted = ended = errors = transient = written = edited = None
    real = _number(errors) > 0
    return RunRecord(
        session,
        path,
        idx,
        started,
        bool(correction),
        bool(aborted),
        bool(ended) and real,
        _number(transient) > 0,
        real,
        _paths(written),
        _paths(edited),
    )


_WINDOW = "agent = ? AND superseded = 0 AND (started_at >= ? OR (started_at IS NULL AND observed_at >= ?))"
_USED = (
    " AND session IN (SELECT session FROM impressions WHERE agent = ? "
    "UNION SELECT session FROM invocations WHERE agent = ? AND session IS NOT NULL)"
)


def load_runs(conn: sqlite3.Connection, agent: str, since: float) -> list[RunRecord]:
    """Active runs started since `since` with their facts and source, sorted by (path, idx)."""
    runs = [
        _record(row)
        for row in _rows(conn, _RUN_COLUMNS + " ORDER BY path, idx", [agent, stamp(since), since])
    ]
    return _with_sources(conn, agent, runs)


def _with_sources(conn: sqlite3.Connection, agent: str, runs: list[RunRecord]) -> list[RunRecord]:
    """Each run's source: the format its file is observed with (one small query per agent)."""
    if runs:
        sources = ledger.cursor_adapters(conn, agent)
        for run in runs:
            run.source = sources.get(run.path, "generic")
    return runs


def load_rated_runs(conn: sqlite3.Connection, agent: str, since: float) -> tuple[list[RunRecord], dict]:
    """The runs the rates need, and load_invoked's answer for them.

    Every run of a session that showed or used a skill, but facts only for the runs that
    invoked one and the run after each (all `tally` reads): 100,000 runs cost one light
    query instead of 100,000 fact parses.
    """
    light = _rows(
        conn,
        "SELECT id, session, path, idx, started_at FROM runs WHERE "
        + _WINDOW
        + _USED
        + " ORDER BY path, idx",
        [agent, stamp(since), since, agent, agent],
    )
    runs = [RunRecord(session, path, idx, started) for _, session, path, idx, started in light]
    invoked = load_invoked(conn, agent, since, runs)
    wanted: dict[int, int] = {}  # run id -> position
    for position, (run_id, session, path, idx, _) in enumerate(light):
        if (session, idx) in invoked:
            wanted[run_id] = position
            if position + 1 < len(light) and light[position + 1][2] == path:
                wanted[light[position + 1][0]] = position + 1
    ids = list(wanted)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        sql = (
            f"SELECT id, session, path, idx, started_at, {_FACTS} FROM runs "
            f"WHERE id IN ({','.join('?' * len(chunk))})"
        )
        for run_id, *row in _rows(conn, sql, chunk):
            runs[wanted[run_id]] = _record(tuple(row))
    return _with_sources(conn, agent, runs), invoked


def load_shown(conn: sqlite3.Connection, agent: str, since: float) -> dict[str, set[str]]:
    shown: dict[str, set[str]] = {}
    for session, skill in _rows(
        conn, "SELECT session, skill FROM impressions WHERE agent = ? AND at >= ?", (agent, since)
    ):
        found = shown.get(session)
        if found is None:
            found = shown[session] = set()
        found.add(skill)
    return shown


def load_invoked(
    conn: sqlite3.Connection, agent: str, since: float, runs: list[RunRecord]
) -> dict[tuple[str, int], set[str]]:
    """(session, run idx) → skills invoked there.

    An invocation not yet placed in a run (a hook or the API saw it before the transcript
    was observed) goes to the session's run that had started by then.
    """
    starts: dict[str, list[tuple[float, int]]] | None = None
    invoked: dict[tuple[str, int], set[str]] = {}
    for skill, session, run_idx, at in _rows(
        conn,
        "SELECT skill, session, run_idx, at FROM invocations WHERE agent = ? AND at >= ?",
        (agent, since),
    ):
        if session is None:
            continue
        if run_idx is None:
            if starts is None:
                starts = _starts(runs)
            items = starts.get(session)
            if not items:
                continue
            place = bisect.bisect_right(items, (at, float("inf"))) - 1
            run_idx = items[max(place, 0)][1]
        invoked.setdefault((session, run_idx), set()).add(skill)
    return invoked


def _starts(runs: list[RunRecord]) -> dict[str, list[tuple[float, int]]]:
    """Session → sorted (start time, run idx)."""
    starts: dict[str, list[tuple[float, int]]] = {}
    for run in runs:
        when = seconds(run.started_at)
        if when is not None:
            starts.setdefault(run.session, []).append((when, run.idx))
    for items in starts.values():
        items.sort()
    return starts


def skill_usage(
    conn: sqlite3.Connection,
    agent: str,
    *,
    window_days: float = LimitsConfig.retention_days,
    now: float | None = None,
) -> dict[str, dict]:
    """Name → impressions, invocations, last_used_at and the three rates (skills with any data).

    Impressions and invocations are counted over the window; last_used_at is the newest
    invocation kept in state.db. Used by `evolve skills`, the bundle, eviction and prune.
    """
    now = now or time.time()
    since = now - window_days * DAY
    usage: dict[str, dict] = {}

    def entry(name: str) -> dict:
        return usage.setdefault(
            name,
            {
                "impressions": 0,
                "invocations": 0,
                "last_used_at": None,
                "invocation_rate": None,
                "post_use_edit_rate": None,
                "ineffective_rate": None,
                "runs_shown": 0,
                "runs_invoked": 0,
                "window_days": window_days,
                "by_source": [],
            },
        )

    for skill, count, last in conn.execute(
        "SELECT skill, SUM(at >= ?), MAX(at) FROM invocations WHERE agent = ? GROUP BY skill", (since, agent)
    ):
        item = entry(skill)
        item["invocations"], item["last_used_at"] = count or 0, last
    shown = load_shown(conn, agent, since)
    for skills in shown.values():  # one impression per skill and session
        for skill in skills:
            entry(skill)["impressions"] += 1
    if not usage:
        return usage
    runs, invoked = load_rated_runs(conn, agent, since)
    counts = tally(runs, shown, invoked)
    for (skill, _), tallied in counts.items():
        item = entry(skill)
        item.update(tallied.rates())
        item["runs_shown"], item["runs_invoked"] = tallied.shown, tallied.invoked
    for skill, rows in by_source(tally(runs, shown, invoked, bucket=lambda run: run.source)).items():
        entry(skill)["by_source"] = rows
    return usage


def by_source(counts: dict[tuple[str, object], Counts]) -> dict[str, list[dict]]:
    """Skill → its runs and rates per source (harness), from a tally bucketed by source."""
    found: dict[str, list[dict]] = {}
    for (skill, source), tallied in sorted(counts.items(), key=lambda item: (item[0][0], str(item[0][1]))):
        found.setdefault(skill, []).append(
            {
                "source": source,
                "runs_shown": tallied.shown,
                "runs_invoked": tallied.invoked,
                **tallied.rates(),
            }
        )
    return found


def rates_text(usage: dict) -> str:
    """The rates for a reflection bundle's skill line: ' · used in 3 of 40 runs shown …'."""
    parts = []
    if usage.get("invocation_rate") is not None:
        parts.append(f"used in {usage['invocation_rate']:.0%} of the runs it was shown in")
    if usage.get("post_use_edit_rate") is not None:
        parts.append(f"corrected after {usage['post_use_edit_rate']:.0%} of its uses")
    if usage.get("ineffective_rate") is not None:
        parts.append(f"{usage['ineffective_rate']:.0%} of its uses ended in a real error")
    return "".join(f" · {p}" for p in parts)


# -- the hot path's cache ----------------------------------------------------------------
def write_rates_cache(path: Path, usage: dict[str, dict], now: float | None = None) -> Path:
    """Name → [impressions, runs shown, invocation rate] for `inject` to rank by (atomic write)."""
    data = {
        "computed_at": now or time.time(),
        "skills": {n: [u["impressions"], u["runs_shown"], u["invocation_rate"]] for n, u in usage.items()},
    }
    atomic_write(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
    return path
