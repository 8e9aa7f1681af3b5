"""What Repo answers from `.git` files and remembers, against what git itself answers."""

from __future__ import annotations

import os
import time

from evolve.store import fixed, trees
from evolve.store import repo as repo_mod
from evolve.store.repo import Repo
from tests import helpers
from tests.helpers import EVOLVE, evolve_commit, git, git_out, make_agent, write_skill

agent = helpers.agent  # the fixture: agent "demo" in the test's home


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


FILES = {
    "skills/x/SKILL.md": b"x\n",
    "skills2/y.md": b"y\n",
    "skills-z.md": b"z\n",
    "memo.md": b"m\n",
    "a/b.md": b"b\n",
    "a.md": b"a\n",
    "a*": b"*\n",
}
ASKED = (
    ["skills"],
    ["skills/"],
    ["memo.md"],
    ["memo.md/"],
    ["a*"],
    ["a"],
    ["sk"],
    ["memo.md", "a/b.md"],
    ["skills", "skills/x"],
    [],
)


def lists_as_git_does(repo: Repo, sha: str, paths: list[str]) -> bool:
    listed = git_out(repo.path, "ls-tree", "-r", "-z", "--name-only", "--full-tree", sha, "--", *paths)
    return list(repo.tree_entries(sha, paths)) == sorted(filter(None, listed.split("\0")))


def test_a_commits_files_under_paths_are_those_ls_tree_lists_from_one_listing_parsed_once(monkeypatch):
    # a sync reads one commit's tree for several sets of paths: one ls-tree, filtered as git filters
    agent = make_agent()
    with agent.repo.locked():
        sha = agent.repo.commit_changes(FILES, "several", EVOLVE)
    calls = counting(monkeypatch)
    parses = []
    parse = trees._parsed
    monkeypatch.setattr(trees, "_parsed", lambda out: parses.append(out) or parse(out))
    assert agent.repo.refused_in_tree(sha) is None
    for paths in ASKED:
        assert lists_as_git_does(agent.repo, sha, paths), paths
    assert [call[0] for call in calls] == ["ls-tree"]
    assert len(parses) == 1  # 0.17 s a time for 100,000 files


def test_a_tree_too_big_to_keep_is_asked_for_the_paths_alone_after_the_first_listing(monkeypatch):
    # a tree of 100,000 files lists 11 MB, over what a Repo keeps: listed whole for each call before
    agent = make_agent()
    with agent.repo.locked():
        sha = agent.repo.commit_changes(FILES, "several", EVOLVE)
    monkeypatch.setattr(fixed, "_KEPT_BYTES", 100)
    repo = Repo(agent.path)
    calls = counting(monkeypatch)
    for paths in ASKED:
        assert lists_as_git_does(repo, sha, paths), paths
    whole = ("ls-tree", "-r", "-z", "--full-tree", sha)
    assert calls == [whole] + [(*whole, "--", *paths) for paths in ASKED[1:-1]] + [whole]


def test_dirty_paths_lists_untracked_and_modified(agent):
    (agent.path / "memo.md").write_text("changed\n")
    write_skill(agent.path, "new-one")
    assert agent.repo.dirty_paths() == ["memo.md", "skills/new-one/SKILL.md"]


def test_dirty_paths_is_one_git_process_and_an_unborn_branch_has_none(agent, tmp_path, monkeypatch):
    # the watcher asks it of every agent at each rescan's sync: one `git status`, nothing else
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    (agent.path / "memo.md").write_text("changed\n")
    assert agent.repo.dirty_paths() == ["memo.md"]
    assert agent.repo.dirty_paths() == ["memo.md"]
    assert trace.read_text().count("trace: built-in: git status") == 2
    assert " rev-parse " not in trace.read_text()
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", "-b", "main", str(unborn))
    (unborn / "memo.md").write_text("- a line\n")
    assert Repo(unborn).dirty_paths() == []


