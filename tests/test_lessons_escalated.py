"""An ignored lesson comes first in the next bundle, and a reflection that rewrites it says so.

The session is played through the installed Claude Code hooks; the reflection goes through the
real anthropic SDK to the local fake Messages API, answered as a capable model answers the
bundle it was sent. What is asserted is what the model was sent and what the person sees in
git: the commit's `Evolve-Escalated` trailer, read from the operations that landed.
"""

from __future__ import annotations

import json

from evolve.home import Home
from evolve.workspace import memo as memo_mod
from tests import people
from tests.helpers import evolve_commit, skill_text, trailer_lines
from tests.lesson_helpers import Project, now_minus
from tests.people import STRATEGIES, memo

agent, ans = people.agent, people.ans  # the people fixtures

UV = "Use uv for Python tools."
PNPM = "In the shop use `pnpm`, never `npm`."
MIGRATE = "1. Apply migrations with `make migrate`, never `alembic upgrade head`.\n"
SESSION = "3c9d2e1f-4a5b-4c6d-8e7f-901a2b3c4d5e"


def ignored_once(agent, tmp_path) -> Project:
    """The agent has both lessons; one session ignores the memo bullet, then the skill."""
    text = agent.memo_text().replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n- {UV}\n- {PNPM}\n")
    skill = skill_text("db-migrate", "Use when a task changes the database schema.", MIGRATE)
    evolve_commit(agent, {"memo.md": text.encode(), "skills/db-migrate/SKILL.md": skill.encode()})
    project = Project(Home.resolve(), agent.name, tmp_path / "shop")
    project.start(SESSION)
    s = project.session(SESSION, now_minus(1))
    s.ask("add lodash").call("Bash", {"command": "npm install lodash"}, "added 1 package").say("Done.")
    s.ask("No, we use pnpm here, not npm.").call("Bash", {"command": "pnpm add lodash"}).say("Done.")
    s.ask("migrate the dev database").call("Bash", {"command": "alembic upgrade head"}, "auth failed", True)
    s.say("It failed.")
    project.stop(SESSION)
    return project


def sent_bundle(api) -> str:
    return json.dumps(api.requests[-1].body, ensure_ascii=False)


def test_the_ignored_lessons_come_first_and_a_rewrite_of_each_is_named_in_the_trailer(
    agent, ans, fake_messages_api, tmp_path
):
    ignored_once(agent, tmp_path)
    bullet = memo_mod.lesson_id(PNPM)
    concrete = "Before `npm install` in the shop: run `pnpm add` (the user: “we use pnpm here, not npm”)."
    code, out = ans(
        memo("strategies", f"- {concrete}\n- {UV}"),
        {
            "op": "patch_skill",
            "name": "db-migrate",
            "old": MIGRATE,
            "new": "1. Never `alembic upgrade head`: " + MIGRATE[3:],
        },
    )
    assert code == 0, out
    sent = sent_bundle(fake_messages_api)
    first = sent.index("## Lessons the agent had and ignored")
    assert first < sent.index("## Current memo") < sent.index("## Conversations")
    assert f'memo bullet {bullet} in \\"{STRATEGIES}\\", shown at session start' in sent
    assert f"ignored in run 1 of session {SESSION[:12]}" in sent and "skill db-migrate, listed" in sent
    assert "the agent had it and ignored it (lesson_ignored)" in sent  # its body is in question
    trailers = trailer_lines(agent.path)
    assert trailers["Evolve-Escalated"] == [bullet, "db-migrate"]
    assert "lesson_ignored" in trailers["Evolve-Signals"]


def test_a_reflection_that_leaves_the_ignored_lesson_as_it_was_names_none(agent, ans, tmp_path):
    ignored_once(agent, tmp_path)
    # the section rewritten with the ignored bullet as it was, where it was: no escalation
    code, _ = ans(memo("strategies", f"- {UV}\n- {PNPM}\n- Deploys run on Fridays only."))
    assert code == 0
    assert "Evolve-Escalated" not in trailer_lines(agent.path)


def test_moving_the_ignored_bullet_first_in_its_section_escalates_it(agent, ans, tmp_path):
    ignored_once(agent, tmp_path)
    code, _ = ans(memo("strategies", f"- {PNPM}\n- {UV}"))
    assert code == 0
    assert trailer_lines(agent.path)["Evolve-Escalated"] == [memo_mod.lesson_id(PNPM)]


def test_retiring_an_ignored_skill_escalates_it(agent, ans, tmp_path):
    ignored_once(agent, tmp_path)
    code, _ = ans(
        {"op": "retire_skill", "name": "db-migrate", "reason": "the Makefile owns migrations"},
        memo("strategies", f"- {UV}\n- {PNPM}\n- Migrations run with `make migrate` only."),
    )
    assert code == 0
    assert trailer_lines(agent.path)["Evolve-Escalated"] == ["db-migrate"]


def test_a_bullet_pushed_down_by_a_new_one_is_not_escalated_and_one_moved_to_the_other_section_is():
    from evolve.reflect.escalation import escalated
    from evolve.reflect.operations import MEMO, ValidOp

    before = f"# M\n\n## {people.SELF}\n\n- Old self.\n\n## {STRATEGIES}\n\n- {UV}\n- {PNPM}\n"
    pushed = before.replace(f"- {UV}\n", f"- A new first lesson.\n- {UV}\n")
    moved = f"# M\n\n## {people.SELF}\n\n- Old self.\n- {PNPM}\n\n## {STRATEGIES}\n\n- {UV}\n"
    ignored = [("memo", memo_mod.lesson_id(PNPM)), ("skill", "db-migrate")]
    for after, expected in ((pushed, []), (moved, [memo_mod.lesson_id(PNPM)]), (before, [])):
        ops = [ValidOp(0, MEMO, "", "strategies", after, before)]
        assert escalated(ops, ignored) == expected
