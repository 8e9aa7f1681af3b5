"""The cycle over real agents and state.db: plan from stored state, record, reflect, timing."""

from __future__ import annotations

import json
import time

import pytest

from evolve.home import Home
from evolve.schedule import cycle, pending
from evolve.schedule.rules import DAY, HOUR
from evolve.store import ledger
from evolve.store.locks import FileLock
from evolve.watch.loop import Watcher
from tests.helpers import make_agent

NOW = time.time()


def add_run(conn, agent: str, facts: dict, observed_at: float = NOW - 60, idx: int = 0) -> None:
    """A stored run (as observe writes it) and the dirty mark observing sets."""
    conn.execute(
        "INSERT INTO runs (agent, path, session, idx, complete, facts, observed_at) "
        "VALUES (?, ?, ?, ?, 1, ?, ?)",
        (agent, f"/t/{agent}.jsonl", "s", idx, json.dumps({"request": "x", **facts}), observed_at),
    )
    ledger.mark_dirty(conn, agent, observed_at)


@pytest.fixture
def home(evolve_home) -> Home:
    return Home.resolve()


@pytest.fixture
def conn(home):
    home.ensure()
    connection = ledger.connect(home.state_db)
    yield connection
    connection.close()


def test_the_plan_reads_each_agents_state_from_state_db(home, conn):
    for name in ("corrected", "clean", "paused", "recent", "busy", "complex"):
        make_agent(name)
        ledger.ensure_agent(conn, name, NOW - 30 * DAY)
    for name in ("corrected", "paused", "recent", "busy"):
        add_run(conn, name, {"correction": True})
    add_run(conn, "complex", {"tool_calls": 25})  # complexity 0.5: below 0.7
    ledger.set_paused(conn, "paused", True)
    conn.execute("UPDATE agents SET last_reflection_at = ? WHERE name = 'recent'", (NOW - 2 * HOUR,))
    conn.execute("UPDATE agents SET last_reflection_at = ? WHERE name = 'complex'", (NOW - DAY,))
    with FileLock(home.agent_dir("busy") / ".git" / "evolve.lock"):  # a reflection runs elsewhere
        plan = cycle.plan(conn, home, NOW)
    assert plan.selected == ["corrected"]
    assert plan.skipped == {
        "clean": "nothing new",
        "paused": "paused",
        "recent": "reflected 2 h ago, gap 4 h",
        "busy": "busy",
        "complex": "below threshold (best pending score 0.50)",
    }


def test_the_cycle_judges_each_agent_by_its_own_schedule(home, conn):
    for name in ("eager", "patient", "default"):
        make_agent(name)
        ledger.ensure_agent(conn, name, NOW - 30 * DAY)
        conn.execute("UPDATE agents SET last_reflection_at = ? WHERE name = ?", (NOW - 2 * HOUR, name))
    (home.agent_dir("eager") / "agent.toml").write_text("[schedule]\nmin_gap_hours = 1.0\n")
    (home.agent_dir("patient") / "agent.toml").write_text(
        "[schedule]\nforce_after_days = 0.0\nmin_gap_hours = 0.5\n"
    )
    add_run(conn, "eager", {"correction": True})
    add_run(conn, "default", {"correction": True})
    add_run(conn, "patient", {"tool_calls": 1})  # below the threshold, but forced after 0 days
    plan = cycle.plan(conn, home, NOW)
    assert sorted(plan.selected) == ["eager", "patient"]
    assert plan.skipped == {"default": "reflected 2 h ago, gap 4 h"}


