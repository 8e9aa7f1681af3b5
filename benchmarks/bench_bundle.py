"""Bundle building: time and tokens used / budget, and the evidence shown of real sessions.

Synthetic: 50 Claude Code sessions of 20 runs each (every fifth run corrected, every
seventh with a recovered error) are observed into a fresh home; then the bundle is built.
The baseline, in the same run, is scoring those pending runs (what every cycle does
anyway). Targets: within budget, at least 90 % of it used, build time <= 3x scoring.

Real (`real_*`): the five largest shared Claude Code sessions together (../shared), or,
in a clone without them, the example transcripts shipped in evolve/examples (`real_source`
says which): tokens / budget, real errors shown with their cause, the person's words
shown, signalled runs shown, redactions, build time / scoring. `before_*` are the same
measures of the bundle as it was built before it showed evidence (main at 9242f88,
measured once on the shared sessions; that code is gone, so they are not re-measured).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.shared_data import CLAUDE_DATA  # noqa: E402

SESSIONS, RUNS = 50, 20
EXAMPLES = Path(__file__).resolve().parents[1] / "evolve" / "examples"
BEFORE = {  # the old bundle of the five largest shared sessions (see the docstring)
    "before_runs_shown": "7 of 24",
    "before_signalled_runs_shown": "6 of 10",
    "before_errors_with_cause": "4 of 27",
    "before_user_words_shown": "7 of 26",
    "before_call_lines_cut_mid_json": "23 of 57",
}


def _transcripts(folder: Path) -> list[Path]:
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


def _timed(conn, agent) -> tuple[float, float, object]:
    """(bundle seconds, scoring seconds, the bundle): the best of three of each."""
    from evolve.reflect.bundle import build_bundle
    from evolve.schedule import pending

    scoring = bundle_s = float("inf")
    bundle = None
    for _ in range(3):
        started = time.perf_counter()
        pending.scored_runs(conn, agent.name, agent.config, agent.memo_text())
        scoring = min(scoring, time.perf_counter() - started)
        started = time.perf_counter()
        bundle = build_bundle(conn, agent)
        bundle_s = min(bundle_s, time.perf_counter() - started)
    return bundle_s, scoring, bundle


def _real(workdir: Path) -> dict:
    """The five largest shared sessions (or the shipped examples) as one agent's history."""
    from evolve.home import Home
    from evolve.observe import ingest as observe
    from evolve.store import ledger
    from evolve.workspace.agent import Agent

    if CLAUDE_DATA.is_dir():
        files = sorted(CLAUDE_DATA.rglob("*.jsonl"), key=lambda p: -p.stat().st_size)[:5]
        source = "the five largest shared sessions"
    else:
        files = sorted(EXAMPLES.glob("*.jsonl"))
        source = f"evolve/examples ({CLAUDE_DATA} not found)"
        sys.stderr.write(f"bench bundle: no shared transcripts, using {source}\n")
    agent = Agent.create("real", Home.resolve(workdir / "real-home"))
    conn = ledger.connect(agent.home.state_db)
    observe.observe(conn, agent.name, [(str(p), "claude_code") for p in files])
    bundle_s, scoring_s, bundle = _timed(conn, agent)
    conn.close()
    shown = bundle.evidence()
    return {
        "real_source": source,
        "real_tokens": bundle.tokens,
        "real_budget_used": round(bundle.tokens / bundle.budget, 3),
        "real_runs_shown": f"{shown['runs_shown']} of {shown['runs_considered']}",
        "real_signalled_runs_shown": f"{shown['signalled_runs_shown']} of {shown['signalled_runs']}",
        "real_errors_with_cause": f"{shown['errors_with_cause']} of {shown['real_errors']}",
        "real_errors_with_cause_pct": shown["errors_with_cause_pct"],
        "real_user_words_shown": f"{shown['user_words_shown']} of {shown['user_words']}",
        "real_user_words_pct": shown["user_words_pct"],
        "real_redactions": shown["redactions"],
        "real_bundle_ms": round(bundle_s * 1000, 1),
        "real_scoring_ms": round(scoring_s * 1000, 2),
        **(BEFORE if CLAUDE_DATA.is_dir() else {}),
    }


def run(workdir: Path) -> dict:
    os.environ["EVOLVE_HOME"] = str(workdir / "home")
    from evolve.observe import ingest as observe
    from evolve.store import ledger
    from evolve.workspace.agent import Agent

    agent = Agent.create("bench")
    conn = ledger.connect(agent.home.state_db)
    files = [(str(p), "claude_code") for p in _transcripts(workdir)]
    observe.observe(conn, agent.name, files)
    bundle_s, scoring_s, bundle = _timed(conn, agent)
    conn.close()
    return {
        "pending_runs": bundle.candidates,
        "bundle_s": round(bundle_s, 3),
        "scoring_s": round(scoring_s, 3),
        "ratio_vs_scoring": round(bundle_s / scoring_s, 2),
        "tokens": bundle.tokens,
        "budget": bundle.budget,
        "budget_used": round(bundle.tokens / bundle.budget, 3),
        "runs_in_bundle": len(bundle.runs),
        **_real(workdir),
        "targets": {
            "budget_used": ">= 0.9",
            "tokens": f"<= {bundle.budget}",
            "ratio_vs_scoring": "<= 3",
            "real_budget_used": "<= 1.0",
            "real_errors_with_cause_pct": ">= 90",
            "real_user_words_pct": ">= 90",
        },
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(Path(tmp)), indent=2))
