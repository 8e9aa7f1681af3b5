"""What an attack on the branch move (`commit.swap`) found: a person's git racing evolve's write.

Each test puts the person's step at the exact moment the race needs (a monkeypatched step of
evolve's own write), so it is deterministic. All were older than the fix that was attacked
(a branch move already lost is seen under index.lock). Fixed since: a branch switched while
evolve writes (asked again under index.lock: Busy), the index's modification time kept
by evolve's copy of it, a move lost after the lock's check (the index is shown only while
git's ref transaction holds the branch: prepare, the index, commit) and a person's newer
`git add` of a file evolve commits for them (compared under index.lock: theirs stays).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evolve.errors import Busy
from evolve.store import commit, journal
from tests import helpers
from tests.helpers import EVOLVE, evolve_commit, git, git_out, skill_text

agent = helpers.agent  # the fixture: agent "demo" in the test's home

SKILL = "skills/x/SKILL.md"


def person_once_at(monkeypatch, step_of_evolve: str, step) -> None:
    """`step()` (the person's) runs once, just before evolve's `commit.<step_of_evolve>` first runs."""
    real = getattr(commit, step_of_evolve)
    done: list[bool] = []

    def first(*args, **kwargs):
        if not done:
            done.append(True)
            step()
        return real(*args, **kwargs)

    monkeypatch.setattr(commit, step_of_evolve, first)


def evolve_commits_and_feature_stays_the_persons(agent, then=lambda: None) -> None:
    """Evolve commits while the person makes branch `feature`; their commits there stay theirs.

    Refusing is fine, but their index and their next commit on `feature` never hold evolve's
    file. `then()`: the person's next step once evolve is done.
    """
    try:
        evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    except Busy:
        pass  # refusing is fine: the person switched away
    then()
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "feature"
    assert SKILL not in git_out(agent.path, "diff", "--cached", "--name-only")
    (agent.path / "feature.md").write_text("the person's feature\n")
    git(agent.path, "add", "feature.md")
    git(agent.path, "commit", "-q", "--no-verify", "-m", "my feature")
    assert git_out(agent.path, "show", "--format=", "--name-only", "feature").splitlines() == ["feature.md"]


def sync_moves_and_feature_stays_clean(agent, old: str, new: str, then=lambda: None) -> None:
    """A sync moves main old → new while the person makes `feature`: nothing of it staged there."""
    repo = agent.repo
    with repo.locked():
        try:
            repo.move_branch(new, old)
        except Busy:
            pass  # refusing is fine: the person switched away
    then()
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "feature"
    assert SKILL not in git_out(agent.path, "diff", "--cached", "--name-only")


def server_commit(repo):
    """(main's tip, a commit on it bringing SKILL as a sync would) — nothing moves."""
    old = repo.tip()
    entries = commit.blob_entries(repo, {SKILL: b"from the server\n"})
    return old, commit.commit_tree(repo, old, entries, "sync: x", EVOLVE.env())


def _person_at_first_build(monkeypatch, step) -> None:
    """`step()` runs once, as evolve builds its commit: after its checks, before the branch moves."""
    person_once_at(monkeypatch, "commit_tree", step)


def test_a_branch_switched_to_while_evolve_writes_never_gets_evolves_file_staged(agent, monkeypatch):
    # the person runs `git switch -c feature` while evolve builds its commit: evolve moves main,
    # and puts its file into the index the feature branch now has; their next commit carries it
    _person_at_first_build(monkeypatch, lambda: git(agent.path, "checkout", "-q", "-b", "feature"))
    evolve_commits_and_feature_stays_the_persons(agent)


def test_a_branch_switched_to_while_a_sync_moves_main_never_gets_its_files_staged(agent, monkeypatch):
    # a sync brings main up to date (journal.move_branch); the person runs `git switch -c`
    # just before the move: the files it brings must not be staged on their branch
    repo = agent.repo
    old, new = server_commit(repo)
    real = journal.swap

    def switched_first(*args, **kwargs):
        git(agent.path, "checkout", "-q", "-b", "feature")
        return real(*args, **kwargs)

    monkeypatch.setattr(journal, "swap", switched_first)
    sync_moves_and_feature_stays_clean(agent, old, new)


def test_a_person_back_on_main_before_the_move_gets_evolves_file_in_index_and_files(agent, monkeypatch):
    # `git switch -c feature` just after the lock's check, `git switch main` as evolve builds:
    # evolve, which saw feature checked out, moves main and leaves index and files as they were
    with agent.repo.locked():
        git(agent.path, "checkout", "-q", "-b", "feature")
        _person_at_first_build(monkeypatch, lambda: git(agent.path, "checkout", "-q", "main"))
        try:
            agent.repo.commit_changes({SKILL: skill_text("x").encode()}, "reflect(demo): x", EVOLVE)
        except Busy:
            pass  # refusing is fine: the person switched away
    if git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "feature":
        git(agent.path, "checkout", "-q", "main")  # evolve refused before it built (attack35): their step
    assert git_out(agent.path, "symbolic-ref", "--short", "HEAD") == "main"
    assert git_out(agent.path, "status", "--porcelain") == ""  # not "D  skills/x/SKILL.md"


def test_a_newer_edit_staged_while_evolve_commits_the_older_one_stays_staged(agent, monkeypatch):
    # evolve commits the person's saved edit for them (the watcher's path); meanwhile they save
    # again and `git add` it for their own commit: that staged version must stay staged
    notes = agent.path / "notes.md"
    notes.write_text("first draft\n")

    def save_again_and_stage() -> None:
        notes.write_text("second draft, staged for my commit\n")
        git(agent.path, "add", "notes.md")

    _person_at_first_build(monkeypatch, save_again_and_stage)
    agent.commit_human_edits()  # it may commit the first draft, or leave it for later
    assert git_out(agent.path, "show", ":notes.md") == "second draft, staged for my commit"
    assert notes.read_text() == "second draft, staged for my commit\n"


def person_at(monkeypatch, window: str, step) -> list[str]:
    """`step()` runs once in swap's `window`; returns the real index listed after each rename evolve makes.

    "building": as evolve builds the index it will show, after the lock's check of the tip,
    before the ref transaction; "showing": as it renames that index in, the refs prepared.
    """
    shown: list[str] = []  # the real index each time evolve renames a file over it, as a person reads it
    real = commit.index_file
    done: list[bool] = []

    def once() -> None:
        if not done:
            done.append(True)
            step()

    class Shown(type(Path())):  # the index file evolve built: its rename in is watched
        def replace(self, target):
            if window == "showing":
                once()
            moved = super().replace(target)
            shown.append(git_out(target.parent.parent, "ls-files"))
            return moved

    def building(*args, **kwargs):
        if window == "building":
            once()
        return Shown(real(*args, **kwargs))

    monkeypatch.setattr(commit, "index_file", building)
    return shown


@pytest.mark.parametrize("window", ["building", "showing"])
def test_a_move_lost_after_the_locks_check_never_shows_a_person_evolves_index(agent, monkeypatch, window):
    repo = agent.repo
    old = repo.tip()
    entries = commit.blob_entries(repo, {SKILL: b"evolve's\n"})
    new = commit.commit_tree(repo, old, entries, "reflect(demo): x", EVOLVE.env())
    tree = git_out(agent.path, "rev-parse", f"{old}^{{tree}}")
    persons = git_out(agent.path, "commit-tree", tree, "-p", old, "-m", "the person's commit")
    moved: list[int] = []
    # a person's as-is `git commit` took and released index.lock before evolve took it: it
    # moves the branch now, as evolve builds (or shows) the index
    shown = person_at(
        monkeypatch,
        window,
        lambda: moved.append(
            git(agent.path, "update-ref", "refs/heads/main", persons, old, check=False).returncode
        ),
    )
    if commit.swap(repo, "main", new, old, entries):  # evolve's move held: the person's failed
        assert moved != [0] and repo.tip() == new
    else:  # the person's move landed: no index a person could read ever held evolve's file
        assert moved == [0] and repo.tip() == persons
        assert not any(SKILL in listed.splitlines() for listed in shown)
        assert SKILL not in git_out(agent.path, "ls-files")
    left = [p.name for p in (agent.path / ".git").rglob("*.lock")] + ["evolve-index"] * (
        agent.path / ".git" / "evolve-index"
    ).exists()
    assert left == []  # git's lock files gone, evolve's unshown index too


def _edit_within_one_second(agent, path) -> bool:
    """The person commits `path`, then saves it again (same size) in the same second."""
    while time.time() % 1 > 0.3:  # start at the beginning of a second
        time.sleep(0.02)
    second = int(time.time())
    path.write_text("draft 1\n")
    git(agent.path, "add", path.name)
    git(agent.path, "commit", "-q", "--no-verify", "-m", "draft 1")
    path.write_text("draft 2\n")
    return int(path.stat().st_mtime) == second == int(time.time())


def test_a_file_saved_again_in_the_second_of_its_commit_stays_visible_after_evolve_writes(agent):
    notes = agent.path / "notes.md"
    for _attempt in range(5):  # a loaded machine may cross a second meanwhile: start again
        if _edit_within_one_second(agent, notes):
            break
    else:
        pytest.skip("could not save twice within one second")
    while int(time.time()) == int(notes.stat().st_mtime):  # evolve writes in a later second
        time.sleep(0.02)
    evolve_commit(agent, {SKILL: skill_text("x").encode()}, "reflect(demo): x")
    assert git_out(agent.path, "diff", "--name-only") == "notes.md"  # git sees the second save
    git(agent.path, "commit", "-q", "-a", "--no-verify", "-m", "draft 2")
    assert git_out(agent.path, "show", "HEAD:notes.md") == "draft 2"
