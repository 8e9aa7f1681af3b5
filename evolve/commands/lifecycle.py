"""`evolve status`, `pause`, `resume`, `remove`: where each agent stands, and stopping it."""

from __future__ import annotations

import sqlite3
import sys
import time

from evolve.clock import stamp
from evolve.commands.output import emit_json, say, table
from evolve.errors import LockBusy, UserError
from evolve.home import Home
from evolve.names import check_name
from evolve.reflect import proposals
from evolve.schedule.rules import HOUR, ago
from evolve.store import ledger
from evolve.store.locks import FileLock, holder, is_locked
from evolve.store.repo import LOCK
from evolve.watch import service
from evolve.workspace.agent import Agent, list_agents


def _iso(value: float | None) -> str | None:
    return stamp(value) if value else None


def _agent_status(conn: sqlite3.Connection, home: Home, name: str, row) -> dict:
    from evolve.schedule import pending

    dirty = bool(row and row["dirty"])
    best, worth, count = 0.0, False, 0
    if dirty:  # only dirty agents have pending runs: cost follows them
        agent = Agent(home, name)
        runs = pending.scored_runs(conn, name, agent.config, agent.memo_text())
        best = max((r.score for r in runs), default=0.0)
        worth, count = any(r.reflect for r in runs), len(runs)
    return {
        "name": name,
        "dirty": dirty,
        "dirty_since": _iso(row["dirty_at"]) if row else None,
        "pending_runs": count,
        "pending_best_score": round(best, 3),
        "worth_reflecting": worth,
        "last_reflection_at": _iso(row["last_reflection_at"]) if row else None,
        "paused": bool(row and row["paused"]),
        "busy": is_locked(home.agent_dir(name) / ".git" / LOCK),
        "proposals": [p.id for p in proposals.pending(Agent(home, name))],  # waiting for a person
    }


def status(home: Home, as_json: bool = False) -> int:
    from evolve import config as config_mod

    watcher = service.state(home)
    every = config_mod.load(home.config_file).schedule.cycle_hours * HOUR
    with ledger.opened(home.state_db) as conn:
        codex = _codex_states(conn, home)
        rows = ledger.agent_rows(conn)
        agents = [_agent_status(conn, home, name, rows.get(name)) for name in list_agents(home)]
        last = ledger.last_cycle_at(conn)
    next_at = (max(last + every, time.time()) if last else time.time()) if watcher.running else None
    data = {
        "watcher": watcher.to_dict(home),
        "cycle_hours": every / HOUR,
        "last_cycle_at": _iso(last),
        "next_cycle_at": _iso(next_at),
        "agents": agents,
        "codex": codex,
    }
    if as_json:
        emit_json(data)
        return 0
    _print_status(data, last, next_at)
    return 0


def _codex_states(conn: sqlite3.Connection, home: Home) -> list[dict]:
    """Each Codex install and whether Codex runs its hooks (the spool drained first: its evidence)."""
    from evolve.integrations import codex
    from evolve.observe.records import drain_pending
    from evolve.workspace.links import UnreadableInstalls, load_installs

    try:
        if not load_installs(home, "codex"):
            return []
    except UnreadableInstalls as exc:  # status still answers; doctor names it too
        sys.stderr.write(f"evolve: warning: {exc}\n")
        return []
    drain_pending(conn, home)
    return codex.install_states(home)


def _print_status(data: dict, last: float | None, next_at: float | None) -> None:
    watcher, now = data["watcher"], time.time()
    if watcher["running"]:
        say(f"watcher: running (pid {watcher['pid'] or '?'}), log {watcher['log']}")
        due = "due now" if next_at is None or next_at <= now else f"in {ago(next_at - now)}"
        say(f"next cycle: {due} (every {data['cycle_hours']:g} h)")
    else:
        say(
            "watcher: not running — nothing is observed or reflected in the background; "
            "start it with `evolve watch --detach`"
        )
    say(f"last cycle: {ago(now - last) + ' ago' if last else 'never'}")
    if not data["agents"]:
        say("no agents; create one with `evolve init NAME`")
        return
    rows = []
    for a in data["agents"]:
        waiting = f"{len(a['proposals'])} proposal(s) to review" if a["proposals"] else ""
        state = ", ".join(
            w for w, on in (("paused", a["paused"]), ("busy", a["busy"]), (waiting, waiting)) if on
        )
        rows.append(
            [
                a["name"],
                f"yes ({a['pending_runs']} runs)" if a["dirty"] else "no",
                f"{a['pending_best_score']:.2f}" if a["dirty"] else "-",
                a["last_reflection_at"] or "never",
                state or "-",
            ]
        )
    say("")
    say(table(rows, ["AGENT", "NEW", "BEST", "LAST REFLECTION", "STATE"]))
    for a in data["agents"]:
        if a["proposals"]:
            ids = ", ".join(a["proposals"])
            say(f"{a['name']}: waiting for review: {ids} (`evolve proposals {a['name']}`)")
    for install in data["codex"]:
        say(f"codex: agent {install['agent']} in {install['folder']}: {install['state']}")


def _set_paused(home: Home, name: str, paused: bool) -> None:
    Agent.open(name, home)
    with ledger.opened(home.state_db) as conn:
        with ledger.transaction(conn):
            ledger.set_paused(conn, name, paused)


def pause(home: Home, name: str) -> int:
    _set_paused(home, name, True)
    say(
        f"paused learning for {name!r}: no reflections until `evolve resume {name}` "
        f"(its transcripts are still observed)"
    )
    return 0


def resume(home: Home, name: str) -> int:
    _set_paused(home, name, False)
    say(f"resumed learning for {name!r}")
    return 0


def _archive_target(home: Home, name: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target, number = f"{name}-{stamp}", 1
    while (home.archive_dir / target).exists():
        number += 1
        target = f"{name}-{stamp}-{number}"
    return target


def remove(home: Home, name: str, purge: bool = False, as_json: bool = False) -> int:
    """Move the repo to `<home>/archive/`, mark the agent removed; delete state only on --purge."""
    check_name(name, "agent")
    path = home.agent_dir(name)
    with ledger.opened(home.state_db) as conn:
        known = ledger.agent_row(conn, name) is not None
        if not (path / ".git").is_dir() and not (purge and known):
            raise UserError(f"no agent {name!r} in {home.root}; see `evolve agents`")
        archived = None
        if (path / ".git").is_dir():
            lock = FileLock(path / ".git" / LOCK, timeout=0)
            try:
                lock.acquire()
            except LockBusy:
                who = holder(path / ".git" / LOCK) or "another process"
                raise UserError(
                    f"agent {name!r} is busy ({who} holds its lock: a reflection is "
                    f"running); try again when it finishes"
                ) from None
            try:
                home.archive_dir.mkdir(parents=True, exist_ok=True)
                archived = home.archive_dir / _archive_target(home, name)
                path.rename(archived)
            finally:
                lock.release()
            with ledger.transaction(conn):
                ledger.mark_removed(conn, name)
        purged = ledger.purge_agent(conn, name) if purge else 0
    if as_json:
        emit_json(
            {
                "name": name,
                "archived_to": str(archived) if archived else None,
                "purged": purge,
                "rows_deleted": purged,
            }
        )
        return 0
    if archived:
        say(f"archived agent {name!r} to {archived}")
    if purge:
        say(
            f"deleted its state from {home.state_db} ({purged} row(s)); archived repositories "
            f"stay in {home.archive_dir} until you delete them"
        )
    else:
        say(f"its observed state is kept; `evolve remove {name} --purge` deletes it")
    return 0
