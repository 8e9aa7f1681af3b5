"""The background cycle: gather each agent's state cheaply, plan, record, reflect.

Cost follows the dirty agents: one query lists every agent's row; only dirty, unpaused
agents have their pending runs scored (no git, no model) to rank them.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from evolve import config as config_mod
from evolve.errors import ConfigError
from evolve.home import Home
from evolve.metrics import usage
from evolve.schedule import pending, rules
from evolve.schedule.rules import NOTHING_NEW, AgentState, CyclePlan, Rules, plan_cycle
from evolve.store import ledger
from evolve.store.locks import is_locked
from evolve.store.repo import LOCK
from evolve.workspace.agent import Agent
from evolve.workspace.folders import list_agents
from evolve.workspace.hold import hold_of


@dataclass(frozen=True)
class AgentOutcome:
    """What reflecting one selected agent did: the cycle's typed view of a reflection."""

    status: str  # committed | proposed | nothing | failed | skipped | busy
    reason: str = ""
    commit: str | None = None
    reflection: str | None = None

    def describe(self) -> str:
        """One line for a person: 'committed 1a2b3c4d5e6f', 'failed: <why>'."""
        detail = self.commit[:12] if self.commit and not self.reason else self.reason
        return (
            f"{self.status}: {detail}"
            if detail and self.status != "committed"
            else (f"{self.status} {detail}".strip())
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "reason": self.reason,
            "commit": self.commit,
            "reflection": self.reflection,
        }


Reflector = Callable[[str, float], AgentOutcome]


@dataclass
class CycleResult:
    plan: CyclePlan
    at: float
    dry_run: bool
    outcomes: dict[str, AgentOutcome] = field(default_factory=dict)

    @property
    def failed(self) -> dict[str, AgentOutcome]:
        return {name: o for name, o in self.outcomes.items() if o.status == "failed"}

    def to_dict(self) -> dict:
        data = self.plan.to_dict()
        if self.outcomes:
            data["outcomes"] = {name: o.to_dict() for name, o in self.outcomes.items()}
        return data


def agent_states(conn: sqlite3.Connection, home: Home, names: list[str]) -> list[AgentState]:
    rows = ledger.agent_rows(conn, dirty_only=True)  # only these cost anything to plan
    return [agent_state(conn, home, name, rows.get(name)) for name in names]


def agent_state(conn: sqlite3.Connection, home: Home, name: str, row: sqlite3.Row | None) -> AgentState:
    """What the gate needs of one agent, judged by its own config (agent.toml over config.toml)."""
    if row is None or not row["dirty"]:
        return AgentState(name, dirty=False)
    best, worth, rules, problem = 0.0, False, None, None
    if not row["paused"]:
        agent = Agent(home, name)
        held = hold_of(agent)
        try:
            config = agent.config
        except ConfigError as exc:  # one agent's broken agent.toml never stops the others
            problem = f"cannot read its configuration: {exc}"
        else:
            if held:
                problem = f"busy: {held.reason}"
            rules = Rules.from_config(config.schedule)
            runs = pending.scored_runs(conn, name, config, agent.memo_to_parse(), judge=agent)
            best = max((r.score for r in runs), default=0.0)
            worth = any(r.reflect for r in runs)
    return AgentState(
        name,
        dirty=True,
        paused=bool(row["paused"]),
        created_at=row["created_at"],
        last_reflection_at=row["last_reflection_at"],
        best_score=best,
        worth_reflecting=worth,
        waiting_since=row["dirty_at"],
        busy=not row["paused"] and is_locked(home.agent_dir(name) / ".git" / LOCK),
        rules=rules,
        problem=problem,
    )


def rules_for(home: Home) -> Rules:
    """The cycle's own rules (its cap), from the home's config."""
    return Rules.from_config(config_mod.load(home.config_file).schedule)


def plan(conn: sqlite3.Connection, home: Home, now: float) -> CyclePlan:
    known = ledger.agent_names(conn)
    dirty = ledger.agent_rows(conn, dirty_only=True)
    names = list_agents(home, known.difference(dirty))  # a dirty agent's repository is checked
    missing = [name for name in names if name not in known]
    if missing:  # one transaction, and none at all in the usual case
        with ledger.transaction(conn):
            for name in missing:
                ledger.ensure_agent(conn, name, now)
    result = plan_cycle(agent_states(conn, home, [n for n in names if n in dirty]), rules_for(home), now)
    for name in names:  # the dirty gate, without building a state per clean agent
        if name not in dirty:
            result.skipped[name] = NOTHING_NEW
    return result


def first_worthy(conn: sqlite3.Connection, home: Home, since: float | None) -> dict[str, float]:
    """Agents that never reflected: when their first run worth reflecting on since `since` was seen.

    Costs nothing once every agent has reflected; else it scores only the runs since `since`.
    """
    found = {}
    for name, row in ledger.agent_rows(conn, dirty_only=True).items():
        if row["last_reflection_at"] is not None or row["paused"]:
            continue
        agent = Agent(home, name)
        try:
            config = agent.config
        except ConfigError:  # the cycle names it; no early cycle for it
            continue
        worthy = [
            r.observed_at
            for r in pending.scored_runs(conn, name, config, agent.memo_to_parse(), since)
            if r.reflect
        ]
        if worthy:
            found[name] = min(worthy)
    return found


def next_cycle(
    conn: sqlite3.Connection, home: Home, every_s: float, first_s: float, now: float
) -> tuple[float, str]:
    """When the next cycle is due and why (rules.next_cycle over state.db)."""
    last = ledger.last_cycle_at(conn)
    worthy = first_worthy(conn, home, last) if last is not None else {}
    return rules.next_cycle(last, every_s, worthy, first_s, now)


def run_cycle(
    home: Home, *, now: float | None = None, dry_run: bool = False, reflect: Reflector | None = None
) -> CycleResult:
    """Plan a cycle, record it, and (unless dry_run) reflect each selected agent."""
    now = now or time.time()
    with ledger.opened(home.state_db) as conn:
        cycle_plan = plan(conn, home, now)
        result = CycleResult(cycle_plan, now, dry_run)
        with ledger.transaction(conn):
            ledger.record_cycle(conn, now, dry_run, cycle_plan.to_dict())
    if dry_run:
        return result
    if reflect is not None:
        for name in cycle_plan.selected:
            result.outcomes[name] = reflect(name, now)
    active = [n for n, why in cycle_plan.skipped.items() if why != NOTHING_NEW]
    with ledger.opened(home.state_db) as conn:  # retention; fresh rate caches where anything was new
        usage.maintain(conn, home, now, names=[*cycle_plan.selected, *active])
    return result
