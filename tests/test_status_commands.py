"""`evolve status`, `cycle`, `pause`/`resume`, `remove` and `watch --detach/--status/--stop`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from evolve import cli, launch
from evolve.errors import EXIT_OK, EXIT_USER
from evolve.home import Home
from evolve.schedule.cycle import AgentOutcome
from evolve.store import ledger
from evolve.store.locks import FileLock
from evolve.watch import service
from evolve.watch.loop import Watcher
from tests.helpers import make_agent


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    assert code == EXIT_OK, err
    return json.loads(out)


@pytest.fixture
def home(evolve_home) -> Home:
    return Home.resolve()


@pytest.fixture
def fake_reflect(monkeypatch):
    """`evolve cycle` reflects through this instead of the real reflection."""
    calls: list[str] = []
    monkeypatch.setattr(
        "evolve.watch.loop.reflector",
        lambda home: (
            lambda name, now: calls.append(name) or AgentOutcome("committed", commit="1a2b3c4d5e6f7a8b")
        ),
    )
    return calls


def with_correction(home: Home, name: str) -> None:
    conn = ledger.connect(home.state_db)
    try:
        conn.execute(
            "INSERT INTO runs (agent, path, session, idx, complete, facts, observed_at) "
            "VALUES (?, '/t.jsonl', 's', 0, 1, ?, ?)",
            (name, json.dumps({"request": "x", "correction": True}), time.time()),
        )
        ledger.mark_dirty(conn, name)
    finally:
        conn.close()


def db_row(home: Home, name: str):
    conn = ledger.connect(home.state_db)
    try:
        return ledger.agent_row(conn, name)
    finally:
        conn.close()


# -- cycle -----------------------------------------------------------------------------
def test_cycle_json_shape_and_timing(capsys, home, fake_reflect):
    make_agent("helper")
    make_agent("quiet")
    with_correction(home, "helper")
    data = run_json(capsys, "cycle")  # no cycle ever ran: it runs
    assert data == {
        "selected": ["helper"],
        "skipped": {"quiet": "nothing new"},
        "outcomes": {
            "helper": {"status": "committed", "reason": "", "commit": "1a2b3c4d5e6f7a8b", "reflection": None}
        },
    }
    assert fake_reflect == ["helper"]
    later = run_json(capsys, "cycle")  # within cycle_hours: nothing runs, says when
    assert later["ran"] is False and later["selected"] == [] and later["next_cycle_at"]
    code, out, _ = run(capsys, "cycle")
    assert code == EXIT_OK and "next is due in 12 h" in out and "--now" in out
    plan = run_json(capsys, "cycle", "--dry-run")
    assert plan == {"selected": ["helper"], "skipped": {"quiet": "nothing new"}}
    assert fake_reflect == ["helper"]  # a dry run reflects nothing
    assert run_json(capsys, "cycle", "--now")["selected"] == ["helper"]
    code, out, _ = run(capsys, "cycle", "--now")
    assert "helper  selected  committed 1a2b3c4d5e6f" in out and "quiet   skipped   nothing new" in out


def test_a_failed_reflection_shows_its_reason_in_the_cycle(capsys, home, monkeypatch):
    """No fakes: the real reflection fails (anthropic without a key) and every view says why."""
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "anthropic")
    make_agent("helper")
    with_correction(home, "helper")
    code, out, _ = run(capsys, "cycle", "--now")
    assert code == EXIT_USER
    assert "helper  selected  failed: ANTHROPIC_API_KEY is not set" in out
    assert "1 agent(s) selected, 0 skipped, 1 failed" in out
    code = cli.main(["cycle", "--now", "--json"])
    outcome = json.loads(capsys.readouterr().out)["outcomes"]["helper"]
    assert code == EXIT_USER and outcome["status"] == "failed", outcome
    assert outcome["reason"].startswith("ANTHROPIC_API_KEY is not set")


def test_only_one_cycle_at_a_time(capsys, home, fake_reflect):
    make_agent("helper")
    home.ensure()
    with FileLock(home.run_dir / "cycle.lock"):
        code, _, err = run(capsys, "cycle", "--now")
    assert code == EXIT_USER and "already running" in err


# -- pause / resume --------------------------------------------------------------------
def test_pause_stops_learning_and_resume_restarts_it(capsys, home, fake_reflect):
    make_agent("helper")
    with_correction(home, "helper")
    code, out, _ = run(capsys, "pause", "helper")
    assert code == EXIT_OK and "observed" in out and db_row(home, "helper")["paused"] == 1
    assert run_json(capsys, "cycle", "--now")["skipped"] == {"helper": "paused"}
    assert run_json(capsys, "status")["agents"][0]["paused"] is True
    assert run(capsys, "resume", "helper")[0] == EXIT_OK
    assert run_json(capsys, "cycle", "--now")["selected"] == ["helper"]
    code, _, err = run(capsys, "pause", "nobody")
    assert code == EXIT_USER and "evolve init" in err


# -- status ----------------------------------------------------------------------------
def test_status_json(capsys, home):
    make_agent("helper")
    make_agent("idle")
    with_correction(home, "helper")
    data = run_json(capsys, "status")
    assert data["watcher"]["running"] is False and data["next_cycle_at"] is None
    assert data["last_cycle_at"] is None and data["cycle_hours"] == 12
    helper, idle = data["agents"]
    assert helper == {
        **helper,
        "name": "helper",
        "dirty": True,
        "pending_runs": 1,
        "pending_best_score": 0.9,
        "worth_reflecting": True,
        "last_reflection_at": None,
        "paused": False,
        "busy": False,
    }
    assert idle["dirty"] is False and idle["pending_best_score"] == 0.0
    code, out, _ = run(capsys, "status")
    assert "not running" in out and "helper" in out and "0.90" in out
    lock = service.acquire(home)  # a watcher runs (this process)
    try:
        data = run_json(capsys, "status")
        assert data["watcher"]["running"] is True and data["watcher"]["pid"] == os.getpid()
        assert data["next_cycle_at"] is None and data["next_cycle_why"] == "the watcher is starting"
        watcher = Watcher(home, cycle_s=12 * 3600.0, reflect=None)  # it publishes what it follows
        watcher.start()
        watcher.close()
        data = run_json(capsys, "status")
        assert data["next_cycle_at"] is not None and data["next_cycle_why"] == "no cycle ran yet"
        assert "watcher: running" in run(capsys, "status")[1]
    finally:
        service.release(home, lock)
    assert not service.published_path(home).exists()  # the watcher's view leaves with it


# -- remove ----------------------------------------------------------------------------
def test_remove_archives_and_keeps_state_until_purged(capsys, home):
    agent = make_agent("helper")
    with_correction(home, "helper")
    (agent.path / "memo.md").write_text("uncommitted words stay with the repository\n")
    data = run_json(capsys, "remove", "helper")
    archived = home.archive_dir / data["archived_to"].rsplit("/", 1)[-1]
    assert archived.parent == home.archive_dir and archived.name.startswith("helper-")
    assert (archived / ".git").is_dir() and not agent.path.exists()
    assert (archived / "memo.md").read_text().startswith("uncommitted")
    assert db_row(home, "helper")["removed_at"] is not None
    assert run_json(capsys, "agents") == []
    assert run_json(capsys, "cycle", "--dry-run") == {"selected": [], "skipped": {}}
    code, out, _ = run(capsys, "remove", "helper", "--purge")
    assert code == EXIT_OK and "deleted its state" in out
    assert db_row(home, "helper") is None and archived.is_dir()  # the repo is never deleted
    code, _, err = run(capsys, "remove", "helper")
    assert code == EXIT_USER and "no agent" in err


def test_remove_refuses_while_a_reflection_holds_the_lock(capsys, home):
    agent = make_agent("helper")
    with FileLock(agent.path / ".git" / "evolve.lock"):
        code, _, err = run(capsys, "remove", "helper")
    assert code == EXIT_USER and "busy" in err and f"pid {os.getpid()}" in err
    assert (agent.path / ".git").is_dir() and not home.archive_dir.exists()


# -- watch: service files, status, stop, detach ----------------------------------------
@pytest.mark.parametrize(
    "platform, name, needle",
    [
        ("linux", "evolve-watch.service", 'ExecStart="{python}" -I -c "{code}" --home "{home}" watch'),
        ("darwin", "org.evolve.watch.plist", "<string>{home}</string>"),
    ],
)
def test_print_service(capsys, home, monkeypatch, platform, name, needle):
    # imported on this platform first: urllib.request, imported on "darwin", wants macOS's _scproxy
    import xml.sax.saxutils  # noqa: F401

    monkeypatch.setattr(sys, "platform", platform)
    code, out, err = run(capsys, "watch", "--print-service")
    assert code == EXIT_OK and "{{" not in out and "evolve-managed" in out
    assert needle.format(python=sys.executable, code=launch.CLI, home=home.root) in out
    assert name in err
    if platform == "darwin":
        assert f"<string>{sys.executable}</string>" in out
    monkeypatch.setattr(sys, "platform", "win32")
    assert run(capsys, "watch", "--print-service")[0] == EXIT_USER


def test_watch_status_and_stop_without_a_watcher(capsys, home):
    code, out, _ = run(capsys, "watch", "--status")
    assert code == EXIT_OK and "not running" in out
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    home.ensure()
    service.pid_path(home).write_text(f"{dead.pid}\n")
    assert run_json(capsys, "watch", "--status")["running"] is False
    code, out, _ = run(capsys, "watch", "--stop")
    assert code == EXIT_OK and "not running" in out and not service.pid_path(home).exists()


def test_detach_then_status_then_stop(capsys, home):
    make_agent("helper")
    home.ensure()
    home.config_file.write_text("[watch]\ndebounce_s = 0.05\n")
    code, out, err = run(capsys, "watch", "--detach")
    assert code == EXIT_OK, err
    try:
        status = run_json(capsys, "watch", "--status")
        assert status["running"] is True and status["pid"]
        code, _, err = run(capsys, "watch", "--detach")
        assert code == EXIT_USER and "already running" in err
        deadline = time.monotonic() + 10
        while "ready:" not in service.log_path(home).read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        code, out, _ = run(capsys, "watch", "--stop")
        assert code == EXIT_OK and f"pid {status['pid']}" in out
    finally:
        service.stop(home)
    assert not service.state(home).running and not service.pid_path(home).exists()
    assert "ready:" in service.log_path(home).read_text() and "stopped" in service.log_path(home).read_text()


def test_reading_commands_never_import_watchdog(home):
    make_agent("helper")
    probe = (
        "import sys, evolve.cli\n"
        "for argv in (['status'], ['cycle', '--dry-run'], ['pause', 'helper'], "
        "['watch', '--status']):\n"
        "    assert evolve.cli.main(argv) == 0, argv\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith('watchdog')))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout


# -- a broken agent.toml, failures and human edits are visible ---------------------------
def test_a_broken_agent_toml_never_stops_human_edits_and_is_shown(capsys, home):
    """B9: the watcher's commit of human edits raised; status and cycle said "nothing new"."""
    from evolve.watch.humanedits import commit_edits
    from tests.helpers import git_out

    agent = make_agent("at")
    with (agent.path / "agent.toml").open("a") as handle:
        handle.write('review = "maybe"\n')  # lands in [sources]: TOML
    with (agent.path / "memo.md").open("a") as handle:
        handle.write("- my own line\n")
    conn = ledger.connect(home.state_db)
    try:
        sha, paths = commit_edits(conn, home, "at")
    finally:
        conn.close()
    assert paths == ["agent.toml", "memo.md"]
    body = git_out(agent.path, "log", "-1", "--format=%an%n%B", sha)
    assert body.startswith("Test Person\nedit(at): agent.toml, memo.md")
    assert "Evolve-Problems: agent.toml: sources.review: unknown key" in body
    assert "above the first [table]" in body
    [status] = run_json(capsys, "status")["agents"]
    assert status["config_problem"].startswith(f"{agent.path / 'agent.toml'}: sources.review: unknown key")
    code, out, _ = run(capsys, "status")
    assert "config broken" in out and "at: not reflected until its configuration loads: " in out
    ledger_conn = ledger.connect(home.state_db)
    ledger_conn.execute("UPDATE agents SET dirty = 0")  # even with nothing new, the cycle says why
    ledger_conn.close()
    code, out, _ = run(capsys, "cycle", "--now")
    assert code == EXIT_OK and "nothing new; cannot read its configuration: " in out
    code, _, err = run(capsys, "reflect", "at")
    assert code == EXIT_USER and "agent.toml: sources.review: unknown key" in err


