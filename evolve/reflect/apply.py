"""Apply an answer: planned again under the agent's lock, ONE commit per reflection, exactly once.

The plan is made afresh against the files as they are under the lock, a person's
uncommitted edits committed first (as theirs), who wrote each line read with `git blame`,
and what a person undid read from history: a person's edit made while the model thought is
never lost, and their lines win. What lands is one commit on the agent's branch; what waits
for a person (a patch touching their lines, a retire of their skill, an operation the
write-path guard flagged) is one commit on
`proposals/<id>`, made in the same ref transaction, so crash recovery sees the pair or
neither. Both carry the reflection's id. A create at the cap evicts in the same commit,
never a pinned or broken skill nor one holding a person's lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve.reflect.compose import compose
from evolve.reflect.escalation import TRAILER as ESCALATED
from evolve.reflect.escalation import escalated
from evolve.reflect.operations import (
    CREATE,
    GUARD_OPS,
    MEMO,
    RETIRE,
    Limits,
    Plan,
    ValidOp,
    kept_note,
    kept_op,
)
from evolve.reflect.planstate import answer_targets, current_state
from evolve.reflect.proposals import branch_for
from evolve.store.commit import EditedMeanwhile, Extra
from evolve.store.history import FOR_REVIEW, Commit, build_message
from evolve.workspace import undo
from evolve.workspace.agent import Agent
from evolve.workspace.curate import eviction_candidates, folder_files, persons_skills
from evolve.workspace.skills import Skill

EVICTION_WAITS = "over max_skills; with a remote, eviction waits for review"
SAVES_WAITED_FOR = 3  # times a person's save during planning makes evolve plan again
RECENT = 500  # how far back a reflection is looked for (committed before a crash stopped the bookkeeping)


@dataclass
class Applied:
    """What a reflection did: the plan as made under the lock, and where each part went."""

    plan: Plan
    sha: str | None = None  # the commit on the agent's branch (None: nothing landed there)
    proposal: str | None = None  # the branch holding what waits for review
    proposal_sha: str | None = None
    evicted: list[str] = field(default_factory=list)
    evictions_waiting: list[str] = field(default_factory=list)  # with a remote: on the proposal
    already: bool = False  # this reflection id was committed before (exactly-once)


def find_reflection(
    agent: Agent, reflection_id: str, branch: str | None = None, commits: Sequence[Commit] | None = None
) -> str | None:
    """The sha of the commit carrying `Evolve-Reflection: <id>`, if any (recent history).

    `commits`: the branch's history (newest first) when the caller has read it already. The
    agent's own branch is read whole: the plan reads that history next (`Repo.log` asks once).
    """
    if commits is None:
        tip = agent.repo.tip(branch)
        if tip is None:
            return None
        commits = agent.repo.log(tip, limit=None if branch in (None, agent.repo.branch) else RECENT)
    for commit in commits[:RECENT]:
        if commit.trailers.get("Evolve-Reflection") == reflection_id:
            return commit.sha
    return None


def plan_now(
    agent: Agent,
    source: Mapping[str, Any],
    *,
    review: bool = False,
    commits: list[Commit] | None = None,
    usage: Mapping[str, dict] | None = None,
    held: Mapping[int, str] | None = None,
    ignored: Collection[str] = (),
) -> Plan:
    """The plan of an answer against the agent as it is now (a person's work protected).

    `held`: operations that wait for a person whatever they touch (`compose`'s); `ignored`:
    the ids of the lessons the bundle showed as ignored (a guard may enforce only those).
    """
    commits = agent.repo.log() if commits is None else commits
    by_sha = {c.sha: c for c in commits}
    return compose(
        source,
        current_state(agent, source, by_sha, ignored),
        Limits.from_config(agent.config.limits),
        {fp: block.lesson for fp, block in undo.blocks(agent.repo, commits).items()},
        protect=not review,
        room=_room(agent, source, usage or {}, by_sha),
        held=held,
    )


def _room(
    agent: Agent, source: Mapping[str, Any], usage: Mapping[str, dict], commits: Mapping[str, Commit]
) -> int | None:
    """How many skills the answer may create: free places plus what eviction may take."""
    ops = source.get("operations")
    creates = (
        sum(isinstance(op, dict) and op.get("op") == CREATE for op in ops) if isinstance(ops, list) else 0
    )
    live = agent.skills()
    free = agent.config.limits.max_skills - len(live)
    if creates <= free:
        return None
    return max(free, 0) + len(evictable(agent, live, source, usage, commits))


def evictable(
    agent: Agent,
    live: list[Skill],
    source: Mapping[str, Any],
    usage: Mapping[str, dict],
    commits: Mapping[str, Commit],
) -> list[str]:
    """The skills eviction may take, in its order (never pinned, broken, answer's, or a person's)."""
    keep = answer_targets(source) | persons_skills(agent, [s.name for s in live], commits)
    return eviction_candidates(agent, live, dict(usage), keep=keep)


def changes_of(
    ops: Iterable[ValidOp], files_of: Callable[[str], list[str]], *, errors: str = "strict"
) -> dict[str, bytes | None]:
    """Each file's final bytes after `ops` (their texts compose), None for a removed file.

    `files_of(skill)`: the files a retire removes (the folder's, on disk or in a tree).
    `errors="surrogateescape"`: texts read from git that way give back a person's bytes exactly.
    """
    changes: dict[str, bytes | None] = {}
    for op in ops:
        if op.kind == RETIRE:
            changes.update(dict.fromkeys(files_of(op.name)))
        else:
            changes[op.path] = (op.text or "").encode("utf-8", errors)
        changes.update((path, None if text is None else text.encode("utf-8")) for path, text in op.files)
    return changes


def _changes(agent: Agent, ops: Iterable[ValidOp]) -> dict[str, bytes | None]:
    return changes_of(ops, lambda name: folder_files(agent, name))


def _evictions(
    agent: Agent, plan: Plan, usage: Mapping[str, dict], commits: Mapping[str, Commit]
) -> list[str]:
    creates = sum(op.kind == CREATE for op in plan.operations)
    if not creates:
        return []
    retired = {op.name for op in plan.operations if op.kind == RETIRE}
    live = [s for s in agent.skills() if s.name not in retired]
    excess = len(live) + creates - agent.config.limits.max_skills
    if excess <= 0:
        return []
    return evictable(agent, live, plan.source, usage, commits)[:excess]


def apply_plan(
    agent: Agent,
    plan: Plan,
    *,
    reflection_id: str,
    trailers: Mapping[str, object],
    usage: Mapping[str, dict] | None = None,
    review: bool = False,
    ignored: Sequence[tuple[str, str]] = (),
    held: Mapping[int, str] | None = None,
    waiting_trailers: Mapping[str, object] | None = None,
    guardable: Collection[str] = (),
) -> Applied:
    """Plan the answer again now and commit it; `review`: every operation waits for a person.

    `ignored`: the lessons the bundle showed first ((kind, id): those that made their own eval
    worse, then those ignored); a commit whose operations rewrite one names it
    (`escalation.escalated`). `held`: operation index → why it waits (the write-path guard
    flagged it) while the rest lands; `waiting_trailers` go on the proposal's commit only;
    `guardable`: the lessons ever ignored (a guard enforces only those). A person who saves a
    file while it is planned wins: their save is committed as theirs, and the answer is
    planned again on top of it (a few times, then the command says so).
    """
    for attempt in range(SAVES_WAITED_FOR):
        try:
            return _apply_once(
                agent,
                plan,
                reflection_id,
                trailers,
                usage,
                review,
                ignored,
                held or {},
                waiting_trailers or {},
                guardable,
            )
        except EditedMeanwhile:
            if attempt == SAVES_WAITED_FOR - 1:
                raise
    raise AssertionError("unreachable")


def _apply_once(
    agent: Agent,
    plan: Plan,
    reflection_id: str,
    trailers: Mapping[str, object],
    usage: Mapping[str, dict] | None,
    review: bool,
    ignored: Sequence[tuple[str, str]],
    held: Mapping[int, str],
    waiting_trailers: Mapping[str, object],
    guardable: Collection[str],
) -> Applied:
    with agent.repo.locked():
        agent.commit_human_edits_held()
        commits = agent.repo.log()  # read once: the reflection looked for in it, and the plan made with it
        done = find_reflection(agent, reflection_id, commits=commits) or find_reflection(
            agent, reflection_id, branch_for(reflection_id)
        )
        if done:
            return Applied(plan, done, already=True)
        by_sha = {c.sha: c for c in commits}
        plan = plan_now(
            agent,
            plan.source,
            review=review,
            commits=commits,
            usage=usage,
            held=held,
            ignored=guardable,
        )
        result = Applied(plan)
        only_held = not plan.operations and plan.waiting and all(op.index in held for op in plan.waiting)
        if (review and plan.operations) or only_held:  # all of it on the proposal branch, nothing on main
            proposed = plan.operations or plan.waiting
            extra = {**waiting_trailers, "Evolve-Review": _reasons(plan)} if only_held else {}
            message = reflection_message(
                agent, plan.summary, {**trailers, **extra}, reflection_id, proposed, plan, ignored=ignored
            )
            result.proposal = branch_for(reflection_id)
            result.proposal_sha = agent.repo.commit_changes(
                _changes(agent, proposed),
                message,
                agent.evolve_identity,
                branch=result.proposal,
                journal_id=reflection_id,
            )
            return result
        result.evicted = _evictions(agent, plan, usage or {}, by_sha)
        if result.evicted and agent.shared:  # one machine's usage never removes a skill everywhere
            result.evictions_waiting, result.evicted = result.evicted, []
        main = _changes(agent, plan.operations)
        for name in result.evicted:
            main.update(dict.fromkeys(folder_files(agent, name)))
        also = None
        if plan.waiting or result.evictions_waiting:
            result.proposal = branch_for(reflection_id)
            parked = _changes(agent, plan.waiting)
            for name in result.evictions_waiting:
                parked.update(dict.fromkeys(folder_files(agent, name)))
            waiting = reflection_message(
                agent,
                _waiting_subject(plan, result.evictions_waiting),
                {**trailers, **waiting_trailers, "Evolve-Review": _reasons(plan, result.evictions_waiting)},
                reflection_id,
                plan.waiting,
                None,
                evicted=result.evictions_waiting,
                ignored=ignored,
            )
            also = Extra(result.proposal, parked, waiting)
        if main or also is not None:
            message = reflection_message(
                agent,
                plan.subject(),
                trailers,
                reflection_id,
                plan.operations,
                plan,
                evicted=result.evicted,
                evictions_waiting=result.evictions_waiting,
                ignored=ignored,
            )
            result.sha = agent.repo.commit_changes(
                main,
                message,
                agent.evolve_identity,
                journal_id=reflection_id,
                also=also,
                expect=_read_before(plan.operations),
            )
            result.proposal_sha = also.sha if also is not None else None
            store_operations(agent, result.sha, plan, held)
    if result.sha and any(p.startswith("skills/") for p in main):
        agent.sync_links(main)  # Claude Code's links follow created, retired and evicted skills
    return result


def _read_before(ops: Iterable[ValidOp]) -> dict[str, bytes | None]:
    """What each file the operations write held when the plan read it (None: absent)."""
    before: dict[str, bytes | None] = {}
    for op in ops:
        if op.kind != RETIRE and op.path not in before:
            absent = op.kind == CREATE or (op.kind in GUARD_OPS and op.previous is None)
            before[op.path] = None if absent else (op.previous or "").encode("utf-8")
    return before


def _reasons(plan: Plan, evictions: Sequence[str] = ()) -> list[str]:
    """Why each part of a proposal waits for a person (its `Evolve-Review` lines)."""
    return [f"{op.line()}: {op.why}" for op in plan.waiting] + [
        f"evict {name}: {EVICTION_WAITS}" for name in evictions
    ]


def _waiting_subject(plan: Plan, evictions: Sequence[str] = ()) -> str:
    parts = [f"{op.kind.replace('_', ' ')} {op.target}" for op in plan.waiting]
    parts += [f"evict {name}" for name in evictions]
    return "; ".join(parts) + FOR_REVIEW


def store_operations(agent: Agent, sha: str, plan: Plan, held: Mapping[int, str] | None = None) -> None:
    """Keep the answer's operations that landed or wait, with the commit (a git note, never pushed).

    A sync that replays this commit on top of another machine's reflection applies them
    again instead of merging the files' lines (`evolve.sync.replay`). The note is in the
    repository's objects like the commit: it holds the summary the commit shows (redacted)
    and only the fields of each operation, redacted too; `held` (by position in the note)
    keeps what the guard held back waiting there too.
    """
    ops = plan.source.get("operations") or []
    ordered = sorted(plan.operations + plan.waiting, key=lambda op: op.index)
    data: dict[str, object] = {
        "summary": plan.summary,
        "operations": [kept_op(ops[op.index]) for op in ordered],
    }
    kept_held = {str(at): (held or {})[op.index] for at, op in enumerate(ordered) if op.index in (held or {})}
    if kept_held:
        data["held"] = kept_held
    note = json.dumps(data, ensure_ascii=False)
    agent.repo.add_note(sha, note, agent.evolve_identity)


def reflection_message(
    agent: Agent,
    subject: str,
    base: Mapping[str, object],
    reflection_id: str,
    ops: list[ValidOp],
    plan: Plan | None,
    *,
    evicted: Sequence[str] = (),
    evictions_waiting: Sequence[str] = (),
    ignored: Sequence[tuple[str, str]] = (),
) -> str:
    """The commit message: what landed, and (on the agent's branch) what did not and why."""
    trailers: dict[str, object] = {"Evolve-Kind": "reflection", "Evolve-Reflection": reflection_id}
    trailers.update(base)
    trailers["Evolve-Ops"] = [op.line() for op in ops] or ["-"]
    rewritten = escalated(ops, ignored)
    if rewritten:
        trailers[ESCALATED] = rewritten
    retired = [op.name for op in ops if op.kind == RETIRE]
    if retired:
        trailers["Evolve-Retired"] = retired
    guarded = [
        f"{op.name} ({op.kind.replace('_', ' ')}, lesson {op.lesson}): {op.reason}"
        for op in ops
        if op.kind in GUARD_OPS
    ]
    if guarded:
        trailers["Evolve-Guard"] = guarded
    downgraded = [op.name for op in ops if op.downgraded]
    if downgraded:
        trailers["Evolve-Guard-Downgraded"] = [
            f"{name}: asked to deny, lands as remind (only a person denies)" for name in downgraded
        ]
    kept = [f"{op.line()}: {kept_note(op.kept)}" for op in ops if op.kind == MEMO and op.kept]
    left_out = [f"{op.line()}: left out {op.left_out} line(s) a person undid" for op in ops if op.left_out]
    if kept:
        trailers["Evolve-Kept"] = kept
    if left_out:
        trailers["Evolve-Left-Out"] = left_out
    if evicted:
        trailers["Evolve-Evicted"] = list(evicted)
    if plan is not None and (plan.waiting or evictions_waiting) and ops is plan.operations:
        trailers["Evolve-Waiting"] = [f"{op.line()}: {op.why}" for op in plan.waiting] + [
            f"evict {name}: {EVICTION_WAITS}" for name in evictions_waiting
        ]
        trailers["Evolve-Proposal"] = reflection_id
    if plan is not None and plan.rejected:
        trailers["Evolve-Rejected"] = [r.line() for r in plan.rejected]
    if any(op.case for op in ops):
        trailers["Evolve-Eval"] = [f"{op.line()}: {op.case}" for op in ops if op.case]
    if any(op.case_refused for op in ops):
        trailers["Evolve-Eval-Refused"] = [f"{op.line()}: {op.case_refused}" for op in ops if op.case_refused]
    return build_message(f"reflect({agent.name}): {subject}", trailers)
