"""One reflection of one agent, end to end: gates → bundle → model → plan → commit → record.

The reflection id is derived from the evidence (the pending runs and events) and the
machine, so a reflection interrupted after its commit is recognised on the next attempt and
recorded, never applied twice, and two machines sharing the agent never share an id.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, field, replace
from importlib import resources

from evolve.errors import Busy, LockBusy, UserError
from evolve.home import Home
from evolve.metrics.rates import skill_usage
from evolve.reflect.apply import apply_plan, find_reflection, plan_now
from evolve.reflect.bundle import Bundle, build_bundle
from evolve.reflect.client import Answer, ReflectionFailed, ReflectionRequest, make_client
from evolve.reflect.guard import flags_for
from evolve.reflect.offline import OfflineReflector
from evolve.reflect.operations import TOOL_SCHEMA, AnswerError, Limits, Plan, ValidOp, answer_of
from evolve.reflect.proposals import branch_for
from evolve.schedule.cycle import AgentOutcome, agent_state
from evolve.schedule.rules import Rules, gate
from evolve.store import ledger
from evolve.store.commit import ConcurrentChange
from evolve.store.locks import FileLock
from evolve.workspace import undo
from evolve.workspace.agent import Agent
from evolve.workspace.hold import hold_of

DAY = 86_400.0
GUARD_HELD = "flagged by the write-path guard"


@dataclass
class Outcome:
    agent: str
    status: str  # committed | proposed | nothing | failed | skipped | busy | dry-run
    reason: str = ""
    reflection: str | None = None
    commit: str | None = None
    bundle: Bundle | None = None
    plan: Plan | None = None
    tokens: int = 0
    flags: list[str] = field(default_factory=list)
    proposal: str | None = None  # the branch of what waits for review
    evicted: list[str] = field(default_factory=list)
    evictions_waiting: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> list[str]:
        return [r.line() for r in self.plan.rejected] if self.plan is not None else []

    def operations(self) -> list[dict[str, object]]:
        """Every operation of the answer, in order, with what became of it."""
        if self.plan is None:
            return []
        landed = {
            "dry-run": "would land",
            "proposed": "proposed",
            "failed": "not written",
            "busy": "not written",
        }.get(self.status, "landed")
        rows: list[tuple[int, dict[str, object]]] = [
            (
                op.index,
                {
                    "op": op.kind,
                    "target": op.target,
                    "path": op.path,
                    "status": landed,
                    "reason": "",
                    "kept": op.kept,
                    "left_out": op.left_out,
                    **_case(op),
                },
            )
            for op in self.plan.operations
        ]
        rows += [
            (
                op.index,
                {
                    "op": op.kind,
                    "target": op.target,
                    "path": op.path,
                    "status": "waiting",
                    "reason": op.why,
                    "kept": 0,
                    "left_out": op.left_out,
                    **_case(op),
                },
            )
            for op in self.plan.waiting
        ]
        rows += [
            (
                r.op_index,
                {
                    "op": r.op_name,
                    "target": r.target,
                    "path": None,
                    "status": "rejected",
                    "reason": r.reason,
                    "kept": 0,
                    "left_out": 0,
                    "eval": None,
                    "eval_refused": "",
                },
            )
            for r in self.plan.rejected
        ]
        rows += [
            (
                r.op_index,
                {
                    "op": r.op_name,
                    "target": r.target,
                    "path": None,
                    "status": "unchanged",
                    "reason": r.reason,
                    "kept": 0,
                    "left_out": 0,
                    "eval": None,
                    "eval_refused": "",
                },
            )
            for r in self.plan.unchanged
        ]
        return [row for _, row in sorted(rows, key=lambda item: item[0])]

    def to_dict(self) -> dict:
        data: dict[str, object] = {
            "agent": self.agent,
            "status": self.status,
            "reason": self.reason,
            "reflection": self.reflection,
            "commit": self.commit,
            "proposal": self.proposal,
            "tokens": self.tokens,
            "rejected": self.rejected,
            "evicted": self.evicted,
            "evictions_waiting": self.evictions_waiting,
            "flags": self.flags,
        }
        if self.bundle is not None:
            data["bundle"] = self.bundle.to_dict()
        if self.plan is not None:
            data["operations"] = self.operations()
            data["summary"] = self.plan.summary
        return data


def prompt_text() -> str:
    return (resources.files("evolve") / "reflect" / "prompt.md").read_text(encoding="utf-8")


def lessons_not_to_relearn(agent: Agent, conn: sqlite3.Connection) -> list[str]:
    """What a person undid, for the bundle: each line evolve must not write again."""
    lessons = [
        f"{block.line} (undone by {block.kind}, {block.commit[:12]})"
        for block in undo.blocks(agent.repo).values()
    ]
    for data in ledger.events_of_kind(
        conn, agent.name, "proposal_rejected"
    ):  # before rejections were commits
        lessons.append(f"rejected: {data.get('summary', '')}")
    return lessons


def evidence_id(conn, agent: str, since: float | None, machine: str) -> str:
    """The same evidence on the same machine gives the same id; two machines never share one."""
    runs, events = ledger.evidence_counts(conn, agent, since)
    key = json.dumps([agent, since, runs, events, machine])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def tokens_today(conn, agent: str, now: float) -> int:
    """Tokens this agent's reflections used in the last 24 h (its daily_token_budget's count)."""
    return sum(
        int(json.loads(row["data"]).get("tokens", 0))
        for row in ledger.reflection_rows(conn, agent, now - DAY)
        if row["at"] > now - DAY
    )


def _gate(conn, agent: Agent, now: float, force: bool) -> str | None:
    """The cycle's gate without its gap and cap (a person asked); --force skips it."""
    if force:
        return None
    state = agent_state(conn, agent.home, agent.name, ledger.agent_row(conn, agent.name))
    reason = gate(state, Rules.from_config(agent.config.schedule), now, gap=False)
    return f"{reason} (use --force to reflect anyway)" if reason else None


