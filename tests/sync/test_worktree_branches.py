"""A branch a person has checked out in a worktree of the agent (`git worktree add`) is theirs for now.

Sync moves and deletes `proposals/*` as the server decides; under a worktree that has one
checked out, the person's index and files would no longer match it (deleted: every file
staged as new there). The sync waits (busy, one line) until that worktree lets go of it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from evolve.errors import EXIT_BUSY
from tests.sync_helpers import Clone, memo_op, only_proposal, review_on


def _proposal_in_a_worktree(a, url: str, tmp_path: Path) -> tuple[str, Path]:
    """One proposal synced to the server and checked out in the person's worktree `review`."""
    review_on(a, url)
    a.reflect(memo_op("strategies", "- a lesson to review"))
    assert a.sync()[0] == 0
    branch = only_proposal(a)
    review = tmp_path / "review"
    a.git("worktree", "add", "-q", str(review), branch)
    return branch, review


def test_a_proposal_the_server_deleted_stays_while_a_worktree_has_it(machines, git_daemon, tmp_path):
    a, _b = machines
    branch, review = _proposal_in_a_worktree(a, git_daemon.url(), tmp_path)
    Clone(tmp_path / "team", git_daemon.url()).delete(branch)  # declined on the server
    main = a.head()
    code, out = a.sync()
    assert code == EXIT_BUSY and out.count("\n") == 1 and f"{branch} is checked out in {review}" in out, out
    assert a.agent.repo.branches("proposals/") and a.head() == main
    a.git("-C", str(review), "switch", "-q", "--detach")
    code, out = a.sync()
    assert code == 0 and not a.agent.repo.branches("proposals/"), out


def test_a_worktree_removed_with_rm_rf_lets_go_of_its_branch_unless_locked(machines, git_daemon, tmp_path):
    # `rm -rf ../review` leaves .git/worktrees/review behind (git worktree prune's to clean): no
    # person can work there, and the remedy named (`git -C ../review …`) cannot run, so it held forever
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(memo_op("strategies", "- a lesson to review"))
    a.reflect(memo_op("strategies", "- another lesson to review"))
    assert a.sync()[0] == 0
    locked_branch, branch = sorted(a.agent.repo.branches("proposals/"))
    review, removable = tmp_path / "review", tmp_path / "usb-stick"
    a.git("worktree", "add", "-q", str(review), branch)
    a.git("worktree", "add", "-q", "--lock", str(removable), locked_branch)  # unplugged: still theirs
    shutil.rmtree(review)
    shutil.rmtree(removable)
    team = Clone(tmp_path / "team", git_daemon.url())
    team.delete(branch)
    team.delete(locked_branch)
    code, out = a.sync()
    assert code == EXIT_BUSY and f"{locked_branch} is checked out in {removable}" in out, out
    a.git("worktree", "unlock", str(removable))
    code, out = a.sync()
    assert code == 0 and not a.agent.repo.branches("proposals/"), out


def test_a_proposal_being_rebased_in_a_worktree_stays_its_own(machines, git_daemon, tmp_path):
    # mid-rebase the worktree's HEAD is detached; the branch is named in rebase-merge/head-name,
    # and the rebase's end writes it again: deleted under it, a declined proposal came back
    a, _b = machines
    branch, review = _proposal_in_a_worktree(a, git_daemon.url(), tmp_path)
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i s/^pick/edit/"}
    subprocess.run(["git", "-C", str(review), "rebase", "-q", "-i", "HEAD~1"], check=True, env=env)
    Clone(tmp_path / "team", git_daemon.url()).delete(branch)
    code, out = a.sync()
    assert code == EXIT_BUSY and f"{branch} is checked out in {review}" in out, out
    a.git("-C", str(review), "rebase", "--abort")
    a.git("-C", str(review), "switch", "-q", "--detach")
    code, out = a.sync()
    assert code == 0 and not a.agent.repo.branches("proposals/"), out


def test_a_proposal_being_bisected_in_a_worktree_stays_its_own(machines, git_daemon, tmp_path):
    # mid-bisect the worktree's HEAD is detached; the branch is named in BISECT_START, and
    # `git bisect reset` checks it out again: deleted under it, the reset failed and left the
    # person on a detached HEAD (git's own `branch -d` refuses such a branch)
    a, _b = machines
    branch, review = _proposal_in_a_worktree(a, git_daemon.url(), tmp_path)
    first = a.git("rev-list", "--max-parents=0", branch).stdout.strip()
    a.git("-C", str(review), "bisect", "start", "HEAD", first)
    assert a.git("-C", str(review), "symbolic-ref", "-q", "HEAD", check=False).returncode == 1  # detached
    Clone(tmp_path / "team", git_daemon.url()).delete(branch)
    code, out = a.sync()
    assert code == EXIT_BUSY and f"{branch} is checked out in {review}" in out, out
    a.git("-C", str(review), "bisect", "reset")
    assert a.git("-C", str(review), "symbolic-ref", "--short", "HEAD").stdout.strip() == branch
    a.git("-C", str(review), "switch", "-q", "--detach")
    code, out = a.sync()
    assert code == 0 and not a.agent.repo.branches("proposals/"), out
