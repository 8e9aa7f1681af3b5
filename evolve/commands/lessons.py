"""`evolve lessons`: every lesson (memo bullets and skills), and whether it stuck."""

from __future__ import annotations

import shutil
import textwrap

from evolve.commands.output import emit_json, say, table
from evolve.home import Home
from evolve.workspace.agent import Agent


def lesson_data(home: Home, agent: Agent, days: float | None = None) -> dict:
    """The listing's data: the spool drained and the runs judged first (metrics.lessons.build)."""
    from evolve.metrics.lessons import build
    from evolve.observe.adherence import judge
    from evolve.observe.records import drain_pending
    from evolve.store import ledger

    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)
        judge(conn, agent)
        return build(conn, agent, window_days=days)


def _rate(side: dict) -> str:
    if side["per_100"] is None:
        return "-"
    return f"{side['per_100']:g}" + ("?" if side["thin"] else "")


def _proof(found: dict | None) -> str:
    """'+1 (3/3)': the latest full eval's Δ and its runs per arm; '-' when never proven."""
    from evolve.metrics.proven import delta_text

    if found is None:
        return "-"
    return f"{delta_text(found['delta'])} ({found['runs_with']}/{found['runs_without']})"


def lessons(home: Home, name: str, days: float | None = None, as_json: bool = False) -> int:
    from evolve.metrics.lessons import headline_text
    from evolve.workspace.memo import over_cap

    agent = Agent.open(name, home)
    data = lesson_data(home, agent, days)
    if as_json:
        emit_json(data)
        return 0
    rows = data["lessons"]
    size = agent.memo_oversized()
    if size is not None:
        say(f"{over_cap(size)}: its bullets are not listed (`evolve doctor` says more)")
    if not rows:
        what = "no memo bullet, no skill" if size is None else "no skill; the memo is not read"
        say(f"agent {name!r} has no lessons yet ({what})")
        return 0
    headers = ["LESSON", "KIND", "WHERE", "BY", "COMMIT", "LANDED", "IN CONTEXT", "IGNORED"]
    headers += ["BEFORE/100", "AFTER/100", "CASE", "EVAL Δ", "TEXT"]
    lines = [
        [
            r["id"],
            r["kind"],
            r["where"],
            r["written_by"],
            (r["commit"] or "uncommitted")[:10],
            (r["landed_at"] or "-")[:10],
            str(r["in_context"]),
            str(r["ignored"]),
            _rate(r["recurrence"]["before"]),
            _rate(r["recurrence"]["after"]) + (" NOT DROPPED" if r["recurrence"]["dropped"] is False else ""),
            r["eval_case"] or "-",
            _proof(r["eval"]),
            r["text"],
        ]
        for r in rows
    ]
    width = max(40, shutil.get_terminal_size((100, 24)).columns - 1)
    say(headline_text(data))
    say()
    say(table(lines, headers))
    say(
        textwrap.fill(
            f"(over the last {data['window_days']:g} days: IN CONTEXT = runs whose session carried the "
            "lesson, IGNORED = of those, runs where the person corrected the same point again or its "
            "error came back; BEFORE/AFTER = corrections on its point per 100 runs before it landed "
            f"and since, '?' with fewer than {data['thin_runs']} runs; CASE = the lesson's eval case; "
            "EVAL Δ = score with the agent minus without in the latest `evolve eval`, runs per arm; "
            "docs/metrics.md)",
            width=width,
        )
    )
    return 0
