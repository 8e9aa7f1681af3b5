"""The watcher with a real watchdog observer on tmp dirs: transcripts, human edits, recovery."""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve import cli
from evolve.home import Home
from evolve.store import spool
from evolve.watch import service
from evolve.watch.debounce import Debouncer
from evolve.watch.fs import limit_message
from evolve.watch.humanedits import counts_as_edit, is_editor_temp, repo_path
from evolve.watch.sources import glob_match, minimal_watches, watch_root
from tests.helpers import evolve_commit, git_out
from tests.watch_helpers import (
    Transcript,
    agent_with_sources,
    clear_dirty,
    db,
    events_of,
    is_dirty,
    new_watcher,
    pump,
    runs_of,
    settle,
)


@pytest.fixture
def transcripts(tmp_path) -> Path:
    folder = tmp_path / "projects" / "-home-me-project"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def demo(transcripts):
    return agent_with_sources("demo", [f"{transcripts}/*.jsonl"])


@pytest.fixture
def watcher(demo):
    w = new_watcher()
    yield w
    w.close()


def commits(agent) -> int:
    return int(git_out(agent.path, "rev-list", "--count", "HEAD"))


# -- pure parts ------------------------------------------------------------------------
def test_debouncer_with_an_injected_clock():
    d = Debouncer(1.0, max_wait=3.0)
    d.hint("a", 0.0)
    d.hint("a", 0.5)
    assert d.due(1.4) == [] and d.next_deadline() == 1.5
    assert d.due(1.5) == ["a"] and len(d) == 0
    for t in (0.0, 0.9, 1.8, 2.7):  # written without pause: still handled after max_wait
        d.hint("b", t)
    assert d.due(2.9) == [] and d.due(3.0) == ["b"]
    d.hint("c", 5.0)
    d.postpone("c", 5.5)
    assert d.due(6.0) == [] and d.due(6.5) == ["c"]


def test_watch_roots_and_matching(tmp_path):
    assert watch_root("/a/b/*.jsonl") == ("/a/b", False)
    assert watch_root("/a/b/**/*.jsonl") == ("/a/b", True)
    assert watch_root("/a/*/x/*.jsonl") == ("/a", True)
    assert watch_root("/a/b/one.jsonl") == ("/a/b", False)
    assert watch_root("~/p/*.jsonl")[0] == str(Path.home() / "p")
    assert glob_match("/a/b/*.jsonl", "/a/b/s.jsonl")
    assert not glob_match("/a/b/*.jsonl", "/a/b/s.txt")
    assert not glob_match("/a/b/*.jsonl", "/a/b/.hidden.jsonl")
    assert glob_match("/a/**/*.jsonl", "/a/s.jsonl") and glob_match("/a/**/*.jsonl", "/a/x/y/s.jsonl")
    assert minimal_watches({("/a", True), ("/a/b", False), ("/a", False), ("/c", False)}) == {
        ("/a", True),
        ("/c", False),
    }


@pytest.mark.parametrize(
    "name",
    [
        "memo.md~",
        ".memo.md.swp",
        ".memo.md.swx",
        "4913",
        "5036",
        "memo.md___jb_tmp___",
        "memo.md___jb_old___",
        ".#memo.md",
        "#memo.md#",
        ".goutputstream-AB12CD",
        ".memo.md.x1.evolve-tmp",
    ],
)
def test_editor_temp_names(name):
    assert is_editor_temp(name) and not counts_as_edit(f"skills/x/{name}")


def test_real_names_count_and_git_never_does():
    for rel in ("memo.md", "agent.toml", "skills/fix-tests/SKILL.md", "notes-2.md"):
        assert counts_as_edit(rel) and not is_editor_temp(rel.rsplit("/", 1)[-1])
    assert repo_path("/h/agents", "/h/agents/demo/memo.md") == ("demo", "memo.md")
    assert repo_path("/h/agents", "/h/agents/demo/.git/index") is None
    assert repo_path("/h/agents", "/h/agents/.new-demo-x/demo/memo.md") is None
    assert repo_path("/h/agents", "/h/other/demo/memo.md") is None


