"""The `apply_reflection` answer: valid operations, and how an answer composes in its order.

Each operation builds on the text as the ones before it left it; a malformed answer is
refused whole, a malformed operation on its own. What is refused for what it holds is in
test_operations_refusals.py; a person's lines and undo in test_operations_persons_lines.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.config import Config
from evolve.reflect.compose import compose
from evolve.reflect.operations import OPS, TOOL_SCHEMA, AnswerError, Limits
from evolve.workspace import memo as memo_mod
from evolve.workspace.skills import parse_skill, split_frontmatter
from tests.reflect.answers import MEMO, REBASE, SECRETS, create, memo_op, patch, plan_of, single_rejection

# --- valid operations -------------------------------------------------------------------


def test_valid_create_renders_a_parseable_skill(state):
    plan = plan_of(state, create(description="Use when\n  finishing a change."))
    (op,) = plan.operations
    assert (op.kind, op.name, op.previous) == ("create_skill", "run-tests", None)
    assert op.path == "skills/run-tests/SKILL.md"
    skill = parse_skill(op.text, "run-tests", Path(op.path))
    assert skill.valid and skill.description == "Use when finishing a change."
    assert "Always run `make test`." in skill.body
    assert plan.summary == "learn things" and not plan.nothing_to_save and plan.rejected == []


def test_valid_patch_changes_body_bytes_only(state):
    (op,) = plan_of(state, patch()).operations
    head_before, _ = split_frontmatter(REBASE)
    head_after, body = split_frontmatter(op.text)
    assert head_after == head_before and op.text.startswith(REBASE[: REBASE.index("# Git")])
    assert "Always run `make test` after a rebase." in body
    assert op.previous == REBASE and op.path == "skills/git-rebase/SKILL.md"


def test_valid_retire(state):
    (op,) = plan_of(state, {"op": "retire_skill", "name": "git-rebase", "reason": "never used"}).operations
    assert (op.kind, op.text, op.path, op.reason) == ("retire_skill", None, "skills/git-rebase", "never used")


def test_memo_updates_are_cumulative_and_keep_the_rest(state):
    plan = plan_of(
        state,
        memo_op("- I rush migrations."),
        memo_op("- Use pnpm.\n- Ask before force-push.", section="strategies"),
    )
    first, second = plan.operations
    assert first.previous == MEMO and second.previous == first.text
    assert memo_mod.section_content(second.text, "self") == "- I rush migrations."
    assert memo_mod.section_content(second.text, "strategies") == "- Use pnpm.\n- Ask before force-push."
    assert second.text.startswith("# Memo of demo\n") and memo_mod.problems(second.text, 2000) == []
    assert second.path == "memo.md"


def test_memo_may_use_level_three_headings(state):
    assert plan_of(state, memo_op("### Testing\n- Run tests first.")).operations


def test_extra_keys_are_ignored(state):
    op = {**create(), "path": "../../.git/hooks/pre-commit", "mode": "0755"}
    (valid,) = plan_of(state, op).operations
    assert valid.path == "skills/run-tests/SKILL.md"


# --- the answer as a whole --------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        None,
        5,
        "not json",
        '{"summary": "x", "operations": [{"op": "create_sk',
        b"\xff\xfe",
        [],
        ["x"],
        {},
        {"summary": "x"},
        {"summary": "x", "operations": "create_skill"},
        {"summary": "x", "operations": {}},
        {"summary": 5, "operations": []},
        {"summary": ["x"], "operations": []},
        {"summary": "x", "operations": [create()] * 10_000},
        {"summary": "x", "operations": [{}] * 21},
        "[" * 100_000,
        "x" * 3_000_000,
    ],
)
def test_malformed_answers_raise(state, answer):
    with pytest.raises(AnswerError):
        compose(answer, state)


def test_answer_as_json_text_is_accepted(state):
    plan = compose(json.dumps({"summary": "s", "operations": [create()]}).encode(), state)
    assert [o.name for o in plan.operations] == ["run-tests"]


@pytest.mark.parametrize(
    ("op", "why"),
    [
        ("create_skill", "not an object"),
        (None, "not an object"),
        ([1], "not an object"),
        ({"op": "delete_everything", "name": "git-rebase"}, "unknown op"),
        ({"name": "x"}, "unknown op"),
        ({"op": ["create_skill"]}, "unknown op"),
        ({"op": "create_skill", "name": "x"}, "missing"),
        ({"op": "update_memo", "section": "self"}, "missing"),
        ({"op": "update_memo", "section": "self", "content": {"nested": [[[]]]}}, "must be a string"),
    ],
)
def test_malformed_operations_are_refused_on_their_own(state, op, why):
    assert why in single_rejection(state, op)


def test_operations_on_one_target_compose_in_answer_order(state):
    body = "- step one: lint\n- step two: test\n"
    plan = plan_of(
        state,
        create(body=body),
        patch(name="run-tests", old="lint", new="run `ruff check`"),
        patch(name="run-tests", old="step two: test", new="step two: `make test`"),
        patch(),  # git-rebase: an independent skill
        patch(old="Never rebase", new="Never force-rebase"),  # the same skill again, as patched so far
        memo_op("- a"),
        memo_op("- b", section="strategies"),
    )
    assert plan.rejected == [] and [o.index for o in plan.operations] == [0, 1, 2, 3, 4, 5, 6]
    created, first, second = plan.operations[:3]
    assert first.previous == created.text and second.previous == first.text
    assert "- step one: run `ruff check`\n- step two: `make test`\n" in second.text
    assert "Never force-rebase" in plan.operations[4].text and "`make test` after" in plan.operations[4].text
    final = plan.operations[-1].text
    assert memo_mod.section_content(final, "self") == "- a"
    assert memo_mod.section_content(final, "strategies") == "- b"


def test_only_the_contradicting_operation_is_refused(state):
    plan = plan_of(
        state,
        patch(),
        {"op": "retire_skill", "name": "git-rebase"},  # patched earlier in this answer
        create(),
        create(),  # exists now
        patch(old="Always run the tests", new="x"),  # quoted text no longer in the body as patched
        {"op": "retire_skill", "name": "broken-one"},
    )
    assert [(o.kind, o.index) for o in plan.operations] == [("patch_skill", 0), ("create_skill", 2)]
    reasons = {r.op_index: r.reason for r in plan.rejected}
    assert "patched earlier in this answer" in reasons[1]
    assert "exists; use patch_skill" in reasons[3]
    assert "does not occur in the body as patched so far" in reasons[4]
    assert "broken" in reasons[5]


def test_an_invalid_first_operation_does_not_claim_its_target(state):
    plan = plan_of(state, patch(old="missing text"), patch())
    assert [o.index for o in plan.operations] == [1]


def test_nothing_to_save(state):
    plan = plan_of(state, {"op": "nothing_to_save", "reason": "only transient errors"}, summary="")
    assert plan.nothing_to_save and plan.operations == [] and plan.rejected == []
    assert plan.nothing_reason == "only transient errors" and plan.summary == "nothing to save"
    assert plan_of(state).nothing_to_save


def test_nothing_to_save_beside_real_operations_is_refused(state):
    plan = plan_of(state, {"op": "nothing_to_save"}, create())
    assert not plan.nothing_to_save and [r.op_name for r in plan.rejected] == ["nothing_to_save"]


def test_summary_is_one_safe_line(state):
    plan = plan_of(state, create(), summary=f"learn\u202e tests\nsecond line {SECRETS['github']}")
    assert plan.summary == "learn tests second line [REDACTED:github-token]"
    assert plan_of(state, create(), summary="").summary == "create skill run-tests"
    assert len(plan_of(state, create(), summary="x" * 5000).summary) <= 200


# --- interface --------------------------------------------------------------------------


def test_tool_schema():
    assert TOOL_SCHEMA["name"] == "apply_reflection"
    schema = TOOL_SCHEMA["input_schema"]
    assert schema["required"] == ["summary", "operations"]
    props = schema["properties"]["operations"]["items"]["properties"]
    assert props["op"]["enum"] == list(OPS)
    assert props["section"]["enum"] == ["self", "strategies"]
    assert {"name", "description", "body", "old", "new", "content", "reason"} <= set(props)
    json.dumps(TOOL_SCHEMA)


def test_limits_from_config():
    limits = Limits.from_config(Config().limits)
    assert (limits.skill_body_tokens, limits.memo_section_chars, limits.max_operations) == (5000, 2000, 20)