def test_status_shows_the_last_failure_until_a_reflection_succeeds(capsys, home, monkeypatch):
    """Failures are visible: the last failed reflection's reason, per agent, in status."""
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "anthropic")
    make_agent("helper")
    with_correction(home, "helper")
    assert run(capsys, "cycle", "--now")[0] == EXIT_USER
    [agent] = run_json(capsys, "status")["agents"]
    assert agent["last_failure"]["reason"].startswith("ANTHROPIC_API_KEY is not set")
    code, out, _ = run(capsys, "status")
    assert "last reflection failed" in out
    assert "helper: the reflection at " in out and "failed: ANTHROPIC_API_KEY is not set" in out
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "offline")
    assert run(capsys, "reflect", "helper", "--force")[0] == EXIT_OK
    assert run_json(capsys, "status")["agents"][0]["last_failure"] is None


def test_status_names_a_human_edit_as_new_work_not_zero_runs(capsys, home):
    """C14: an agent whose only change was a human edit showed "yes (0 runs)"."""
    from evolve.watch.humanedits import commit_edits

    agent = make_agent("helper")
    (agent.path / "memo.md").write_text(agent.memo_text() + "- mine\n")
    conn = ledger.connect(home.state_db)
    try:
        commit_edits(conn, home, "helper")
    finally:
        conn.close()
    [row] = [line for line in run(capsys, "status")[1].splitlines() if line.startswith("helper")]
    assert row.split()[1:3] == ["1", "edit"] and "0 runs" not in row
    assert run_json(capsys, "status")["agents"][0]["pending_edits"] == 1


def test_new_work_after_a_failed_reflection_reads_as_a_retry(capsys, home):
    # newcomer 15: the NEW column read "a failed reflection" (STATE says it failed; NEW is what waits)
    make_agent("helper")
    conn = ledger.connect(home.state_db)
    ledger.mark_dirty(conn, "helper")
    conn.execute(
        "INSERT INTO reflections (id, agent, at, outcome, data) VALUES "
        "('f1', 'helper', ?, 'failed', '{\"reason\": \"the model API is overloaded\"}')",
        (time.time(),),
    )
    conn.commit()
    conn.close()
    code, out, _ = run(capsys, "status")
    row = next(line for line in out.splitlines() if line.startswith("helper "))
    assert code == EXIT_OK and " a retry " in row and "last reflection failed" in row, out
