"""What goes wrong between machines and a server, and nothing is lost.

A killed sync, the server gone mid-push, someone pushing first, a force-pushed main, an
empty server: both sides stay consistent (`git fsck --strict`, a clean work tree, main
equal on both after the next sync) and no commit's change is lost.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve.sync import remote
from tests.sync_helpers import SELF, Machine, create_op, memo_op, server_fsck


def test_an_empty_server_takes_the_agent_and_an_empty_one_cannot_be_joined(machines, git_daemon):
    a, b = machines
    a.create()
    code, out, _err = a.evolve("remote", "a", git_daemon.url())
    assert code == 0 and "synced (2 out)" in out
    assert git_daemon.git("agent", "rev-parse", "main") == a.head()
    code, _out, err = b.evolve("init", "a", "--from", git_daemon.url("empty"))
    assert code == 1 and "has no main branch" in err and not b.path.exists()
    server_fsck(git_daemon)


SLOW_GIT = """#!/bin/sh
case " $* " in
    *" $EVOLVE_TEST_PAUSE_ON "*)
        if [ -f "$EVOLVE_TEST_PAUSE" ]; then
            rm -f "$EVOLVE_TEST_PAUSE"; touch "$EVOLVE_TEST_PAUSED"; sleep 60
        fi;;
esac
exec {git} "$@"
"""


def killed_sync(machine: Machine, tmp_path: Path, pause_on: str) -> None:
    """`evolve sync a` in its own process, SIGKILLed when it runs `git … pause_on …` the first time."""
    wrapper = tmp_path / "slow-git"
    wrapper.mkdir(exist_ok=True)
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (wrapper / "git").write_text(SLOW_GIT.format(git=real))
    (wrapper / "git").chmod(0o755)
    pause, paused = tmp_path / "pause", tmp_path / "paused"
    pause.touch()
    paused.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{wrapper}:{os.environ['PATH']}",
        "EVOLVE_TEST_PAUSE": str(pause),
        "EVOLVE_TEST_PAUSED": str(paused),
        "EVOLVE_TEST_PAUSE_ON": pause_on,
    }
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "evolve", "--home", str(machine.root), "sync", "a"],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not paused.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the sync never reached the pause"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("pause_on", ["update-ref", "push"])
def test_a_killed_sync_leaves_both_sides_consistent(machines, git_daemon, tmp_path, pause_on):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- The laptop's lesson."), create_op("one", "- Do the first thing.\n"))
    assert a.sync()[0] == 0
    b.person_rule("- Bob's rule, made offline.")
    before = b.head()
    killed_sync(b, tmp_path, pause_on)  # integrating the laptop's lesson, or pushing the result
    assert b.out("rev-parse", "HEAD") in (before, b.out("rev-parse", "refs/evolve/fetched/main"), b.head())
    code, out = b.sync()  # the next writer finishes or undoes the dead one's work, then syncs
    assert code == 0, out
    assert a.sync()[0] == 0
    for machine in (a, b):
        memo = machine.read("memo.md")
        assert "The laptop's lesson." in memo and "Bob's rule, made offline." in memo
        assert machine.head() == git_daemon.git("agent", "rev-parse", "main")
        assert not (machine.path / ".git" / "evolve-journal.json").exists()
        machine.fsck()
    server_fsck(git_daemon)


def test_the_server_going_away_mid_push_loses_nothing(machines, git_daemon, cut_proxy):
    a, _b = machines
    a.create(git_daemon.url(port=cut_proxy.port))
    a.write("notes.md", "".join(f"- note {n}: {os.urandom(24).hex()}\n" for n in range(400)))
    a.commit("my big notes")
    before = git_daemon.git("agent", "rev-parse", "main")
    cut_proxy.cut_after(4000)  # the fetch fits; the pack does not
    code, out = a.sync()
    assert code == 1 and "offline" in out and "tries again later" in out, out
    assert cut_proxy.cuts >= 1
    assert git_daemon.git("agent", "rev-parse", "main") == before  # the server took nothing half
    server_fsck(git_daemon)
    cut_proxy.cut_after(None)
    code, out = a.sync()
    assert code == 0 and "synced (1 out)" in out, out
    assert git_daemon.git("agent", "rev-parse", "main") == a.head()
    a.fsck()
    server_fsck(git_daemon)


def test_a_push_refused_because_someone_pushed_first_is_tried_again(machines, git_daemon, monkeypatch):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.person_rule("- Alice's rule.")
    b.person_rule("- Bob's note about himself.", SELF)
    real_push, calls = remote.push, []

    def push_after_bob(repo, url, updates):
        calls.append(repo.path)
        if len(calls) == 1:  # between the laptop's fetch and its push, the desktop pushes
            assert b.sync()[0] == 0
        return real_push(repo, url, updates)

    monkeypatch.setattr(remote, "push", push_after_bob)
    code, out = a.sync()
    assert code == 0, out
    assert calls.count(a.path) == 2  # refused once ("fetch first"), then fetched, integrated, pushed
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    for machine in (a, b):
        memo = machine.read("memo.md")
        assert "Alice's rule." in memo and "Bob's note about himself." in memo, memo
        assert machine.head() == git_daemon.git("agent", "rev-parse", "main")
        machine.fsck()
    server_fsck(git_daemon)


def test_a_force_pushed_main_is_refused_until_the_person_accepts_the_rewrite(machines, git_daemon, tmp_path):
    a, _b = machines
    a.create(git_daemon.url())
    a.reflect(memo_op("strategies", "- A lesson the admin will drop."), summary="dropped lesson")
    assert a.sync()[0] == 0
    admin = tmp_path / "admin"
    subprocess.run(["git", "clone", "-q", git_daemon.url(), str(admin)], check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=admin, check=True)
    (admin / "README.md").write_text("rewritten by the admin\n")
    subprocess.run(["git", "commit", "-qam", "admin: a new start"], cwd=admin, check=True)
    subprocess.run(["git", "push", "-q", "--force", "origin", "main"], cwd=admin, check=True)
    a.person_rule("- Alice's newer rule.")
    head = a.head()
    code, out = a.sync()
    assert code == 1 and "refused: the server's main was rewritten (force-pushed)" in out, out
    assert "dropped lesson" in out and "--accept-rewrite a" in out
    assert a.head() == head  # nothing changed here
    code, out = a.sync("--accept-rewrite", "a")
    assert code == 0, out
    assert a.read("README.md") == "rewritten by the admin\n"
    memo = a.read("memo.md")
    assert "Alice's newer rule." in memo and "A lesson the admin will drop." not in memo
    backups = a.out("branch", "--list", "backup/*", "--format=%(refname:short)").split()
    assert len(backups) == 1 and a.out("rev-parse", backups[0]) == head  # nothing is gone from here
    assert git_daemon.git("agent", "branch", "--list", "backup/*") == ""
    assert git_daemon.git("agent", "rev-parse", "main") == a.head()
    a.fsck()
    server_fsck(git_daemon)