def test_limit_messages_name_the_sysctl():
    watches = limit_message(OSError(errno.ENOSPC, "No space left on device"), "/x")
    instances = limit_message(OSError(errno.EMFILE, "Too many open files"), "/x")
    assert "fs.inotify.max_user_watches" in watches and "polling" in watches
    assert "fs.inotify.max_user_instances" in instances
    assert limit_message(OSError(errno.ENOENT, "gone"), "/x") is None


# -- transcripts -----------------------------------------------------------------------
def test_appending_makes_the_agent_dirty_and_observes_new_runs(demo, transcripts):
    transcript = Transcript(transcripts / "s1.jsonl")
    transcript.turn()
    w = new_watcher(debounce_s=0.1)
    try:
        assert runs_of("demo") == 1  # the start-up scan read what was already there
        clear_dirty("demo")  # as if it had just reflected
        transcript.turn("now fix the flaky test", "Fixed it.")
        took = pump(w, lambda: is_dirty("demo") and runs_of("demo") == 2)
        assert took < 10 * w.settings.timings.debounce_s
        transcript.turn("and the docs", "Updated.")
        pump(w, lambda: runs_of("demo") == 3)
    finally:
        w.close()


def test_new_transcript_files_and_new_agents_need_no_restart(watcher, transcripts, tmp_path):
    Transcript(transcripts / "new-session.jsonl").turn()
    pump(watcher, lambda: runs_of("demo") == 1)
    other = tmp_path / "other-project"
    other.mkdir()
    agent_with_sources("second", [f"{other}/*.jsonl"])
    pump(watcher, lambda: "second" in watcher.agents and any(p == str(other) for p, _ in watcher.fs.watched))
    Transcript(other / "s.jsonl").turn()
    pump(watcher, lambda: runs_of("second") == 1)
    assert runs_of("demo") == 1


