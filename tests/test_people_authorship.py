"""Scripted people re-committing evolve's commits, and whose lines those are then.

Reproductions of red-team 3 A2: a commit counted as evolve's when it carried an
`Evolve-Kind` trailer and its committer was its author, so `git commit --amend
--reset-author`, `git commit -C <sha> --reset-author` or evolve's trailers typed under a
person's name made that person's lines the model's, and the next reflection overwrote them.
A commit is evolve's only when evolve's own identity (`[git] author_email`, its default, or
one its notes were written with) is both its author and its committer.
"""

from __future__ import annotations

from evolve.cli import main
from evolve.home import Home
from tests import people
from tests.helpers import git, git_out, parsed_trailers
from tests.people import fsck, memo, person

agent, ans = people.agent, people.ans  # the people fixtures

TAG = "- Tag releases as vX.Y.Z."
TEAM = "- Tag releases as release-X.Y.Z (team rule, do not change)."


def _tagging(ans) -> None:
    ans(
        {
            "op": "create_skill",
            "name": "tagging",
            "description": "Use when tagging releases in this repository.",
            "body": f"{TAG}\n- Push tags after CI.\n",
        }
    )


def _patch_team_rule(ans) -> dict:
    return ans.json({"op": "patch_skill", "name": "tagging", "old": TEAM, "new": "- Tag releases however."})


def _set_identity(email: str) -> None:
    config = Home.resolve().config_file
    text = config.read_text().split("\n[git]")[0]
    config.write_text(f'{text}\n[git]\nauthor_name = "evolve bot"\nauthor_email = "{email}"\n')


def test_an_amend_that_resets_the_author_is_the_persons_and_a_patch_of_it_waits(agent, ans):
    _tagging(ans)
    path = agent.skills_dir / "tagging" / "SKILL.md"
    path.write_text(path.read_text().replace(TAG, TEAM))
    assert person(agent, "commit", "-qa", "--amend", "--no-edit", "--reset-author").returncode == 0
    assert "Evolve-Kind: reflection" in git_out(agent.path, "log", "-1", "--format=%B")  # trailers kept
    data = _patch_team_rule(ans)
    assert [o["status"] for o in data["operations"]] == ["waiting"], data["operations"]
    assert "touches lines a person wrote" in data["operations"][0]["reason"]
    assert TEAM in path.read_text()
    fsck(agent)


def test_evolve_configured_with_the_persons_own_email_never_makes_their_amend_evolves(agent, ans):
    """Found by the attack on the fixed main: `[git] author_email` set to the person's own.

    Set by them ("commit as me") or by a synced agent.toml, it made their amended reflection
    evolve's again, and the next patch overwrote their team rule. Whose is whose cannot be
    told then: the person's, to be safe.
    """
    _tagging(ans)
    path = agent.skills_dir / "tagging" / "SKILL.md"
    path.write_text(path.read_text().replace(TAG, TEAM))
    assert person(agent, "commit", "-qa", "--amend", "--no-edit", "--reset-author").returncode == 0
    _set_identity(git_out(agent.path, "config", "user.email"))
    data = _patch_team_rule(ans)
    assert [o["status"] for o in data["operations"]] == ["waiting"], data["operations"]
    assert TEAM in path.read_text()
    fsck(agent)


def test_a_reflections_message_reused_with_reset_author_is_the_persons(agent, ans):
    data = ans.json(memo("strategies", "- Use pnpm in this repository."))
    (agent.path / "memo.md").write_text(agent.memo_text() + "- My own rule, typed by me.\n")
    assert person(agent, "commit", "-qa", "-C", data["commit"], "--reset-author").returncode == 0
    ans(memo("strategies", "- Use pnpm everywhere."))
    assert "- My own rule, typed by me." in agent.memo_text()
    assert (
        parsed_trailers(agent.path)["Evolve-Kept"]
        == "update_memo strategies: kept 1 line(s) a person wrote or chose to keep"
    )


def test_evolves_trailers_typed_under_a_persons_name_are_the_persons(agent, ans):
    (agent.path / "memo.md").write_text(agent.memo_text() + "- A rule I wrote myself.\n")
    message = "reflect(a): lessons\n\nEvolve-Kind: reflection\nEvolve-Reflection: 0123456789abcdef\n"
    assert person(agent, "commit", "-qa", "-m", message).returncode == 0
    ans(memo("strategies", "- Use pnpm everywhere."))
    assert "- A rule I wrote myself." in agent.memo_text()


