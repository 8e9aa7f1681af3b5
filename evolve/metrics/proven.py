"""Did a lesson prove itself? Its latest full `evolve eval` result: with, without, Δ.

Read from state.db's `evals` (a partial or failed run is never a result). A lesson improves
the agent when its Δ (score with the agent's plugin − score without) is above 0, makes it
worse below 0, and is untested without a full result. A lesson whose Δ < 0 over at least
WORSE_RUNS runs per arm made its own eval worse: it comes first in the next reflection's
bundle (reflect.bundle), where a model may rewrite or retire it — evolve never retires it
on its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping

from evolve.clock import stamp
from evolve.store import ledger
from evolve.workspace import lessons as lessons_mod

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.workspace.agent import Agent

WORSE_RUNS = 3  # runs per arm before a negative Δ is worth a reflection


def result(row: sqlite3.Row) -> dict:
    """One recorded result as `evolve lessons --json` shows it under `eval`."""
    return {
        "delta": row["delta"],
        "score_with": row["score_with"],
        "score_without": row["score_without"],
        "runs_with": row["runs_with"],
        "runs_without": row["runs_without"],
        "cost_usd": row["cost_usd"],
        "commit": row["commit_sha"],
        "tip": row["tip"],
        "at": stamp(row["at"]),
        "run_id": row["run_id"],
    }


def latest(conn: sqlite3.Connection, agent: str) -> dict[tuple[str, str], dict]:
    """(kind, lesson id) → its latest full result."""
    return {key: result(row) for key, row in ledger.latest_evals(conn, agent).items()}


def made_worse(found: Mapping | None) -> bool:
    """Δ < 0 over at least WORSE_RUNS runs on each arm."""
    return bool(
        found
        and found["delta"] is not None
        and found["delta"] < 0
        and min(found["runs_with"], found["runs_without"]) >= WORSE_RUNS
    )


def delta_text(delta: float | None) -> str:
    """'+1', '-0.33', '0', or '-' (no result)."""
    return "-" if delta is None else f"{delta:+.2g}" if delta else "0"


def summary(rows: Iterable[Mapping]) -> dict:
    """How many lessons improve the agent, make it worse, are untested (rows: `evolve lessons`)."""
    deltas = [(r.get("eval") or {}).get("delta") for r in rows]
    return {
        "count": len(deltas),
        "improve": sum(1 for d in deltas if d is not None and d > 0),
        "worse": sum(1 for d in deltas if d is not None and d < 0),
        "untested": sum(1 for d in deltas if d is None),
    }


def summary_text(counts: Mapping) -> str:
    """'Lessons proven: 2 of 5 improve the agent, 1 make it worse, 2 untested (evolve eval).'."""
    return (
        f"Lessons proven: {counts['improve']} of {counts['count']} improve the agent, "
        f"{counts['worse']} make it worse, {counts['untested']} untested (evolve eval)."
    )


def worse_lessons(conn: sqlite3.Connection, agent: Agent) -> list[dict]:
    """The agent's lessons (as its files hold them) that made their own eval worse, worst first."""
    found = latest(conn, agent.name)
    if not any(made_worse(r) for r in found.values()):
        return []
    worse: list[dict] = []
    for lesson in lessons_mod.current(agent):
        outcome = found.get(lesson.key)
        if made_worse(outcome):
            where = {"kind": lesson.kind, "lesson": lesson.id, "where": lesson.where, "text": lesson.text}
            worse.append({**where, "eval": outcome})
    return sorted(worse, key=lambda w: (w["eval"]["delta"], w["kind"], w["lesson"]))
