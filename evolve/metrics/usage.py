"""Writing skill usage: impressions, skill reads, the spool records hooks leave, retention.

The session-start path only appends one spool line (`inject`); the handlers here store it
when the watcher (or the next reading command) drains the spool. Everything is
idempotent: impressions are unique per (agent, skill, session), invocations per tool-use id.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable

from evolve.clock import stamp
from evolve.home import Home
from evolve.names import name_problem, own_skill
from evolve.store import ledger
from evolve.workspace.folders import agent_named
from evolve.workspace.memo import HEADINGS, is_lesson_id

IMPRESSIONS = "impressions"  # spool record kinds (the `event` key)
INVOCATION = "invocation"


def store_impressions(
    conn: sqlite3.Connection, agent: str, session: str, skills: Iterable[str], at: float | None = None
) -> int:
    """One impression per skill for the session; returns how many were new."""
    at = at or time.time()
    with ledger.transaction(conn):
        return ledger.add_impressions(conn, [(agent, skill, session, at) for skill in skills])


def record_skill_read(
    conn: sqlite3.Connection,
    agent: str,
    skill: str,
    session: str | None,
    *,
    run_idx: int | None = None,
    tool_use_id: str | None = None,
    source: str = "api",
    at: float | None = None,
) -> bool:
    """The Python API's `record_skill_read`: one invocation, deduplicated by tool-use id.

    Without a run index the invocation is placed, when rates are computed, in the
    session's run that had started by `at`. True when it was new.
    """
    with ledger.transaction(conn):
        return ledger.record_invocation(conn, agent, skill, session, run_idx, tool_use_id, source, at)


# -- spool records -----------------------------------------------------------------------
def spooled_agent(home: Home, record: dict) -> str:
    """The agent a hook's record is for (a link's name counts for the agent it leads to)."""
    name = record.get("agent")
    if not isinstance(name, str) or name_problem(name):
        raise ValueError("no valid agent")
    agent = agent_named(home, name)
    if agent is None:
        raise ValueError(f"no agent {name!r}")
    return agent


def _session(record: dict) -> str | None:
    value = record.get("session_id", record.get("session"))
    return value if isinstance(value, str) and value else None


def _at(record: dict) -> float:
    at = record.get("at")
    return float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else time.time()


def handle_impressions(conn: sqlite3.Connection, home: Home, record: dict) -> str:
    """`{"event": "impressions", "agent", "session_id", "skills": [...], "memo"?, "tip"?, "at"}`.

    The skills listed become impressions; `memo` (section → ids of the bullets shown) and
    `tip` (the agent branch's commit) become the session's context for lesson_ignored.
    """
    name = spooled_agent(home, record)
    session, skills = _session(record), record.get("skills")
    if not isinstance(session, str) or not session or not isinstance(skills, list):
        raise ValueError("impressions need a session and a list of skills")
    at = _at(record)
    listed = [s for s in skills if isinstance(s, str) and not name_problem(s)]
    store_impressions(conn, name, session, listed, at)
    memo, tip = record.get("memo"), record.get("tip")
    if isinstance(memo, dict) or "tip" in record:
        shown = {
            section: [i for i in ids if is_lesson_id(i)]
            for section, ids in (memo.items() if isinstance(memo, dict) else ())
            if section in HEADINGS and isinstance(ids, list)
        }
        with ledger.transaction(conn):
            ledger.add_context(conn, name, session, at, tip if _is_sha(tip) else None, shown)
    return "impressions"


def _is_sha(value: object) -> bool:
    return isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value)


def handle_invocation(conn: sqlite3.Connection, home: Home, record: dict) -> str:
    """`{"event": "invocation", "agent", "skill", "session_id", "tool_use_id"?, "source"?}`."""
    name = spooled_agent(home, record)
    skill, session = record.get("skill"), _session(record)
    skill = own_skill(name, skill) if isinstance(skill, str) else skill
    if not isinstance(skill, str) or name_problem(skill):
        raise ValueError("no valid skill")
    tool_use_id = record.get("tool_use_id")
    run_idx = record.get("run_idx")
    source = record.get("source")
    record_skill_read(
        conn,
        name,
        skill,
        session if isinstance(session, str) else None,
        run_idx=run_idx if isinstance(run_idx, int) else None,
        tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
        source=source if isinstance(source, str) else "hook",
        at=_at(record),
    )
    return "invocation"


# -- retention ---------------------------------------------------------------------------
def prune_state(conn: sqlite3.Connection, now: float, retention_days: float) -> dict[str, int]:
    """Delete run data older than the retention (see ledger.prune); rows deleted per table."""
    cutoff = now - retention_days * 86_400.0
    return ledger.prune(conn, cutoff, stamp(cutoff))


def refresh_rates(
    conn: sqlite3.Connection,
    home: Home,
    agent: str,
    now: float | None = None,
    window_days: float | None = None,
) -> dict[str, dict]:
    """Compute the metrics of one agent and write the cache the session-start hook reads."""
    from evolve import config as config_mod
    from evolve.metrics.rates import skill_usage, write_rates_cache

    if window_days is None:
        window_days = config_mod.load(
            home.config_file, home.agent_dir(agent) / "agent.toml"
        ).limits.retention_days
    usage = skill_usage(conn, agent, window_days=window_days, now=now)
    if not ledger.read_only(conn):  # a read-only home: the cache is only a speed-up
        write_rates_cache(home.rates_cache(agent), usage, now)
    return usage


def maintain(
    conn: sqlite3.Connection, home: Home, now: float | None = None, names: list[str] | None = None
) -> dict:
    """The cycle's housekeeping: retention, then fresh rate caches (for `names`, or all)."""
    from evolve import config as config_mod
    from evolve.workspace.folders import list_agents

    now = now or time.time()
    retention = config_mod.load(home.config_file).limits.retention_days
    result: dict = {"deleted": prune_state(conn, now, retention), "refreshed": []}
    for name in list_agents(home) if names is None else names:
        try:
            refresh_rates(conn, home, name, now)
        except Exception:  # one agent's bad agent.toml never stops the others
            continue
        result["refreshed"].append(name)
    return result