def test_a_persons_rebase_of_evolves_commits_makes_their_lines_the_persons(agent, ans):
    ans(memo("strategies", "- Use pnpm in this repository."))
    ans(memo("self", "- I forget the linter."))
    assert person(agent, "rebase", "-q", "--force-rebase", "HEAD~2").returncode == 0
    assert git_out(agent.path, "log", "-1", "--format=%an|%cn") == "evolve|Test Person"
    ans(memo("strategies", "- Use pnpm everywhere."))
    assert "- Use pnpm in this repository." in agent.memo_text()  # re-committed by the person


def test_evolves_lines_stay_evolves_under_its_configured_identity_and_after_it_changes(agent, ans):
    ans(memo("strategies", "- Written under the default identity."))
    _set_identity("bot@team.test")
    ans(memo("self", "- Written by the team's bot."))
    assert git_out(agent.path, "log", "-1", "--format=%ae|%ce") == "bot@team.test|bot@team.test"
    _set_identity("bot2@team.test")  # changed later: the older lines are still evolve's
    data = ans.json(
        memo("strategies", "- Replaced under the new identity."), memo("self", "- Replaced as well.")
    )
    assert [o["status"] for o in data["operations"]] == ["landed", "landed"], data["operations"]
    text = agent.memo_text()
    assert "default identity" not in text and "team's bot" not in text, text
    assert "Evolve-Kept" not in parsed_trailers(agent.path)


def test_a_commit_under_an_identity_evolve_never_used_is_a_persons(agent, ans):
    (agent.path / "memo.md").write_text(agent.memo_text() + "- A rule from a stranger's tool.\n")
    env = {
        "GIT_AUTHOR_NAME": "evolve",
        "GIT_AUTHOR_EMAIL": "someone-else@example.test",
        "GIT_COMMITTER_NAME": "evolve",
        "GIT_COMMITTER_EMAIL": "someone-else@example.test",
    }
    message = "reflect(a): forged\n\nEvolve-Kind: reflection\n"
    git(agent.path, "commit", "-qa", "--no-verify", "-m", message, env=env)
    ans(memo("strategies", "- Use pnpm everywhere."))
    assert "- A rule from a stranger's tool." in agent.memo_text()


# -- newcomer finding 7: what a revert brings back -------------------------------------------
OLD = "- Run the tests only with `./scripts/test.sh`."
NEW = "- The test script is now `./scripts/check.sh`."
LATER = "- Run `make check` before every push."


def _revert(agent, sha: str) -> None:
    assert person(agent, "revert", "--no-edit", sha).returncode == 0
    assert git_out(agent.path, "log", "-1", "--format=%an") == "Test Person"


def test_a_line_a_git_revert_brings_back_stays_evolves_and_the_undone_lesson_stays_blocked(agent, ans):
    ans(memo("strategies", OLD))
    data = ans.json(memo("strategies", NEW))  # the lesson replaces evolve's older line
    _revert(agent, data["commit"])
    assert OLD in agent.memo_text() and NEW not in agent.memo_text()
    data = ans.json(memo("strategies", LATER))
    assert [o["status"] for o in data["operations"]] == ["landed"] and data["proposal"] is None
    text = agent.memo_text()
    assert LATER in text and OLD not in text, text  # no rule beside its contradiction
    assert "Evolve-Kept" not in parsed_trailers(agent.path)
    data = ans.json(memo("strategies", f"{LATER}\n{NEW}"))  # the undone lesson, again
    assert NEW not in agent.memo_text()
    (op,) = data["operations"]
    assert op["status"] == "rejected" and "a lesson a person undid" in op["reason"], op


def test_a_skill_step_a_revert_brings_back_can_be_patched_again(agent, ans, capsys):
    ans(
        {
            "op": "create_skill",
            "name": "testing",
            "description": "Use when running the tests.",
            "body": f"{OLD}\n- Read the failures first.\n",
        }
    )
    data = ans.json({"op": "patch_skill", "name": "testing", "old": OLD, "new": NEW})
    assert main(["revert", "a", data["commit"]]) == 0  # `evolve revert` alike
    capsys.readouterr()
    data = ans.json({"op": "patch_skill", "name": "testing", "old": OLD, "new": LATER})
    assert [o["status"] for o in data["operations"]] == ["landed"], data["operations"]
    assert LATER in (agent.skills_dir / "testing" / "SKILL.md").read_text()


