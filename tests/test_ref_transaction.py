"""The branch move held open (`git.RefTransaction`, `commit.swap`): what git locks, and every way it ends.

`swap` shows evolve's index only between `prepare` (the branch locked at its old tip, and
HEAD.lock while HEAD names it) and `commit`. These pin what that relies on in this git, and
the paths where the move does not happen: git refusing `prepare`, a `commit` that fails, a
process that does not answer, a kill in between (the journal's recovery), a person's newer
`git add` of a file evolve stages.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from evolve.store import commit
from evolve.store import git as git_module
from evolve.store.git import GitError, RefTransaction, update_lines
from tests import helpers
from tests.helpers import EVOLVE, evolve_commit, git, git_out, head, skill_text
from tests.test_swap_attacked import person_once_at

agent = helpers.agent  # the fixture: agent "demo" in the test's home

SKILL = "skills/x/SKILL.md"


def _next_commit(agent, text: bytes = b"evolve's\n"):
    """(main's tip, a commit on it adding SKILL, its `--index-info` lines) — nothing moves."""
    repo = agent.repo
    old = repo.tip()
    entries = commit.blob_entries(repo, {SKILL: text})
    return old, commit.commit_tree(repo, old, entries, "reflect(demo): x", EVOLVE.env()), entries


def _locks(agent) -> list[str]:
    """The lock files git left in the repository (not evolve's own flock file, which stays)."""
    return sorted(p.name for p in (agent.path / ".git").rglob("*.lock") if p.name != "evolve.lock")


def test_prepare_holds_the_branch_and_head_until_commit(agent):
    old, new, _ = _next_commit(agent)
    move = RefTransaction(agent.path, update_lines([("refs/heads/main", new, old)]), "test")
    assert move.prepare()
    assert _locks(agent) == ["HEAD.lock", "main.lock"]  # HEAD names main: its reflog is in the move
    person = git(agent.path, "-c", "core.filesRefLockTimeout=0", "checkout", "-b", "feature", check=False)
    assert person.returncode != 0 and "HEAD.lock" in person.stderr  # git's own refusal, as with any git
    assert git(agent.path, "update-ref", "refs/heads/main", old, old, check=False).returncode != 0
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "main"
    assert move.commit()
    assert head(agent.path) == new and _locks(agent) == []


def test_stdin_closed_before_commit_moves_nothing(agent):
    old, new, _ = _next_commit(agent)
    move = RefTransaction(agent.path, update_lines([("refs/heads/main", new, old)]), "test")
    assert move.prepare()
    move.close()
    assert move.proc.returncode == 0 and head(agent.path) == old and _locks(agent) == []


def test_prepare_refused_when_the_branch_moved_ends_the_process(agent):
    old, new, _ = _next_commit(agent)
    stale = git_out(agent.path, "commit-tree", f"{old}^{{tree}}", "-p", old, "-m", "elsewhere")
    move = RefTransaction(agent.path, update_lines([("refs/heads/main", new, stale)]), "test")
    assert not move.prepare()
    assert move.proc.returncode not in (None, 0) and "main" in move.error
    assert head(agent.path) == old and _locks(agent) == []


def test_a_git_that_does_not_answer_in_time_is_ended_and_moves_nothing(agent):
    old, new, _ = _next_commit(agent)
    move = RefTransaction(agent.path, update_lines([("refs/heads/main", new, old)]), "test", timeout=0)
    with pytest.raises(GitError, match="timed out"):
        move.prepare()
    assert move.proc.returncode is not None
    assert head(agent.path) == old and _locks(agent) == []


def test_a_branch_a_persons_git_is_moving_leaves_evolves_index_unshown(agent):
    old, new, entries = _next_commit(agent)
    index = agent.path / ".git" / "index"
    before = index.read_bytes()
    held = agent.path / ".git" / "refs" / "heads" / "main.lock"
    held.write_text(old + "\n")  # a person's git is moving main: prepare is refused
    try:
        with pytest.raises(commit.RefRefused, match="main.lock"):
            commit.swap(agent.repo, "main", new, old, entries)
    finally:
        held.unlink()
    assert index.read_bytes() == before and head(agent.path) == old
    assert not (agent.path / ".git" / "evolve-index").exists() and _locks(agent) == []


def test_a_move_git_does_not_commit_puts_the_index_back(agent, monkeypatch):
    old, new, entries = _next_commit(agent)
    index = agent.path / ".git" / "index"
    before = index.read_bytes()
    shown: list[str] = []

    def fails(self):  # git ends without "commit: ok" (a full disk, a signal): nothing moved
        shown.append(git_out(agent.path, "ls-files"))
        self.close()
        return False

    monkeypatch.setattr(RefTransaction, "commit", fails)
    assert commit.swap(agent.repo, "main", new, old, entries) is False
    assert SKILL in shown[0].splitlines()  # it was shown, the refs prepared
    assert index.read_bytes() == before and head(agent.path) == old and _locks(agent) == []


def _hook(agent, body: str) -> None:
    """The repository's `reference-transaction` hook: git runs it at prepare, commit and abort."""
    hook = agent.path / ".git" / "hooks" / "reference-transaction"
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)


