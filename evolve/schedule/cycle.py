"""The background cycle: gather each agent's state cheaply, plan, record, reflect.

Cost follows the dirty agents: one query lists every agent's row; only dirty, unpaused
agents have their pending runs scored (no git, no model) to rank them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from evolve.home import Home
from evolve.metrics import usage
from evolve.schedule import pending
from evolve.schedule.rules import NOTHING_NEW, AgentState, CyclePlan, Rules, plan_cycle
from evolve.store import ledger
from evolve.store.locks import is_locked
from evolve.store.repo import LOCK
from evolve.workspace.agent import Agent, list_agents


@dataclass
class CycleResult:
    plan: CyclePlan
    at: float
    dry_run: bool
    outcomes: dict[str, dict] = field(default_factory=dict)

    def to_dict(self) -> dict:
        data = self.plan.to_dict()
        if self.outcomes:
            data["outcomes"] = self.outcomes
        return data


def dirty_rows(conn: sqlite3.Connection) -> dict[str, sqlite3.Row]:
    """The agents the dirty gate lets through: only these cost anything to plan."""
    return {r["name"]: r for r in conn.execute(
        "SELECT * FROM agents WHERE dirty = 1 AND removed_at IS NULL")}


def agent_states(conn: sqlite3.Connection, home: Home, names: list[str]) -> list[AgentState]:
    rows = dirty_rows(conn)
    states = []
    for name in names:
        row = rows.get(name)
        if row is None:
            states.append(AgentState(name, dirty=False))
            continue
        best, worth = 0.0, False
        if not row["paused"]:
            agent = Agent(home, name)
            runs = pending.scored_runs(conn, name, agent.config, agent.memo_text())
            best = max((r.score for r in runs), default=0.0)
            worth = any(r.reflect for r in runs)
        states.append(AgentState(
            name, dirty=True, paused=bool(row["paused"]), created_at=row["created_at"],
            last_reflection_at=row["last_reflection_at"], best_score=best,
            worth_reflecting=worth, waiting_since=row["dirty_at"],
            busy=not row["paused"] and is_locked(home.agent_dir(name) / ".git" / LOCK),
        ))
    return states


def rules_for(home: Home) -> Rules:
    from evolve import config as config_mod

    schedule = config_mod.load(home.config_file).schedule
    return Rules(schedule.min_gap_hours, schedule.force_after_days, schedule.max_agents_per_cycle)


def plan(conn: sqlite3.Connection, home: Home, now: float) -> CyclePlan:
    names = list_agents(home)
    known = {row[0] for row in conn.execute("SELECT name FROM agents")}
    missing = [name for name in names if name not in known]
    if missing:  # one transaction, and none at all in the usual case
        with ledger.transaction(conn):
            for name in missing:
                ledger.ensure_agent(conn, name, now)
    dirty = dirty_rows(conn)
    result = plan_cycle(agent_states(conn, home, [n for n in names if n in dirty]),
                        rules_for(home), now)
    for name in names:  # the dirty gate, without building a state per clean agent
        if name not in dirty:
            result.skipped[name] = NOTHING_NEW
    return result


def run_cycle(home: Home, *, now: float | None = None, dry_run: bool = False,
              reflect: Callable[[str, float], dict] | None = None) -> CycleResult:
    """Plan a cycle, record it, and (unless dry_run) reflect each selected agent."""
    now = now or time.time()
    conn = ledger.connect(home.state_db)
    try:
        cycle_plan = plan(conn, home, now)
        result = CycleResult(cycle_plan, now, dry_run)
        with ledger.transaction(conn):
            conn.execute("INSERT INTO cycles (at, dry_run, plan) VALUES (?, ?, ?)",
                         (now, int(dry_run), json.dumps(cycle_plan.to_dict())))
    finally:
        conn.close()
    if dry_run:
        return result
    if reflect is not None:
        for name in cycle_plan.selected:
            result.outcomes[name] = reflect(name, now)
    active = [n for n, why in cycle_plan.skipped.items() if why != NOTHING_NEW]
    conn = ledger.connect(home.state_db)
    try:  # retention, and fresh rate caches for the agents that had anything new
        usage.maintain(conn, home, now, names=[*cycle_plan.selected, *active])
    finally:
        conn.close()
    return result


def last_cycle_at(conn: sqlite3.Connection) -> float | None:
    row = conn.execute("SELECT MAX(at) AS at FROM cycles WHERE dry_run = 0").fetchone()
    return row["at"] if row else None
