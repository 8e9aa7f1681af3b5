"""The git layer's locks and crash safety: a person's git is waited for, a killed writer undone.

git's own index.lock is waited for and never deleted; evolve's flock dies with its holder;
a journal left by a process killed before, during or after a commit is rolled back (or kept,
once the branch moved) by the next lock, without losing a person's edits.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from evolve.errors import EvolveError, LockBusy
from evolve.store import commit, worktree
from evolve.store import git as gitcmd
from evolve.store.journal import write_journal
from evolve.store.locks import FileLock, is_locked
from evolve.workspace import memo
from tests import helpers
from tests.helpers import commit_all, evolve_commit, git, git_out, head, skill_text, write_skill

agent = helpers.agent  # the fixture: agent "demo" in the test's home


# -- locks ------------------------------------------------------------------------------
def test_a_held_index_lock_is_waited_for_and_never_deleted(agent):
    lock = agent.path / ".git" / "index.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL)  # a person's git is running
    done: dict[str, object] = {}

    def write():
        try:
            done["sha"] = evolve_commit(agent, {"waited.txt": b"w\n"})
        except BaseException as exc:  # pragma: no cover - reported below
            done["error"] = exc
        done["at"] = time.monotonic()

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(0.8)
    assert thread.is_alive(), done
    assert lock.exists()
    released = time.monotonic()
    os.close(fd)
    lock.unlink()  # the person's git finishes
    thread.join(10)
    assert "error" not in done
    assert done["at"] >= released
    assert head(agent.path) == done["sha"]
    assert not lock.exists()


def test_a_stuck_index_lock_fails_clearly_and_restores_files(agent, monkeypatch):
    monkeypatch.setattr(
        commit, "acquire_index_lock", functools.partial(gitcmd.acquire_index_lock, timeout=0.3)
    )
    (agent.path / "memo.md").write_text(MEMO_BEFORE)
    git(agent.path, "commit", "-qam", "memo")
    before = head(agent.path)
    lock = agent.path / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(EvolveError, match=r"index\.lock exists .* remove it by hand"):
        evolve_commit(agent, {"memo.md": b"# evolve's\n", "new.txt": b"n\n"})
    assert lock.exists()
    assert head(agent.path) == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert not (agent.path / "new.txt").exists()
    assert not (agent.path / ".git" / "evolve-journal.json").exists()


def test_a_stuck_index_lock_is_busy_not_a_bug(agent, evolve_home, monkeypatch):
    # a person's git holding the index (or one killed, its lock left): exit 75 and its line,
    # not exit 3 with a traceback in crash.log
    from evolve.store import journal

    quick = functools.partial(gitcmd.acquire_index_lock, timeout=0.3)
    monkeypatch.setattr(commit, "acquire_index_lock", quick)
    monkeypatch.setattr(journal, "acquire_index_lock", quick)
    write_skill(agent.path, "run-tests")
    commit_all(agent.path, "a skill of mine")
    (agent.path / ".git" / "index.lock").write_text("")
    out = helpers.run_cli("pin", "demo", "run-tests")
    assert out.returncode == 75, out.stderr
    assert "index.lock exists for over 0s; if no git process is running" in out.stderr
    assert not (evolve_home / "logs" / "crash.log").exists()


HOLD_FLOCK = """
import sys, time
from pathlib import Path
from evolve.store.locks import FileLock
with FileLock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_evolve_lock_held_by_a_live_process(agent):
    path = agent.path / ".git" / "evolve.lock"
    proc = subprocess.Popen([sys.executable, "-c", HOLD_FLOCK, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        assert is_locked(path)
        with pytest.raises(LockBusy, match=f"pid {proc.pid}"):
            with agent.repo.locked(timeout=0.2):
                pass
        assert path.exists()
    finally:
        proc.kill()
        proc.wait()
    # the kernel freed the dead holder's lock: no stale-lock cleanup is needed
    assert not is_locked(path)
    with agent.repo.locked(timeout=1):
        assert is_locked(path)
    assert path.exists()


def test_file_lock_try_once(tmp_path):
    path = tmp_path / "x.lock"
    with FileLock(path):
        with pytest.raises(LockBusy):
            FileLock(path, timeout=0).acquire()
    FileLock(path, timeout=0).acquire().release()


# -- crash safety -----------------------------------------------------------------------
MEMO_BEFORE = memo.replace_section(memo.render_empty("demo"), memo.SELF, "- memo before")


def _prepare(agent):
    write_skill(agent.path, "kept", body="- original\n")
    (agent.path / "memo.md").write_text(MEMO_BEFORE)
    commit_all(agent.path, "base")
    return head(agent.path)


def test_failure_before_the_branch_moves_restores_the_files(agent, monkeypatch):
    before = _prepare(agent)

    def boom(repo, *args, **kwargs):
        assert (repo.path / "memo.md").read_text() == "# evolve wrote this\n"  # files were written
        raise RuntimeError("crash between writing files and moving the branch")

    monkeypatch.setattr(commit, "commit_loop", boom)
    with pytest.raises(RuntimeError):
        evolve_commit(
            agent,
            {
                "memo.md": b"# evolve wrote this\n",
                "skills/kept/SKILL.md": None,
                "skills/brand-new/SKILL.md": skill_text("brand-new").encode(),
            },
        )
    assert head(agent.path) == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert "- original" in (agent.path / "skills/kept/SKILL.md").read_text()
    assert not (agent.path / "skills/brand-new").exists()
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert not (agent.path / ".git" / "evolve-journal.json").exists()


KILLED_WRITER = """
import os, pathlib, signal, sys
from evolve.workspace.agent import Agent
from evolve.store.history import build_message
from evolve.store import commit
from evolve.store.identity import Identity
where = sys.argv[2]
real_swap = commit.swap
def die_before(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
def die_after(*a, **k):
    result = real_swap(*a, **k)
    os.kill(os.getpid(), signal.SIGKILL)
def die_mid_write(self, target):  # the new skill's bytes are in a temp file, not yet renamed
    if target.parent.name == "brand-new":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(self, target)
real_replace = pathlib.Path.replace
if where == "before":
    commit.commit_loop = die_before
elif where == "mid-write":
    pathlib.Path.replace = die_mid_write
else:
    commit.swap = die_after
agent = Agent.open(sys.argv[1])
changes = {"memo.md": b"# evolve wrote this\\n", "skills/kept/SKILL.md": None,
           "skills/brand-new/SKILL.md": b"---\\nname: brand-new\\ndescription: d\\n---\\nx\\n",
           "person.txt": b"evolve's version\\n"}
with agent.repo.locked():
    agent.repo.commit_changes(changes, build_message("reflect(demo): x", {}), Identity("evolve", "e@l"))
"""


def test_journal_of_a_killed_process_is_rolled_back_by_the_next_lock(agent):
    before = _prepare(agent)
    (agent.path / "person.txt").write_text("person's first\n")
    commit_all(agent.path, "person file")
    before = head(agent.path)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "before"])
    assert proc.returncode == -signal.SIGKILL
    journal = agent.path / ".git" / "evolve-journal.json"
    assert journal.exists()
    assert json.loads(journal.read_text())["tip"] == before
    assert (agent.path / "memo.md").read_text() == "# evolve wrote this\n"
    # meanwhile a person edits one of the files evolve had written
    (agent.path / "person.txt").write_text("person's newer edit\n")
    with agent.repo.locked(timeout=2):  # the dead process's flock is gone
        pass
    assert not journal.exists()
    assert head(agent.path) == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert "- original" in (agent.path / "skills/kept/SKILL.md").read_text()
    assert not (agent.path / "skills/brand-new").exists()
    assert (agent.path / "person.txt").read_text() == "person's newer edit\n"
    assert git_out(agent.path, "status", "--porcelain") == "M person.txt"