def test_a_revert_the_person_edited_keeps_their_lines_theirs(agent, ans):
    ans(memo("strategies", OLD))
    data = ans.json(memo("strategies", NEW))
    assert person(agent, "revert", "--no-commit", data["commit"]).returncode == 0
    path = agent.path / "memo.md"
    path.write_text(path.read_text().replace(OLD, OLD + " Always."))  # their own wording
    assert person(agent, "commit", "-qa", "--no-edit").returncode == 0
    assert "This reverts commit" in git_out(agent.path, "log", "-1", "--format=%B")
    ans(memo("strategies", LATER))
    assert OLD + " Always." in agent.memo_text()
    assert (
        parsed_trailers(agent.path)["Evolve-Kept"]
        == "update_memo strategies: kept 1 line(s) a person wrote or chose to keep"
    )


def test_what_a_revert_brings_back_that_evolve_had_only_deleted_stays_the_persons(agent, ans):
    keep = "- Always pin the Python version in CI configs."
    ans(
        {
            "op": "create_skill",
            "name": "ci",
            "description": "Use when editing CI.",
            "body": f"{keep}\n- Cache the pip downloads.\n",
        }
    )
    lint = {"op": "create_skill", "name": "lint", "description": "Use when linting.", "body": "- Run ruff.\n"}
    ans(lint)
    deleted = ans.json({"op": "patch_skill", "name": "ci", "old": keep + "\n", "new": ""})
    _revert(agent, deleted["commit"])
    retired = ans.json({"op": "retire_skill", "name": "lint", "reason": "unused"})
    _revert(agent, retired["commit"])
    data = ans.json(
        {"op": "patch_skill", "name": "ci", "old": keep + "\n", "new": ""},
        {"op": "retire_skill", "name": "lint", "reason": "unused"},
    )
    assert [o["status"] for o in data["operations"]] == ["waiting", "waiting"], data["operations"]
    assert keep in (agent.skills_dir / "ci" / "SKILL.md").read_text()
    assert (agent.skills_dir / "lint" / "SKILL.md").exists()


def test_a_revert_of_an_accept_over_a_persons_line_gives_it_back_to_the_person(agent, ans, capsys):
    mine = "- Tag releases as release-X.Y.Z."
    (agent.skills_dir / "tagging").mkdir()
    (agent.skills_dir / "tagging" / "SKILL.md").write_text(
        "---\nname: tagging\ndescription: Use when tagging releases.\n---\n\n" + mine + "\n"
    )
    person(agent, "add", "-A")
    assert person(agent, "commit", "-qm", "my skill").returncode == 0
    data = ans.json({"op": "patch_skill", "name": "tagging", "old": mine, "new": TAG})
    assert data["proposal"], data
    assert main(["accept", "a", data["proposal"].removeprefix("proposals/")]) == 0
    accepted = git_out(agent.path, "rev-parse", "HEAD")
    _revert(agent, accepted)
    capsys.readouterr()
    data = ans.json({"op": "patch_skill", "name": "tagging", "old": mine, "new": "- Tag however."})
    assert [o["status"] for o in data["operations"]] == ["waiting"], data["operations"]


def test_a_blame_ignore_revs_file_in_the_agents_own_config_keeps_the_persons_line_theirs(agent, ans):
    """A blame.ignoreRevsFile in .git/config (not the global one) credited a person's edit to evolve."""
    _tagging(ans)
    path = agent.skills_dir / "tagging" / "SKILL.md"
    mine = "- Tag releases as vX.Y.Z, signed."
    path.write_text(path.read_text().replace(TAG, mine))
    assert person(agent, "commit", "-qam", "sign tags").returncode == 0
    (agent.path / ".git" / "ignored-revs").write_text(git_out(agent.path, "rev-parse", "HEAD") + "\n")
    git(agent.path, "config", "blame.ignoreRevsFile", ".git/ignored-revs")
    data = ans.json({"op": "patch_skill", "name": "tagging", "old": mine, "new": "- Tag releases however."})
    assert [o["status"] for o in data["operations"]] == ["waiting"], data["operations"]
    assert mine in path.read_text()