def _timed_move(agent) -> tuple[RefTransaction, str, float]:
    """The agent's main moved to a new commit in one transaction: (it, the new commit, its seconds)."""
    old, new, _ = _next_commit(agent)
    move = RefTransaction(agent.path, update_lines([("refs/heads/main", new, old)]), "test", timeout=10)
    started = time.monotonic()
    assert move.prepare() and move.commit()
    return move, new, time.monotonic() - started


def test_a_hook_that_prints_a_lot_does_not_stall_the_move(agent):
    # its stdout goes to git's stderr: a pipe nobody read filled at 64 KiB and git waited
    # there, inside `prepare`, until evolve's timeout ended it (30 s, then no commit)
    _hook(agent, "head -c 300000 /dev/zero | tr '\\0' x\n")
    move, new, seconds = _timed_move(agent)
    assert seconds < 5
    assert head(agent.path) == new and _locks(agent) == []
    assert move.error.startswith("xxx") and len(move.error) <= 65536


def test_a_hook_that_leaves_a_child_holding_stderr_does_not_stall_the_end(agent):
    # git has ended, but the hook's background child still holds the pipe: no EOF for 8 s
    _hook(agent, "sleep 8 &\necho from the hook\n")
    move, new, seconds = _timed_move(agent)
    assert seconds < 5 and move.proc.returncode == 0
    assert head(agent.path) == new and "from the hook" in move.error


def test_a_hook_that_refuses_leaves_the_index_and_branch_and_says_why(agent):
    _hook(agent, 'if [ "$1" = prepared ]; then echo "no moves today" >&2; exit 1; fi\n')
    old, new, entries = _next_commit(agent)
    move = RefTransaction(agent.path, update_lines([("refs/heads/main", new, old)]), "test")
    assert not move.prepare() and "no moves today" in move.error
    before = (agent.path / ".git" / "index").read_bytes()
    with pytest.raises(commit.RefRefused, match="main: ref updates aborted by hook — nothing was lost"):
        commit.swap(agent.repo, "main", new, old, entries)
    assert (agent.path / ".git" / "index").read_bytes() == before
    assert head(agent.path) == old and _locks(agent) == []


@pytest.mark.parametrize("lock", ["refs/heads/main.lock", "HEAD.lock"])
def test_a_lock_a_killed_git_left_is_named_in_one_line_after_three_tries(agent, monkeypatch, lock):
    # was: 50 attempts (~8 s, a process each) ending "constant concurrent commits", the lock unnamed
    left = agent.path / ".git" / lock
    left.write_text("\n")
    prepares: list[int] = []
    real = RefTransaction.prepare

    def counted(self):
        prepares.append(1)
        return real(self)

    monkeypatch.setattr(RefTransaction, "prepare", counted)
    old, before = head(agent.path), (agent.path / ".git" / "index").read_bytes()
    with pytest.raises(commit.RefRefused) as refused:
        evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    message = str(refused.value)
    assert "\n" not in message and str(left) in message and "remove it" in message
    assert len(prepares) == 3 and head(agent.path) == old
    assert (agent.path / ".git" / "index").read_bytes() == before
    assert not (agent.path / ".git" / "evolve-index").exists()
    left.unlink()
    sha = evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    assert head(agent.path) == sha and _locks(agent) == []


def test_a_move_that_leaves_the_branch_where_it_is_still_moves_the_other_refs(agent):
    # a sync that brings nothing new, and drops a proposal branch in the same transaction
    repo = agent.repo
    tip = repo.tip()
    git(agent.path, "branch", "proposals/p1", tip)
    moved = commit.swap(repo, "main", tip, tip, "", [("refs/heads/proposals/p1", "0" * 40, tip)])
    assert moved and repo.tip() == tip and "proposals/p1" not in git_out(agent.path, "branch")


