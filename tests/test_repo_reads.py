"""What Repo answers from `.git` files and remembers, against what git itself answers."""

from __future__ import annotations

from evolve.store import repo as repo_mod
from tests.helpers import EVOLVE, evolve_commit, git, git_out, make_agent


def counting(monkeypatch) -> list[tuple[str, ...]]:
    """Every git command Repo runs from now on (its arguments)."""
    calls: list[tuple[str, ...]] = []
    real = repo_mod.git

    def spy(cwd, *args, **kwargs):
        calls.append(args)
        return real(cwd, *args, **kwargs)

    monkeypatch.setattr(repo_mod, "git", spy)
    return calls


def test_a_branch_that_does_not_exist_is_no_git_process_and_git_agrees(monkeypatch):
    agent = make_agent()
    repo = agent.repo
    tip = git_out(repo.path, "rev-parse", "HEAD")
    git(repo.path, "branch", "packed")
    git(repo.path, "pack-refs", "--all")
    calls = counting(monkeypatch)
    assert (repo.tip("proposals/none"), repo.tip("main"), repo.tip("packed")) == (None, tip, tip)
    assert calls == []
    # a tag whose name git also tries for refs/heads/<name>: git is asked, and answers with it
    git(repo.path, "tag", "refs/heads/ghost", "HEAD")
    assert repo.tip("ghost") == tip
    assert calls and calls[-1][0] == "rev-parse"


def test_what_is_staged_is_asked_again_once_the_index_or_the_tip_changes(monkeypatch):
    agent = make_agent()
    repo = agent.repo
    calls = counting(monkeypatch)
    assert repo.staged_paths() == set() and repo.staged_paths() == set() and not repo.behind()
    assert [c[0] for c in calls] == ["diff-index"]
    (repo.path / "memo.md").write_text("staged\n")
    git(repo.path, "add", "memo.md")
    assert repo.staged_paths() == {"memo.md"} and repo.busy_reason(["memo.md"]) is not None
    git(repo.path, "commit", "-q", "--no-verify", "-m", "mine")
    assert repo.staged_paths() == set()
    git(repo.path, "rm", "-q", "--cached", "memo.md")
    assert repo.staged_paths() == {"memo.md"}
    assert [c[0] for c in calls].count("diff-index") == 4


def test_unmerged_paths_are_seen_through_the_same_comparison(monkeypatch):
    agent = make_agent()
    repo = agent.repo
    base = git_out(repo.path, "rev-parse", "HEAD")
    evolve_commit(agent, {"notes.md": b"evolve\n"})
    git(repo.path, "checkout", "-q", "-b", "side", base)
    (repo.path / "notes.md").write_text("person\n")
    git(repo.path, "add", "notes.md")
    git(repo.path, "commit", "-q", "--no-verify", "-m", "side")
    git(repo.path, "checkout", "-q", "main")
    assert git(repo.path, "merge", "side", check=False).returncode != 0
    (repo.git_dir / "MERGE_HEAD").unlink()  # the merge's state gone, its conflict still in the index
    assert git_out(repo.path, "ls-files", "--unmerged")
    assert repo.operation_in_progress() == "unmerged paths"
    git(repo.path, "reset", "-q", "--hard")
    assert repo.operation_in_progress() is None


def test_blobs_of_a_commit_of_several_files_are_git_s_own(monkeypatch):
    agent = make_agent()
    files = {"a.md": b"one\r\n", "b/c.md": b"\x00binary", "d.md": b""}
    with agent.repo.locked():
        sha = agent.repo.commit_changes(files, "several", EVOLVE)
    stored = agent.repo.read_blobs([f"{sha}:{path}" for path in files])
    assert stored == {f"{sha}:{path}": data for path, data in files.items()}
    assert [(p, (agent.path / p).read_bytes()) for p in files] == list(files.items())
    assert git(agent.path, "fsck", "--strict", "--no-dangling").returncode == 0
