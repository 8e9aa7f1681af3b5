"""A third attack on the branch move (attack35): a person's git around evolve's work tree, and a switch.

Each test puts the person's step at the exact moment (inside evolve's lock, a monkeypatched
step of evolve's own write, or git's own order replayed with plumbing), so it is deterministic.
"""

from __future__ import annotations

import pytest

from evolve.errors import Busy
from tests import helpers
from tests.helpers import EVOLVE, git, git_out, skill_text

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