def reflect(
    home: Home,
    name: str,
    *,
    now: float | None = None,
    force: bool = False,
    dry_run: bool = False,
    client=None,
) -> Outcome:
    """Reflect `name` now (ignores the schedule's gap and cap, not the gates unless forced).

    Raises Busy while a person's git work holds the agent (`hold_of`), forced or not, a dry
    run too: what it would plan on is that checkout's files, not the agent's.
    """
    agent = Agent.open(name, home)
    held = hold_of(agent, staged=False)  # staged files: asked once the person's edits are committed
    if held:
        raise Busy(held.reason)
    now = now or time.time()
    try:
        with FileLock(home.run_dir / f"reflect-{name}.lock", timeout=0):
            with ledger.opened(home.state_db) as conn:
                return _reflect_locked(conn, agent, now, force, dry_run, client)
    except LockBusy:
        return Outcome(name, "busy", "another reflection of this agent is running")


def _reflect_locked(conn, agent: Agent, now: float, force: bool, dry_run: bool, client) -> Outcome:
    ledger.ensure_agent(conn, agent.name, now)
    reason = _gate(conn, agent, now, force)
    if reason:
        return Outcome(agent.name, "skipped", reason)
    if not dry_run:
        agent.commit_human_edits()
        hold = hold_of(agent)  # before the model is asked: a staged memo holds the write
        if hold:
            raise Busy(hold.reason)
    config = agent.config
    since = ledger.last_reflection_at(conn, agent.name)
    reflection_id = evidence_id(conn, agent.name, since, agent.home.machine())
    if not dry_run:
        done = find_reflection(agent, reflection_id) or find_reflection(
            agent, reflection_id, branch_for(reflection_id)
        )
        if done:  # committed before a crash stopped the bookkeeping: record it, once
            outcome = Outcome(agent.name, "committed", reflection=reflection_id, commit=done)
            return _finish(conn, agent, now, outcome, "committed", False, "recovered after a crash")
    bundle = build_bundle(conn, agent, now=now, reverted=lessons_not_to_relearn(agent, conn))
    outcome = Outcome(agent.name, "dry-run", reflection=reflection_id, bundle=bundle, tokens=0)
    client = client or make_client(
        config.model, offline=OfflineReflector(agent.memo_text(), config.limits.memo_section_chars)
    )
    if client.name != "offline":
        used = tokens_today(conn, agent.name, now)
        if used + bundle.tokens + config.model.max_tokens > config.model.daily_token_budget:
            why = (
                f"daily token budget reached ({used} of {config.model.daily_token_budget} used in "
                "the last 24 h)"
            )
            return _finish(conn, agent, now, outcome, "skipped", dry_run, why, record=False)
    request = ReflectionRequest(prompt_text(), bundle.text, TOOL_SCHEMA, bundle)
    try:
        answer = client.reflect(request)
        outcome.tokens = answer.input_tokens + answer.output_tokens
        ignored = guardable(conn, agent.name, bundle)  # a guard may enforce only these
        plan = plan_now(
            agent, answer_of(answer.tool_input, Limits.from_config(config.limits)), ignored=ignored
        )
    except ReflectionFailed as exc:
        return _finish(conn, agent, now, outcome, "failed", dry_run, exc.reason)
    except AnswerError as exc:
        return _finish(conn, agent, now, outcome, "failed", dry_run, f"invalid answer: {exc}")
    outcome.plan = plan
    if dry_run:
        held = {} if config.review else held_by_guard(plan, bundle)
        if held:  # the preview says what would wait for review, as the commit would
            outcome.plan = plan_now(agent, plan.source, held=held, ignored=ignored)
        return outcome
    if plan.nothing_to_save or not (plan.operations or plan.waiting):
        why = plan.nothing_reason or ("every operation was rejected" if plan.rejected else "nothing to save")
        return _finish(conn, agent, now, outcome, "nothing", dry_run, why)
    return _commit(conn, agent, now, outcome, answer, client.name)


