"""A newcomer's first day: the first lesson within minutes, whoever started the watcher.

Newcomer findings 6 (a running watcher ignored a changed config.toml while status showed the
new schedule), 9 (nothing learned for 12 hours, and nothing said how to learn now) and 12 (the
key for background reflections depended on who started the watcher). Played with real
watchers — in this process with injected clocks, and detached as a person starts one — real
state.db and git, and the fake Messages API on 127.0.0.1 standing in for the model.
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve import cli
from evolve.errors import EXIT_OK
from evolve.home import Home
from evolve.store import ledger
from evolve.watch import service
from evolve.watch.loop import Watcher
from tests.helpers import git, git_out, make_agent
from tests.watch_helpers import Transcript, agent_with_sources, pump

KEY = "sk-ant-api03-day-one-watcher-key-0123456789abcdef"
CORRECTION = "No, don't use npm, always use pnpm here"
FAKE_CLAUDE_DIR = Path(__file__).resolve().parent / "fake_claude"
HOUR = 3600.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def status(capsys) -> dict:
    code, out, err = run(capsys, "status", "--json")
    assert code == EXIT_OK, err
    return json.loads(out)


def corrected(transcript: Transcript) -> None:
    """A session: the agent does it wrong, the person corrects it (a run worth reflecting on)."""
    transcript.turn("Install the dependencies", "Installed them with npm install.")
    transcript.turn(CORRECTION, "Understood: pnpm from now on.")


def reflected_by(home: Home, calls: list):
    """A reflection as the cycle sees it, recorded in state.db like a real one."""
    from evolve.schedule.cycle import AgentOutcome

    def reflect(name: str, at: float) -> AgentOutcome:
        calls.append((name, at))
        with ledger.opened(home.state_db) as conn, ledger.transaction(conn):
            ledger.mark_reflected(conn, name, at, f"r{len(calls)}")
        return AgentOutcome("committed", commit="1a2b3c4d5e6f")

    return reflect


@pytest.fixture
def home(evolve_home) -> Home:
    home = Home.resolve()
    home.ensure()
    return home


@pytest.fixture
def sources(tmp_path) -> Path:
    folder = tmp_path / "projects" / "-home-me-shop"
    folder.mkdir(parents=True)
    return folder


# -- 3. a first reflection soon after a first run worth it -------------------------------
def test_a_first_correction_is_reflected_on_minutes_later_not_after_cycle_hours(home, sources):
    agent_with_sources("new", [f"{sources}/*.jsonl"])
    make_agent("old")
    wall, calls = Clock(1_800_000_000.0), []
    with ledger.opened(home.state_db) as conn, ledger.transaction(conn):  # old reflected an hour ago
        ledger.ensure_agent(conn, "old", wall.now - 30 * 86400)
        ledger.mark_reflected(conn, "old", wall.now - HOUR, "r0")
    w = Watcher(home, wall=wall, debounce_s=0.05, quiet_s=60, reflect=reflected_by(home, calls))
    w.start()
    try:
        w.tick()  # no cycle ever ran: one runs at start, with nothing to do
        assert calls == [] and w.next_cycle_at == wall.now + 12 * HOUR
        wall.now += 600
        seen = wall.now
        corrected(Transcript(sources / "s1.jsonl"))
        with ledger.opened(home.state_db) as conn, ledger.transaction(conn):  # old has one too
            conn.execute(
                "INSERT INTO runs (agent, path, session, idx, complete, facts, observed_at) "
                "VALUES ('old', '/t/old.jsonl', 's', 0, 1, ?, ?)",
                (json.dumps({"request": "x", "correction": True}), seen),
            )
            ledger.mark_dirty(conn, "old", seen)
        pump(w, lambda: w.next_cycle_at != seen - 600 + 12 * HOUR)
        assert (w.next_cycle_at, w.next_cycle_why) == (seen + 300, "new's first reflection")
        wall.now = seen + 299
        w.tick()
        assert calls == []
        wall.now = seen + 300
        w.tick()
        assert calls == [("new", seen + 300)]  # the gap rules still hold: old waits
        with ledger.opened(home.state_db) as conn:
            plan = json.loads(conn.execute("SELECT plan FROM cycles ORDER BY at DESC").fetchone()[0])
        assert plan["skipped"]["old"] == "reflected 1 h ago, gap 4 h"
        assert (w.next_cycle_at, w.next_cycle_why) == (seen + 300 + 12 * HOUR, "every 12 h")
        wall.now += 60
        corrected(Transcript(sources / "s2.jsonl", session="2c7f9d2e-6e8b-4d72-8b1f-3a2e4d5c6b70"))
        pump(w, lambda: w.files_read >= 2)
        w.tick()
        assert w.next_cycle_at == seen + 300 + 12 * HOUR  # it has reflected: the rhythm is cycle_hours
    finally:
        w.close()


def test_a_failed_first_reflection_waits_for_a_new_run_and_plain_runs_wait_for_the_cycle(home, sources):
    from evolve.schedule.cycle import AgentOutcome

    agent_with_sources("new", [f"{sources}/*.jsonl"])
    wall, calls = Clock(1_800_000_000.0), []

    def failing(name: str, at: float) -> AgentOutcome:
        calls.append(at)
        return AgentOutcome("failed", "ANTHROPIC_API_KEY is not set")

    w = Watcher(home, wall=wall, debounce_s=0.05, quiet_s=60, reflect=failing)
    w.start()
    try:
        w.tick()
        plain = Transcript(sources / "plain.jsonl", session="3d8a0e3f-7f9c-4e83-9c20-4b3f5e6d7c81")
        plain.turn("What does this repository do?", "It is a shop.")  # no signal: below the threshold
        pump(w, lambda: w.files_read >= 1)
        w.tick()
        assert w.next_cycle_why == "every 12 h"
        wall.now += 60
        corrected(Transcript(sources / "s1.jsonl"))
        pump(w, lambda: w.next_cycle_why == "new's first reflection")
        wall.now = w.next_cycle_at
        w.tick()
        assert len(calls) == 1
        for _ in range(3):  # nothing new: the failing backend is not called again and again
            wall.now += 600
            w.tick()
        assert len(calls) == 1 and w.next_cycle_why == "every 12 h"
        corrected(Transcript(sources / "s2.jsonl", session="2c7f9d2e-6e8b-4d72-8b1f-3a2e4d5c6b70"))
        pump(w, lambda: w.next_cycle_why == "new's first reflection")  # a new run: one more try
    finally:
        w.close()


# -- 4. a running watcher applies a changed config.toml; status shows what it follows ----
def test_a_changed_config_is_applied_and_status_shows_the_watchers_own_schedule(capsys, home):
    make_agent("helper")
    wall = Clock(time.time())
    lock = service.acquire(home)  # this process is the watcher, as `evolve watch` is
    w = Watcher(home, wall=wall, debounce_s=0.05, quiet_s=60, reflect=None)
    try:
        w.start()
        w.tick()  # the first cycle runs now
        last = ledger.last_cycle_at(w.conn)
        assert status(capsys)["next_cycle_at"] == ledger_stamp(last + 12 * HOUR)
        home.config_file.write_text("# faster while I try it\n[schedule]\ncycle_hours = 0.05\n")
        w.tick()
        assert w.next_cycle_at == last + 180 and w.next_cycle_why == "every 0.05 h"
        data = status(capsys)
        assert (data["cycle_hours"], data["next_cycle_at"]) == (0.05, ledger_stamp(last + 180))
        assert data["watcher_config"] is None
        home.config_file.write_text('[schedule]\ncycle_hours = "soon"\n')
        w.tick()
        assert w.next_cycle_at == last + 180  # a file that does not load changes nothing
        data = status(capsys)
        assert data["next_cycle_at"] == ledger_stamp(last + 180)
        assert data["watcher_config"].startswith("the watcher keeps the settings it had: ")
        assert "schedule.cycle_hours: must be a number" in data["watcher_config"]
        code, out, _ = run(capsys, "status")
        assert "next cycle: in 2 min (every 0.05 h)" in out and "keeps the settings it had" in out
    finally:
        w.close()
        service.release(home, lock)


def ledger_stamp(at: float) -> str:
    from evolve.clock import stamp

    return stamp(at)


# -- 2. the key for background reflections, whoever started the watcher -----------------
def start_watcher(env: dict[str, str]) -> int:
    subprocess.run([sys.executable, "-m", "evolve", "watch", "--detach"], env=env, check=True, timeout=60)
    return service.state(Home.resolve()).pid or 0


def until(condition, timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.1)


@pytest.mark.slow
def test_a_watcher_started_without_the_key_reflects_with_the_key_file(
    capsys, home, sources, tmp_path, fake_messages_api, monkeypatch, watcher_reaper
):
    agent = agent_with_sources("helper", [f"{sources}/*.jsonl"])
    home.config_file.write_text(
        '[model]\nbackend = "anthropic"\n\n[schedule]\nfirst_reflection_minutes = 0.02\n'
    )
    bare = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}  # no key: a hook's environment
    pid = start_watcher(bare)
    try:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # the person's shell has the key; the watcher has not
        until(lambda: status(capsys)["agents"][0]["watcher_cannot_reflect"], what="the watcher's view")
        helper = status(capsys)["agents"][0]
        assert helper["watcher_cannot_reflect"].startswith("ANTHROPIC_API_KEY is not set")
        code, out, _ = run(capsys, "status")
        assert "helper: the watcher cannot reflect it: ANTHROPIC_API_KEY is not set" in out
        code, out, _ = run(capsys, "doctor")
        assert code == 1 and f"error: helper: model: the watcher (pid {pid}) cannot reflect it" in out
        key_file = tmp_path / "anthropic.key"
        key_file.write_text(KEY + "\n")
        key_file.chmod(0o600)
        code, out, _ = run(
            capsys, "model", "anthropic", "--key-file", str(key_file), "--base-url", fake_messages_api.url
        )
        assert code == EXIT_OK and "the running watcher applies it within seconds" in out
        until(lambda: not status(capsys)["agents"][0]["watcher_cannot_reflect"], what="the key file applied")
        fake_messages_api.reply_tool(
            {
                "summary": "pnpm",
                "operations": [
                    {"op": "update_memo", "section": "strategies", "content": "- Use pnpm here, never npm."}
                ],
            }
        )
        corrected(Transcript(sources / "s1.jsonl"))
        until(
            lambda: "reflect(helper)" in git_out(agent.path, "log", "-1", "--format=%s"), what="a reflection"
        )
    finally:
        service.stop(home)
    [request] = fake_messages_api.requests
    sent = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix(
        "Bearer "
    )
    assert sent == KEY  # the file's key, though the watcher's environment had none
    assert "- Use pnpm here, never npm." in (agent.path / "memo.md").read_text()
    assert pid and not service.state(home).running
    where_it_must_not_be = [home.state_db, *home.logs_dir.rglob("*"), home.config_file]
    for path in where_it_must_not_be:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=agent.path, capture_output=True, check=True
    ).stdout
    assert b"reflect(helper)" in objects and KEY.encode() not in objects


# -- 2. the printed service unit carries where the key comes from, never the key ----------
def test_the_printed_units_name_the_key_source_and_never_the_key(capsys, home, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    home.config_file.write_text('[model]\nbackend = "anthropic"\n')
    code, unit, err = run(capsys, "watch", "--print-service")
    assert code == EXIT_OK and KEY not in unit + err
    assert f"EnvironmentFile=-{home.root / 'watch.env'}" in unit.splitlines()
    assert "$ANTHROPIC_API_KEY" in unit and "ANTHROPIC_API_KEY=<the key>" in err
    if shutil.which("systemd-analyze"):
        path = tmp_path / "evolve-watch.service"
        path.write_text(unit)
        proc = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(KEY)
    assert run(capsys, "model", "anthropic", "--key-file", str(key_file))[0] == EXIT_OK
    code, unit, err = run(capsys, "watch", "--print-service")
    assert f"read from {key_file} at each call" in unit and "EnvironmentFile" not in unit and KEY not in unit
    monkeypatch.setenv("PATH", f"{FAKE_CLAUDE_DIR}{os.pathsep}{os.environ['PATH']}")
    agent = make_agent("cli-user")
    (agent.path / "agent.toml").write_text('[model]\nbackend = "claude-cli"\n')
    code, out, _ = run(capsys, "watch", "--print-service", "--json")
    needs = json.loads(out)["needs"]
    assert needs == {
        "environment_file": None,
        "variables": [],
        "key_files": [str(key_file)],
        "path": f"{FAKE_CLAUDE_DIR}:/usr/local/bin:/usr/bin:/bin",
    }
    monkeypatch.setattr(sys, "platform", "darwin")
    (home.config_file).write_text('[model]\nbackend = "anthropic"\n')
    code, plist, err = run(capsys, "watch", "--print-service")
    parsed = plistlib.loads(plist.encode())  # comments and all, still a property list
    assert parsed["EnvironmentVariables"] == {"PATH": needs["path"]}
    assert "$ANTHROPIC_API_KEY" in plist and KEY not in plist + err and "launchd does not pass it" in err


# -- 5. install and init say how to learn now and when the next cycle runs ----------------
def test_init_and_install_say_how_to_learn_now_when_and_with_which_model(capsys, home, tmp_path):
    code, out, _ = run(capsys, "init", "helper")
    assert (
        "`evolve install claude-code --agent helper`" in out
        and "`evolve install codex --agent helper`" in out
    )
    for harness in ("claude-code", "codex"):
        project = tmp_path / harness
        project.mkdir()
        git(project, "init", "-q")
        code, out, _ = run(capsys, "install", harness, "--agent", "helper", "--project", str(project))
        assert code == EXIT_OK
        learn, model = out.splitlines()[-2:]
        assert learn == (
            "after a session: `evolve reflect helper` learns now; `evolve status` shows when the next "
            "cycle runs (its first reflection comes 5 min after a run worth learning from)"
        )
        assert model.startswith("model: offline — ") and "`evolve model anthropic`" in model