def test_evolve_reflect_and_the_cycle_share_one_gate(home, conn, capsys):
    """Paused, below threshold, forced: the same answer from both (reflect skips only the gap)."""
    from evolve import cli

    for name in ("paused", "below", "forced"):
        make_agent(name)
        ledger.ensure_agent(conn, name, NOW - DAY)  # younger than force_after_days
        add_run(conn, name, {"correction": True} if name == "paused" else {"tool_calls": 1})
    ledger.set_paused(conn, "paused", True)
    (home.agent_dir("forced") / "agent.toml").write_text("[schedule]\nforce_after_days = 0.0\n")
    plan = cycle.plan(conn, home, NOW)
    assert plan.selected == ["forced"]
    assert plan.skipped == {"paused": "paused", "below": "below threshold (best pending score 0.00)"}
    for name in ("paused", "below"):
        assert cli.main(["reflect", name, "--dry-run", "--json"]) == 0
        outcome = json.loads(capsys.readouterr().out)
        assert outcome["status"] == "skipped" and outcome["reason"].startswith(plan.skipped[name])
    assert cli.main(["reflect", "forced", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "dry-run"


def test_a_broken_agent_toml_skips_that_agent_with_the_reason(home, conn):
    for name in ("broken", "fine"):
        make_agent(name)
        ledger.ensure_agent(conn, name, NOW - 30 * DAY)
        add_run(conn, name, {"correction": True})
    (home.agent_dir("broken") / "agent.toml").write_text('review = "maybe"\n')
    plan = cycle.plan(conn, home, NOW)
    assert plan.selected == ["fine"]
    assert plan.skipped["broken"].startswith("cannot read its configuration: ")
    assert "review: must be true or false" in plan.skipped["broken"]


def test_cost_follows_the_dirty_agents(home, conn, monkeypatch):
    for number in range(30):
        make_agent(f"a{number:02d}") if number < 3 else home.agent_dir(f"a{number:02d}").joinpath(
            ".git"
        ).mkdir(parents=True)
    add_run(conn, "a01", {"correction": True})
    add_run(conn, "a02", {"correction": True})
    scored = []
    real = pending.scored_runs

    def counting(conn, name, *args, **kwargs):
        scored.append(name)
        return real(conn, name, *args, **kwargs)

    monkeypatch.setattr(pending, "scored_runs", counting)
    plan = cycle.plan(conn, home, NOW)
    assert sorted(scored) == ["a01", "a02"]  # no config, memo or git of the 28 clean agents
    assert plan.selected == ["a01", "a02"] and len(plan.skipped) == 28


def test_run_cycle_records_the_plan_and_reflects_the_selected(home, conn):
    make_agent("one")
    make_agent("two")
    add_run(conn, "one", {"correction": True})
    calls = []
    result = cycle.run_cycle(
        home,
        now=NOW,
        reflect=lambda name, at: calls.append((name, at)) or cycle.AgentOutcome("nothing", "nothing to save"),
    )
    assert calls == [("one", NOW)]
    assert result.to_dict() == {
        "selected": ["one"],
        "skipped": {"two": "nothing new"},
        "outcomes": {
            "one": {"status": "nothing", "reason": "nothing to save", "commit": None, "reflection": None}
        },
    }
    assert ledger.last_cycle_at(conn) == NOW
    dry = cycle.run_cycle(home, now=NOW + 5, dry_run=True, reflect=lambda *a: pytest.fail("dry"))
    assert dry.plan.selected == ["one"] and "outcomes" not in dry.to_dict()
    assert ledger.last_cycle_at(conn) == NOW  # a dry run is not a cycle
    (stored,) = [json.loads(r[0]) for r in conn.execute("SELECT plan FROM cycles WHERE dry_run = 0")]
    assert stored == {"selected": ["one"], "skipped": {"two": "nothing new"}}


def test_the_watcher_logs_a_failed_reflection_as_a_warning(home, conn, caplog):
    import logging

    make_agent("one")
    add_run(conn, "one", {"correction": True})
    w = Watcher(
        home,
        debounce_s=0.05,
        quiet_s=60,
        rescan_s=3600,
        cycle_s=12 * HOUR,
        reflect=lambda name, at: cycle.AgentOutcome("failed", "could not connect to 127.0.0.1:9"),
    )
    w.start()
    try:
        with caplog.at_level(logging.INFO, logger="evolve.watch"):
            w.tick()
    finally:
        w.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["one: the reflection failed: could not connect to 127.0.0.1:9"]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_watcher_runs_a_cycle_every_cycle_hours(home, conn):
    make_agent("one")
    add_run(conn, "one", {"correction": True})
    wall = Clock(NOW)
    reflected = []
    w = Watcher(
        home,
        wall=wall,
        debounce_s=0.05,
        quiet_s=60,
        rescan_s=3600,
        cycle_s=12 * HOUR,
        reflect=lambda name, at: reflected.append((name, at)) or cycle.AgentOutcome("nothing"),
    )
    w.start()
    try:
        w.tick()  # no cycle ever ran: one runs now
        assert reflected == [("one", NOW)] and w.next_cycle_at == NOW + 12 * HOUR
        add_run(conn, "one", {"correction": True}, idx=1, observed_at=NOW + 1)
        wall.now = NOW + 11 * HOUR
        w.tick()
        assert len(reflected) == 1
        wall.now = NOW + 12 * HOUR
        with FileLock(home.run_dir / "cycle.lock"):  # `evolve cycle` runs one right now
            w.tick()
        assert len(reflected) == 1 and w.next_cycle_at > wall.now
        wall.now = w.next_cycle_at
        w.tick()
        assert [name for name, _ in reflected] == ["one", "one"]
    finally:
        w.close()
