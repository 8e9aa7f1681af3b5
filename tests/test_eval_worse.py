"""A lesson that made its own eval worse comes first in the next bundle; a rewrite of it is named.

The results are recorded as `evolve eval` records them (`ledger.record_evals`); the
reflection goes through the real anthropic SDK to the local fake Messages API. Δ < 0 counts
only over at least 3 runs per arm, and nothing is retired without a reflection or a person.
"""

from __future__ import annotations

import json
import time

from evolve.cli import main
from evolve.home import Home
from evolve.store import ledger
from evolve.workspace import memo as memo_mod
from tests import people
from tests.helpers import bundle_of, evolve_commit, skill_text, trailer_lines
from tests.people import STRATEGIES, memo

agent, ans = people.agent, people.ans  # the people fixtures

PNPM = "In the shop use `npm`, never `pnpm`."
UV = "Use uv for Python tools."
ENGLISH = "Commit messages are in English."
BODY = "1. Tag with vX.Y.Z.\n"


def result(kind: str, lesson: str, with_: float, without: float, runs: int, status: str = "full") -> dict:
    return {
        "kind": kind,
        "lesson": lesson,
        "status": status,
        "score_with": with_,
        "score_without": without,
        "delta": round(with_ - without, 6) if status == "full" else None,
        "runs_with": runs,
        "runs_without": runs,
        "cost_usd": 0.01,
        "commit_sha": None,
        "detail": "",
    }


def lessons_with_evals(agent) -> None:
    text = agent.memo_text().replace(
        f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n- {UV}\n- {PNPM}\n- {ENGLISH}\n"
    )
    skill = skill_text("release-cut", "Use when asked to cut a release.", BODY)
    evolve_commit(agent, {"memo.md": text.encode(), "skills/release-cut/SKILL.md": skill.encode()})
    rows = [
        result("memo", memo_mod.lesson_id(PNPM), 0, 1, 3),  # worse, over 3 runs a side
        result("memo", memo_mod.lesson_id(UV), 0, 1, 2),  # worse, but over 2 runs: not yet
        result("memo", memo_mod.lesson_id(ENGLISH), 1, 0, 3),  # better
        result("skill", "release-cut", 0.5, 1, 3),  # worse
    ]
    with ledger.opened(Home.resolve().state_db) as conn:
        ledger.record_evals(conn, agent.name, "r1", time.time() - 60, None, rows)
        # a later partial run that looked better is no result
        later = [result("memo", memo_mod.lesson_id(PNPM), 1, 0, 1, status="partial")]
        ledger.record_evals(conn, agent.name, "r2", time.time(), None, later)


def test_a_lesson_that_made_its_eval_worse_comes_first_and_its_rewrite_is_named(
    agent, ans, fake_messages_api
):
    lessons_with_evals(agent)
    bundle = bundle_of(agent)
    assert [(w["kind"], w["lesson"]) for w in bundle.worse] == [
        ("memo", memo_mod.lesson_id(PNPM)),
        ("skill", "release-cut"),
    ]
    assert [b.name for b in bundle.bodies] == ["release-cut"]  # its body is in question
    text = bundle.text
    assert text.index("## Lessons that made their own eval worse") < text.index("## Current memo")
    assert "this lesson made its own eval worse: score 0 with it, 1 without (Δ -1; 3 runs with" in text
    assert f"- memo bullet {memo_mod.lesson_id(UV)}" not in text
    code, out = ans(memo("strategies", f"- {UV}\n- In the shop use `pnpm`, never `npm`.\n- {ENGLISH}"))
    assert code == 0, out
    sent = json.dumps(fake_messages_api.requests[-1].body, ensure_ascii=False)
    assert "## Lessons that made their own eval worse" in sent
    assert trailer_lines(agent.path)["Evolve-Escalated"] == [memo_mod.lesson_id(PNPM)]
    # never retired without a reflection or a person: the skill is still there
    assert (agent.path / "skills" / "release-cut" / "SKILL.md").exists()


def test_the_lessons_listing_and_the_report_count_what_evals_proved(agent, capsys):
    lessons_with_evals(agent)
    (agent.path / "memo.md").write_text(agent.memo_text() + "- Untested draft of mine.\n")
    assert main(["lessons", "a", "--json"]) == 0
    listed = {r["id"]: r["eval"] for r in json.loads(capsys.readouterr().out)["lessons"]}
    assert listed[memo_mod.lesson_id(PNPM)]["delta"] == -1  # the later partial run is no result
    assert listed[memo_mod.lesson_id(PNPM)]["runs_with"] == 3
    assert listed[memo_mod.lesson_id("Untested draft of mine.")] is None
    assert main(["lessons", "a"]) == 0
    table = capsys.readouterr().out.splitlines()
    row = next(line for line in table if line.startswith(memo_mod.lesson_id(PNPM)))
    assert "-1 (3/3)" in row and "EVAL Δ" in table[2]
    assert main(["report", "a", "--json"]) == 0
    lessons = json.loads(capsys.readouterr().out)["lessons"]
    assert lessons["proven"] == {"count": 5, "improve": 1, "worse": 3, "untested": 1}
    assert main(["report", "a"]) == 0
    assert "Lessons proven: 1 of 5 improve the agent, 3 make it worse, 1 untested (evolve eval)." in (
        capsys.readouterr().out.splitlines()
    )
