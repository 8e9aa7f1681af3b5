"""Apply a validated plan: ONE commit per reflection, exactly once, under the agent's lock.

The plan was validated against the state the reflection started from; here every
operation is checked again against the files as they are now (a person may have edited
one meanwhile: that operation is dropped, never the person's edit). A create at the cap
evicts one skill in the same commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolve.reflect.operations import CREATE, MEMO, RETIRE, Plan, Rejection, ValidOp
from evolve.store.history import build_message
from evolve.workspace.agent import Agent
from evolve.workspace.curate import eviction_candidates, folder_files


@dataclass
class Applied:
    sha: str | None
    operations: list[ValidOp] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    already: bool = False  # this reflection id was committed before (exactly-once)


def find_reflection(agent: Agent, reflection_id: str, branch: str | None = None) -> str | None:
    """The sha of the commit carrying `Evolve-Reflection: <id>`, if any (recent history)."""
    tip = agent.repo.tip(branch)
    if tip is None:
        return None
    for commit in agent.repo.log(tip, limit=500):
        if commit.trailers.get("Evolve-Reflection") == reflection_id:
            return commit.sha
    return None


def _current(agent: Agent, path: str) -> str | None:
    try:
        return (agent.path / path).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return None


def _still_valid(agent: Agent, op: ValidOp) -> str | None:
    """Why `op` no longer applies to the files as they are now, or None."""
    if op.kind == RETIRE:
        skill = agent.skills_dir / op.name
        return None if skill.is_dir() else "the skill is already gone"
    current = _current(agent, op.path)
    if op.kind == CREATE:
        return "a skill of that name appeared meanwhile" if (agent.skills_dir / op.name).exists() else None
    if op.kind == MEMO:
        return None if current == op.previous else "memo.md changed since the reflection started"
    return None if current == op.previous else "the skill changed since the reflection started"


def apply_plan(
    agent: Agent,
    plan: Plan,
    *,
    reflection_id: str,
    trailers: dict[str, object],
    usage: dict[str, dict] | None = None,
    branch: str | None = None,
) -> Applied:
    """Commit the plan's operations; returns the commit (None when nothing applied)."""
    with agent.repo.locked():
        agent.commit_human_edits_held()
        done = find_reflection(agent, reflection_id, branch)
        if done:
            return Applied(done, already=True)
        result = Applied(None, rejected=list(plan.rejected))
        memo_op = None
        for op in plan.operations:
            why = _still_valid(agent, op)
            if why:
                result.rejected.append(Rejection(op.index, op.kind, why, op.name or op.section))
            elif op.kind == MEMO:
                memo_op = op  # memo operations are cumulative: the last holds them all
            else:
                result.operations.append(op)
        if memo_op is not None:
            result.operations.append(memo_op)
        changes: dict[str, bytes | None] = {}
        for op in result.operations:
            if op.kind == RETIRE:
                changes.update({p: None for p in folder_files(agent, op.name)})
            else:
                changes[op.path] = (op.text or "").encode("utf-8")
        creates = sum(op.kind == CREATE for op in result.operations)
        result.evicted = _evictions(agent, creates, usage or {}, result.operations)
        for name in result.evicted:
            changes.update({p: None for p in folder_files(agent, name)})
        if not changes:
            return result
        message = build_message(
            f"reflect({agent.name}): {plan.summary}", _trailers(trailers, reflection_id, result)
        )
        result.sha = agent.repo.commit_changes(
            changes, message, agent.evolve_identity, branch=branch, journal_id=reflection_id
        )
    if branch is None:
        agent.sync_links(changes)  # Claude Code's links follow created/retired skills
    return result


def _evictions(agent: Agent, creates: int, usage: dict[str, dict], ops: list[ValidOp]) -> list[str]:
    if not creates:
        return []
    retired = {op.name for op in ops if op.kind == RETIRE}
    live = [s for s in agent.skills() if s.name not in retired]
    excess = len(live) + creates - agent.config.limits.max_skills
    if excess <= 0:
        return []
    return eviction_candidates(agent, live, usage, keep={op.name for op in ops})[:excess]


def _trailers(base: dict[str, object], reflection_id: str, result: Applied) -> dict[str, object]:
    ops = [f"{op.kind} {op.name or op.section}" for op in result.operations]
    trailers: dict[str, object] = {"Evolve-Kind": "reflection", "Evolve-Reflection": reflection_id}
    trailers.update(base)
    trailers["Evolve-Ops"] = ops or ["-"]
    fingerprints = [fp for op in result.operations for fp in op.fingerprints]
    if fingerprints:
        trailers["Evolve-Fingerprints"] = fingerprints
    retired = [op.name for op in result.operations if op.kind == RETIRE]
    if retired:
        trailers["Evolve-Retired"] = retired
    if result.evicted:
        trailers["Evolve-Evicted"] = result.evicted
    if result.rejected:
        trailers["Evolve-Rejected"] = [f"{r.op_name} {r.target}: {r.reason}".strip() for r in result.rejected]
    return trailers
