"""Session start: `evolve prompt NAME` for an agent with 200 skills and 100,000 recorded runs.

The agent's 200 skills are committed in one commit; 100,000 runs (2,000 sessions of 50),
their impressions and invocations are inserted into state.db in bulk; the metrics are
computed once (as `evolve skills`, the cycle and observe do) and cached for the hot path.
Then, interleaved in the same run, the median wall time of 15 runs each of:
- `python -c pass` (the same interpreter: the baseline),
- `evolve prompt NAME --session ID` through the installed console script (`ratio`, the
  target: <= 3),
- the Claude Code SessionStart hook command that `evolve install claude-code` writes,
  with the index injected (skills not linked) — what Claude Code really runs
  (`hook_ratio`, measured when evolve.hookmain exists),
- `evolve prompt` right after a skill changed (one SKILL.md re-read: `changed_ratio`).
Also reported: the metrics refresh time over the 100,000 runs and the injection's size.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = "bench"
SKILLS = 200
SESSIONS = 2_000
RUNS_PER_SESSION = 50
REPEAT = 15
START = 1_790_000_000.0  # runs spread over the 120 days before START + 120 days


def _python() -> str:
    return sys.executable


def _evolve_script() -> list[str]:
    """The installed console script next to the interpreter, else `python -m evolve`."""
    script = Path(sys.executable).with_name("evolve")
    return [str(script)] if script.exists() else [_python(), "-m", "evolve"]


def _skill(index: int, rng: random.Random) -> str:
    words = " ".join(
        rng.choice(
            [
                "parser",
                "tests",
                "deploy",
                "schema",
                "flaky",
                "retry",
                "cache",
                "migration",
                "lint",
                "release",
                "logs",
                "fixtures",
            ]
        )
        for _ in range(rng.randint(8, 18))
    )
    name = f"skill-{index:03d}"
    body = "".join(f"- rule {r}: when step {r} fails, read its log first\n" for r in range(10))
    return f"---\nname: {name}\ndescription: Use when working on {words}.\n---\n\n{body}"


def build(home: Path) -> dict:
    """The agent, its skills (one commit) and 100,000 runs with usage in state.db."""
    from evolve.home import Home
    from evolve.store import ledger
    from evolve.store.history import build_message
    from evolve.workspace.agent import Agent

    rng = random.Random(11)
    agent = Agent.create(AGENT, Home(home))
    changes = {f"skills/skill-{i:03d}/SKILL.md": _skill(i, rng).encode() for i in range(SKILLS)}
    with agent.repo.locked():
        agent.repo.commit_changes(changes, build_message("reflect(bench): skills", {}), agent.evolve_identity)
    conn = ledger.connect(home / "state.db")
    names = [f"skill-{i:03d}" for i in range(SKILLS)]
    runs, impressions, invocations = [], [], []
    for s in range(SESSIONS):
        session = f"session-{s:05d}"
        path = f"/transcripts/{session}.jsonl"
        t0 = START + s * (120 * 86_400 / SESSIONS)
        shown = rng.sample(names, 120)
        impressions += [(AGENT, n, session, t0) for n in shown]
        for i in range(RUNS_PER_SESSION):
            used = [n for n in shown[:8] if rng.random() < 0.02]
            facts = {
                "session_id": session,
                "index": i,
                "request": "please fix the parser tests",
                "tool_calls": rng.randint(0, 30),
                "errors": int(rng.random() < 0.1),
                "transient_errors": int(rng.random() < 0.05),
                "aborted": rng.random() < 0.02,
                "correction": rng.random() < 0.08,
                "ended_in_error": rng.random() < 0.05,
                "skills": [{"name": n, "tool_use_id": f"toolu_{s}_{i}_{n}"} for n in used],
                "files_written": ["src/parser.py"],
                "complete": True,
            }
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + i * 60))
            runs.append(
                (AGENT, path, session, i, when, when, "/work", 1, 0, None, json.dumps(facts), t0 + i * 60)
            )
            invocations += [
                (AGENT, n, session, i, f"toolu_{s}_{i}_{n}", "transcript", t0 + i * 60) for n in used
            ]
    with ledger.transaction(conn):
        ledger.ensure_agent(conn, AGENT, START)
        conn.executemany(
            "INSERT INTO runs (agent, path, session, idx, started_at, ended_at, cwd, "
            "complete, superseded, tail_uuid, facts, observed_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            runs,
        )
        conn.executemany("INSERT INTO impressions (agent, skill, session, at) VALUES (?,?,?,?)", impressions)
        conn.executemany(
            "INSERT INTO invocations (agent, skill, session, run_idx, tool_use_id, "
            "source, at) VALUES (?,?,?,?,?,?,?)",
            invocations,
        )
    conn.close()
    return {"runs": len(runs), "impressions": len(impressions), "invocations": len(invocations)}


def _time(argv: list[str], env: dict) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def _hook_command(home: Path) -> list[str] | None:
    try:
        from evolve.home import Home
        from evolve.integrations.claude_code import hook_command
    except ImportError:
        return None
    return shlex.split(hook_command(_python(), Home(home), AGENT, "session-start", False))


def run(workdir: Path) -> dict:
    workdir = Path(workdir)
    home = workdir / "home"
    started = time.perf_counter()
    sizes = build(home)
    build_s = time.perf_counter() - started
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(EVOLVE_HOME=str(home), EVOLVE_NO_WATCHER="1")

    from evolve.home import Home
    from evolve.metrics.usage import refresh_rates
    from evolve.store import ledger

    conn = ledger.connect(home / "state.db")
    started = time.perf_counter()
    refresh_rates(conn, Home(home), AGENT, now=START + 121 * 86_400)
    metrics_s = time.perf_counter() - started
    conn.close()

    prompt = [*_evolve_script(), "prompt", AGENT, "--session", "bench-session"]
    hook = _hook_command(home)
    payload = json.dumps(
        {"session_id": "bench-hook", "hook_event_name": "SessionStart", "source": "startup"}
    ).encode()
    out = subprocess.run([*prompt, "--json"], env=env, capture_output=True, check=True)
    shown = json.loads(out.stdout)
    cache = home / "cache" / AGENT / "skills.json"
    cache.unlink()
    cold_s = _time(prompt, env)  # the first session after install: every SKILL.md parsed
    for _ in range(3):  # warm-up: bytecode written, page cache warm
        _time([_python(), "-c", "pass"], env)
        _time(prompt, env)
    base, warm, hooked, changed = [], [], [], []
    skill_file = home / "agents" / AGENT / "skills" / "skill-007" / "SKILL.md"
    for i in range(REPEAT):
        base.append(_time([_python(), "-c", "pass"], env))
        warm.append(_time(prompt, env))
        if hook is not None:
            started = time.perf_counter()
            subprocess.run(hook, env=env, input=payload, stdout=subprocess.DEVNULL, check=True)
            hooked.append(time.perf_counter() - started)
        skill_file.write_text(skill_file.read_text() + f"- revision {i}\n")
        changed.append(_time(prompt, env))
    median = statistics.median
    result = {
        "skills": SKILLS,
        **sizes,
        "listed": len(shown["listed"]),
        "left_out": shown["left_out"],
        "chars": shown["chars"],
        "python_pass_ms": round(median(base) * 1000, 1),
        "prompt_ms": round(median(warm) * 1000, 1),
        "ratio": round(median(warm) / median(base), 2),
        "changed_ratio": round(median(changed) / median(base), 2),
        "cold_ratio": round(cold_s / median(base), 2),
        "metrics_refresh_s": round(metrics_s, 2),
        "build_s": round(build_s, 1),
        "targets": {"ratio": "<= 3", "hook_ratio": "<= 3"},
    }
    if hooked:
        result["hook_ratio"] = round(median(hooked) / median(base), 2)
    return result


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        outcome = run(Path(tmp))
    print(json.dumps(outcome, indent=2))
    sys.exit(0 if outcome["ratio"] <= 3 else 1)
