"""A merge's conflict markers that another machine pushed past its hook (`--no-verify`).

A careless second machine resolves nothing, commits the conflicted memo or skill with
`git commit --no-verify` and pushes. Every reader here refuses such a file (the session
leaves the memo out, reflection holds), so a sync that took it would stop this machine's
agent for everyone's mistake: the server's main is held with one line instead, by this
machine's attributes of each file (its `.git/info/attributes` too). A server tree that
brings a `.gitattributes` of its own (shorter markers) is refused whole, before anything
is read by its rules.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import skill_text
from tests.sync_helpers import STRATEGIES, Clone, memo_op


def conflicted_push(
    clone: Clone, path: str, text: str, size: int | None = None, style: str = "merge"
) -> None:
    """Two branches change `path`'s line; the merge conflicts and is committed as is, then pushed."""
    target = clone.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if size is not None:
        info = clone.path / ".git/info/attributes"
        info.parent.mkdir(parents=True, exist_ok=True)
        info.write_text(f"* conflict-marker-size={size}\n")  # that machine's own setting, not committed
    clone.git("config", "merge.conflictStyle", style)
    target.write_text(text + "- deploy with make deploy\n")
    clone.git("add", "-A")
    clone.git("commit", "-qm", "base")
    clone.git("switch", "-qc", "side")
    target.write_text(text + "- deploy with make deploy ENV=staging\n")
    clone.git("commit", "-qam", "side")
    clone.git("switch", "-q", "main")
    target.write_text(text + "- deploy with make deploy ENV=prod\n")
    clone.git("commit", "-qam", "main")
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=clone.path, capture_output=True).returncode != 0
    clone.git("commit", "-qam", "merged", "--no-verify")
    clone.git("push", "-q", "origin", "main")


@pytest.mark.parametrize(
    ("path", "size", "style"),
    [
        ("memo.md", None, "merge"),
        ("memo.md", 9, "diff3"),
        ("skills/deploy/SKILL.md", None, "diff3"),
        ("skills/deploy/SKILL.md", 12, "merge"),
    ],
)
def test_markers_pushed_past_the_hook_are_held_not_taken(machines, git_daemon, tmp_path, path, size, style):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    clone = Clone(tmp_path / "careless", git_daemon.url())
    start = (
        (clone.path / "memo.md").read_text() if path == "memo.md" else skill_text("deploy", body="# Deploy\n")
    )
    conflicted_push(clone, path, start, size, style)
    main = a.head()
    code, out = a.sync()
    assert code == 1 and out.count("\n") == 1 and f"{path} holds merge conflict markers" in out, out
    assert a.head() == main and "ENV=prod" not in a.ok("prompt", "a")
    code, out, _ = a.evolve("status")
    assert f"{path} holds merge conflict markers" in out, out
    a.fsck()


def test_short_markers_by_this_machines_own_attributes_are_held(machines, git_daemon, tmp_path):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    (a.path / ".git/info/attributes").write_text("memo.md conflict-marker-size=4\n")
    clone = Clone(tmp_path / "careless", git_daemon.url())
    conflicted_push(clone, "memo.md", (clone.path / "memo.md").read_text(), size=4)
    assert "\n<<<< HEAD\n" in (clone.path / "memo.md").read_text()
    main = a.head()
    code, out = a.sync()
    assert code == 1 and "memo.md holds merge conflict markers" in out, out
    assert a.head() == main


def test_short_marker_lines_are_text_where_no_attribute_here_says_otherwise(machines, git_daemon, tmp_path):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    clone = Clone(tmp_path / "team", git_daemon.url())
    memo = clone.path / "memo.md"
    quoted = "- A session printed:\n\n<<<< ours\n====\n>>>> theirs\n"
    memo.write_text(memo.read_text().replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n{quoted}"))
    clone.git("commit", "-qam", "a quoted tool output")
    clone.git("push", "-q", "origin", "main")
    code, out = a.sync()
    assert code == 0, out
    assert ">>>> theirs" in a.read("memo.md")


def test_a_server_gitattributes_with_short_markers_is_refused_in_one_line(machines, git_daemon, tmp_path):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    a.reflect(memo_op("strategies", "- a lesson of this machine's"))  # a replan would be needed
    clone = Clone(tmp_path / "careless", git_daemon.url())
    (clone.path / ".gitattributes").write_text("memo.md conflict-marker-size=4\n")
    clone.git("add", ".gitattributes")
    clone.git("commit", "-qm", "shorter markers")
    conflicted_push(clone, "memo.md", (clone.path / "memo.md").read_text())
    main = a.head()
    code, out = a.sync()
    assert code == 1 and out.count("\n") == 1 and "'.gitattributes'" in out, out
    assert a.head() == main and "ENV=prod" not in a.read("memo.md")


def test_a_conflicting_reflection_is_not_planned_onto_a_memo_taken_with_its_markers(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    clone = Clone(tmp_path / "careless", git_daemon.url())
    conflicted_push(clone, "memo.md", (clone.path / "memo.md").read_text())
    a.reflect(memo_op("strategies", "- a lesson of this machine's"))
    code, out = a.sync()
    assert code == 1 and "memo.md holds merge conflict markers" in out, out
    code, out = a.sync("--accept-held", "a")  # the person takes it as it is, to resolve it here
    assert code == 0, out
    tip_memo = a.out("show", "HEAD:memo.md")
    assert "\n=======\n" in tip_memo and "a lesson of this machine's" not in tip_memo  # not in their conflict
    (proposal,) = a.agent.repo.branches("proposals/")  # the lesson waits for a person, not lost
    assert "a lesson of this machine's" in a.out("show", f"{proposal}:memo.md")


def test_a_gitattributes_this_machine_committed_is_never_pushed_to_stop_the_others(machines, git_daemon):
    # every other machine refuses a server main holding it (check_tree): pushed, it stopped their syncs
    a, b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    a.write(".gitattributes", "memo.md conflict-marker-size=4\n")
    a.person_rule("- a rule typed with it")
    server = git_daemon.git("agent", "rev-parse", "main")
    code, out = a.sync()
    assert (
        code == 1 and out.count("\n") == 1 and "'.gitattributes'" in out and ".git/info/attributes" in out
    ), out
    assert git_daemon.git("agent", "rev-parse", "main") == server  # nothing pushed
    with (a.path / ".git/info/attributes").open("a") as info:
        info.write(a.read(".gitattributes"))
    a.git("rm", "-q", ".gitattributes")
    a.git("commit", "-qm", "the attribute stays mine")
    code, out = a.sync()
    assert code == 0, out
    code, out = b.sync()
    assert code == 0, out
    assert "a rule typed with it" in b.read("memo.md")


def test_a_gitmodules_an_amend_brought_is_held_with_a_remedy_for_it_not_for_attributes(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    a.person_rule("- a rule typed with it")
    a.write(".gitmodules", '[submodule "x"]\n\tpath = x\n\turl = https://example.invalid/x\n')
    a.git("add", ".gitmodules")
    a.git("commit", "-q", "--amend", "--no-edit", "--no-verify")
    server = git_daemon.git("agent", "rev-parse", "main")
    code, out = a.sync()
    assert code == 1 and out.count("\n") == 1 and "'.gitmodules'" in out and "git rm .gitmodules" in out, out
    assert "attributes" not in out, out  # a submodule's settings have no place in .git/info/attributes
    assert git_daemon.git("agent", "rev-parse", "main") == server
