"""Scripted people: a person's edits, commits, reverts and deletions, against real reflections.

Every reflection goes through the real anthropic SDK to the local fake Messages API, with
the answers a capable model writes (several operations, both memo sections). What is
asserted is what the person sees: `git log`, `git show`, the files' bytes, `git fsck`, and
the CLI's lines and exit codes. Reproductions of red-team A1-A3, B1, B2, B6, C3, C4, C6, C8
and ecosystem finding 1.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from evolve.errors import EXIT_BUSY
from evolve.home import Home
from evolve.store import ledger
from tests import people
from tests.helpers import git_out, skill_text, trailer_lines
from tests.people import SELF, STRATEGIES, fsck, memo, person, write

# -- what a capable model writes lands ------------------------------------------------------

agent, ans = people.agent, people.ans  # the people fixtures


def test_both_memo_sections_land_in_one_commit_and_the_output_says_exactly_that(agent, ans):  # A2, C6
    code, out = ans(memo("self", "- I forget to run the linter."), memo("strategies", "- Use uv."))
    assert code == 0
    assert (
        "  landed: update_memo self (memo.md)" in out and "  landed: update_memo strategies (memo.md)" in out
    )
    assert "rejected" not in out
    text = agent.memo_text()
    assert "- I forget to run the linter." in text and "- Use uv." in text
    assert trailer_lines(agent.path)["Evolve-Ops"] == ["update_memo self", "update_memo strategies"]


def test_repeated_patches_and_a_create_then_patch_land_whole(agent, ans):
    ans(
        {
            "op": "create_skill",
            "name": "deploy",
            "description": "Use when deploying.",
            "body": "# Deploy\n\n1. Build.\n2. Ship.\n",
        }
    )
    data = ans.json(
        {"op": "patch_skill", "name": "deploy", "old": "1. Build.", "new": "1. Build with `make dist`."},
        {"op": "patch_skill", "name": "deploy", "old": "2. Ship.", "new": "2. Ship with `make release`."},
        {
            "op": "create_skill",
            "name": "release-notes",
            "description": "Use when writing release notes.",
            "body": "- List user-visible changes first.\n",
        },
        {"op": "patch_skill", "name": "release-notes", "old": "first.", "new": "first, newest on top."},
    )
    assert [o["status"] for o in data["operations"]] == ["landed"] * 4 and data["status"] == "committed"
    body = (agent.skills_dir / "deploy" / "SKILL.md").read_text()
    assert "1. Build with `make dist`.\n2. Ship with `make release`." in body
    assert "newest on top" in (agent.skills_dir / "release-notes" / "SKILL.md").read_text()
    assert git_out(agent.path, "rev-list", "--count", "HEAD") == "3"  # init + two reflections


# -- a person's work wins ----------------------------------------------------------------------


def test_a_persons_memo_lines_survive_a_rewrite_of_their_section(agent, ans):  # A3
    ans(memo("strategies", "- watch strat"))
    lines = [f"- my rule number {n}: always check step {n}" for n in range(10)]
    for line in lines:  # committed one by one, as the watcher commits a person's edits
        text = (
            agent.memo_text().replace("- watch strat", f"- watch strat\n{line}")
            if "- watch strat" in agent.memo_text()
            else agent.memo_text()
        )
        (agent.path / "memo.md").write_text(text)
        assert person(agent, "commit", "-qam", "mine").returncode == 0
    code, out = ans(memo("strategies", "- a new strategy from the model"))
    assert code == 0 and "kept 10 line(s) a person wrote or chose to keep" in out
    kept = agent.memo_text()
    assert all(line in kept for line in lines) and "- a new strategy from the model" in kept
    assert trailer_lines(agent.path)["Evolve-Kept"] == [
        "update_memo strategies: kept 10 line(s) a person wrote or chose to keep"
    ]


def test_a_hand_written_skill_is_not_retired_but_waits_for_review(agent, ans, capsys):  # A3
    write(agent, "skills/my-own/SKILL.md", skill_text("my-own", body="- Always tag releases as vX.Y.Z\n"))
    person(agent, "add", "-A")
    person(agent, "commit", "-qm", "my own skill")
    code, out = ans(
        {"op": "retire_skill", "name": "my-own", "reason": "looks unused"},
        memo("self", "- I retire skills too eagerly."),
    )
    assert code == 0 and (agent.skills_dir / "my-own" / "SKILL.md").exists()
    assert "waiting for review: retire_skill my-own: the skill holds lines a person wrote" in out
    proposals = agent.repo.branches("proposals/")
    assert len(proposals) == 1
    (branch,) = proposals
    assert git_out(agent.path, "ls-tree", "-r", "--name-only", branch, "--", "skills/my-own") == ""
    assert "I retire skills too eagerly" in agent.memo_text()  # the rest landed
    assert main(["status"]) == 0
    assert f"a: waiting for review: {branch.removeprefix('proposals/')}" in capsys.readouterr().out


def test_a_patch_of_a_persons_rule_waits_and_the_rest_lands(agent, ans):  # A3
    write(agent, "skills/releases/SKILL.md", skill_text("releases", body="- Always tag releases as vX.Y.Z\n"))
    person(agent, "add", "-A")
    person(agent, "commit", "-qm", "release rules")
    code, out = ans(
        {
            "op": "patch_skill",
            "name": "releases",
            "old": "Always tag releases as vX.Y.Z",
            "new": "Tag releases however you like.",
        },
        memo("strategies", "- Ask before tagging."),
    )
    assert (
        code == 0
        and "Always tag releases as vX.Y.Z" in (agent.skills_dir / "releases" / "SKILL.md").read_text()
    )
    assert "waiting for review: patch_skill releases: its 'old' text touches lines a person wrote" in out
    (sha,) = agent.repo.branches("proposals/").values()
    assert "Tag releases however you like." in git_out(agent.path, "show", f"{sha}:skills/releases/SKILL.md")


def test_a_typo_fix_does_not_freeze_a_skill_the_model_wrote(agent, ans):
    ans(
        {
            "op": "create_skill",
            "name": "lint",
            "description": "Use when linting.",
            "body": "- Run ruf before committing.\n- Fix every warning.\n",
        }
    )
    path = agent.skills_dir / "lint" / "SKILL.md"
    path.write_text(path.read_text().replace("ruf ", "ruff "))
    person(agent, "commit", "-qam", "typo")
    code, out = ans(
        {
            "op": "patch_skill",
            "name": "lint",
            "old": "- Fix every warning.",
            "new": "- Fix every warning, or say why not.",
        }
    )
    assert code == 0 and "landed: patch_skill lint" in out
    assert "- Run ruff before committing.\n- Fix every warning, or say why not." in path.read_text()


def test_a_persons_skill_is_never_evicted(agent, ans):  # A3
    (agent.path / "agent.toml").write_text(
        (agent.path / "agent.toml").read_text() + "\n[limits]\nmax_skills = 2\n"
    )
    write(
        agent,
        "skills/pinned-one/SKILL.md",
        skill_text("pinned-one").replace("---\n\n", 'metadata:\n  pinned: "true"\n---\n\n', 1),
    )
    write(agent, "skills/mine/SKILL.md", skill_text("mine"))
    person(agent, "add", "-A")
    person(agent, "commit", "-qm", "mine")
    code, out = ans(
        {"op": "create_skill", "name": "new-one", "description": "Use when new.", "body": "- x y z\n"},
        memo("self", "- I learn quickly."),
    )
    assert code == 0 and (agent.skills_dir / "mine").exists() and not (agent.skills_dir / "new-one").exists()
    assert "rejected: create_skill new-one: max_skills is reached and no skill may be evicted" in out
    assert "  evicted:" not in out and "I learn quickly" in agent.memo_text()


# -- undo sticks ---------------------------------------------------------------------------------

RULE = "- When the suite is flaky, always rerun it with `pytest -p no:randomly` first."
SKILL = {
    "op": "create_skill",
    "name": "flaky-tests",
    "description": "Use when tests are flaky.",
    "body": f"# Flaky tests\n\n{RULE}\n",
}


def refused_again(ans) -> list[str]:
    data = ans.json(dict(SKILL), {**SKILL, "name": "other-name"}, memo("self", RULE))
    return [o["reason"] for o in data["operations"] if o["status"] == "rejected"]


@pytest.mark.parametrize(
    "how",
    [
        "evolve revert",
        "git revert with own message",
        "delete the folder",
        "delete the line by hand",
        "reject the proposal",
    ],
)
def test_undo_sticks_however_the_person_undoes(agent, ans, how, capsys):  # B1
    if how == "reject the proposal":
        (agent.path / "agent.toml").write_text(
            (agent.path / "agent.toml").read_text().replace("review = false", "review = true")
        )
        person(agent, "commit", "-qam", "review mode")
    data = ans.json(dict(SKILL))
    sha, proposal = data["commit"], data["proposal"]
    if how == "evolve revert":
        assert main(["revert", "a", sha]) == 0
    elif how == "git revert with own message":
        assert person(agent, "revert", "--no-commit", sha).returncode == 0
        assert (
            person(agent, "commit", "-qm", "drop the flaky skill, we fix flaky tests instead").returncode == 0
        )
    elif how == "delete the folder":
        assert person(agent, "rm", "-rq", "skills/flaky-tests").returncode == 0
        assert person(agent, "commit", "-qm", "no").returncode == 0
    elif how == "delete the line by hand":
        path = agent.skills_dir / "flaky-tests" / "SKILL.md"
        path.write_text(path.read_text().replace(RULE + "\n", "- Fix flaky tests at their cause.\n"))
        assert person(agent, "commit", "-qam", "better rule").returncode == 0
    else:
        assert main(["reject", "a", proposal.removeprefix("proposals/")]) == 0
    capsys.readouterr()
    reasons = refused_again(ans)  # the same skill, the same text under another name, in the memo
    assert len(reasons) == 3, reasons
    assert all("a person undid" in r for r in reasons[1:]) and (
        "a person undid" in reasons[0] or ("exists" in reasons[0] and how == "delete the line by hand")
    ), reasons
    log = json.loads((main(["log", "a", "--json"]), capsys.readouterr().out)[1])
    blocks = [b for c in log for b in c["blocks"]]
    assert [b["line"] for b in blocks] == [RULE]
    assert main(["unblock", "a", blocks[0]["id"][:8]]) == 0
    capsys.readouterr()
    assert refused_again(ans) == [] or "exists" in " ".join(refused_again(ans))
    fsck(agent)


def test_moving_a_line_is_not_an_undo(agent, ans, capsys):
    ans(memo("self", RULE))
    text = agent.memo_text().replace(RULE + "\n", "")
    (agent.path / "memo.md").write_text(text.replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n{RULE}\n"))
    person(agent, "commit", "-qam", "belongs in strategies")
    assert main(["log", "a", "--json"]) == 0
    assert all(c["blocks"] == [] for c in json.loads(capsys.readouterr().out))


# -- a person's git operation in progress -------------------------------------------------------


def test_a_conflicted_revert_blocks_every_write_and_its_markers_never_land(agent, ans, capsys):  # A1
    ans(memo("strategies", "- s1"))
    first = git_out(agent.path, "rev-parse", "HEAD")
    ans(memo("strategies", "- s1 changed\n- s2"))
    assert person(agent, "revert", "--no-edit", first).returncode != 0  # a conflict: UU memo.md
    head = git_out(agent.path, "rev-parse", "HEAD")
    ans.api.reply_tool({"summary": "r3", "operations": [memo("self", "- x")]})
    assert main(["reflect", "a", "--force"]) == EXIT_BUSY
    err = capsys.readouterr().err
    assert "busy: a git operation is in progress in" in err and "git revert --abort" in err
    for argv in (["pin", "a", "x"], ["prune", "a"], ["revert", "a", first], ["unblock", "a", "0000"]):
        assert main(argv) == EXIT_BUSY, argv
    with ledger.opened(Home.resolve().state_db) as conn:  # a session happened: the cycle would consider `a`
        ledger.mark_dirty(conn, "a")
    assert main(["cycle", "--now", "--json"]) == 0
    skipped = json.loads(capsys.readouterr().out)["skipped"]["a"]
    assert "a git operation is in progress in" in skipped and "(a revert); finish it" in skipped
    assert git_out(agent.path, "rev-parse", "HEAD") == head  # nothing moved under the person
    assert "<<<<<<<" not in git_out(agent.path, "show", "HEAD:memo.md")
    assert main(["prompt", "a"]) == 0
    shown = capsys.readouterr().out
    assert "<<<<<<<" not in shown and "unresolved merge conflict" in shown
    assert person(agent, "revert", "--abort").returncode == 0
    ans.api.requests.clear()
    code, out = ans(memo("self", "- x"))
    assert code == 0 and "landed" in out
    fsck(agent)


def test_the_pre_commit_hook_refuses_conflict_markers(agent):
    write(agent, "skills/notes/references.md", "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n")
    person(agent, "add", "-A")
    proc = person(agent, "commit", "-qm", "oops")
    assert proc.returncode == 1 and "merge conflict markers" in proc.stderr


# -- bytes a person wrote stay as they were --------------------------------------------------------


def test_a_crlf_memo_with_a_bom_changes_only_the_section_a_reflection_updates(agent, ans):  # C3, C4
    text = f"\ufeff# Memo of a\r\n\r\n## {SELF}\r\n\r\n- old\r\n\r\n## {STRATEGIES}\r\n\r\n- mine\r\n"
    (agent.path / "memo.md").write_bytes(text.encode())
    person(agent, "commit", "-qam", "windows")
    ans(memo("self", "- one\n- two"))  # the person's "- old" stays: it is their line
    after = (agent.path / "memo.md").read_bytes()
    assert after == text.replace("- old\r\n", "- old\r\n- one\r\n- two\r\n").encode()
    stat = git_out(agent.path, "show", "--numstat", "--format=", "HEAD")
    assert stat.split()[:2] == ["2", "0"]  # two lines in, none out: not a whole-file rewrite


def test_a_person_s_fenced_example_holding_a_heading_is_kept_whole(agent, ans):  # ecosystem 1
    text = (
        f"# Memo of a\n\n## {SELF}\n\n- a\n\n````md\nexample:\n```\n## {STRATEGIES}\n```\n````\n\n"
        f"## {STRATEGIES}\n\n- b\n"
    )
    (agent.path / "memo.md").write_text(text)
    person(agent, "commit", "-qam", "an example")
    ans(memo("strategies", "- b\n- NEW RULE"))
    assert agent.memo_text() == text.replace("- b\n", "- b\n- NEW RULE\n")


def test_a_symlinked_skill_is_refused_on_its_own_and_never_read(agent, ans, tmp_path):  # B6
    outside = tmp_path / "outside-skill.md"
    outside.write_text(skill_text("outside", body="- SECRET-ISH content outside the repo\n"))
    (agent.skills_dir / "outside").mkdir()
    (agent.skills_dir / "outside" / "SKILL.md").symlink_to(outside)
    person(agent, "add", "-A")
    assert person(agent, "commit", "-qm", "a link", "--no-verify").returncode == 0  # the hook refuses links
    code, out = ans(
        {"op": "patch_skill", "name": "outside", "old": "SECRET-ISH", "new": "x"},
        memo("self", "- I follow links carelessly."),
    )
    assert code == 0 and "landed: update_memo self" in out
    assert "rejected: patch_skill outside" in out
    assert outside.read_text().count("SECRET-ISH") == 1
    bodies = json.dumps([r.body for r in ans.api.requests])
    assert "SECRET-ISH" not in bodies
    fsck(agent)
