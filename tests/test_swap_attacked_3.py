"""A third attack on the branch move (attack35): a person's git around evolve's work tree, and a switch.

Each test puts the person's step at the exact moment (inside evolve's lock, a monkeypatched
step of evolve's own write, or git's own order replayed with plumbing), so it is deterministic.
"""

from __future__ import annotations

import pytest

from evolve.errors import Busy
from evolve.store import commit
from tests import helpers
from tests.helpers import EVOLVE, evolve_commit, git, git_out, head, skill_text
from tests.test_swap_attacked import person_once_at

agent = helpers.agent  # the fixture: agent "demo" in the test's home

SKILL = "skills/x/SKILL.md"


def test_a_switch_that_read_main_before_evolves_move_never_stages_evolves_file_deleted(agent):
    # `git switch main` resolves main's commit, then (under index.lock) writes the index and work
    # tree for it, then points HEAD at main. Evolve checked main was checked out when it took its
    # lock; the person's `git switch -c` after that made its commit one on a branch not checked
    # out (no index to refresh), and a switch back that read main before that move wrote an
    # index from before it: the person's next commit deleted evolve's file under their name
    # (stress: 1 in 3 runs of 120 commits against a checkout -b / switch loop)
    repo = agent.repo
    old = repo.tip()
    with repo.locked():
        git(agent.path, "switch", "-q", "-c", "feature")  # after the lock's check
        read = repo.tip()  # git switch main: main resolved
        with pytest.raises(Busy, match="switched branches"):
            repo.commit_changes({SKILL: skill_text("x").encode()}, "reflect(demo): x", EVOLVE)
    git(agent.path, "read-tree", "-m", "-u", "feature", read)  # switch: the index and work tree, for `read`
    git(agent.path, "symbolic-ref", "HEAD", "refs/heads/main")  # switch: HEAD written
    assert repo.tip() == old and git_out(agent.path, "status", "--porcelain") == ""
    assert not (agent.path / SKILL).exists()  # evolve's file went back with its refusal


@pytest.mark.parametrize(
    "step",
    [["stash", "-q"], ["checkout", "--", SKILL], ["reset", "-q", "--hard"]],
    ids=["stash", "checkout-file", "reset-hard"],
)
def test_a_persons_git_that_puts_evolves_written_file_back_stops_the_move(agent, monkeypatch, step):
    # evolve writes its file, then builds the commit: a `git stash` (or checkout, reset --hard)
    # then put the file back as HEAD has it, and evolve's move left the work tree undoing its
    # lesson (` M`): the person's next `git commit -a` reverted it under their name
    evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    old = head(agent.path)
    (agent.path / "memo.md").write_text("the person's memo\n")
    person_once_at(monkeypatch, "commit_tree", lambda: git(agent.path, *step))
    with pytest.raises(commit.EditedMeanwhile):
        evolve_commit(agent, {SKILL: b"evolve's second\n"}, "reflect(demo): x2")
    assert head(agent.path) == old
    assert SKILL not in git_out(agent.path, "status", "--porcelain")
    assert (agent.path / SKILL).read_bytes() == skill_text("x").encode()
