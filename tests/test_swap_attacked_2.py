"""A second attack on the branch move (`commit.swap`): what its two fixes (stop34) leave open.

Fix 1 asks again, under git's index.lock, which branch is checked out. But `git switch -c` /
`git checkout -b` (a new branch at HEAD, as a person types it: without -q) takes no
index.lock: git 2.39 skips the work tree and the index when both stay as they are. So a
person's new branch still lands between the lock's check and evolve's update-ref (open).
And a sync (journal.move_branch) moved whichever branch HEAD named when it started, so a
branch made before that was moved in main's place (fixed: it moves the agent's branch, and
HEAD on another is Busy). Each test puts the person's step at that moment (a monkeypatched
step of evolve's own write, or inside evolve's lock), so it is deterministic. Open findings
are marked `xfail(strict=True)`, so the one that starts passing says its fix landed.
"""

from __future__ import annotations

import pytest

from evolve.errors import Busy
from evolve.store import commit, journal
from tests import helpers
from tests.helpers import EVOLVE, evolve_commit, git, git_out, skill_text

agent = helpers.agent  # the fixture: agent "demo" in the test's home

SKILL = "skills/x/SKILL.md"


def _person_after_the_locks_check(monkeypatch, step) -> None:
    """`step()` runs once, as swap builds the index: after its check of HEAD, before update-ref."""
    real = commit.index_file
    done: list[bool] = []

    def build(*args, **kwargs):
        if not done:
            done.append(True)
            step()
        return real(*args, **kwargs)

    monkeypatch.setattr(commit, "index_file", build)


def test_git_checkout_b_needs_no_index_lock(agent):
    # why the check under index.lock cannot see it: the person's new branch passes evolve's lock
    (agent.path / ".git" / "index.lock").write_bytes(b"")
    try:
        assert git(agent.path, "checkout", "-b", "feature", check=False).returncode == 0
    finally:
        (agent.path / ".git" / "index.lock").unlink()
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "feature"


@pytest.mark.xfail(
    strict=True,
    reason="swap asks HEAD once, before the index is written; `git checkout -b` takes no "
    "index.lock, so a branch made after that check gets evolve's entries in its index and "
    "the person's next commit carries evolve's file under their name (main: the same, no check at all)",
)
def test_a_branch_made_after_the_locks_check_never_gets_evolves_file_staged(agent, monkeypatch):
    _person_after_the_locks_check(monkeypatch, lambda: git(agent.path, "checkout", "-b", "feature"))
    try:
        evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    except Busy:
        pass  # refusing is fine: the person switched away
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "feature"
    assert SKILL not in git_out(agent.path, "diff", "--cached", "--name-only")
    (agent.path / "feature.md").write_text("the person's feature\n")
    git(agent.path, "add", "feature.md")
    git(agent.path, "commit", "-q", "--no-verify", "-m", "my feature")
    assert git_out(agent.path, "show", "--format=", "--name-only", "feature").splitlines() == ["feature.md"]


@pytest.mark.xfail(
    strict=True,
    reason="the same window in a sync (journal.move_branch → swap): the files it brings end up "
    "staged on the person's new branch, though main moved (main: the same)",
)
def test_a_branch_made_after_the_locks_check_in_a_sync_never_gets_its_files_staged(agent, monkeypatch):
    repo = agent.repo
    old = repo.tip()
    new = commit.commit_tree(
        repo, old, commit.blob_entries(repo, {SKILL: b"from the server\n"}), "sync: x", EVOLVE.env()
    )
    _person_after_the_locks_check(monkeypatch, lambda: git(agent.path, "checkout", "-b", "feature"))
    assert journal.swap is commit.swap
    with repo.locked():
        try:
            repo.move_branch(new, old)
        except Busy:
            pass  # refusing is fine: the person switched away
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "feature"
    assert SKILL not in git_out(agent.path, "diff", "--cached", "--name-only")


def test_a_branch_made_just_before_a_sync_moves_main_never_takes_mains_move(agent):
    repo = agent.repo
    old = repo.tip()
    new = commit.commit_tree(
        repo, old, commit.blob_entries(repo, {SKILL: b"from the server\n"}), "sync: x", EVOLVE.env()
    )
    with repo.locked():  # it asks what is checked out: main
        git(agent.path, "checkout", "-b", "feature")  # between the sync's read of main and its move
        try:
            repo.move_branch(new, old)
        except Busy:
            pass  # refusing is fine: the person switched away
    assert git_out(agent.path, "rev-parse", "feature") == old  # the person's branch is theirs
    assert repo.tip() in (old, new)
