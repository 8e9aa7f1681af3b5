"""The second red-team pass, as scripted people: what a person undid stays undone.

A reverted lesson is not learned again, however short, re-wrapped or commented; a
reverted retire or deletion is not redone and a rejected one not proposed again; what a
person brought back stays, and a line moved in two saves is not an undo. Same fixtures
as tests/test_red_team_2.py.
"""

from __future__ import annotations

import json

from evolve.cli import main
from tests import people
from tests.helpers import git_out
from tests.people import memo, person, skill

agent, ans = people.agent, people.ans  # the people fixtures

RULE = "- When the suite is flaky, always rerun it with `pytest -p no:randomly` first."


# --- 4. a line a person re-added after undoing it blocks every patch of its skill ----------
def test_readded_line_does_not_block_other_patches(agent, ans):
    ans(skill("flaky", f"# Flaky\n\n{RULE}\n- Keep the seed in the log output always.\n"))
    path = agent.skills_dir / "flaky" / "SKILL.md"
    text = path.read_text()
    path.write_text(text.replace(RULE + "\n", ""))
    person(agent, "commit", "-qam", "no, drop that")
    path.write_text(text)  # changed my mind: put it back by hand
    person(agent, "commit", "-qam", "actually keep it")
    data = ans.json({"op": "patch_skill", "name": "flaky", "old": "always.", "new": "always, with the date."})
    assert [o["status"] for o in data["operations"]] == ["landed"], data["operations"]


# --- 5. revert of a revert (evolve revert): the line the person brought back is dropped -----
def test_evolve_revert_of_revert_line_survives_next_reflection(agent, ans, capsys):
    data = ans.json(memo("strategies", "- Always run make check before pushing the branch."))
    assert main(["revert", "a", data["commit"]]) == 0
    undo = git_out(agent.path, "rev-parse", "HEAD")
    assert main(["revert", "a", undo]) == 0  # "no wait, I want it back"
    capsys.readouterr()
    assert "Always run make check" in agent.memo_text()
    ans(memo("strategies", "- Always run make check before pushing the branch.\n- Use uv for envs please."))
    assert "Always run make check" in agent.memo_text(), agent.memo_text()


# --- 8. evolve revert of a retire: the next reflection retires it again --------------------
def test_reverted_retire_is_not_redone(agent, ans, capsys):
    ans(skill("lint", "- Run ruff check before every commit you make.\n"))
    data = ans.json({"op": "retire_skill", "name": "lint", "reason": "unused"})
    assert main(["revert", "a", data["commit"]]) == 0  # I want that skill
    capsys.readouterr()
    ans({"op": "retire_skill", "name": "lint", "reason": "unused"})
    assert (agent.skills_dir / "lint" / "SKILL.md").exists()


# --- 9. a rejected retire (or a delete-only patch) is proposed again -----------------------
def test_rejected_retire_is_not_proposed_again(agent, ans, capsys):
    ans(skill("lint", "- Run ruff check before every commit you make.\n"))
    (agent.path / "agent.toml").write_text(
        (agent.path / "agent.toml").read_text().replace("review = false", "review = true")
    )
    person(agent, "commit", "-qam", "review mode")
    data = ans.json({"op": "retire_skill", "name": "lint", "reason": "unused"})
    pid = data["proposal"].removeprefix("proposals/")
    assert main(["reject", "a", pid]) == 0
    capsys.readouterr()
    data = ans.json({"op": "retire_skill", "name": "lint", "reason": "unused"})
    assert data["proposal"] is None, data  # proposed again, although I rejected it


# --- 14. a short lesson ("- Use uv.") reverted is learned again ------------------------------
def test_short_reverted_lesson_is_not_relearned(agent, ans, capsys):
    data = ans.json(memo("strategies", "- Use uv."))
    assert main(["revert", "a", data["commit"]]) == 0
    capsys.readouterr()
    ans(memo("strategies", "- Use uv."))
    assert "Use uv." not in agent.memo_text()


# --- 15. the same reverted lesson, re-wrapped over two lines, is learned again --------------
def test_rewrapped_reverted_lesson_is_not_relearned(agent, ans, capsys):
    data = ans.json(memo("strategies", RULE))
    assert main(["revert", "a", data["commit"]]) == 0
    capsys.readouterr()
    wrapped = "- When the suite is flaky, always rerun it\n  with `pytest -p no:randomly` first."
    ans(memo("strategies", wrapped))
    assert "always rerun it" not in agent.memo_text(), agent.memo_text()


# --- 16. a removed line that starts with "-- " (SQL comment) breaks every block after it ----
def test_sql_comment_line_does_not_hide_blocks(agent, ans, capsys):
    body = (
        "# Migrations\n\n```sql\n-- Always wrap a migration in one transaction.\nBEGIN;\n```\n\n"
        "- Never drop a column in the same release that stops reading it.\n"
    )
    data = ans.json(skill("migrations", body))
    assert main(["revert", "a", data["commit"]]) == 0
    capsys.readouterr()
    again = ans.json(
        skill("migrations-two", "- Never drop a column in the same release that stops reading it.\n")
    )
    assert [o["status"] for o in again["operations"]] == ["rejected"], again["operations"]


# --- 27. moving a line in two saves (cut, save, paste elsewhere, save) is counted as undo ---
def test_move_in_two_commits_is_not_an_undo(agent, ans, capsys):
    ans(memo("self", RULE))
    ans(skill("flaky", "# Flaky\n\n- Keep the seed in the log output always.\n"))
    path = agent.path / "memo.md"
    path.write_text(path.read_text().replace(RULE + "\n", ""))
    person(agent, "commit", "-qam", "cut")  # the watcher commits after human_edit_quiet_s
    skill_md = agent.skills_dir / "flaky" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + RULE + "\n")
    person(agent, "commit", "-qam", "paste")
    assert main(["log", "a", "--json"]) == 0
    blocks = [b for c in json.loads(capsys.readouterr().out) for b in c["blocks"]]
    assert blocks == [], blocks


# --- 32. a .gitattributes marking Markdown as -diff (or binary) switches every block off ----
def test_gitattributes_do_not_switch_blocks_off(agent, ans, capsys):
    (agent.path / ".gitattributes").write_text("*.md -diff\n")
    person(agent, "add", "-A")
    person(agent, "commit", "-qm", "no diffs for markdown")
    data = ans.json(memo("strategies", RULE))
    assert main(["revert", "a", data["commit"]]) == 0
    capsys.readouterr()
    ans(memo("strategies", RULE))
    assert "always rerun it" not in agent.memo_text()


# --- 9b. a reverted delete-only patch (the model removed a rule) is applied again ----------
def test_reverted_line_deletion_is_not_redone(agent, ans, capsys):
    keep = "- Always pin the Python version in CI configs."
    ans(skill("ci", f"# CI\n\n{keep}\n- Cache the pip downloads between runs.\n"))
    data = ans.json({"op": "patch_skill", "name": "ci", "old": keep + "\n", "new": ""})
    assert main(["revert", "a", data["commit"]]) == 0  # no: I want that rule
    capsys.readouterr()
    ans({"op": "patch_skill", "name": "ci", "old": keep + "\n", "new": ""})
    assert keep in (agent.skills_dir / "ci" / "SKILL.md").read_text()
