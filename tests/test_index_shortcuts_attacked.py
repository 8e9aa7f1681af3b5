"""What an attack on stop 33's git-process savings found: each shortcut must give git's answer.

A staged submodule that `.gitmodules` tells diffs to ignore, a replace ref on evolve's own
last commit, a SHA-256 repository whose index this reader would misparse: in each, evolve
commits exactly what it did when it asked git every time.
"""

from __future__ import annotations

from pathlib import Path

from evolve.home import Home
from evolve.store import commit as commit_module
from evolve.store.repo import Repo
from evolve.workspace.agent import Agent
from tests.helpers import EVOLVE, commit_all, evolve_commit, git, git_out, make_agent, run_cli


def staged_submodule_bump(tmp_path: Path) -> tuple[Agent, str]:
    """An agent whose submodule `vendor` diffs ignore (`ignore = all`), its update staged by the person.

    Returns the agent and the submodule commit its tip holds.
    """
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q")
    git(sub, "commit", "-q", "--allow-empty", "-m", "s1")
    first = git_out(sub, "rev-parse", "HEAD")
    git(sub, "commit", "-q", "--allow-empty", "-m", "s2")
    agent = make_agent("sm")
    (agent.path / ".gitmodules").write_text(
        f'[submodule "vendor"]\n\tpath = vendor\n\turl = {sub}\n\tignore = all\n'
    )
    git(agent.path, "clone", "-q", str(sub), "vendor")
    git(agent.path / "vendor", "checkout", "-q", first)
    commit_all(agent.path, "a submodule")
    git(agent.path / "vendor", "checkout", "-q", "main")
    git(agent.path, "add", "vendor")  # the person's coming commit
    return agent, first


def test_a_staged_submodule_bump_diffs_ignore_stays_the_persons(tmp_path):
    agent, first = staged_submodule_bump(tmp_path)
    fresh = Repo(agent.path)  # a new process: nothing it built itself to start from
    commit_module._BUILT.clear()
    with fresh.locked():
        sha = fresh.commit_changes({"memo.md": b"# a lesson\n"}, "reflect(sm): a lesson", EVOLVE)
    assert git_out(agent.path, "ls-tree", sha, "vendor").split()[2] == first
    assert git_out(agent.path, "diff", "--cached", "--name-only", "--ignore-submodules=none") == "vendor"


def test_a_replace_ref_on_evolves_last_commit_is_honoured_by_the_next(tmp_path):
    agent = make_agent("rp")
    last = evolve_commit(agent, {"memo.md": b"# one\n"})
    blob = git(agent.path, "hash-object", "-w", "--stdin", input="# replaced\n").stdout.strip()
    replacement = agent.repo.build_commit(
        f"{last}^", {"memo.md": ("100644", blob)}, "a replacement", EVOLVE.env()
    )
    git(agent.path, "replace", last, replacement)
    built = evolve_commit(agent, {"skills/s/SKILL.md": b"s\n"})  # the same process: it built `last`
    assert (
        git_out(agent.path, "diff", "--name-only", last, built) == "skills/s/SKILL.md"
    )  # as read-tree gives


def test_a_persons_edit_to_an_assume_unchanged_memo_in_a_sha256_agent_is_committed_as_theirs(tmp_path):
    """File contents whose SHA-256 index, read with 20-byte ids, parsed as plain (found by search)."""
    server = tmp_path / "server"
    server.mkdir()
    git(server, "init", "-q", "--object-format=sha256", "-b", "main")
    (server / "agent.toml").write_text('name = "x"\n# 283\n')
    (server / "memo.md").write_text("# Memo\n\n- keep answers short 377\n")
    git(server, "add", "-A")
    git(server, "commit", "-q", "-m", "agent")
    joined = run_cli("init", "joined", "--from", str(server))
    assert joined.returncode == 0, joined.stderr
    path = Home.resolve(None).root / "agents" / "joined"
    git(path, "update-index", "--assume-unchanged", "memo.md")
    (path / "memo.md").write_text("# Memo\n\n- my private note\n")
    assert Repo(path).dirty_paths() == ["memo.md"]  # as `git ls-files -v` shows it: flagged, edited


def test_a_persons_edit_committed_beside_a_staged_submodule_keeps_the_submodule(tmp_path):
    """Found by the same attack, older than it: the commit of a person's edits deleted the gitlink."""
    agent, first = staged_submodule_bump(tmp_path)
    (agent.path / "memo.md").write_text("# my own edit\n")
    sha = agent.commit_human_edits()
    assert sha is not None and git_out(agent.path, "show", f"{sha}:memo.md") == "# my own edit"
    assert git_out(agent.path, "ls-tree", sha, "vendor").split()[2] == first
    assert git_out(agent.path, "diff", "--cached", "--name-only", "--ignore-submodules=none") == "vendor"
