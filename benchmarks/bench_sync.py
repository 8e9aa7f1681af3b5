"""Sync's cost: an agent of 2,000 commits and 200 skills against `git daemon` on 127.0.0.1.

1. Nothing changed anywhere: the in-process sync (`evolve.sync.run.sync`) against a plain
   `git fetch` of the same repository (target <= 1.5x), and the `evolve sync` command as its
   own process against the same fetch (<= 3x: starting Python alone is about that far).
2. One new reflection: the watcher's in-process sync after a commit (it pushes first,
   leased on what the server had) against a plain `git push` of one such commit from a clone
   of the same history to a twin repository on the same daemon (target <= 2x); and, for
   comparison, the full sync `evolve sync` does (fetch, integrate, push). Timed in
   alternation; each keeps its median.
3. The watcher with 100 synced agents: its CPU (own and its children's, from /proc) over an
   idle window once its start-up round of syncs is done (target < 1 % of a core), and that
   round's CPU spread over `rescan_minutes` (every rescan syncs every agent once).
   `EVOLVE_BENCH_IDLE_S=10` for a quick run (default 60).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for folder in (ROOT, HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from bench_history import build_repo  # noqa: E402
from bench_watch import cpu_seconds  # noqa: E402

from evolve.config import WatchConfig  # noqa: E402
from evolve.home import Home  # noqa: E402
from evolve.store import ledger  # noqa: E402
from evolve.store.history import build_message  # noqa: E402
from evolve.store.identity import Identity  # noqa: E402
from evolve.sync import join  # noqa: E402
from evolve.sync.run import sync  # noqa: E402
from evolve.workspace.agent import Agent  # noqa: E402
from evolve.workspace.template import install_precommit_hook  # noqa: E402
from tests.git_servers import GitDaemon  # noqa: E402

REPEAT = 15
PUSHES = 10
AGENTS = 100
EVOLVE = Identity("evolve", "evolve@localhost")


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def big_agent(home: Home, server: GitDaemon) -> Agent:
    """The generated history as agent `big`, checked out, its hooks installed, synced once."""
    path = home.agent_dir("big")
    path.parent.mkdir(parents=True, exist_ok=True)
    repo = build_repo(path)
    repo.git("symbolic-ref", "HEAD", "refs/heads/main")
    repo.check_out("main")
    install_precommit_hook(path, home.root)
    agent = Agent(home, "big")
    join.set_remote(agent, server.url("big"))
    first = sync(agent)
    assert first.state == "synced", first.line()
    return agent


def reflection(agent: Agent, number: int) -> None:
    """One reflection-sized commit through evolve's write path (lock, journal, CAS)."""
    path = f"skills/skill-{50 + number:03d}/SKILL.md"
    current = (agent.path / path).read_text()
    message = build_message(f"reflect(big): bench {number}", {"Evolve-Kind": "reflection"})
    with agent.repo.locked():
        agent.repo.commit_changes({path: (current + f"- lesson {number}\n").encode()}, message, EVOLVE)


def nothing_changed(agent: Agent, home: Home) -> dict:
    """Medians of a plain fetch, the in-process sync and the `evolve sync` command."""
    fetch, inproc, command = [], [], []
    argv = [sys.executable, "-P", "-m", "evolve", "--home", str(home.root), "sync", "big"]
    # as people run it: with Python's bytecode cache (this workplace turns it off), warmed once
    env = {**_environ(), "PYTHONPATH": str(ROOT)}
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    for _ in range(REPEAT):
        fetch.append(
            timed(lambda: subprocess.run(["git", "fetch", "-q", "origin"], cwd=agent.path, check=True))
        )
        inproc.append(timed(lambda: _expect(sync(agent), "up to date")))
        command.append(timed(lambda: subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)))
    base = statistics.median(fetch)
    return {
        "fetch_ms": round(1000 * base, 1),
        "sync_nothing_ms": round(1000 * statistics.median(inproc), 1),
        "sync_command_ms": round(1000 * statistics.median(command), 1),
        "nothing_ratio": round(statistics.median(inproc) / base, 2),
        "command_ratio": round(statistics.median(command) / base, 2),
    }


