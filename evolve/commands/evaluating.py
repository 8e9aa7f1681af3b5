"""`evolve eval`: prove the agent's lessons with Claude Code's plugin eval (with and without it)."""

from __future__ import annotations

from evolve.commands.output import emit_json, say, table, warn
from evolve.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USER
from evolve.home import Home
from evolve.workspace.agent import Agent


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def eval_command(
    home: Home,
    name: str,
    lesson: str | None = None,
    runs: int | None = None,
    max_cost_usd: float | None = None,
    as_json: bool = False,
) -> int:
    from evolve.evaluate.run import Ask, evaluate
    from evolve.metrics.proven import delta_text

    agent = Agent.open(name, home)
    data = evaluate(
        agent, Ask(lesson, runs, max_cost_usd), progress=(lambda _line: None) if as_json else warn
    )
    rows = data["lessons"]
    failed = [r for r in rows if r["status"] != "full"]
    code = EXIT_INTERRUPTED if data["interrupted"] else EXIT_USER if failed or data["partial"] else EXIT_OK
    if as_json:
        emit_json(data)
    else:
        state = f"partial ({data['partial_reason']})" if data["partial"] else "complete"
        say(
            f"evolve eval {name}: {len(rows)} lesson(s) at {data['tip'][:10]}, {state}, "
            f"${data['cost_usd']:g}, {data['wall_s']:g} s"
        )
        say()
        lines = [
            [
                r["lesson"],
                r["kind"],
                _score(r["score_with"]),
                _score(r["score_without"]),
                delta_text(r["delta"]),
                f"{r['runs_with']}/{r['runs_without']}",
                r["status"] + (f": {r['detail']}" if r["detail"] else ""),
                r["text"] or r["lesson"],
            ]
            for r in rows
        ]
        say(table(lines, ["LESSON", "KIND", "WITH", "WITHOUT", "Δ", "RUNS", "STATUS", "TEXT"]))
        for case in data["unmatched"]:
            say(f"case evals/{case}/ names no lesson on main: not recorded")
        if data["report"]:
            say(f"\nreport: {data['report']}")
    if code == EXIT_USER:
        why = "the run stopped early" if data["partial"] else f"{len(failed)} case(s) could not be scored"
        warn(f"{why}: recorded as partial or failed, never as a result; fix the case or run again")
    return code