def test_a_kill_mid_write_leaves_no_temp_file_and_no_empty_folder(agent):
    before = _prepare(agent)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "mid-write"])
    assert proc.returncode == -signal.SIGKILL
    left = agent.path / "skills" / "brand-new"
    assert [p.name for p in left.iterdir()][0].endswith(".evolve-tmp")  # what the kill left
    with agent.repo.locked(timeout=2):
        pass
    assert head(agent.path) == before
    assert not left.exists()
    assert git_out(agent.path, "status", "--porcelain", "--ignored", "--untracked-files=all") == ""


def test_journal_is_rolled_back_even_after_a_person_committed_something_else(agent):
    before = _prepare(agent)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "before"])
    assert proc.returncode == -signal.SIGKILL
    # the person commits only their own file; the branch moves although evolve's never did
    (agent.path / "own.md").write_text("mine\n")
    git(agent.path, "add", "own.md")
    git(agent.path, "commit", "-qm", "my own file")
    with agent.repo.locked(timeout=2):
        pass
    assert git_out(agent.path, "rev-parse", "HEAD^") == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert not (agent.path / "skills/brand-new").exists()
    assert not (agent.path / "person.txt").exists()
    # evolve's half-written files must not be left behind to be committed as a person's edit
    assert agent.repo.dirty_paths() == []


def test_journal_left_after_the_branch_moved_keeps_the_commit(agent):
    before = _prepare(agent)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "after"])
    assert proc.returncode == -signal.SIGKILL
    assert (agent.path / ".git" / "evolve-journal.json").exists()
    assert git_out(agent.path, "rev-parse", "HEAD^") == before
    with agent.repo.locked(timeout=2):
        pass
    assert not (agent.path / ".git" / "evolve-journal.json").exists()
    assert (agent.path / "memo.md").read_text() == "# evolve wrote this\n"
    assert (agent.path / "skills/brand-new/SKILL.md").exists()
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_corrupt_journal_is_discarded(agent):
    journal = agent.path / ".git" / "evolve-journal.json"
    journal.write_text("{not json")
    with agent.repo.locked():
        pass
    assert not journal.exists()


def test_paths_that_look_like_pathspec_magic_are_files_when_the_index_is_refreshed(agent):
    # `:!a` and `:(exclude)a` are file names to evolve: after a crash between staging its
    # entries and moving the branch, recover puts the index back and the work tree is clean
    repo = agent.repo
    changes = {":!a": b"one\n", ":(exclude)b": b"two\n"}
    written = write_journal(repo, changes, None, "main")
    for path, content in changes.items():
        worktree.write_file(repo, path, content)
    entries = commit.blob_entries(repo, changes)
    commit.index_file(repo, commit.index_snapshot(repo), entries).replace(agent.path / ".git" / "index")
    assert written and ":!a" in git_out(agent.path, "ls-files")  # staged, the branch never moved
    with repo.locked():
        repo.recover()
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert ":!a" not in git_out(agent.path, "ls-files")
    assert not (agent.path / ":!a").exists()
    assert repo.tip() == head(agent.path)
