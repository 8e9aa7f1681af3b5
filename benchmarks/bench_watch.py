"""The watcher's cost: idle CPU with 100 agents, append→dirty latency, cycle planning at scale.

1. `evolve watch` runs as a subprocess over a home of 100 agents (each with a transcript
   folder); once it is ready and its start-up work is done, its CPU time (own + waited
   children, from /proc/<pid>/stat) is read over an idle window: 60 s by default,
   `EVOLVE_BENCH_IDLE_S=10` for a quick run. Target: < 1 % of one core.
2. Latency from appending one run to a transcript to the agent being marked dirty in
   state.db, over 20 appends: median and p95 (the home's debounce_s is part of it and is
   reported; `overhead` is what the watcher adds on top).
3. Planning a cycle over 1,000 agents of which 10 are dirty, against 10 agents (all dirty),
   best of several runs each. Target: ratio close to 1 — cost follows the dirty agents.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evolve.home import Home  # noqa: E402
from evolve.schedule import cycle  # noqa: E402
from evolve.store import ledger  # noqa: E402
from evolve.workspace.agent import Agent  # noqa: E402

AGENTS = 100
APPENDS = 20
DEBOUNCE_S = 0.25


def _line(session: str, n: int, obj: dict) -> str:
    head = {
        "parentUuid": None if n == 1 else f"{session}-{n - 1}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/me/project",
        "sessionId": session,
        "version": "2.1.38",
        "uuid": f"{session}-{n}",
        "timestamp": f"2026-02-10T21:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
    }
    return json.dumps({**head, **obj}, separators=(",", ":"))


def append_turn(path: Path, n: int) -> None:
    """One run (a request and the final answer) in Claude Code's shape."""
    session = path.stem
    lines = [
        _line(session, 2 * n + 1, {"type": "user", "message": {"role": "user", "content": f"request {n}"}}),
        _line(
            session,
            2 * n + 2,
            {
                "type": "assistant",
                "requestId": f"req_{n}",
                "message": {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [{"type": "text", "text": "Done."}],
                },
            },
        ),
    ]
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def build_home(root: Path, agents: int) -> tuple[Home, list[Path]]:
    home = Home(root / "home").ensure()
    home.config_file.write_text(f"[watch]\ndebounce_s = {DEBOUNCE_S}\nhuman_edit_quiet_s = 1\n")
    transcripts = []
    for number in range(agents):
        name = f"agent-{number:03d}"
        folder = root / "projects" / name
        folder.mkdir(parents=True)
        agent = Agent.create(name, home)
        (agent.path / "agent.toml").write_text(f'[sources]\nclaude_code = ["{folder}/*.jsonl"]\n')
        agent.commit_human_edits()
        transcript = folder / f"{number:08d}-session.jsonl"
        append_turn(transcript, 0)
        transcripts.append(transcript)
    return home, transcripts


