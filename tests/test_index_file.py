"""Reading git's index file instead of asking git: only where the answer cannot differ.

`indexfile.plain_entries` lets evolve skip `git ls-files -v` and `git diff --cached`; each
index state git can be left in by a person must either parse as plain or send evolve back
to git, and what evolve then answers must be what git answers.
"""

from __future__ import annotations

import subprocess

import pytest

from evolve.store import commit as commit_module
from evolve.store import git as git_module
from evolve.store import indexfile
from evolve.store.repo import Repo
from tests.helpers import EVOLVE, commit_all, evolve_commit, git, git_out, make_agent


@pytest.fixture
def agent():
    return make_agent("ix")


def _diff_cached(agent) -> set[str]:
    return set(git_out(agent.path, "diff", "--cached", "--name-only", "-z").split("\0")) - {""}


def test_a_fresh_agent_index_is_plain(agent):
    assert indexfile.plain_entries(agent.repo.git_dir)


@pytest.mark.parametrize(
    "move",
    [
        ["update-index", "--assume-unchanged", "memo.md"],
        ["update-index", "--skip-worktree", "memo.md"],
        ["update-index", "--index-version", "4"],
        ["update-index", "--split-index"],
    ],
)
def test_a_flagged_entry_another_version_or_a_split_index_is_not_plain(agent, move):
    git(agent.path, *move)
    assert not indexfile.plain_entries(agent.repo.git_dir)


def test_an_intent_to_add_entry_is_not_plain(agent):
    (agent.path / "notes.md").write_text("later\n")
    git(agent.path, "add", "-N", "notes.md")
    assert not indexfile.plain_entries(agent.repo.git_dir)


def test_names_of_every_length_parse_to_the_end(agent):
    """A name of 0xFFF bytes or more is measured to its NUL; the index still parses as plain."""
    blob = git_out(agent.path, "hash-object", "-w", "--stdin")  # the empty blob: no file on disk needed
    long_name = "/".join(["d" * 200] * 21) + "/f.md"
    assert len(long_name) > 0xFFF
    git(agent.path, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long_name}")
    git(agent.path, "update-index", "--add", "--cacheinfo", f"100644,{blob},zz.md")  # after the long name
    assert indexfile.plain_entries(agent.repo.git_dir)
    git(agent.path, "update-index", "--assume-unchanged", "zz.md")
    assert not indexfile.plain_entries(agent.repo.git_dir)


def test_a_truncated_or_missing_index_is_not_plain(agent):
    index = agent.repo.git_dir / "index"
    index.write_bytes(index.read_bytes()[:40])
    assert not indexfile.plain_entries(agent.repo.git_dir)
    index.unlink()
    assert not indexfile.plain_entries(agent.repo.git_dir)


def test_a_sha256_repository_or_a_wrong_trailer_is_not_plain(tmp_path):
    """Entries of a SHA-256 repository hold 32-byte ids: read as SHA-1 ones, a flag would be missed."""
    path = tmp_path / "wide"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(path))
    for name in ("a.md", "b.md", "c.md"):
        (path / name).write_text(name)
    git(path, "add", ".")
    git(path, "update-index", "--assume-unchanged", "b.md")
    assert not indexfile.plain_entries(path / ".git")
    git(path, "update-index", "--no-assume-unchanged", "b.md")
    assert not indexfile.plain_entries(path / ".git")  # unsure, so git is asked
    plain = tmp_path / "plain"
    git(tmp_path, "init", "-q", str(plain))
    (plain / "a.md").write_text("a")
    git(plain, "add", ".")
    data = (plain / ".git" / "index").read_bytes()
    assert indexfile.plain_data(data)
    assert not indexfile.plain_data(data[:-1] + bytes([data[-1] ^ 1]))


def test_nothing_staged_is_answered_without_git(agent, monkeypatch):
    agent.repo.busy_reason()  # the lock's check: the index compared with the tip once
    spawned = []
    real = subprocess.run
    monkeypatch.setattr(git_module.subprocess, "run", lambda *a, **k: spawned.append(a) or real(*a, **k))
    assert agent.repo.staged_against_head() == set()
    assert spawned == []


def test_staged_against_head_is_what_git_diff_cached_lists(agent):
    repo = agent.repo
    assert repo.staged_against_head() == _diff_cached(agent) == set()
    (agent.path / "memo.md").write_text("# staged\n")
    git(agent.path, "add", "memo.md")
    assert repo.staged_against_head() == _diff_cached(agent) == {"memo.md"}