def test_one_git_process_moves_the_branch(agent, monkeypatch):
    spawned: list[list[str]] = []
    real = subprocess.Popen

    def counting(args, *a, **k):
        spawned.append(list(args))
        return real(args, *a, **k)

    monkeypatch.setattr(git_module.subprocess, "Popen", counting)
    evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    moves = [args for args in spawned if "update-ref" in args]
    assert len(moves) == 1 and moves[0][-1] == "--stdin"


KILLED_SHOWING = """
import os, signal, sys
from evolve.workspace.agent import Agent
from evolve.store.git import RefTransaction
from evolve.store.history import build_message
from evolve.store.identity import Identity
def killed(self):  # evolve's index is in, the refs prepared, commit not yet sent
    os.kill(os.getpid(), signal.SIGKILL)
RefTransaction.commit = killed
agent = Agent.open(sys.argv[1])
with agent.repo.locked():
    agent.repo.commit_changes({"skills/x/SKILL.md": b"evolve's\\n"}, build_message("reflect(demo): x", {}),
                              Identity("evolve", "e@l"))
"""


def test_a_kill_while_the_index_is_shown_leaves_what_recovery_undoes(agent):
    old = head(agent.path)
    proc = subprocess.run([sys.executable, "-c", KILLED_SHOWING, "demo"], capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    for _ in range(200):  # the orphaned `git update-ref --stdin` reads EOF: it aborts, dropping its locks
        if not (agent.path / ".git" / "refs" / "heads" / "main.lock").exists():
            break
        time.sleep(0.02)
    assert head(agent.path) == old  # the branch never moved
    assert SKILL in git_out(agent.path, "ls-files")  # the same state as a kill before update-ref: staged
    assert (agent.path / ".git" / "evolve-journal.json").exists()
    with agent.repo.locked(timeout=5):  # a stale evolve index.lock is recovered, then the journal
        pass
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert SKILL not in git_out(agent.path, "ls-files") and not (agent.path / SKILL).exists()
    assert _locks(agent) == [] and head(agent.path) == old


def test_a_persons_add_of_the_file_evolve_writes_stays_staged(agent, monkeypatch):
    memo = agent.path / "memo.md"

    def person_stages() -> None:  # after evolve's check of staged files, before its move
        memo.write_text("# the person's memo\n")
        git(agent.path, "add", "memo.md")

    person_once_at(monkeypatch, "commit_tree", person_stages)
    old = head(agent.path)
    with pytest.raises(commit.StagedMeanwhile):
        evolve_commit(agent, {"memo.md": b"# evolve's memo\n"})
    assert git_out(agent.path, "show", ":memo.md") == "# the person's memo"
    assert memo.read_text() == "# the person's memo\n" and head(agent.path) == old


def test_an_index_only_rewritten_meanwhile_is_no_reason_to_stop(agent, monkeypatch):
    # `git status` rewrites the index (stat data) without staging anything: evolve commits
    index = agent.path / ".git" / "index"
    stamps: list[int] = [index.stat().st_ino]

    def rewritten() -> None:
        git(agent.path, "update-index", "--force-write-index")
        stamps.append(index.stat().st_ino)

    person_once_at(monkeypatch, "commit_tree", rewritten)
    sha = evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    assert stamps[0] != stamps[1]  # a new file: evolve's read of the index is out of date
    assert head(agent.path) == sha and SKILL in git_out(agent.path, "ls-files")


def _reftable() -> bool:
    probe = subprocess.run(["git", "init", "--help"], capture_output=True, text=True)
    return "ref-format" in probe.stdout


@pytest.mark.skipif(not _reftable(), reason="this git has no reftable (git init --ref-format: 2.45)")
def test_a_reftable_repository_moves_the_same_way(tmp_path):
    from evolve.store.repo import Repo

    path = tmp_path / "rt"
    git(tmp_path, "init", "-q", "-b", "main", "--ref-format=reftable", str(path))
    (path / "a.md").write_text("a\n")
    git(path, "add", "a.md")
    git(path, "commit", "-q", "--no-verify", "-m", "a")
    repo = Repo(path)
    old = repo.tip()
    entries = commit.blob_entries(repo, {"b.md": b"b\n"})
    new = commit.commit_tree(repo, old, entries, "b", EVOLVE.env())
    assert commit.swap(repo, "main", new, old, entries) is True
    assert head(path) == new and "b.md" in git_out(path, "ls-files").splitlines()
