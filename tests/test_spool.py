"""The hook spool hands every record over to the drain: none is lost between a hook and state.db.

Newcomer review 2026-12, finding 1: a drain (rename, read, unlink) that ran between a hook's
open and its write lost the line. Played here as the interleavings a woken watcher produces,
with a writer killed or stopped while it holds the spool, and with many real hook processes
against a running watcher (`make soak` runs a longer version).
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evolve import hookio
from evolve.home import Home
from evolve.integrations import claude_code
from evolve.observe.records import drain_pending
from evolve.store import ledger, spool
from evolve.watch import service
from tests.helpers import evolve_commit, make_agent, skill_text

RECORD = {"event": "impressions", "agent": "r", "session": "s", "skills": ["s1"], "at": 1.0}


def drained(folder: Path) -> list[dict]:
    with spool.drain(folder) as records:
        return records


def spooled_by(writer: str, folder: Path, record: dict) -> None:
    """The record appended by evolve's code (`spool.append`) or by the hook's (`hookio`)."""
    if writer == "spool.append":
        spool.append(folder, dict(record))
    else:
        hookio.append_record(str(folder.parent), dict(record))


@pytest.fixture
def folder(tmp_path) -> Path:
    path = tmp_path / "home" / "spool"
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("writer", ["spool.append", "hookio"])
def test_a_drain_between_a_hooks_open_and_its_write_loses_nothing(folder, writer, monkeypatch):
    """The review's interleaving: open, (rename, read, unlink), write.

    The hook's open creates the spool and wakes the watcher, which drains before the write.
    """
    real_open = os.open
    drains: list[list[dict]] = []

    def open_then_drain(path, flags, *args):
        fd = real_open(path, flags, *args)
        if str(path).endswith(spool.SPOOL) and flags & os.O_APPEND and not drains:
            drains.append(drained(folder))  # the watcher, woken by the new file
        return fd

    monkeypatch.setattr(os, "open", open_then_drain)
    spooled_by(writer, folder, RECORD)
    monkeypatch.setattr(os, "open", real_open)
    assert drains == [[]]
    assert drained(folder) == [RECORD]  # the next drain finds it
    assert sorted(p.name for p in folder.iterdir()) == ["drain.lock"]


@pytest.mark.parametrize("writer", ["spool.append", "hookio"])
def test_a_drain_that_renames_the_spool_under_a_writer_reads_its_line(folder, writer, monkeypatch):
    """The other interleaving: the hook checked its file, the drain renames it, the hook writes.

    The drain reads the renamed file only once the hook has written its line there.
    """
    real_write = os.write
    renamed = threading.Event()
    result: list[list[dict]] = []

    def drain_in_the_background() -> None:
        result.append(drained(folder))

    def write_after_the_rename(fd, data):
        if threading.current_thread() is threading.main_thread() and data == line and not renamed.is_set():
            threading.Thread(target=drain_in_the_background, daemon=True).start()
            deadline = time.monotonic() + 10
            while (folder / spool.SPOOL).exists() and time.monotonic() < deadline:
                time.sleep(0.001)
            renamed.set()
        return real_write(fd, data)

    line = (json.dumps(RECORD, separators=(",", ":")) + "\n").encode()
    monkeypatch.setattr(os, "write", write_after_the_rename)
    spooled_by(writer, folder, RECORD)
    monkeypatch.setattr(os, "write", real_write)
    assert renamed.is_set()
    deadline = time.monotonic() + 10
    while not result and time.monotonic() < deadline:
        time.sleep(0.005)
    assert result == [[RECORD]]
    assert drained(folder) == []


HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_SH)
print("holding", flush=True)
time.sleep(600)
"""


