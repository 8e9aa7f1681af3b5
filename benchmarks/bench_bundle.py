"""Bundle building for an agent with 1,000 pending runs: time and tokens used / budget.

50 Claude Code sessions of 20 runs each (every fifth run corrected, every seventh with a
recovered error) are observed into a fresh home; then the bundle is built. The baseline,
in the same run, is scoring those pending runs (what every cycle does anyway).
Targets: within budget, at least 90 % of it used.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

SESSIONS, RUNS = 50, 20


def _transcripts(folder: Path) -> list[Path]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.reflect.scenarios import Transcript

    paths = []
    for s in range(SESSIONS):
        t = Transcript(folder / f"s{s:03d}.jsonl", cwd=f"/work/project-{s % 7}")
        for r in range(RUNS):
            if r % 5 == 4:
                t.user(f"No, that's wrong: always run the linter before the tests in project {s}.")
            else:
                t.user(f"Implement step {r} of feature {s}: " + "details " * 40)
            t.tool("Bash", {"command": f"make step-{r}"}, "output " * 200, error=(r % 7 == 3))
            t.tool("Bash", {"command": f"make check-{r}"}, "ok")
            t.say("Step done. " + "summary " * 60)
        paths.append(t.path)
    return paths


def run(workdir: Path) -> dict:
    os.environ["EVOLVE_HOME"] = str(workdir / "home")
    from evolve.observe import ingest as observe
    from evolve.reflect.bundle import build_bundle
    from evolve.schedule import pending
    from evolve.store import ledger
    from evolve.workspace.agent import Agent

    agent = Agent.create("bench")
    conn = ledger.connect(agent.home.state_db)
    files = [(str(p), "claude_code") for p in _transcripts(workdir)]
    observe.observe(conn, agent.name, files)
    started = time.perf_counter()
    scored = pending.scored_runs(conn, agent.name, agent.config, agent.memo_text())
    scoring_s = time.perf_counter() - started
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        bundle = build_bundle(conn, agent)
        timings.append(time.perf_counter() - started)
    bundle_s = min(timings)
    return {
        "pending_runs": len(scored),
        "bundle_s": round(bundle_s, 3),
        "scoring_s": round(scoring_s, 3),
        "ratio_vs_scoring": round(bundle_s / scoring_s, 2),
        "tokens": bundle.tokens,
        "budget": bundle.budget,
        "budget_used": round(bundle.tokens / bundle.budget, 3),
        "runs_in_bundle": len(bundle.runs),
        "targets": {"budget_used": ">= 0.9", "tokens": f"<= {bundle.budget}"},
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(Path(tmp)), indent=2))
