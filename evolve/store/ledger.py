"""state.db: everything volatile (cursors, runs, impressions, invocations, events, reflections).

SQLite in WAL mode with a short busy timeout and short transactions, so agent hooks and
`evolve watch` never wait long on each other. The schema carries a version and is
upgraded by the ordered MIGRATIONS (store/schema.py); never edit one that has shipped.

The one door to the tables: their queries live here, by table. Three stages keep their
own statements beside the logic they serve: the observer's batched writes of runs and
cursors (`observe.ingest`), the lesson judge's reads of a session's context and writes of
its verdicts (`observe.adherence`), and the metrics' JSON1 loaders (`metrics.rates`,
`metrics.lessons`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from evolve.store.schema import MIGRATIONS

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any


def connect(path: Path, timeout_s: float = 5.0) -> sqlite3.Connection:
    """Open (creating/upgrading) state.db. Autocommit mode: use `transaction()`.

    In a read-only home it is opened read-only (`read_only(conn)` says so), so reading
    commands still work; a write then raises sqlite3.OperationalError ("readonly database").
    """
    if not _writable(path):
        return _connect_read_only(path, timeout_s)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    migrate(conn)
    return conn


def _writable(path: Path) -> bool:
    """Whether state.db (or, before it exists, its folder) can be written (EROFS, permissions)."""
    folder = next((p for p in (path.parent, *path.parents) if p.exists()), path.parent)
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _connect_read_only(path: Path, timeout_s: float) -> sqlite3.Connection:
    """`mode=ro` (sees a live writer's WAL), else `immutable=1` (no -shm file can be made)."""
    conn = None
    if path.exists():
        for mode in ("mode=ro", "immutable=1"):
            conn = sqlite3.connect(
                f"file:{quote(str(path))}?{mode}", uri=True, timeout=timeout_s, check_same_thread=False
            )
            try:
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
                break
            except sqlite3.OperationalError:
                conn.close()
                conn = None
    if conn is None:  # nothing recorded yet (or unreadable): an empty ledger to read from
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        migrate(conn)
    conn.isolation_level = None
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA query_only = ON")
    return conn


def read_only(conn: sqlite3.Connection) -> bool:
    """Whether `conn` was opened read-only (a read-only home): callers skip their caches and spools."""
    return bool(conn.execute("PRAGMA query_only").fetchone()[0])


@contextmanager
def opened(path: Path, timeout_s: float = 5.0) -> Iterator[sqlite3.Connection]:
    """`with ledger.opened(home.state_db) as conn:` — connected, and always closed."""
    conn = connect(path, timeout_s)
    try:
        yield conn
    finally:
        conn.close()


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations; returns the schema version now in force."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version >= len(MIGRATIONS):
        return version
    with transaction(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for number in range(version, len(MIGRATIONS)):
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
    return len(MIGRATIONS)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A short write transaction (BEGIN IMMEDIATE, so writers queue instead of deadlocking)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# -- agents ------------------------------------------------------------------------------
def ensure_agent(conn: sqlite3.Connection, agent: str, now: float | None = None) -> None:
    conn.execute("INSERT OR IGNORE INTO agents (name, created_at) VALUES (?, ?)", (agent, now or time.time()))


def agent_row(conn: sqlite3.Connection, agent: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM agents WHERE name = ?", (agent,)).fetchone()


def agent_rows(conn: sqlite3.Connection, *, dirty_only: bool = False) -> dict[str, sqlite3.Row]:
    """Every agent's row by name (`dirty_only`: those the dirty gate lets through)."""
    sql = "SELECT * FROM agents" + (" WHERE dirty = 1 AND removed_at IS NULL" if dirty_only else "")
    return {r["name"]: r for r in conn.execute(sql)}


def agent_names(conn: sqlite3.Connection) -> set[str]:
    """The names of the agents not removed (the cycle's cheap list of who is known)."""
    return {row[0] for row in conn.execute("SELECT name FROM agents WHERE removed_at IS NULL")}


def last_reflection_at(conn: sqlite3.Connection, agent: str) -> float | None:
    row = conn.execute("SELECT last_reflection_at FROM agents WHERE name = ?", (agent,)).fetchone()
    return row["last_reflection_at"] if row else None


def mark_removed(conn: sqlite3.Connection, agent: str, now: float | None = None) -> None:
    ensure_agent(conn, agent, now)
    conn.execute("UPDATE agents SET removed_at = ?, dirty = 0 WHERE name = ?", (now or time.time(), agent))


def purge_agent(conn: sqlite3.Connection, agent: str) -> int:
    """Delete every row about the agent, from every table with an `agent` column."""
    deleted = 0
    with transaction(conn):
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table_name in tables:
            columns = {c[1] for c in conn.execute(f'PRAGMA table_info("{table_name}")')}
            if "agent" in columns:
                deleted += conn.execute(f'DELETE FROM "{table_name}" WHERE agent = ?', (agent,)).rowcount
        deleted += conn.execute("DELETE FROM agents WHERE name = ?", (agent,)).rowcount
    return deleted


def mark_dirty(conn: sqlite3.Connection, agent: str, now: float | None = None) -> None:
    ensure_agent(conn, agent, now)
    now = now or time.time()
    conn.execute(
        "UPDATE agents SET dirty = 1, dirty_at = COALESCE(dirty_at, ?), activity_at = ? WHERE name = ?",
        (now, now, agent),
    )


def clear_dirty(conn: sqlite3.Connection, agent: str, started: float) -> None:
    """After a reflection that began at `started`: clean unless something arrived since."""
    conn.execute(
        "UPDATE agents SET dirty = 0, dirty_at = NULL WHERE name = ? "
        "AND (activity_at IS NULL OR activity_at <= ?)",
        (agent, started),
    )


def set_paused(conn: sqlite3.Connection, agent: str, paused: bool) -> None:
    ensure_agent(conn, agent)
    conn.execute("UPDATE agents SET paused = ? WHERE name = ?", (int(paused), agent))


# -- events ------------------------------------------------------------------------------
def add_event(
    conn: sqlite3.Connection,
    agent: str,
    kind: str,
    data: dict[str, Any],
    now: float | None = None,
    *,
    dirty: bool = True,
) -> None:
    """A system event for the next reflection bundle (human edit, revert, failure…)."""
    conn.execute(
        "INSERT INTO events (agent, kind, at, data) VALUES (?, ?, ?, ?)",
        (agent, kind, now or time.time(), json.dumps(data, ensure_ascii=False)),
    )
    if dirty:
        mark_dirty(conn, agent, now)


def events_since(conn: sqlite3.Connection, agent: str, since: float | None) -> list[dict]:
    rows = conn.execute(
        "SELECT kind, at, data FROM events WHERE agent = ? AND at > ? ORDER BY at", (agent, since or 0.0)
    ).fetchall()
    return [{"kind": r["kind"], "at": r["at"], **json.loads(r["data"])} for r in rows]


def events_of_kind(conn: sqlite3.Connection, agent: str, kind: str) -> list[dict]:
    """Every event of one kind for the agent, oldest first (its data)."""
    return [
        json.loads(r["data"])
        for r in conn.execute(
            "SELECT data FROM events WHERE agent = ? AND kind = ? ORDER BY at", (agent, kind)
        )
    ]


# -- runs (written by observe.ingest) ----------------------------------------------------
def pending_run_rows(conn: sqlite3.Connection, agent: str, since: float | None) -> list[sqlite3.Row]:
    """Active (not superseded) runs observed after `since`, in the order they happened."""
    return conn.execute(
        "SELECT id, path, session, idx, observed_at, facts FROM runs "
        "WHERE agent = ? AND superseded = 0 AND observed_at > ? ORDER BY started_at, path, idx",
        (agent, since or 0.0),
    ).fetchall()


def older_runs(conn: sqlite3.Connection, agent: str, since_stamp: str) -> tuple[int, str | None]:
    """How many of the agent's active runs started before `since_stamp`, and the oldest start."""
    row = conn.execute(
        "SELECT count(*), min(started_at) FROM runs WHERE agent = ? AND superseded = 0 AND started_at < ?",
        (agent, since_stamp),
    ).fetchone()
    return int(row[0]), row[1]


def run_row(conn: sqlite3.Connection, agent: str, path: str, idx: int) -> sqlite3.Row | None:
    return conn.execute(
        "SELECT id, session, facts FROM runs WHERE agent = ? AND path = ? AND idx = ?", (agent, path, idx)
    ).fetchone()


def evidence_counts(
    conn: sqlite3.Connection, agent: str, since: float | None
) -> tuple[list[object], list[object]]:
    """What changed since `since`: counts and newest ids of runs, and of events (a reflection's id)."""
    runs = conn.execute(
        "SELECT COUNT(*), MAX(observed_at), MAX(id) FROM runs WHERE agent = ? AND observed_at > ?",
        (agent, since or 0.0),
    ).fetchone()
    events = conn.execute(
        "SELECT COUNT(*), MAX(id) FROM events WHERE agent = ? AND at > ?", (agent, since or 0.0)
    ).fetchone()
    return list(runs), list(events)


# -- cursors (written by observe.ingest) -------------------------------------------------
def cursor_rows(conn: sqlite3.Connection, agent: str | None = None) -> list[sqlite3.Row]:
    """(agent, path, adapter, cursor) of every file observed (for one agent, or all)."""
    if agent is None:
        return conn.execute("SELECT agent, path, adapter, cursor FROM cursors").fetchall()
    return conn.execute(
        "SELECT agent, path, adapter, cursor FROM cursors WHERE agent = ?", (agent,)
    ).fetchall()


def cursor_adapters(conn: sqlite3.Connection, agent: str) -> dict[str, str]:
    """Path → the format each of the agent's files is observed with: its runs' source."""
    return dict(conn.execute("SELECT path, adapter FROM cursors WHERE agent = ?", (agent,)).fetchall())


# -- reflections and cycles --------------------------------------------------------------
def record_reflection(
    conn: sqlite3.Connection,
    reflection_id: str,
    agent: str,
    at: float,
    outcome: str,
    commit: str | None,
    data: dict[str, Any],
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO reflections (id, agent, at, outcome, commit_sha, data) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (reflection_id, agent, at, outcome, commit, json.dumps(data)),
    )


def mark_reflected(conn: sqlite3.Connection, agent: str, at: float, reflection_id: str | None) -> None:
    """The agent reflected at `at`: the gap starts, and it is clean unless something arrived since."""
    conn.execute(
        "UPDATE agents SET last_reflection_at = ?, last_reflection_id = ? WHERE name = ?",
        (at, reflection_id, agent),
    )
    clear_dirty(conn, agent, at)


def reflection_rows(conn: sqlite3.Connection, agent: str, since: float = 0.0) -> list[sqlite3.Row]:
    """The agent's recorded reflections at or after `since`, oldest first."""
    return conn.execute(
        "SELECT id, at, outcome, commit_sha, data FROM reflections WHERE agent = ? AND at >= ? ORDER BY at",
        (agent, since),
    ).fetchall()


def record_sync(conn: sqlite3.Connection, agent: str, at: float, state: str, detail: str, ok: bool) -> int:
    """The outcome of one sync; returns how many failed in a row now (0 after a success)."""
    row = conn.execute("SELECT failures, ok_at FROM syncs WHERE agent = ?", (agent,)).fetchone()
    failures = 0 if ok else (row["failures"] if row else 0) + 1
    ok_at = at if ok else (row["ok_at"] if row else None)
    conn.execute(
        "INSERT OR REPLACE INTO syncs (agent, at, state, detail, ok_at, failures) VALUES (?, ?, ?, ?, ?, ?)",
        (agent, at, state, detail[:1000], ok_at, failures),
    )
    return failures


def forget_sync(conn: sqlite3.Connection, agent: str) -> None:
    """The agent syncs no more (its remote removed): no last sync is kept for it."""
    conn.execute("DELETE FROM syncs WHERE agent = ?", (agent,))


def sync_rows(conn: sqlite3.Connection) -> dict[str, sqlite3.Row]:
    """Each agent's last sync: at, state, detail, ok_at (the last success), failures in a row."""
    return {row["agent"]: row for row in conn.execute("SELECT * FROM syncs")}


def last_failure(conn: sqlite3.Connection, agent: str) -> sqlite3.Row | None:
    """The agent's latest failed reflection if nothing succeeded since (`at`, `data`), else None."""
    return conn.execute(
        "SELECT at, data FROM reflections WHERE agent = ? AND outcome = 'failed' "
        "AND at >= COALESCE((SELECT last_reflection_at FROM agents WHERE name = ?), 0) "
        "ORDER BY at DESC LIMIT 1",
        (agent, agent),
    ).fetchone()


def record_cycle(conn: sqlite3.Connection, at: float, dry_run: bool, plan: dict[str, Any]) -> None:
    conn.execute(
        "INSERT INTO cycles (at, dry_run, plan) VALUES (?, ?, ?)", (at, int(dry_run), json.dumps(plan))
    )


def last_cycle_at(conn: sqlite3.Connection) -> float | None:
    row = conn.execute("SELECT MAX(at) AS at FROM cycles WHERE dry_run = 0").fetchone()
    return row["at"] if row else None


# -- impressions, invocations, retention -------------------------------------------------
def add_impressions(conn: sqlite3.Connection, rows: list[tuple[str, str, str, float]]) -> int:
    """(agent, skill, session, at) rows, one per (agent, skill, session); how many were new."""
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO impressions (agent, skill, session, at) VALUES (?, ?, ?, ?)", rows
    )
    return conn.total_changes - before


def prune(conn: sqlite3.Connection, cutoff: float, cutoff_stamp: str) -> dict[str, int]:
    """Delete run data older than `cutoff` (runs by their start stamp); rows deleted per table.

    Cursors stay (a transcript is never re-read because its old runs were dropped), and so
    do reflections (the report's reference points).
    """
    statements = {
        "runs": (
            "DELETE FROM runs WHERE started_at < ? OR (started_at IS NULL AND observed_at < ?)",
            (cutoff_stamp, cutoff),
        ),
        "impressions": ("DELETE FROM impressions WHERE at < ?", (cutoff,)),
        "memo_impressions": ("DELETE FROM memo_impressions WHERE at < ?", (cutoff,)),
        "session_starts": ("DELETE FROM session_starts WHERE at < ?", (cutoff,)),
        "ignored": ("DELETE FROM ignored WHERE at < ?", (cutoff,)),
        "invocations": ("DELETE FROM invocations WHERE at < ?", (cutoff,)),
        "events": ("DELETE FROM events WHERE at < ?", (cutoff,)),
        "cycles": ("DELETE FROM cycles WHERE at < ?", (cutoff,)),
    }
    deleted: dict[str, int] = {}
    with transaction(conn):
        for table, (sql, args) in statements.items():
            deleted[table] = conn.execute(sql, args).rowcount
    return deleted


def record_invocation(
    conn: sqlite3.Connection,
    agent: str,
    skill: str,
    session: str | None,
    run_idx: int | None,
    tool_use_id: str | None,
    source: str,
    now: float | None = None,
) -> bool:
    """One skill invocation, deduplicated by tool-use id; True when it was new."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO invocations (agent, skill, session, run_idx, tool_use_id, source, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (agent, skill, session, run_idx, tool_use_id, source, now or time.time()),
    )
    if cur.rowcount == 0 and tool_use_id:
        conn.execute(  # a hook saw it first: attach the run the transcript now places it in
            "UPDATE invocations SET run_idx = COALESCE(run_idx, ?), session = COALESCE(session, ?) "
            "WHERE agent = ? AND tool_use_id = ?",
            (run_idx, session, agent, tool_use_id),
        )
    return cur.rowcount > 0


# -- lessons: what a session's context carried, and the runs that ignored one -------------
def add_context(
    conn: sqlite3.Connection,
    agent: str,
    session: str,
    at: float,
    tip: str | None,
    memo: dict[str, list[str]],
) -> None:
    """A session start: the branch's tip (the latest start's), the memo bullets shown.

    The session's runs are judged again: its context may have been stored after them.
    """
    conn.execute(
        "INSERT INTO session_starts (agent, session, tip, at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (agent, session) DO UPDATE SET tip = excluded.tip, at = excluded.at",
        (agent, session, tip, at),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO memo_impressions (agent, lesson, section, session, tip, at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(agent, lesson, section, session, tip, at) for section, ids in memo.items() for lesson in ids],
    )
    conn.execute(
        "UPDATE runs SET judged = 0 WHERE agent = ? AND session = ? AND judged = 1", (agent, session)
    )


def ignored_rows(conn: sqlite3.Connection, agent: str, since: float = 0.0) -> list[sqlite3.Row]:
    """The runs that ignored a lesson, started at or after `since` (active runs only), oldest first."""
    return conn.execute(
        "SELECT i.* FROM ignored i JOIN runs r ON r.agent = i.agent AND r.path = i.path AND r.idx = i.idx "
        "WHERE i.agent = ? AND i.at >= ? AND r.superseded = 0 ORDER BY i.at, i.path, i.idx",
        (agent, since),
    ).fetchall()


# -- evals: each lesson's result with and without the agent's plugin (`evolve eval`) ---------
EVAL_FIELDS = (
    "kind",
    "lesson",
    "status",
    "score_with",
    "score_without",
    "delta",
    "runs_with",
    "runs_without",
    "cost_usd",
    "commit_sha",
    "detail",
)


def record_evals(
    conn: sqlite3.Connection, agent: str, run_id: str, at: float, tip: str | None, rows: list[dict[str, Any]]
) -> None:
    """One `evolve eval`: a row per lesson (EVAL_FIELDS), in one transaction."""
    with transaction(conn):
        conn.executemany(
            f"INSERT INTO evals (agent, run_id, tip, at, {', '.join(EVAL_FIELDS)}) "
            f"VALUES (?, ?, ?, ?, {', '.join('?' * len(EVAL_FIELDS))})",
            [(agent, run_id, tip, at, *(row[k] for k in EVAL_FIELDS)) for row in rows],
        )


def latest_evals(conn: sqlite3.Connection, agent: str) -> dict[tuple[str, str], sqlite3.Row]:
    """(kind, lesson) → its latest full result (a partial or failed run is never a result)."""
    rows = conn.execute(
        "SELECT * FROM evals e WHERE agent = ? AND status = 'full' AND id = (SELECT id FROM evals "
        "WHERE agent = e.agent AND kind = e.kind AND lesson = e.lesson AND status = 'full' "
        "ORDER BY at DESC, id DESC LIMIT 1)",
        (agent,),
    ).fetchall()
    return {(row["kind"], row["lesson"]): row for row in rows}