def guardable(conn: sqlite3.Connection, agent: str, bundle) -> list[str]:
    """The lessons a guard may enforce: each one a run ignored at least once (state.db)."""
    recorded = {row["lesson"] for row in ledger.ignored_rows(conn, agent)}
    return sorted(recorded | {item["lesson"] for item in bundle.ignored})


def _commit(
    conn: sqlite3.Connection, agent: Agent, now: float, outcome: Outcome, answer: Answer, client_name: str
) -> Outcome:
    """Apply the plan (planned again under the lock), then record what happened."""
    bundle, plan = outcome.bundle, outcome.plan
    assert bundle is not None and plan is not None
    runs_used = [f"{r.session[:12]}#{r.run}" for r in bundle.runs if r.signals]
    trailers: dict[str, object] = {
        "Evolve-Score": f"{bundle.score:.2f}",
        "Evolve-Signals": bundle.signals or ["-"],
        "Evolve-Runs": runs_used or ["-"],
        "Evolve-Model": answer.model if answer.model == client_name else f"{client_name}:{answer.model}",
        "Evolve-Bundle-Tokens": bundle.tokens,
        "Evolve-Tokens": outcome.tokens,
    }
    flags = flags_for(plan, bundle)
    review = agent.config.review
    outcome.flags = [f.line() for f in flags]
    if flags and review:
        trailers["Evolve-Flags"] = outcome.flags
    if review:
        trailers["Evolve-Review"] = GUARD_HELD if flags else "review = true"
    try:
        applied = apply_plan(
            agent,
            plan,
            reflection_id=outcome.reflection or "",
            trailers=trailers,
            usage=skill_usage(conn, agent.name),
            review=review,
            ignored=[(item["kind"], item["lesson"]) for item in [*bundle.worse, *bundle.ignored]],
            guardable=guardable(conn, agent.name, bundle),
            held={} if review else held_by_guard(plan, bundle),  # only those wait; the rest lands
            waiting_trailers={"Evolve-Flags": outcome.flags} if flags else {},
        )
    except ConcurrentChange as exc:  # a person committed the same files meanwhile: try later
        return _finish(conn, agent, now, outcome, "failed", False, str(exc))
    outcome.plan, outcome.commit, outcome.evicted = applied.plan, applied.sha, applied.evicted
    outcome.evictions_waiting = applied.evictions_waiting
    outcome.proposal = applied.proposal
    if applied.already:
        return _finish(conn, agent, now, outcome, "committed", False, "recovered after a crash")
    if not (applied.sha or applied.proposal):
        why = "every operation was rejected" if applied.plan.rejected else "the files already say all of it"
        return _finish(conn, agent, now, outcome, "nothing", False, why)
    if applied.proposal:
        with ledger.transaction(conn):
            ledger.add_event(
                conn,
                agent.name,
                "proposal",
                {"id": outcome.reflection, "summary": applied.plan.summary, "flags": outcome.flags},
                now,
                dirty=False,
            )
    if applied.sha is None:
        return _finish(
            conn,
            agent,
            now,
            outcome,
            "proposed",
            False,
            f"waiting for review: evolve review {agent.name} {outcome.reflection}",
        )
    return _finish(conn, agent, now, outcome, "committed", False, "")


