"""The `apply_reflection` answer against a person's work: their lines and their undo win.

A line a person undid is not written again under any name; an operation that touches a
person's lines waits for them while the rest lands; links and a renamed memo heading are
refused on their own.
"""

from __future__ import annotations

from dataclasses import replace

from evolve.reflect.compose import compose
from evolve.reflect.operations import BLOCKED_REASON, SkillState
from evolve.workspace import memo as memo_mod
from tests.reflect.answers import MEMO, REBASE, create, memo_op, patch, plan_of, single_rejection, snapshot

# --- what a person undid ---------------------------------------------------------------


def blocked_lines(*lines: str) -> set[str]:
    from evolve.workspace.undo import fingerprint, lesson_text

    return {fingerprint(lesson_text(line)) for line in lines}


def test_lesson_lines_ignore_case_spaces_punctuation_and_markers():
    from evolve.workspace.undo import lesson_text, normalise

    assert (
        normalise("  Always RUN the tests!\n\n(before   pushing).") == "always run the tests before pushing"
    )
    assert lesson_text("- Always run `make test`.") == lesson_text("* always   RUN make test")
    assert lesson_text("## A heading here") is None and lesson_text("- ok") is None


def test_a_patch_bringing_back_an_undone_line_is_refused(state):
    blocked = blocked_lines("- Always run `make test` after a rebase.")
    reason = single_rejection(state, patch(), blocked=blocked)
    assert reason.startswith(BLOCKED_REASON)


def test_a_create_is_blocked_by_its_lines_under_any_name(state):
    blocked = blocked_lines("- Always run `make test` before pushing.")
    body = "# Tests\n\n- always run make test BEFORE pushing\n"
    assert single_rejection(state, create(name="other-name", body=body), blocked=blocked).startswith(
        BLOCKED_REASON
    )
    assert plan_of(state, create(body="- A different rule for tests.\n"), blocked=blocked).operations


def test_a_memo_update_leaves_out_only_the_undone_lines(state):
    blocked = blocked_lines("- Always force-push to main.")
    plan = plan_of(
        state, memo_op("* always force-push to MAIN\n- A brand new, harmless rule."), blocked=blocked
    )
    (op,) = plan.operations
    assert memo_mod.section_content(op.text, "self") == "- A brand new, harmless rule." and op.left_out == 1
    only = plan_of(state, memo_op("- always force-push to main"), blocked=blocked)
    assert not only.operations and "a person undid" in only.rejected[0].reason


# --- a person's lines win -----------------------------------------------------------------


def authored(text: str, *person: str) -> tuple[bool, ...]:
    """Per line of `text`: True for the lines holding one of `person`'s strings."""
    return tuple(any(p in line for p in person) for line in memo_mod.lines(text))


def test_a_memo_update_keeps_a_persons_lines_in_place():
    mine = "- Use pnpm, not npm, in this repo."
    state = SkillState.build([], MEMO, memo_authors=authored(MEMO, mine))
    plan = compose(
        {
            "summary": "s",
            "operations": [
                memo_op("- Use yarn.\n- Keep commits small.\n- Prefer rebase over merge.", "strategies")
            ],
        },
        state,
    )
    (op,) = plan.operations
    assert memo_mod.section_content(op.text, "strategies") == (
        "- Use pnpm, not npm, in this repo.\n- Use yarn.\n- Keep commits small.\n- Prefer rebase over merge."
    )
    assert op.kept == 1 and not plan.waiting
    untouched = compose(
        {
            "summary": "s",
            "operations": [
                memo_op(
                    "- Keep commits small.\n- Use pnpm, not npm, in this repo.\n- New rule.", "strategies"
                )
            ],
        },
        state,
    )
    assert untouched.operations[0].kept == 0  # every line of the person's is there: as written


def test_a_patch_touching_a_persons_line_waits_and_the_rest_lands():
    rebase = snapshot("git-rebase", REBASE)
    text_authors = authored(REBASE, "Always run the tests")  # a person's typo fix, say
    state = SkillState.build([replace(rebase, authors=text_authors)], MEMO)
    plan = compose(
        {
            "summary": "s",
            "operations": [
                patch(),  # touches the person's line: waits
                patch(old="Never rebase a branch others have pulled.", new="Never rebase a shared branch."),
                memo_op("- I rush rebases."),
            ],
        },
        state,
    )
    assert [o.index for o in plan.operations] == [1, 2]
    (waiting,) = plan.waiting
    assert waiting.index == 0 and "touches lines a person wrote" in waiting.why
    assert "Never rebase a shared branch." in waiting.text  # composed on top of what lands
    assert "Always run `make test` after a rebase." in waiting.text


def test_a_retire_of_a_skill_holding_a_persons_lines_waits():
    rebase = snapshot("git-rebase", REBASE)
    state = SkillState.build([replace(rebase, authors=authored(REBASE, "Never rebase"))], MEMO)
    plan = compose({"summary": "s", "operations": [{"op": "retire_skill", "name": "git-rebase"}]}, state)
    assert not plan.operations and plan.waiting[0].kind == "retire_skill"
    other = SkillState.build([replace(rebase, person_files=True)], MEMO)
    assert compose(
        {"summary": "s", "operations": [{"op": "retire_skill", "name": "git-rebase"}]}, other
    ).waiting
    free = compose(
        {"summary": "s", "operations": [{"op": "retire_skill", "name": "git-rebase"}]},
        SkillState.build([rebase], MEMO),
    )
    assert free.operations and not free.waiting


def test_symlinked_files_are_refused_on_their_own():
    link = replace(snapshot("git-rebase", REBASE), symlink=True)
    state = SkillState.build(
        [link], MEMO, memo_refusal="memo.md is a symbolic link; evolve never writes through one"
    )
    plan = compose({"summary": "s", "operations": [patch(), memo_op("- x"), create()]}, state)
    assert [o.kind for o in plan.operations] == ["create_skill"]
    assert all("symbolic link" in r.reason for r in plan.rejected)


def test_a_renamed_memo_heading_gets_no_third_section():
    """C5: after a person renamed '## What I do well…', a reflection appended a third section."""
    renamed = MEMO.replace("## What I do well and where I often stumble", "## What I do well (mine)")
    renamed = renamed.replace("## What I do well (mine)\n", "## What I do well (mine)\n\n- I test first.\n")
    state = SkillState.build([], renamed)
    plan = plan_of(state, memo_op("- I forget the linter."), memo_op("- Use uv.", section="strategies"))
    [reason] = [r.reason for r in plan.rejected]
    assert "renamed it; rename it back" in reason and "'## What I do well (mine)'" in reason
    [applied] = plan.operations  # the other section is still written
    assert applied.section == "strategies" and "- I test first." in applied.text
    assert applied.text.count("## ") == 2
