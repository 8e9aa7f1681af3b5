"""The watcher with a real watchdog observer on tmp dirs: transcripts observed as they are written.

New files, new agents and changed sources need no restart; a restart or one reconciliation
scan reads only what changed; a dead observer thread is restarted and an inotify limit
falls back to polling; hook records in the spool are applied. Human edits are in
tests/test_watch_human_edits.py, the `evolve watch` process in tests/test_watch_process.py.
"""

from __future__ import annotations

import errno
import json
import logging
from pathlib import Path

import pytest

from evolve import cli
from evolve.home import Home
from evolve.store import spool
from evolve.watch.debounce import Debouncer
from evolve.watch.fs import limit_message
from evolve.watch.sources import glob_match, minimal_watches, watch_root
from tests import watch_helpers
from tests.watch_helpers import (
    Transcript,
    agent_with_sources,
    clear_dirty,
    db,
    is_dirty,
    new_watcher,
    pump,
    runs_of,
    settle,
)

transcripts, demo, watcher = watch_helpers.transcripts, watch_helpers.demo, watch_helpers.watcher  # fixtures


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