def held_by_guard(plan: Plan, bundle: Bundle) -> dict[int, str]:
    """Each operation the write-path guard flags → why it waits for a person (its flags).

    Judged one operation at a time, on what that operation adds: a flagged skill does not
    hold back a good memo line of the same answer, and rejecting the proposal blocks its lines only.
    """
    held = {}
    for op in [*plan.operations, *plan.waiting]:
        flags = flags_for(replace(plan, operations=[op], waiting=[]), bundle)
        if flags:
            held[op.index] = f"{GUARD_HELD}: " + "; ".join(flag.line() for flag in flags)
    return held


def _finish(
    conn,
    agent: Agent,
    now: float,
    outcome: Outcome,
    status: str,
    dry_run: bool,
    reason: str,
    *,
    record: bool = True,
) -> Outcome:
    outcome.status, outcome.reason = status, reason  # a dry run too: a failed model call is no preview
    if dry_run or not record:
        return outcome
    data = {
        "tokens": outcome.tokens,
        "reason": reason,
        "rejected": outcome.rejected,
        "score": outcome.bundle.score if outcome.bundle else 0,
        "bundle_tokens": outcome.bundle.tokens if outcome.bundle else 0,
    }
    with ledger.transaction(conn):
        ledger.record_reflection(
            conn, outcome.reflection or f"{agent.name}-{now}", agent.name, now, status, outcome.commit, data
        )
        if status == "failed":
            ledger.add_event(conn, agent.name, "reflection_failed", {"reason": reason[:300]}, now, dirty=True)
        else:
            ledger.mark_reflected(conn, agent.name, now, outcome.reflection)
    return outcome


def reflect_for_cycle(home: Home, name: str, now: float) -> AgentOutcome:
    """The cycle's hook: reflect one selected agent, return its outcome."""
    try:
        outcome = reflect(home, name, now=now)
    except Busy as exc:  # a person's git operation began since the plan
        return AgentOutcome("busy", str(exc))
    except UserError as exc:  # e.g. the agent was removed since the plan
        return AgentOutcome("failed", str(exc))
    return AgentOutcome(outcome.status, outcome.reason, outcome.commit, outcome.reflection)


def _case(op: ValidOp) -> dict[str, object]:
    """An operation's eval case as its row shows it: the folder written, or why none was."""
    return {"eval": op.case or None, "eval_refused": op.case_refused}