def one_reflection(agent: Agent, server: GitDaemon, workdir: Path) -> dict:
    """Medians of syncing one new reflection and of `git push` of one commit of the same size."""
    twin = workdir / "twin"
    subprocess.run(["git", "clone", "-q", server.url("big"), str(twin)], check=True)
    subprocess.run(["git", "push", "-q", server.url("twin"), "main"], cwd=twin, check=True)
    subprocess.run(["git", "remote", "set-url", "origin", server.url("twin")], cwd=twin, check=True)
    pushes, syncs, full = [], [], []
    for number in range(PUSHES):
        reflection(agent, number)
        syncs.append(timed(lambda: _expect(sync(agent, push_first=True), "synced")))
        reflection(agent, number + PUSHES)
        full.append(timed(lambda: _expect(sync(agent), "synced")))
        file = twin / f"skills/skill-{100 + number:03d}/SKILL.md"
        file.write_text(file.read_text() + f"- lesson {number}\n")
        subprocess.run(["git", "commit", "-qam", f"bench {number}", "--no-verify"], cwd=twin, check=True)
        pushes.append(
            timed(lambda: subprocess.run(["git", "push", "-q", "origin", "main"], cwd=twin, check=True))
        )
    base = statistics.median(pushes)
    return {
        "push_ms": round(1000 * base, 1),
        "sync_one_reflection_ms": round(1000 * statistics.median(syncs), 1),
        "push_ratio": round(statistics.median(syncs) / base, 2),
        "full_sync_one_reflection_ms": round(1000 * statistics.median(full), 1),
        "full_push_ratio": round(statistics.median(full) / base, 2),
    }


def watcher_idle(workdir: Path, server: GitDaemon, idle_s: float) -> dict:
    """CPU of `evolve watch` over 100 synced agents: idle, and its start-up round of syncs."""
    home = Home(workdir / "hundred").ensure()
    home.config_file.write_text("[watch]\nhuman_edit_quiet_s = 1\n")  # its start-up check, done soon
    for number in range(AGENTS):
        agent = Agent.create(f"agent-{number:03d}", home)
        join.set_remote(agent, server.url(agent.name))
        _expect(sync(agent), "synced")
    log = workdir / "watch.stderr"
    env = {**_environ(), "EVOLVE_HOME": str(home.root), "PYTHONPATH": str(ROOT)}
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-P", "-m", "evolve", "watch"], env=env, stderr=err)
    try:
        round_cpu, started = _after_round(proc, home, time.time())
        before, t0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(idle_s)
        idle_cpu, window = cpu_seconds(proc.pid) - before, time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    rescan_s = WatchConfig().rescan_minutes * 60
    return {
        "watched_agents": AGENTS,
        "idle_window_s": round(window, 1),
        "watch_idle_cpu_percent": round(100 * idle_cpu / window, 3),
        "rescan_round_cpu_s": round(round_cpu, 2),
        "rescan_round_wall_s": round(started, 1),
        "watch_cpu_with_rescans_percent": round(100 * (idle_cpu / window + round_cpu / rescan_s), 3),
    }


def _after_round(proc: subprocess.Popen, home: Home, since: float) -> tuple[float, float]:
    """Wait until the watcher's first rescan synced every agent; (its CPU seconds, wall seconds)."""
    started = time.perf_counter()
    while True:
        if proc.poll() is not None or time.perf_counter() - started > 300:
            raise RuntimeError("the watcher did not sync every agent within 300 s")
        with ledger.opened(home.state_db) as conn:
            done = sum(row["at"] >= since for row in ledger.sync_rows(conn).values())
        if done >= AGENTS:
            time.sleep(3.0)  # and the deferred check of a person's edits (quiet 1 s)
            return cpu_seconds(proc.pid), time.perf_counter() - started
        time.sleep(0.2)


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _expect(outcome, state: str) -> None:
    if outcome.state != state:
        raise AssertionError(f"expected {state}: {outcome.line()}")


def run(workdir: Path) -> dict:
    workdir = Path(workdir)
    idle_s = float(os.environ.get("EVOLVE_BENCH_IDLE_S", "60"))
    server = GitDaemon(workdir / "server")
    server.start()
    try:
        home = Home(workdir / "home").ensure()
        started = time.perf_counter()
        agent = big_agent(home, server)
        build_s = time.perf_counter() - started
        result = {
            "commits": int(agent.repo.text("rev-list", "--count", "main")),
            "skills": len(agent.skills()),
            **nothing_changed(agent, home),
            **one_reflection(agent, server, workdir),
            **watcher_idle(workdir, server, idle_s),
            "build_s": round(build_s, 1),
        }
    finally:
        server.stop()
    result["targets"] = {
        "nothing_ratio": "<= 1.5",
        "command_ratio": "<= 3",
        "push_ratio": "<= 2",
        "watch_idle_cpu_percent": "< 1",
        "watch_cpu_with_rescans_percent": "< 1",
    }
    return result


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="evolve-bench-sync-") as tmp:
        print(json.dumps(run(Path(tmp)), indent=2))
