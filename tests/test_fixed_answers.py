"""What git prints about a commit is asked once per Repo, unless the repository rewrites history.

`fixed.asked_once` keeps `git log` / `git ls-tree` answers keyed on a full commit id; replace
refs, grafts and a shallow boundary change what git prints for the same id, so with any of
them evolve asks again.
"""

from __future__ import annotations

import subprocess
import tracemalloc

from evolve.store import git as git_module
from evolve.store.fixed import asked_once
from evolve.store.repo import Repo
from tests.helpers import EVOLVE, evolve_commit, git, git_out, make_agent


def _counting(monkeypatch) -> list:
    spawned: list = []
    real = subprocess.run
    monkeypatch.setattr(git_module.subprocess, "run", lambda *a, **k: spawned.append(a) or real(*a, **k))
    return spawned


def test_the_history_of_a_tip_is_asked_once_and_parsed_afresh(monkeypatch):
    agent = make_agent("fx")
    evolve_commit(agent, {"memo.md": b"# one\n"})
    repo = Repo(agent.path)
    first = repo.log()
    spawned = _counting(monkeypatch)
    again = repo.log()
    assert spawned == []
    assert [c.sha for c in again] == [c.sha for c in first] and again is not first
    again.clear()  # a caller's list is its own
    assert len(repo.log()) == len(first)
    assert repo.tree_entries(first[0].sha) == repo.tree_entries(first[0].sha)
    assert len(spawned) == 1  # the ls-tree, once


def test_a_new_tip_is_asked_anew():
    agent = make_agent("fx")
    repo = Repo(agent.path)
    before = repo.log()
    evolve_commit(agent, {"memo.md": b"# two\n"})
    assert len(repo.log()) == len(before) + 1


def test_a_replace_ref_made_meanwhile_is_seen():
    agent = make_agent("fx")
    evolve_commit(agent, {"memo.md": b"# one\n"})
    repo = Repo(agent.path)
    tip = repo.tip()
    assert repo.log()[0].subject.startswith("reflect(")
    other = repo.build_commit(f"{tip}^", {}, "a replacement", EVOLVE.env())
    git(agent.path, "replace", tip, other)
    assert repo.log(tip)[0].subject == "a replacement" == git_out(agent.path, "log", "-1", "--format=%s", tip)


def test_a_graft_or_shallow_boundary_made_meanwhile_is_seen(tmp_path):
    agent = make_agent("fx")
    evolve_commit(agent, {"memo.md": b"# one\n"})
    repo = Repo(agent.path)
    tip = repo.tip()
    assert len(repo.log(tip)) == 2
    (agent.path / ".git" / "shallow").write_text(tip + "\n")  # what `git fetch --depth 1` writes
    assert len(repo.log(tip)) == 1 == len(git_out(agent.path, "log", "--format=%H", tip).split())


def test_a_replace_ref_in_the_folder_commondir_names_is_seen(tmp_path):
    """Git reads refs (replace refs too), grafts and shallow from the folder `.git/commondir` names."""
    agent = make_agent("fx")
    evolve_commit(agent, {"memo.md": b"# one\n"})
    repo = Repo(agent.path)
    tip = repo.tip()
    assert repo.log(tip)[0].subject.startswith("reflect(")
    other = repo.build_commit(f"{tip}^", {}, "a replacement", EVOLVE.env())
    common = tmp_path / "common.git"
    subprocess.run(["cp", "-a", str(agent.path / ".git"), str(common)], check=True)
    git(agent.path, f"--git-dir={common}", "replace", tip, other)
    (agent.path / ".git" / "commondir").write_text(f"{common}\n")
    assert repo.log(tip)[0].subject == "a replacement" == git_out(agent.path, "log", "-1", "--format=%s", tip)


def _mktree(path, listing: str) -> str:
    return git(path, "mktree", input=listing).stdout.strip()


def test_whole_tree_listings_kept_stay_bounded_in_bytes():
    """A watcher's Repo keeps what it read: big trees' listings (11 MB for 100,000 files) must not pile up.

    Kept parsed (tuples of strings: ~2.7 times the listing's bytes), measured in memory.
    """
    agent = make_agent("fx")
    repo = Repo(agent.path)
    blob = git_out(agent.path, "hash-object", "-w", "--stdin")
    folder = _mktree(agent.path, "".join(f"100644 blob {blob}\tlesson-{n:03d}.md\n" for n in range(100)))
    root = _mktree(agent.path, "".join(f"040000 tree {folder}\tskill-{n:04d}\n" for n in range(100)))
    skills = _mktree(
        agent.path, f"040000 tree {root}\tskills\n"
    )  # 10,000 files: 0.85 MB listed, 2.5 MB parsed
    commits = [git_out(agent.path, "commit-tree", skills, "-m", f"tree {n}") for n in range(9)]
    tracemalloc.start()
    try:
        for sha in commits:
            assert len(repo.tree_entries(sha, ["skills/skill-0001"])) == 100
        kept, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept <= 8 << 20, kept


def test_an_answer_git_gave_while_a_shallow_boundary_was_made_is_not_kept():
    """A fetch --depth 1 between the check and git's answer, then --unshallow: it answered the cut history."""
    agent = make_agent("fx")
    evolve_commit(agent, {"memo.md": b"# one\n"})
    repo = Repo(agent.path)
    tip = repo.tip()
    shallow = agent.path / ".git" / "shallow"

    def cut_meanwhile() -> bytes:
        shallow.write_text(tip + "\n")  # what `git fetch --depth 1` writes
        return repo.git("rev-list", "--count", tip)

    assert asked_once(repo, tip, ("count",), cut_meanwhile) == b"1\n"
    shallow.unlink()  # what `git fetch --unshallow` does
    count = asked_once(repo, tip, ("count",), lambda: repo.git("rev-list", "--count", tip))
    assert count.decode().strip() == git_out(agent.path, "rev-list", "--count", tip) == "2"