def test_a_remotes_url_is_read_once_per_change_of_the_config(agent, tmp_path, monkeypatch):
    # the watcher asks it of every agent at each rescan: git runs again only when .git/config changed
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    config = agent.path / ".git" / "config"
    asked = lambda: trace.read_text().count("built-in: git config --get remote.origin.url")  # noqa: E731
    git(agent.path, "remote", "add", "origin", "https://example.invalid/a.git")
    assert agent.repo.remote_url() == agent.repo.remote_url() == "https://example.invalid/a.git"
    assert asked() == 2  # just written: another write in the same clock tick could look the same
    old = time.time() - 60
    os.utime(config, (old, old))  # settled
    assert agent.repo.remote_url() == Repo(agent.path).remote_url() == "https://example.invalid/a.git"
    assert asked() == 3
    git(agent.path, "remote", "set-url", "origin", "https://example.invalid/b.git")  # same length
    assert agent.repo.remote_url() == "https://example.invalid/b.git"
    git(agent.path, "config", "--unset", "remote.origin.url")
    assert agent.repo.remote_url() is None


def test_a_remotes_url_from_a_file_the_config_includes_is_asked_each_time(agent, tmp_path):
    # the person keeps their remotes in a file of their own: a change there leaves .git/config as it was
    included = tmp_path / "remotes.inc"
    included.write_text('[remote "origin"]\n\turl = https://example.invalid/a.git\n')
    git(agent.path, "config", "include.path", str(included))
    old = time.time() - 60
    os.utime(agent.path / ".git" / "config", (old, old))  # settled
    assert agent.repo.remote_url() == "https://example.invalid/a.git"
    included.write_text('[remote "origin"]\n\turl = https://example.invalid/b.git\n')
    assert (
        agent.repo.remote_url()
        == "https://example.invalid/b.git"
        == git_out(agent.path, "remote", "get-url", "origin")
    )
    git(agent.path, "config", "--unset", "include.path")
    git(agent.path, "config", "extensions.worktreeConfig", "true")  # .git/config.worktree is read too
    git(agent.path, "config", "--worktree", "remote.origin.url", "https://example.invalid/c.git")
    os.utime(agent.path / ".git" / "config", (old, old))
    assert agent.repo.remote_url() == "https://example.invalid/c.git"
    git(agent.path, "config", "--worktree", "remote.origin.url", "https://example.invalid/d.git")
    assert agent.repo.remote_url() == "https://example.invalid/d.git"


def test_the_tip_is_what_git_names_whether_the_ref_is_loose_packed_symbolic_or_gone(agent):
    repo = agent.repo
    sha = git_out(agent.path, "rev-parse", "main")
    assert repo.tip() == sha  # its loose file
    git(agent.path, "pack-refs", "--all")
    assert not (agent.path / ".git" / "refs" / "heads" / "main").exists() and repo.tip() == sha  # packed
    git(agent.path, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    assert repo.tip("alias") == sha  # a symbolic ref: git resolves it
    git(agent.path, "branch", "gone")
    git(agent.path, "pack-refs", "--all")
    git(agent.path, "branch", "-D", "gone")
    assert repo.tip("gone") is None and repo.tip("never") is None


def test_the_branch_checked_out_is_read_from_head_as_git_names_it(agent):
    repo = agent.repo
    assert repo.current_branch() == "main"
    git(agent.path, "switch", "-q", "-c", "person/idea")
    assert repo.current_branch() == "person/idea" == git_out(agent.path, "branch", "--show-current")
    git(agent.path, "switch", "-q", "--detach", "main")
    assert repo.current_branch() is None and repo.checked_out_elsewhere() == "a detached HEAD"


def test_a_tree_too_big_to_keep_is_read_for_any_paths_a_commit_can_name(monkeypatch):
    """The paths alone went to ls-tree as pathspecs: a file named `:!a` stopped it (fatal).

    And a sync's thousands of changed paths passed the kernel's bound on arguments (E2BIG).
    """
    agent = make_agent()
    folder = "skills/a-skill-whose-name-says-at-length-what-it-does-" + "and-why-" * 20
    many = {f"{folder}{n:05d}/SKILL.md": b"s\n" for n in range(12_000)}  # 3 MB of paths
    odd = {":!a": b"1\n", ":(glob)*": b"2\n", "*": b"3\n"}
    with agent.repo.locked():
        sha = agent.repo.commit_changes({**FILES, **odd, **many}, "many", EVOLVE)
    monkeypatch.setattr(fixed, "_KEPT_BYTES", 100)
    repo = Repo(agent.path)
    assert list(repo.tree_entries(sha, ["memo.md"])) == ["memo.md"]  # the whole tree listed once
    for name in odd:
        assert list(repo.tree_entries(sha, [name])) == [name]
    assert list(repo.tree_entries(sha, list(many))) == sorted(many)