def test_changed_sources_are_watched_after_agent_toml_changes(watcher, demo, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    (demo.path / "agent.toml").write_text(f'[sources]\nclaude_code = ["{extra}/*.jsonl"]\n')
    pump(watcher, lambda: any(p == str(extra) for p, _ in watcher.fs.watched))
    Transcript(extra / "s.jsonl").turn()
    pump(watcher, lambda: runs_of("demo") == 1)


def test_a_deleted_and_recreated_source_folder_is_watched_again(watcher, transcripts):
    import shutil

    shutil.rmtree(transcripts)
    settle(watcher, 0.2)
    transcripts.mkdir()
    watcher.reconcile()
    Transcript(transcripts / "s.jsonl").turn()
    pump(watcher, lambda: runs_of("demo") == 1)


def test_one_reconciliation_scan_finds_1000_files_changed_while_stopped(demo, transcripts):
    files = [Transcript(transcripts / f"s{i:04d}.jsonl", session=f"{i:08d}-aaaa") for i in range(1000)]
    for t in files:
        t.path.touch()  # known (and read) before the observer stops
    w = new_watcher()
    try:
        w.fs.stop()  # events are lost from here on (like a queue overflow)
        for t in files:
            t.turn("a request", "done")
        settle(w, 0.1)
        assert runs_of("demo") == 0
        assert w.reconcile() == 1000
        assert runs_of("demo") == 1000
        assert w.reconcile() == 0  # nothing changed since: nothing read
    finally:
        w.close()


def test_a_restart_reads_only_what_changed_while_no_watcher_ran(demo, transcripts):
    quiet, busy = Transcript(transcripts / "quiet.jsonl"), Transcript(transcripts / "busy.jsonl")
    quiet.turn()
    busy.turn()
    first = new_watcher()
    assert first.files_read == 2
    first.close()
    busy.turn("while nobody watched", "ok")
    second = new_watcher()
    try:
        assert second.files_read == 1 and runs_of("demo") == 3
    finally:
        second.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_observer_thread_is_restarted(watcher, transcripts, caplog):
    real = watcher.fs._sink
    broken = []

    def crash_once(event):
        if not broken:
            broken.append(event)
            raise RuntimeError("simulated crash in the observer thread")
        real(event)

    watcher.fs._sink = crash_once
    Transcript(transcripts / "s.jsonl").turn()
    with caplog.at_level(logging.WARNING, logger="evolve.watch"):
        pump(watcher, lambda: runs_of("demo") == 1)  # found by the rescan after the restart
    assert broken and "restarting" in caplog.text
    assert watcher.fs.healthy()
    Transcript(transcripts / "s2.jsonl").turn()  # and events flow again
    pump(watcher, lambda: runs_of("demo") == 2)


def test_an_inotify_limit_falls_back_to_polling_for_that_folder(demo, transcripts, caplog, monkeypatch):
    from watchdog.observers.api import BaseObserver

    real = BaseObserver.schedule

    def schedule(self, handler, path, **kw):
        if str(path) == str(transcripts) and "Polling" not in type(self).__name__:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return real(self, handler, path, **kw)

    monkeypatch.setattr(BaseObserver, "schedule", schedule)
    with caplog.at_level(logging.WARNING, logger="evolve.watch"):
        w = new_watcher(poll_s=0.1)
    try:
        assert "fs.inotify.max_user_watches" in caplog.text
        assert w.fs.polled == {(str(transcripts), False)}
        Transcript(transcripts / "s.jsonl").turn()
        pump(w, lambda: runs_of("demo") == 1)
    finally:
        w.close()


def test_hook_records_in_the_spool_are_applied(watcher, tmp_path):
    elsewhere = tmp_path / "not-in-sources.jsonl"  # the hook names it: observed anyway
    Transcript(elsewhere).turn()
    home = Home.resolve()
    spool.append(home.spool_dir, {"event": "stop", "agent": "demo", "transcript_path": str(elsewhere)})
    spool.append(home.spool_dir, {"event": "session_end", "agent": "ghost", "transcript_path": "/nope"})
    spool.append(home.spool_dir, {"event": "skill", "agent": "demo", "skill": "x"})
    pump(watcher, lambda: runs_of("demo", elsewhere) == 1)
    pump(
        watcher,
        lambda: not (home.spool_dir / spool.SPOOL).exists() and not list(home.spool_dir.glob("*.draining")),
    )


def _corrections(agent: str) -> list[bool]:
    conn = db()
    try:
        return [
            json.loads(r[0])["correction"]
            for r in conn.execute("SELECT facts FROM runs WHERE agent = ? ORDER BY path, idx", (agent,))
        ]
    finally:
        conn.close()


def test_every_reader_judges_corrections_by_the_agents_signals(demo, transcripts, tmp_path):
    """The watcher, a hook's record and `evolve observe` store the same facts (one config)."""
    home = Home.resolve()
    home.config_file.write_text('[signals.correction_phrases]\nen = ["zorblax"]\n')
    other_folder = tmp_path / "other"
    other_folder.mkdir()
    other = agent_with_sources("other", [f"{other_folder}/*.jsonl"])
    (other.path / "agent.toml").write_text(  # an agent's own phrases replace the home's
        (other.path / "agent.toml").read_text() + '\n[signals.correction_phrases]\nen = ["frobnicate"]\n'
    )
    for folder, name in (
        (transcripts, "watched"),
        (tmp_path, "hooked"),
        (tmp_path, "cli"),
        (other_folder, "other"),
    ):
        t = Transcript(folder / f"{name}.jsonl")
        t.turn("please run the tests")
        t.turn("zorblax, run them again with -x")
        t.turn("frobnicate the cache first")
    w = new_watcher()
    try:
        pump(w, lambda: runs_of("demo") == 3 and runs_of("other") == 3)
        spool.append(
            home.spool_dir,
            {"event": "stop", "agent": "demo", "transcript_path": str(tmp_path / "hooked.jsonl")},
        )
        pump(w, lambda: runs_of("demo") == 6)
    finally:
        w.close()
    assert cli.main(["observe", "demo", str(tmp_path / "cli.jsonl")]) == 0
    assert _corrections("demo") == [False, True, False] * 3
    assert _corrections("other") == [False, False, True]


# -- human edits -----------------------------------------------------------------------
FINAL = (
    "# Memo\n\n## What I do well and where I often stumble\n\n- edited by a person\n\n"
    "## Strategies for this user and domain\n\n- keep answers short\n"
)


def save_in_place(path: Path, text: str) -> None:
    with path.open("w") as handle:  # truncated first: an empty file for a moment
        handle.flush()
        time.sleep(0.03)
        for part in (text[:10], text[10:]):
            handle.write(part)
            handle.flush()
            time.sleep(0.03)


def save_temp_rename(path: Path, text: str) -> None:
    temp = path.with_name(".goutputstream-X1Y2Z3")
    temp.write_text(text)
    time.sleep(0.03)
    temp.replace(path)


def save_vim(path: Path, text: str) -> None:
    probe = path.with_name("4913")
    probe.write_text("")
    probe.unlink()
    backup = path.with_name(path.name + "~")
    path.replace(backup)
    with path.open("w") as handle:
        handle.write(text[:5])
        handle.flush()
        time.sleep(0.03)
        handle.write(text[5:])
    backup.unlink()


def save_jetbrains(path: Path, text: str) -> None:
    temp = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    temp.write_text(text)
    path.replace(old)
    time.sleep(0.03)
    temp.replace(path)
    old.unlink()


@pytest.mark.parametrize("save", [save_in_place, save_temp_rename, save_vim, save_jetbrains])
def test_each_editor_save_style_gives_one_human_edit_commit(watcher, demo, save):
    before = commits(demo)
    settle(watcher, 2 * watcher.settings.timings.quiet_s)  # the start-up check of pending edits found nothing
    assert commits(demo) == before
    save(demo.memo_path, FINAL)
    pump(watcher, lambda: commits(demo) == before + 1)
    settle(watcher, 0.5 + 2 * watcher.settings.timings.quiet_s)  # watchdog holds a rename for up to 0.5 s
    assert commits(demo) == before + 1
    assert git_out(demo.path, "show", "HEAD:memo.md") + "\n" == FINAL
    assert git_out(demo.path, "status", "--porcelain") == ""
    assert "Evolve-Kind: human_edit" in git_out(demo.path, "log", "-1", "--format=%B")
    (event,) = events_of("demo")
    assert event["paths"] == ["memo.md"] and event["commit"] == git_out(demo.path, "rev-parse", "HEAD")


def test_a_new_skill_written_by_a_person_is_committed(watcher, demo):
    before = commits(demo)
    skill = demo.skills_dir / "run-tests" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: run-tests\ndescription: Use when running tests.\n---\n\n- run make test\n")
    pump(watcher, lambda: commits(demo) == before + 1)
    (event,) = events_of("demo")
    assert event["paths"] == ["skills/run-tests/SKILL.md"]


def test_evolves_own_writes_are_never_human_edits(watcher, demo):
    before = commits(demo)
    evolve_commit(
        demo,
        {
            "memo.md": FINAL.encode(),
            "skills/a/SKILL.md": b"---\nname: a\ndescription: Use when a.\n---\n\n- a\n",
        },
    )
    settle(watcher, 3 * watcher.settings.timings.quiet_s)
    assert commits(demo) == before + 1
    assert "Evolve-Kind: reflection" in git_out(demo.path, "log", "-1", "--format=%B")
    assert events_of("demo") == []


def test_edits_wait_while_evolve_holds_the_agent_lock(watcher, demo):
    before = commits(demo)
    with demo.repo.locked():
        demo.memo_path.write_text(FINAL)
        settle(watcher, 3 * watcher.settings.timings.quiet_s)
        assert commits(demo) == before
    pump(watcher, lambda: commits(demo) == before + 1)
    assert len(events_of("demo")) == 1


def test_an_edit_check_that_finds_the_files_unchanged_asks_git_once(watcher, demo, tmp_path, monkeypatch):
    # the watcher checks every agent when it starts and whenever its files were touched: when
    # they equal the branch (a save of the same text), one `git status` and nothing is committed
    before = commits(demo)
    settle(watcher, 3 * watcher.settings.timings.quiet_s)  # the start-up check, done
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    demo.memo_path.write_text(demo.memo_path.read_text())
    settle(watcher, 4 * watcher.settings.timings.quiet_s)
    commands = re.findall(r"trace: built-in: git (\S+)", trace.read_text())
    assert commands == ["status"], commands
    assert commits(demo) == before and events_of("demo") == []


# -- the process -----------------------------------------------------------------------
def _spawn_watch(home: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "EVOLVE_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "evolve", "watch", *extra], env=env, stderr=subprocess.PIPE, text=True
    )


def _wait_ready(proc: subprocess.Popen, timeout: float = 15.0) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        if "ready:" in line:
            return lines
        if not line and proc.poll() is not None:
            break
    raise AssertionError("watch did not become ready:\n" + "".join(lines))


def test_sigterm_stops_a_watch_process_cleanly(demo, transcripts, evolve_home):
    transcript = Transcript(transcripts / "s.jsonl")
    transcript.turn()
    (evolve_home / "config.toml").write_text("[watch]\ndebounce_s = 0.05\n")
    proc = _spawn_watch(evolve_home)
    try:
        _wait_ready(proc)
        home = Home.resolve()
        assert service.state(home).running and service.state(home).pid == proc.pid
        transcript.turn("more", "ok")
        deadline = time.monotonic() + 10
        while runs_of("demo") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    assert runs_of("demo") == 2
    conn = db()
    try:
        (cursor,) = [json.loads(r[0]) for r in conn.execute("SELECT cursor FROM cursors")]
    finally:
        conn.close()
    assert cursor["offset"] == (transcripts / "s.jsonl").stat().st_size
    assert not service.state(home).running and not service.pid_path(home).exists()


def test_a_second_watch_exits_with_a_clear_message(demo, capsys):
    home = Home.resolve()
    lock = service.acquire(home)
    try:
        assert cli.main(["watch"]) == 1
        err = capsys.readouterr().err
        assert "already running" in err and f"pid {os.getpid()}" in err and "--stop" in err
    finally:
        service.release(home, lock)
    assert not service.pid_path(home).exists()


def test_a_dead_watchers_pidfile_and_lock_are_recovered(demo):
    home = Home.resolve()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    home.run_dir.mkdir(parents=True, exist_ok=True)
    service.pid_path(home).write_text(f"{dead.pid}\n")
    service.lock_path(home).write_text(f"{dead.pid}\n")  # flock died with it
    assert service.read_pidfile(home) is None
    assert not service.state(home).running
    lock = service.acquire(home)  # a new watcher starts
    try:
        assert service.state(home).pid == os.getpid()
    finally:
        service.release(home, lock)


def test_a_secret_in_a_persons_edit_is_named_when_the_watcher_commits_it(watcher, demo, caplog):
    """Red team B6: what the pre-commit hook warns about, the watcher's human-edit commit says too."""
    token = "ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789"
    before = commits(demo)
    text = demo.memo_path.read_text() + f"- release token is {token}\n"
    with caplog.at_level(logging.WARNING, logger="evolve.watch"):
        demo.memo_path.write_text(text)
        pump(watcher, lambda: commits(demo) == before + 1)
    number = text.splitlines().index(f"- release token is {token}") + 1
    assert f"demo: memo.md line {number} holds what looks like a secret (github-token)" in caplog.text
    assert "--push-anyway demo" in caplog.text and token not in caplog.text
    assert git_out(demo.path, "show", "HEAD:memo.md") + "\n" == text  # committed as the person wrote it
