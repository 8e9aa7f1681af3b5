"""A reflection may write a guard only for a lesson the agent ignored, and only as `remind`.

The session is played through the installed Claude Code hooks (tests/lesson_helpers.py);
the reflection goes through the real anthropic SDK to the local fake Messages API,
answered as a capable model answers the bundle it was sent (it shows the ignored lesson
and the guards beside it). What is asserted is what the person sees: guards.toml, and the
commit's trailers in `git log`. A person's guard is never touched; a person's revert of a
reflection's guard sticks, under its id and its pattern.
"""

from __future__ import annotations

import json

import pytest

from evolve.workspace import memo as memo_mod
from tests import people
from tests.helpers import commit_all, git_out, trailer_lines
from tests.people import memo
from tests.test_lessons_escalated import PNPM, UV, ignored_once, sent_bundle

agent, ans = people.agent, people.ans  # the people fixtures

PATTERN = "\\bnpm (install|i|add)\\b"
MESSAGE = "In the shop use pnpm, never npm (the user: we use pnpm here)."


def set_guard(lesson: str, guard: str = "no-npm", **extra: str) -> dict:
    return {
        "op": "set_guard",
        "guard": guard,
        "tool": "shell",
        "pattern": PATTERN,
        "message": MESSAGE,
        "lesson": lesson,
        "evidence": "run 1 of session 3c9d2e1f-4a5",
        **extra,
    }


@pytest.fixture
def pnpm_ignored(agent, tmp_path) -> str:
    ignored_once(agent, tmp_path)
    return memo_mod.lesson_id(PNPM)


def test_a_guard_for_an_ignored_lesson_lands_as_remind_even_when_asked_to_deny(
    agent, ans, pnpm_ignored, fake_messages_api
):
    code, out = ans(set_guard(pnpm_ignored, action="deny"))
    assert code == 0, out
    sent = sent_bundle(fake_messages_api)
    assert (
        sent.index("## Lessons the agent had and ignored")
        < sent.index("## Guards now")
        < sent.index("## Current memo")
    )
    assert "## Guards now (guards.toml: enforced at the tool call)\\n\\n(none)" in sent
    text = (agent.path / "guards.toml").read_text()
    assert text == (
        "[no-npm]\n"
        'tool = "shell"\n'
        f"pattern = {json.dumps(PATTERN)}\n"
        'action = "remind"\n'
        f'lesson = "{pnpm_ignored}"\n'
        f'message = "{MESSAGE}"\n'
    )
    trailers = trailer_lines(agent.path)
    assert trailers["Evolve-Guard"] == [
        f"no-npm (set guard, lesson {pnpm_ignored}): run 1 of session 3c9d2e1f-4a5"
    ]
    assert trailers["Evolve-Guard-Downgraded"] == [
        "no-npm: asked to deny, lands as remind (only a person denies)"
    ]
    assert trailers["Evolve-Escalated"] == [pnpm_ignored]
    assert trailers["Evolve-Ops"] == ["set_guard no-npm"]
    assert git_out(agent.path, "log", "-1", "--format=%ae") == "evolve@localhost"  # the model's guard


def test_a_guard_for_a_lesson_never_ignored_is_refused(agent, ans, pnpm_ignored):
    code, out = ans(set_guard(memo_mod.lesson_id(UV)), memo("strategies", f"- {PNPM}\n- {UV}"))
    assert code == 0, out
    assert not (agent.path / "guards.toml").exists()
    [line] = trailer_lines(agent.path)["Evolve-Rejected"]
    assert line.startswith("set_guard no-npm: lesson") and "was never ignored" in line


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"tool": "WebFetch"}, "tool 'WebFetch' is not one evolve guards"),
        ({"pattern": "(npm)\\1"}, "pattern refused: backreferences"),
        ({"message": "x" * 700}, "message is 700 characters long"),
        ({"message": "use token ghp_" + "a" * 36}, "holds a secret"),
        ({"guard": "No NPM"}, "guard id 'No NPM' may only hold"),
        ({"pattern": ".*"}, "pattern '.*' matches every call (ls, git status"),
        ({"pattern": "\\w", "action": "deny"}, "matches every call"),
    ],
)
def test_a_guard_that_breaks_a_rule_is_refused_with_its_reason(agent, ans, pnpm_ignored, change, said):
    code, out = ans(set_guard(pnpm_ignored, **change), memo("strategies", f"- {PNPM}\n- {UV}"))
    assert code == 0, out
    assert not (agent.path / "guards.toml").exists()
    [line] = trailer_lines(agent.path)["Evolve-Rejected"]
    assert said in line and "ghp_" not in line


