"""The `evolve watch` process: SIGTERM stops it cleanly, a second one says so, a dead one's lock is freed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evolve import cli
from evolve.home import Home
from evolve.watch import service
from tests import watch_helpers
from tests.watch_helpers import Transcript, db, runs_of

transcripts, demo = watch_helpers.transcripts, watch_helpers.demo  # the watcher fixtures


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
