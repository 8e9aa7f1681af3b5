"""Scripted people and git's index: what they staged, and a work tree left behind its branch.

Reproductions of red-team 3 A1: a file a person staged with `git add` was folded into the
reflection's commit (and their line became the model's); a branch moved without its work
tree (`git update-ref`, a commit from a forced second worktree of main) had its older files
committed back as a reflection — or as the person's edit — silently undoing a commit.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from evolve.errors import EXIT_BUSY, Busy
from evolve.home import Home
from evolve.store import ledger
from evolve.watch import humanedits
from tests import people
from tests.helpers import git_out, parsed_trailers, skill_text
from tests.people import SELF, fsck, memo, person, write

agent, ans = people.agent, people.ans  # the people fixtures

PERSON = "Test Person <person@example.test>"  # the conftest's git identity


def _subjects(agent, n: int = 10) -> list[str]:
    return git_out(agent.path, "log", f"-{n}", "--format=%s").splitlines()


def _append(agent, path: str, line: str) -> None:
    target = agent.path / path
    target.write_text(target.read_text() + line + "\n")


def _refused(ans, capsys, *operations: dict) -> str:
    """`evolve reflect a --force` answered with `operations`, expected to stop busy: its stderr."""
    asked = len(ans.api.requests)
    ans.api.reply_tool({"summary": "lessons", "operations": list(operations)})
    code = main(["reflect", "a", "--force"])
    err = capsys.readouterr().err.strip()
    assert code == EXIT_BUSY, err
    assert len(err.splitlines()) == 1, err
    assert len(ans.api.requests) == asked and ans.api.clear() == 1  # stopped before the model was asked
    return err


def _held(capsys) -> dict:
    assert main(["status", "--json"]) == 0
    (found,) = [a for a in json.loads(capsys.readouterr().out)["agents"] if a["name"] == "a"]
    return found


# -- a file the person staged ------------------------------------------------------------------
def test_a_staged_line_is_never_folded_into_a_reflection_and_stays_the_persons(agent, ans, capsys):
    ans(memo("strategies", "- Use pnpm in this repository."), summary="r1")
    tip = git_out(agent.path, "rev-parse", "main")
    _append(agent, "memo.md", "- my staged line for later")
    person(agent, "add", "memo.md")
    err = _refused(ans, capsys, memo("self", "- I forget the linter."))
    assert "memo.md is staged" in err and "commit it" in err
    assert git_out(agent.path, "rev-parse", "main") == tip  # nothing written: no reflection, no edit(a)
    assert git_out(agent.path, "diff", "--cached", "--name-only") == "memo.md"  # still theirs to commit
    assert person(agent, "commit", "-qm", "my line, my message").returncode == 0
    assert _subjects(agent, 1) == ["my line, my message"]
    assert git_out(agent.path, "log", "-1", "--format=%an <%ae>") == PERSON
    code, out = ans(memo("self", "- I forget the linter."), summary="r2")
    assert code == 0 and "landed" in out
    assert "my staged line" not in git_out(agent.path, "show", "HEAD", "--", "memo.md")
    ans(memo("strategies", "- Use pnpm everywhere."), summary="r3")
    assert "- my staged line for later" in agent.memo_text()  # the person's line stays
    kept = parsed_trailers(agent.path).get("Evolve-Kept", "")
    assert kept == "update_memo strategies: kept 1 line(s) a person wrote or chose to keep"
    fsck(agent)


def test_a_staged_file_evolve_does_not_write_stays_staged_and_out_of_the_reflection(agent, ans):
    write(agent, "notes.md", "my notes, staged\n")
    person(agent, "add", "notes.md")
    code, out = ans(memo("self", "- I forget the linter."))
    assert code == 0 and "landed" in out
    assert git_out(agent.path, "show", "--format=", "--name-only", "HEAD") == "memo.md"
    assert git_out(agent.path, "diff", "--cached", "--name-only") == "notes.md"


def test_staged_and_unstaged_edits_the_unstaged_are_committed_as_theirs_the_staged_wait(agent, ans, capsys):
    ans(
        {
            "op": "create_skill",
            "name": "deploy",
            "description": "Use when deploying.",
            "body": "- Build first.\n",
        }
    )
    tip = git_out(agent.path, "rev-parse", "main")
    _append(agent, "memo.md", "- staged, for my own commit")
    person(agent, "add", "memo.md")
    _append(agent, "skills/deploy/SKILL.md", "- Ship on Fridays never.")  # not staged
    assert "memo.md is staged" in _refused(ans, capsys, memo("self", "- I forget the linter."))
    assert git_out(agent.path, "rev-list", "--count", f"{tip}..main") == "1"  # the person's edit alone
    assert _subjects(agent, 1) == ["edit(a): skills/deploy/SKILL.md"]
    assert git_out(agent.path, "log", "-1", "--format=%an <%ae>") == PERSON
    assert parsed_trailers(agent.path)["Evolve-Source"] == "human"
    assert git_out(agent.path, "show", "--format=", "--name-only", "HEAD") == "skills/deploy/SKILL.md"
    assert git_out(agent.path, "diff", "--cached", "--name-only") == "memo.md"
    assert "staged, for my own commit" not in git_out(agent.path, "show", "main:memo.md")


def test_a_file_staged_then_edited_again_is_committed_whole_as_the_persons_edit(agent, ans):
    _append(agent, "memo.md", "- staged first")
    person(agent, "add", "memo.md")
    _append(agent, "memo.md", "- then typed more")
    code, _out = ans(memo("self", "- I forget the linter."))
    assert code == 0
    assert _subjects(agent, 2) == ["reflect(a): lessons", "edit(a): memo.md"]
    edit = git_out(agent.path, "show", "HEAD~1", "--", "memo.md")
    assert "+- staged first" in edit and "+- then typed more" in edit
    assert git_out(agent.path, "log", "-1", "--format=%an <%ae>", "HEAD~1") == PERSON
    assert "+- staged first" not in git_out(agent.path, "show", "HEAD", "--", "memo.md")


def test_evolve_revert_never_writes_over_a_staged_file(agent, ans, capsys):
    data = ans.json(memo("strategies", "- Use pnpm in this repository."))
    _append(agent, "memo.md", "- my staged line")
    person(agent, "add", "memo.md")
    before = (agent.path / "memo.md").read_bytes()
    assert main(["revert", "a", data["commit"]]) == EXIT_BUSY
    assert "memo.md is staged" in capsys.readouterr().err
    assert (agent.path / "memo.md").read_bytes() == before
    assert git_out(agent.path, "rev-parse", "main") == data["commit"]


# -- the branch moved, the work tree did not -------------------------------------------------
def _clone_commit(agent, tmp_path, line: str) -> str:
    """A commit made in a clone of the agent (the person's laptop), fetched here; its sha."""
    clone = tmp_path / "laptop"
    person(agent, "clone", "-q", str(agent.path), str(clone))
    (clone / "memo.md").write_text((clone / "memo.md").read_text() + line + "\n")
    assert person(agent, "-C", str(clone), "commit", "-qam", "my edit").returncode == 0
    person(agent, "fetch", "-q", str(clone), "main")
    return git_out(agent.path, "rev-parse", "FETCH_HEAD")


def test_a_branch_moved_by_update_ref_stops_every_write_and_names_the_fix(agent, ans, capsys, tmp_path):
    ans(memo("strategies", "- Use pnpm in this repository."), summary="r1")
    old = git_out(agent.path, "rev-parse", "main")
    mine = _clone_commit(agent, tmp_path, "- person line from my laptop clone")
    person(agent, "update-ref", "refs/heads/main", mine)
    err = _refused(ans, capsys, memo("self", "- I forget the linter."))
    assert (
        "behind main" in err
        and f"git update-index -q --refresh && git read-tree -m -u {old[:12]} main" in err
    ), err
    assert git_out(agent.path, "rev-parse", "main") == mine
    assert main(["revert", "a", mine]) == EXIT_BUSY
    assert main(["pin", "a", "x"]) == EXIT_BUSY
    _append(agent, "memo.md", "- a person types on, unaware")
    capsys.readouterr()
    held = _held(capsys)
    assert held["held"] and "behind main" in held["held"]["reason"], held
    assert main(["status"]) == 0
    assert "a: nothing is written or reflected until then: " in capsys.readouterr().out
    assert git_out(agent.path, "rev-parse", "main") == mine
    assert "laptop clone" in git_out(agent.path, "show", "main:memo.md")
    person(agent, "checkout", "--", "memo.md")  # drop the typing; then the fix the line names
    person(agent, "update-index", "-q", "--refresh")
    assert person(agent, "read-tree", "-m", "-u", old, "main").returncode == 0
    assert git_out(agent.path, "status", "--porcelain") == ""
    code, out = ans(memo("self", "- I forget the linter."), summary="r2")
    assert code == 0 and "landed" in out
    assert "laptop clone" in git_out(agent.path, "show", "main:memo.md")
    assert _held(capsys)["held"] is None
    fsck(agent)


def test_a_branch_moved_to_a_commit_that_adds_a_skill_never_deletes_it(agent, ans, capsys, tmp_path):
    """Found by the attack on the fixed main: the new skill was taken for the person's `git rm`.

    It sat in the index as a removal; `evolve sync` committed the removal as their edit and
    pushed it, and the advice (`commit it`, `git restore --staged`) deleted it too.
    """
    ans(memo("strategies", "- Use pnpm in this repository."), summary="r1")
    old = git_out(agent.path, "rev-parse", "main")
    clone = tmp_path / "laptop"
    person(agent, "clone", "-q", str(agent.path), str(clone))
    (clone / "skills/mine").mkdir(parents=True)
    (clone / "skills/mine/SKILL.md").write_text(skill_text("mine"))
    assert person(agent, "-C", str(clone), "add", "-A").returncode == 0
    assert person(agent, "-C", str(clone), "commit", "-qm", "my skill").returncode == 0
    person(agent, "fetch", "-q", str(clone), "main")
    mine = git_out(agent.path, "rev-parse", "FETCH_HEAD")
    person(agent, "update-ref", "refs/heads/main", mine)
    err = _refused(ans, capsys, memo("self", "- I forget the linter."))
    assert "behind main" in err and f"git read-tree -m -u {old[:12]} main" in err, err
    with ledger.opened(Home.resolve().state_db) as conn, pytest.raises(Busy, match="behind main"):
        humanedits.commit_edits(conn, agent.home, "a")  # the watcher, and a sync, commit nothing
    assert git_out(agent.path, "rev-parse", "main") == mine
    person(agent, "update-index", "-q", "--refresh")
    assert person(agent, "read-tree", "-m", "-u", old, "main").returncode == 0  # the advice
    assert (agent.path / "skills/mine/SKILL.md").read_text() == skill_text("mine")
    code, out = ans(memo("self", "- I forget the linter."), summary="r2")
    assert code == 0 and "landed" in out
    assert (
        git_out(agent.path, "ls-tree", "--name-only", "-r", "main", "skills/mine") == "skills/mine/SKILL.md"
    )
    fsck(agent)


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_git_status_is_told_to_ignore_stays_the_persons(agent, ans, flag):
    """Found by the attack on the fixed main: an edit status never lists went into a reflection.

    With memo.md marked assume-unchanged (or skip-worktree) the reflection composed memo.md
    from the work tree and committed the person's line as the model's.
    """
    ans(memo("strategies", "- Use pnpm in this repository."), summary="r1")
    assert person(agent, "update-index", flag, "memo.md").returncode == 0
    _append(agent, "memo.md", "- my line, hidden from git status")
    code, out = ans(memo("self", "- I forget the linter."), summary="r2")
    assert code == 0 and "landed" in out
    assert _subjects(agent, 2) == ["reflect(a): r2", "edit(a): memo.md"]
    blame = git_out(agent.path, "blame", "--line-porcelain", "HEAD", "--", "memo.md")
    author = blame.split("- my line, hidden from git status")[0].rsplit("author-mail ", 1)[1].split("\n")[0]
    assert author == "<person@example.test>"
    ans(memo("strategies", "- Use pnpm everywhere."), summary="r3")
    assert "- my line, hidden from git status" in agent.memo_text()
    fsck(agent)


def test_a_commit_from_a_forced_second_worktree_of_main_is_never_undone(agent, ans, capsys, tmp_path):
    ans(memo("strategies", "- Use pnpm in this repository."), summary="r1")
    second = tmp_path / "second"
    assert person(agent, "worktree", "add", "-q", "--force", str(second), "main").returncode == 0
    (second / "memo.md").write_text((second / "memo.md").read_text() + "- written in the second worktree\n")
    (second / "skills/mine").mkdir(parents=True)
    (second / "skills/mine/SKILL.md").write_text(skill_text("mine"))
    assert person(agent, "-C", str(second), "add", "-A").returncode == 0
    assert person(agent, "-C", str(second), "commit", "-qm", "from the other worktree").returncode == 0
    mine = git_out(agent.path, "rev-parse", "main")
    # first the second worktree holding main (evolve's commit would leave it behind), then, once
    # it lets go, this work tree behind main: neither undoes the person's commit
    assert f"main is checked out in {second}" in _refused(ans, capsys, memo("self", "- I forget the linter."))
    assert person(agent, "-C", str(second), "switch", "-q", "--detach").returncode == 0
    assert "behind main" in _refused(ans, capsys, memo("self", "- I forget the linter."))
    _append(agent, "memo.md", "- typed in the first worktree")  # the watcher's human edit, below
    assert humanedits.busy_reason(agent.path) is not None
    with ledger.opened(Home.resolve().state_db) as conn, pytest.raises(Busy, match="behind main"):
        humanedits.commit_edits(conn, agent.home, "a")
    assert git_out(agent.path, "rev-parse", "main") == mine
    shown = git_out(agent.path, "show", "main:memo.md")
    assert "written in the second worktree" in shown and "typed in the first" not in shown
    assert (
        git_out(agent.path, "ls-tree", "--name-only", "-r", "main", "skills/mine") == "skills/mine/SKILL.md"
    )


def test_the_watcher_never_commits_a_work_tree_behind_its_branch(agent, tmp_path):
    from tests.watch_helpers import new_watcher, pump, settle

    old = git_out(agent.path, "rev-parse", "main")
    mine = _clone_commit(agent, tmp_path, "- person line from my laptop clone")
    person(agent, "update-ref", "refs/heads/main", mine)
    watcher = new_watcher()
    try:
        _append(agent, "memo.md", "- typed on the old memo")
        settle(watcher, 1.0)
        assert git_out(agent.path, "rev-parse", "main") == mine  # no edit(a) undoing the laptop's line
        person(agent, "checkout", "--", "memo.md")
        person(agent, "update-index", "-q", "--refresh")
        assert person(agent, "read-tree", "-m", "-u", old, "main").returncode == 0
        _append(agent, "memo.md", "- typed once the files are up to date")
        pump(watcher, lambda: git_out(agent.path, "rev-parse", "main") != mine)
    finally:
        watcher.close()
    assert _subjects(agent, 1) == ["edit(a): memo.md"]
    shown = git_out(agent.path, "show", "main:memo.md")
    assert "laptop clone" in shown and "typed once the files are up to date" in shown


def test_a_staged_file_holds_the_cycle_and_status_says_why(agent, ans, capsys):
    _append(agent, "memo.md", "- staged")
    person(agent, "add", "memo.md")
    held = _held(capsys)
    assert held["held"] and "memo.md is staged" in held["held"]["reason"], held
    with ledger.opened(Home.resolve().state_db) as conn:  # a session happened: the cycle would consider `a`
        ledger.mark_dirty(conn, "a")
    assert main(["cycle", "--now", "--json"]) == 0
    assert "memo.md is staged" in json.loads(capsys.readouterr().out)["skipped"]["a"]
    person(agent, "commit", "-qm", "mine")
    assert _held(capsys)["held"] is None


def test_accepting_a_proposal_never_writes_over_a_staged_file(agent, ans, capsys):
    (agent.path / "agent.toml").write_text(
        (agent.path / "agent.toml").read_text().replace("review = false", "review = true")
    )
    person(agent, "commit", "-qam", "review mode")
    data = ans.json(memo("strategies", "- Use pnpm in this repository."))
    pid = data["proposal"].removeprefix("proposals/")
    (agent.path / "memo.md").write_text(
        agent.memo_text().replace(f"## {SELF}\n", f"## {SELF}\n\n- my staged line\n")
    )
    person(agent, "add", "memo.md")
    before, tip = (agent.path / "memo.md").read_bytes(), git_out(agent.path, "rev-parse", "main")
    assert main(["accept", "a", pid]) == EXIT_BUSY
    assert "memo.md is staged" in capsys.readouterr().err
    assert (agent.path / "memo.md").read_bytes() == before
    assert git_out(agent.path, "rev-parse", "main") == tip
    assert person(agent, "commit", "-qm", "mine").returncode == 0
    code = main(["accept", "a", pid])
    assert code == 0, capsys.readouterr()
    text = agent.memo_text()
    assert "- my staged line" in text and "- Use pnpm in this repository." in text
