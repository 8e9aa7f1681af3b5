"""Which agents reflect, and when the next cycle comes: pure rules over plain data, no I/O.

Order of the rules (first match decides): dirty gate, paused, minimum gap, threshold or
forced reflection, then the per-cycle cap (highest pending score first, then longest
waiting). `gate` is the per-agent part, shared by the cycle and `evolve reflect` (which
skips the gap and the cap); each agent is judged by its own [schedule] (agent.toml over
config.toml). Reasons are words a person understands.

A cycle comes every `cycle_hours`, and sooner for an agent's first lesson: when an agent
that never reflected has a run worth reflecting on, observed since the last cycle, the next
cycle comes `first_reflection_minutes` after that run (`next_cycle`). It is an ordinary
cycle — every agent judged by the rules above, the gap included — and the `cycle_hours`
count starts again from it. A first reflection that fails waits for the next such run or
the regular cycle: a failing backend is never called in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolve.config import ScheduleConfig

HOUR = 3600.0
DAY = 24 * HOUR
NOTHING_NEW = "nothing new"  # the dirty gate's reason


@dataclass(frozen=True)
class AgentState:
    name: str
    dirty: bool
    paused: bool = False
    created_at: float = 0.0
    last_reflection_at: float | None = None
    best_score: float = 0.0
    worth_reflecting: bool = False
    waiting_since: float | None = None
    busy: bool = False  # another process holds the agent's writer lock (a reflection runs)
    rules: Rules | None = None  # the agent's own [schedule]; None: the cycle's
    problem: str | None = None  # why the agent cannot be judged (e.g. a broken agent.toml)


@dataclass(frozen=True)
class Rules:
    min_gap_hours: float = ScheduleConfig.min_gap_hours
    force_after_days: float = ScheduleConfig.force_after_days
    max_agents_per_cycle: int = ScheduleConfig.max_agents_per_cycle

    @classmethod
    def from_config(cls, schedule: ScheduleConfig) -> Rules:
        return cls(schedule.min_gap_hours, schedule.force_after_days, schedule.max_agents_per_cycle)


@dataclass
class CyclePlan:
    selected: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    forced: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"selected": self.selected, "skipped": self.skipped}


def ago(seconds: float) -> str:
    """A duration the way a person says it: '35 min', '2 h', '3 d'."""
    if seconds < HOUR:
        return f"{max(0, int(seconds // 60))} min"
    if seconds < 2 * DAY:
        return f"{seconds / HOUR:.0f} h"
    return f"{seconds / DAY:.0f} d"


def hours(value: float) -> str:
    return f"{value:g} h"


def plan_cycle(agents: list[AgentState], rules: Rules, now: float) -> CyclePlan:
    plan = CyclePlan()
    eligible: list[AgentState] = []
    for agent in agents:
        reason = _skip_reason(agent, rules, now)
        if reason:
            plan.skipped[agent.name] = reason
            continue
        eligible.append(agent)
        if not agent.worth_reflecting:
            plan.forced.append(agent.name)
    eligible.sort(key=lambda a: (-a.best_score, a.waiting_since or now, a.name))
    for agent in eligible[: rules.max_agents_per_cycle]:
        plan.selected.append(agent.name)
    for agent in eligible[rules.max_agents_per_cycle :]:
        plan.skipped[agent.name] = f"cap: at most {rules.max_agents_per_cycle} agents per cycle"
        if agent.name in plan.forced:
            plan.forced.remove(agent.name)
    return plan


def _skip_reason(agent: AgentState, rules: Rules, now: float) -> str | None:
    reason = gate(agent, agent.rules or rules, now)
    if reason is None and agent.busy:
        return "busy"
    return reason


def gate(agent: AgentState, rules: Rules, now: float, *, gap: bool = True) -> str | None:
    """Why `agent` does not reflect now, or None. `gap=False`: a person asked (`evolve reflect`)."""
    if not agent.dirty:
        return NOTHING_NEW
    if agent.problem:
        return agent.problem
    if agent.paused:
        return "paused"
    last = agent.last_reflection_at
    if gap and last is not None and now - last < rules.min_gap_hours * HOUR:
        return f"reflected {ago(now - last)} ago, gap {hours(rules.min_gap_hours)}"
    if agent.worth_reflecting:
        return None
    since = last if last is not None else agent.created_at
    if now - since >= rules.force_after_days * DAY:
        return None
    return f"below threshold (best pending score {agent.best_score:.2f})"


def next_cycle(
    last: float | None, every_s: float, first_worthy: dict[str, float], first_s: float, now: float
) -> tuple[float, str]:
    """When the next cycle is due and why, in words.

    `first_worthy`: each never-reflected agent's first run worth reflecting on observed after
    `last` (when it was observed).
    """
    if last is None:
        return now, "no cycle ran yet"
    at, why = last + every_s, f"every {hours(every_s / HOUR)}"
    if first_worthy:
        seen, name = min((seen, name) for name, seen in first_worthy.items())
        if seen + first_s < at:
            at, why = seen + first_s, f"{name}'s first reflection"
    return at, why
