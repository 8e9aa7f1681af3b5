"""Soak: 10,000 simulated watch → score → reflect → commit cycles (reliability item 15).

Offline backend, fake clock. File descriptors, child processes, threads and memory must be
as stable at the end as after warm-up. `make soak` runs it; `make test` leaves it out.
SOAK_CYCLES overrides the count for a quick look.
"""

from __future__ import annotations

import json
import os
import resource
import threading
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.observe.ingest import observe
from evolve.reflect.run import reflect_for_cycle
from evolve.schedule import pending
from evolve.schedule.cycle import run_cycle
from evolve.store import ledger
from evolve.workspace.agent import Agent
from tests.reflect.scenarios import Transcript

pytestmark = [pytest.mark.soak, pytest.mark.timeout(3600)]
HOUR = 3600.0


def resources() -> dict:
    children = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            children += len((task / "children").read_text().split())
        except OSError:
            pass
    rss_pages = int(Path("/proc/self/statm").read_text().split()[1])
    return {
        "fds": sum(1 for _ in Path("/proc/self/fd").iterdir()),
        "children": children,
        "threads": threading.active_count(),
        "rss_mb": round(rss_pages * resource.getpagesize() / 2**20, 1),
    }


def test_soak(tmp_path) -> None:
    cycles = int(os.environ.get("SOAK_CYCLES", "10000"))
    home = Home.resolve()
    agent = Agent.create("soak", home)
    transcript = Transcript(tmp_path / "session.jsonl")
    files = [(str(transcript.path), "claude_code")]
    clock = 1_800_000_000.0
    conn = ledger.connect(home.state_db)
    outcomes: dict[str, int] = {}
    start: dict = {}
    warmup = min(200, cycles // 10)
    for n in range(cycles):
        clock += HOUR
        transcript.user(f"Request {n}: build component {n % 97}")
        transcript.tool("Bash", {"command": f"make c{n % 97}"}, "ok" if n % 5 else "boom", error=not n % 5)
        if n % 7 == 0:
            transcript.user(f"No, that's wrong: always build component {n % 97} with the release flag.")
        observe(conn, "soak", files, now=clock)  # what the watcher does on an event
        pending.scored_runs(conn, "soak", agent.config, agent.memo_text())  # status / scheduler
        result = run_cycle(home, now=clock, reflect=lambda name, now: reflect_for_cycle(home, name, now))
        for outcome in result.outcomes.values():
            outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
        if n + 1 == warmup:
            start = resources()
    conn.close()
    end = resources()
    report = {
        "cycles": cycles,
        "outcomes": outcomes,
        "start": start,
        "end": end,
        "commits": int(os.popen(f"git -C {agent.path} rev-list --count HEAD").read()),
    }
    print("SOAK", json.dumps(report))
    (Path(os.environ.get("SOAK_REPORT", tmp_path / "soak.json"))).write_text(json.dumps(report))
    assert end["fds"] <= start["fds"] + 3, report
    assert end["children"] == 0, report
    assert end["threads"] <= start["threads"], report
    assert end["rss_mb"] <= start["rss_mb"] + 60, report
    assert outcomes.get("committed", 0) >= 1 and "failed" not in outcomes, report
