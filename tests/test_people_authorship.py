"""Scripted people re-committing evolve's commits, and whose lines those are then.

Reproductions of red-team 3 A2: a commit counted as evolve's when it carried an
`Evolve-Kind` trailer and its committer was its author, so `git commit --amend
--reset-author`, `git commit -C <sha> --reset-author` or evolve's trailers typed under a
person's name made that person's lines the model's, and the next reflection overwrote them.
A commit is evolve's only when evolve's own identity (`[git] author_email`, its default, or
one its notes were written with) is both its author and its committer.
"""

from __future__ import annotations

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


def test_a_reflections_message_reused_with_reset_author_is_the_persons(agent, ans):
    data = ans.json(memo("strategies", "- Use pnpm in this repository."))
    (agent.path / "memo.md").write_text(agent.memo_text() + "- My own rule, typed by me.\n")
    assert person(agent, "commit", "-qa", "-C", data["commit"], "--reset-author").returncode == 0
    ans(memo("strategies", "- Use pnpm everywhere."))
    assert "- My own rule, typed by me." in agent.memo_text()
    assert (
        parsed_trailers(agent.path)["Evolve-Kept"] == "update_memo strategies: kept 1 line(s) a person wrote"
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