def hold(path: Path) -> subprocess.Popen:
    """A writer stopped (or about to be killed) while it holds the spool it opened."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "holding\n"
    return proc


def test_a_writer_stuck_on_the_old_spool_delays_only_its_file_and_a_killed_one_frees_it(folder):
    spool.append(folder, dict(RECORD, session="before"))
    holder = hold(folder / spool.SPOOL)
    try:
        spool.append(folder, dict(RECORD, session="also-before"))
        assert drained(folder) == []  # not read while a writer may still write to it
        [left] = folder.glob("*.draining")
        spool.append(folder, dict(RECORD, session="after"))  # a new hook: the new spool
        assert [r["session"] for r in drained(folder)] == ["after"]
        assert list(folder.glob("*.draining")) == [left]
    finally:
        holder.send_signal(signal.SIGKILL)  # the kernel drops a killed writer's lock
        holder.wait()
    assert [r["session"] for r in drained(folder)] == ["before", "also-before"]
    assert sorted(p.name for p in folder.iterdir()) == ["drain.lock"]


def test_a_crashed_drains_leftover_is_read_by_the_next(folder):
    spool.append(folder, dict(RECORD, session="one"))
    with pytest.raises(RuntimeError), spool.drain(folder) as records:
        assert len(records) == 1
        raise RuntimeError("the watcher died while applying")
    spool.append(folder, dict(RECORD, session="two"))
    assert [r["session"] for r in drained(folder)] == ["one", "two"]


class NoLocks:
    """fcntl on a file system that refuses locks (an NFS mount without lockd)."""

    LOCK_SH, LOCK_EX, LOCK_NB = 1, 2, 4

    @staticmethod
    def flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")


@pytest.mark.parametrize("fcntl", [None, NoLocks], ids=["no fcntl", "locks refused"])
def test_without_flock_a_hook_still_appends_and_the_drain_reads_it(folder, monkeypatch, fcntl):
    monkeypatch.setattr(spool, "fcntl", fcntl)
    hookio.append_record(str(folder.parent), dict(RECORD))
    assert drained(folder) == [RECORD]


# -- many real hooks against a running watcher ------------------------------------------------
@pytest.fixture
def home(evolve_home):
    agent = make_agent("r")
    evolve_commit(agent, {"skills/s1/SKILL.md": skill_text("s1").encode()})
    home = Home.resolve()
    yield home
    service.stop(home)


def hammer(home: Home, workers: int, sessions: int) -> dict[str, int]:
    """Real SessionStart and PostToolUse hooks, `sessions` from each of `workers` threads; what each sent."""
    commands = {
        event: shlex.split(claude_code.hook_command(sys.executable, home, "r", event, linked=True))
        for event in ("session-start", "post-tool-use")
    }
    env = {**os.environ, "EVOLVE_NO_WATCHER": "1"}
    sent = {"session-start": 0, "post-tool-use": 0}
    lock = threading.Lock()

    def work(worker: int) -> None:
        for n in range(sessions):
            session = f"sess-{worker}-{n}"
            payloads = {
                "session-start": {"session_id": session, "source": "startup"},
                "post-tool-use": {
                    "session_id": session,
                    "tool_name": "Skill",
                    "tool_input": {"skill": "s1"},
                    "tool_use_id": f"toolu_{worker}_{n}",
                },
            }
            for event, payload in payloads.items():
                proc = subprocess.run(
                    commands[event],
                    input=json.dumps(payload).encode(),
                    capture_output=True,
                    env=env,
                    timeout=60,
                )
                assert proc.returncode == 0
                with lock:
                    sent[event] += 1

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent


def landed(home: Home) -> tuple[int, int]:
    with ledger.opened(home.state_db) as conn:
        impressions = conn.execute("SELECT count(*) FROM impressions WHERE agent = 'r'").fetchone()[0]
        invocations = conn.execute(
            "SELECT count(*) FROM invocations WHERE agent = 'r' AND source = 'hook'"
        ).fetchone()[0]
    return impressions, invocations


def every_record_lands(home: Home, workers: int, sessions: int) -> None:
    service.spawn_detached(home)
    sent = hammer(home, workers, sessions)
    by_watcher = landed(home)
    service.stop(home)
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)  # what the watcher had not taken yet
    result = landed(home)
    sys.stderr.write(f"\nspool stress: sent {sent}, by the watcher {by_watcher}, in state.db {result}\n")
    assert sum(by_watcher) > 0  # the watcher drained while the hooks wrote: the race was run
    assert result == (sent["session-start"], sent["post-tool-use"])
    assert (home.logs_dir / "hooks.log").exists() is False


@pytest.mark.slow
def test_real_hooks_against_a_running_watcher_lose_no_record(home):
    every_record_lands(home, workers=4, sessions=10)  # 80 hooks: a few seconds


@pytest.mark.soak
@pytest.mark.timeout(900)
def test_soak_real_hooks_against_a_running_watcher_lose_no_record(home):
    every_record_lands(home, workers=6, sessions=int(os.environ.get("SPOOL_SOAK_SESSIONS", "300")))