def test_an_empty_file_unstaged_then_intent_to_add_is_listed_as_git_lists_it(agent):
    """`git diff-index` sees no change there (same empty blob); `git diff --cached` hides the entry."""
    (agent.path / "empty.md").write_bytes(b"")
    commit_all(agent.path, "an empty file")
    git(agent.path, "rm", "-q", "--cached", "empty.md")
    git(agent.path, "add", "-N", "empty.md")
    assert agent.repo.staged_paths() == set()  # what the lock's check compares
    assert agent.repo.staged_against_head() == _diff_cached(agent) == {"empty.md"}


def test_a_commit_built_on_one_this_process_made_has_the_tree_read_tree_gives(agent):
    first = evolve_commit(agent, {"memo.md": b"# one\n", "skills/s/SKILL.md": b"s\n"})
    second = evolve_commit(agent, {"memo.md": None, "skills/t/SKILL.md": b"t\n"})
    assert git_out(agent.path, "rev-parse", f"{second}^") == first
    listed = git_out(agent.path, "ls-tree", "-r", "--name-only", second).splitlines()
    expected = {p for p in git_out(agent.path, "ls-tree", "-r", "--name-only", first).splitlines()}
    assert set(listed) == (expected - {"memo.md"}) | {"skills/t/SKILL.md"}
    git(agent.path, "fsck", "--strict")


def test_a_split_index_is_never_carried_to_another_repository(agent, tmp_path):
    """The scratch index of a repository with `core.splitIndex` names a `sharedindex` file of its own."""
    git(agent.path, "config", "core.splitIndex", "true")
    made = evolve_commit(agent, {"memo.md": b"# split\n"})
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(agent.path), str(other))
    assert not list((other / ".git").glob("sharedindex.*"))
    blob = git(other, "hash-object", "-w", "--stdin", input="notes\n").stdout.strip()
    built = Repo(other).build_commit(made, {"notes.md": ("100644", blob)}, "on the clone", EVOLVE.env())
    assert git_out(other, "ls-tree", "--name-only", built, "notes.md") == "notes.md"
    git(other, "fsck", "--strict")


def _spawned(monkeypatch) -> list:
    spawned: list = []
    real = subprocess.run
    monkeypatch.setattr(git_module.subprocess, "run", lambda *a, **k: spawned.append(a) or real(*a, **k))
    return spawned


def test_after_its_own_commit_evolve_knows_nothing_is_staged_without_asking(agent, monkeypatch):
    repo = agent.repo
    with repo.locked():
        repo.commit_changes({"memo.md": b"# mine\n"}, "one", EVOLVE)
    spawned = _spawned(monkeypatch)
    assert repo.staged_paths() == set()
    assert spawned == []
    monkeypatch.undo()
    assert git_out(agent.path, "diff-index", "--cached", "--name-only", "HEAD") == ""


def test_a_file_staged_after_the_locks_check_is_still_seen_after_evolve_commits(agent):
    """What evolve knew of the index (nothing staged) outlives its commit only if the index is unchanged."""
    repo = agent.repo
    with repo.locked():  # the check: nothing staged
        (agent.path / "notes.md").write_text("the person's\n")
        git(agent.path, "add", "notes.md")
        (agent.path / "memo.md").write_text("# edited\n")
        repo.commit_changes({"memo.md": b"# edited\n"}, "the person's edit", EVOLVE, write_worktree=False)
    assert repo.staged_paths() == {"notes.md"}


def _fresh_process(monkeypatch) -> None:
    """No commit this process made is remembered (a new `evolve` process)."""
    monkeypatch.setattr(commit_module, "_BUILT", {})


def test_a_clean_index_starts_the_commit_without_read_tree(agent, monkeypatch):
    _fresh_process(monkeypatch)
    spawned = _spawned(monkeypatch)
    sha = evolve_commit(agent, {"skills/s/SKILL.md": b"s\n"})
    assert not [a for a in spawned if "read-tree" in a[0]]
    monkeypatch.undo()
    listed = set(git_out(agent.path, "ls-tree", "-r", "--name-only", sha).splitlines())
    assert listed == set(git_out(agent.path, "ls-files").splitlines()) | {"skills/s/SKILL.md"}
    git(agent.path, "fsck", "--strict")


def test_an_intent_to_add_entry_never_drops_a_file_from_evolves_commit(agent, monkeypatch):
    """write-tree leaves an intent-to-add entry out, and diff-index may not show it: read-tree then."""
    (agent.path / "empty.md").write_bytes(b"")
    commit_all(agent.path, "an empty file")
    git(agent.path, "rm", "-q", "--cached", "empty.md")
    git(agent.path, "add", "-N", "empty.md")
    _fresh_process(monkeypatch)
    sha = evolve_commit(agent, {"memo.md": b"# kept\n"})
    assert "empty.md" in git_out(agent.path, "ls-tree", "--name-only", sha).splitlines()