def test_a_persons_guard_is_never_touched_by_a_reflection(agent, ans, pnpm_ignored, fake_messages_api):
    mine = '# mine\n[no-npm]\ntool = "Bash"\npattern = "npm i"\naction = "deny"\nmessage = "pnpm!"\n'
    (agent.path / "guards.toml").write_text(mine)
    commit_all(agent.path, "my guard")
    code, out = ans(
        set_guard(pnpm_ignored),
        {"op": "retire_guard", "guard": "no-npm", "lesson": pnpm_ignored, "evidence": "run 1"},
        memo("strategies", f"- {PNPM}\n- {UV}"),
    )
    assert code == 0, out
    assert (agent.path / "guards.toml").read_text() == mine
    rejected = trailer_lines(agent.path)["Evolve-Rejected"]
    assert rejected == [
        "set_guard no-npm: guard 'no-npm' holds lines a person wrote; only they change it",
        "retire_guard no-npm: guard 'no-npm' holds lines a person wrote; only they change it",
    ]
    assert (
        "- no-npm (Bash, deny, lesson - · a person's: do not touch): pattern 'npm i'"
        in json.loads(sent_bundle(fake_messages_api))["messages"][0]["content"]
    )


def test_a_persons_revert_of_a_guard_sticks_under_its_id_and_its_pattern(agent, ans, pnpm_ignored):
    code, out = ans(set_guard(pnpm_ignored))
    assert code == 0 and (agent.path / "guards.toml").exists(), out
    people.person(agent, "revert", "--no-edit", "HEAD")
    assert not (agent.path / "guards.toml").exists()
    code, out = ans(
        set_guard(pnpm_ignored),
        set_guard(pnpm_ignored, guard="pnpm-only"),
        memo("strategies", f"- {PNPM}\n- {UV}"),
    )
    assert code == 0, out
    assert not (agent.path / "guards.toml").exists()
    rejected = trailer_lines(agent.path)["Evolve-Rejected"]
    assert rejected[0] == "set_guard no-npm: a person undid this lesson: guard 'no-npm'"
    assert rejected[1].startswith("set_guard pnpm-only: a person undid this lesson: a guard on")


def test_the_model_may_sharpen_and_retire_its_own_guard(agent, ans, pnpm_ignored):
    assert ans(set_guard(pnpm_ignored))[0] == 0
    code, out = ans(set_guard(pnpm_ignored, message="Never npm in the shop: pnpm add / pnpm install."))
    assert code == 0, out
    assert (
        'message = "Never npm in the shop: pnpm add / pnpm install."'
        in (agent.path / "guards.toml").read_text()
    )
    code, out = ans({"op": "retire_guard", "guard": "no-npm", "lesson": pnpm_ignored, "evidence": "run 1"})
    assert code == 0, out
    assert (agent.path / "guards.toml").read_text() == ""
    assert trailer_lines(agent.path)["Evolve-Ops"] == ["retire_guard no-npm"]


def test_a_models_pattern_that_backtracks_for_ever_elsewhere_runs_in_linear_time(agent, ans, pnpm_ignored):
    import time

    from evolve.session import guards as check

    code, out = ans(set_guard(pnpm_ignored, pattern="(x+x+)+y"))
    assert code == 0, out
    rows, problems, _ = check.load(str(agent.path / "guards.toml"))
    assert problems == [] and rows[0][2] == "(x+x+)+y"
    started = time.monotonic()
    assert check.verdict({"tool_name": "Bash", "tool_input": {"command": "x" * 50_000}}, rows) is None
    assert time.monotonic() - started < 5


def test_with_review_a_guard_waits_on_a_proposal_and_accept_brings_it(agent, ans, pnpm_ignored, capsys):
    from evolve.cli import main

    toml = agent.path / "agent.toml"
    toml.write_text(toml.read_text().replace("review = false", "review = true"))
    people.person(agent, "commit", "-qam", "review everything")
    outcome = ans.json(set_guard(pnpm_ignored))
    assert outcome["status"] == "proposed", outcome
    assert not (agent.path / "guards.toml").exists()  # the agent reads main: nothing enforced yet
    assert main(["accept", "a", outcome["reflection"]]) == 0
    capsys.readouterr()
    assert 'action = "remind"' in (agent.path / "guards.toml").read_text()


def test_a_replayed_reflection_plans_its_guard_again_without_the_bundle():
    """A sync's replan (no bundle there: `ignored` None) composes the stored guard on the new tip."""
    from evolve.reflect.compose import compose
    from evolve.reflect.operations import SkillState

    theirs = '[tests]\ntool = "Bash"\npattern = "pytest"\nmessage = "Use make test."\n'
    answer = {"summary": "guard", "operations": [set_guard("0a2821543c4a")]}
    state = SkillState.build([], "", guards=theirs, guards_authors=(False,) * 4, ignored=None)
    replayed = compose(answer, state)
    [op] = replayed.operations
    assert op.text == theirs + "\n" + (
        f'[no-npm]\ntool = "shell"\npattern = {json.dumps(PATTERN)}\naction = "remind"\n'
        f'lesson = "0a2821543c4a"\nmessage = "{MESSAGE}"\n'
    )
    assert op.previous == theirs and op.path == "guards.toml"
    fresh = compose(answer, SkillState.build([], "", ignored=frozenset()))
    assert not fresh.operations and "was never ignored" in fresh.rejected[0].reason