def cpu_seconds(pid: int) -> float:
    """CPU seconds of a process: user + system, its own and its waited children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    return ticks / os.sysconf("SC_CLK_TCK")


def start_watch(home: Home, log: Path) -> subprocess.Popen:
    env = {**os.environ, "EVOLVE_HOME": str(home.root), "PYTHONPATH": str(ROOT)}
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evolve", "watch"], env=env, stderr=err, stdout=subprocess.DEVNULL
        )
    deadline = time.monotonic() + 120
    while "ready:" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"evolve watch did not start: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    return proc


def is_dirty(conn, name: str) -> bool:
    row = conn.execute("SELECT dirty FROM agents WHERE name = ?", (name,)).fetchone()
    return bool(row and row[0])


def measure_latency(home: Home, transcripts: list[Path]) -> list[float]:
    conn = ledger.connect(home.state_db)
    samples = []
    try:
        for n in range(1, APPENDS + 1):
            index = n % len(transcripts)
            name = f"agent-{index:03d}"
            conn.execute("UPDATE agents SET dirty = 0, dirty_at = NULL WHERE name = ?", (name,))
            started = time.perf_counter()
            append_turn(transcripts[index], n)
            while not is_dirty(conn, name):
                if time.perf_counter() - started > 30:
                    raise RuntimeError(f"{name} not marked dirty within 30 s")
                time.sleep(0.005)
            samples.append(time.perf_counter() - started)
    finally:
        conn.close()
    return samples


def plan_home(root: Path, total: int) -> tuple[Home, object]:
    """A home of `total` agents, 10 of them dirty (real repositories with pending runs)."""
    home = Home(root / f"plan-{total}").ensure()
    conn = ledger.connect(home.state_db)
    template = None
    for number in range(10):
        name = f"dirty-{number:02d}"
        template = Agent.create(name, home)
        ledger.ensure_agent(conn, name, time.time() - 86400)
        for idx in range(5):
            conn.execute(
                "INSERT INTO runs (agent, path, session, idx, complete, facts, observed_at) "
                "VALUES (?, '/t.jsonl', 's', ?, 1, ?, ?)",
                (
                    name,
                    idx,
                    json.dumps({"request": "fix it", "correction": idx == 0, "tool_calls": 3}),
                    time.time(),
                ),
            )
        ledger.mark_dirty(conn, name)
    assert template is not None
    with ledger.transaction(conn):
        for number in range(total - 10):  # clean agents: listed, never opened
            name = f"clean-{number:04d}"
            folder = home.agent_dir(name)
            (folder / ".git").mkdir(parents=True)
            (folder / "agent.toml").write_bytes((template.path / "agent.toml").read_bytes())
            ledger.ensure_agent(conn, name, time.time() - 86400)
    return home, conn


def plan_ratio(root: Path, repeat: int = 30) -> dict:
    """Best planning time over 1,000 agents (10 dirty) and over the 10 dirty ones alone.

    The two are timed in alternation (this machine's speed drifts over seconds: shared
    cores), each round planning both, and each side keeps its best time.
    """
    homes = {total: plan_home(root, total) for total in (10, 1000)}
    best = {total: float("inf") for total in homes}
    for attempt in range(repeat):
        for total in (10, 1000) if attempt % 2 == 0 else (1000, 10):
            home, conn = homes[total]
            started = time.perf_counter()
            plan = cycle.plan(conn, home, time.time())  # type: ignore[arg-type]
            best[total] = min(best[total], time.perf_counter() - started)
            assert len(plan.selected) == 5 and len(plan.selected) + len(plan.skipped) == total
    for _, conn in homes.values():
        conn.close()  # type: ignore[attr-defined]
    return {
        "plan_10_s": round(best[10], 5),
        "plan_1000_s": round(best[1000], 5),
        "plan_ratio": round(best[1000] / best[10], 2),
        "plan_us_per_dirty_agent": round(1e6 * best[10] / 10, 1),
        "plan_us_per_clean_agent": round(1e6 * (best[1000] - best[10]) / 990, 1),
    }


def run(workdir: Path, idle_s: float | None = None) -> dict:
    workdir = Path(workdir)
    idle_s = idle_s or float(os.environ.get("EVOLVE_BENCH_IDLE_S", "60"))
    started = time.perf_counter()
    home, transcripts = build_home(workdir, AGENTS)
    build_s = time.perf_counter() - started
    log = workdir / "watch.stderr"
    started = time.perf_counter()
    proc = start_watch(home, log)
    try:
        ready_s = time.perf_counter() - started
        time.sleep(3.0)  # start-up work: the deferred check of pending human edits (quiet 1 s)
        before, t0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(idle_s)
        idle_cpu = cpu_seconds(proc.pid) - before
        idle_wall = time.perf_counter() - t0
        latencies = measure_latency(home, transcripts)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
    result = {
        "agents": AGENTS,
        "idle_window_s": round(idle_wall, 1),
        "idle_cpu_percent": round(100 * idle_cpu / idle_wall, 3),
        "ready_s": round(ready_s, 2),
        "debounce_s": DEBOUNCE_S,
        "latency_median_s": round(statistics.median(latencies), 3),
        "latency_p95_s": round(p95, 3),
        "latency_overhead_median_ms": round(1000 * (statistics.median(latencies) - DEBOUNCE_S), 1),
        "build_s": round(build_s, 1),
        "exit_code": proc.returncode,
        **plan_ratio(workdir),
        "targets": {"idle_cpu_percent": "< 1", "plan_ratio": "<= 3"},
    }
    result["ratio"] = result["plan_ratio"]
    return result


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory(prefix="evolve-bench-watch-") as tmp:
        print(json.dumps(run(Path(tmp), seconds), indent=2))
