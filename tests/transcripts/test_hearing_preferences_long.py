"""The attack on the twenty-first round: a rule in a long message, a rule said for the step at hand.

A sentence opening "Always / Never …" past the first of a long message is a line of the task's spec,
unless its sentence names the repo as its scope ("Always use pnpm in this repo"), as "from now on" does;
any rule's cue said "for now" (目前, 今回, "por ahora" …) is for this step, unless "not just for now";
what a person types after a long pasted log is read as a reply; "remember we're on staging now"
tells where someone is.
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference

LOGIN_TASK = (
    "I need a login page for the admin dashboard. It should have an email field, a password field "
    "with a show/hide toggle, a remember-me checkbox and a link to the reset flow. Use the Button and "
    "Input components from src/ui, and wire the submit to POST /api/session; on a 401 show the error "
    "inline under the form, on success redirect to /admin. Keep the styles next to the component. "
)
REVIEW_REPLY = (
    "Okay, I looked at the diff. The migration part is fine, but the seeding script still writes into "
    "the production schema when DATABASE_URL is unset, which is exactly what bit us last week. Please "
    "change the fallback so it refuses to run without an explicit URL, and move the fixtures into "
    "tests/fixtures so the seed script stops importing from the app package. The rest can stay. "
)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (LOGIN_TASK + "Build it with the existing router. Always use pnpm in this repo, never npm.", True),
        (LOGIN_TASK + "And please, never add a dependency for this project without asking.", True),
        (REVIEW_REPLY + "Never write raw SQL in our codebase, go through the query builder.", False),
    ],
)
def test_a_rule_scoped_to_the_repo_deep_in_a_long_message_is_heard(text, first):
    assert preference(text, first=first) is not None


# A rule said both ways or stacked on a reminder ("always pnpm, never npm", "Remember: we never …"),
# however deep in a long message: a spec line says one thing
@pytest.mark.parametrize(
    ("text", "first"),
    [
        (LOGIN_TASK + "Oh and always use pnpm, never npm.", True),
        (LOGIN_TASK + "Never commit straight to main; always open a PR.", True),
        (LOGIN_TASK + "Remember: we never push to main.", True),
        (LOGIN_TASK + "\n\nRules:\n- Always use pnpm\n- Never push to main", True),
        (REVIEW_REPLY + "Never run the seed against prod, we always go through staging.", False),
    ],
)
def test_a_rule_said_both_ways_deep_in_a_long_message_is_heard(text, first):
    assert preference(text, first=first) is not None


def test_a_reminder_of_a_fact_with_a_never_deep_in_a_long_task_is_its_spec():
    text = LOGIN_TASK + "Remember the API returns 401 on a bad password, never 403."
    assert preference(text, first=True) is None


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (LOGIN_TASK + "Never show the reset link when the form is locked.", True),
        (REVIEW_REPLY + "Always seed the demo user first, then the fixtures.", False),
    ],
)
def test_a_line_of_the_long_tasks_spec_is_still_no_rule(text, first):
    assert preference(text, first=first) is None


# "Always use npm for now", "por ahora no toques la base", 目前不要动数据库: a rule's cue said of the
# step at hand, in every lexicon language, as a "remember" for now is
@pytest.mark.parametrize(
    "text",
    [
        "Always use npm for now.",
        "Never touch the billing module for now, I'm still migrating it.",
        "for now, don't ask me before running tests",
        "por ahora no toques la base de datos",
        "pour l'instant ne touche pas à la base",
        "目前不要动数据库",
        "今回はデータベースに触らないで",
    ],
)
def test_a_rule_said_for_the_step_at_hand_sets_none(text):
    assert preference(text) is None


# A CJK full stop ends the reminder's sentence: the 以后 of the next one is not stacked on it
def test_a_reminder_for_the_step_at_hand_ends_at_a_cjk_full_stop():
    text = "记住，目前这一步先不写程序，你只生成 plan。我们在 UI 里预告一下，以后会有这个功能。"
    assert preference(text) is None


# "for now" inside a real rule: "not just for now", "for now and always", "for now on" (a "from now
# on" mistyped) still rule
@pytest.mark.parametrize(
    "text",
    [
        "Remember: not just for now, we always squash merge.",
        "Remember, for now and forever, we squash merge.",
        "never touch the database, not just for now",
        "no toques la base de datos, y no solo por ahora",
        "Remember for now on we deploy from the release branch.",
        "Never force-push, not even this time.",
        "Always run the linter, this time you forgot.",  # the moment of another clause
        "This step is done; always run the linter before the next one.",
    ],
)
def test_for_now_inside_a_real_rule_still_rules(text):
    assert preference(text) is not None


TRACEBACK = (
    "Here is what I get:\nTraceback (most recent call last):\n"
    + ('  File "/app/server.py", line 42, in handler\n    result = compute(payload)\n' * 24)
    + "ValueError: bad input\n"
)


# What the person typed past a blank line after a long pasted log: read as a reply is, where the
# long message's reading (its opening; its sentences as the task's spec) would miss it
@pytest.mark.parametrize(
    "text",
    [
        TRACEBACK + "\nCan you fix it? Never use print for debugging, use the logger.",
        TRACEBACK + "\nCan you fix it? From now on, run the tests before you say it's done.",
        TRACEBACK + "\n以后都用 logging 模块，不要用 print。",
    ],
)
def test_a_rule_typed_after_a_long_pasted_log_is_heard(text):
    assert preference(text) is not None


# …but a rule's cue or a word on asking there still closes the task ("don't touch anything else",
# "do not ask for confirmation between tasks"), the paste's own last line is no note, and the last
# block of a long task is still the task
@pytest.mark.parametrize(
    ("text", "first"),
    [
        (TRACEBACK + "\nNo toques nada más.", False),
        (TRACEBACK + "\nProceed on your own. Do not ask for confirmation between the steps.", False),
        (TRACEBACK + "\nCan you fix it? The handler should reject it with a 400.", False),
        (TRACEBACK + "WARNING: never call compute() from the request thread\n", False),
        (LOGIN_TASK + "\n\nNever show the reset link when the form is locked.", True),
    ],
)
def test_no_standing_cue_after_a_paste_or_a_spec_line_is_no_rule(text, first):
    assert preference(text, first=first) is None


# Where someone is now ("remember we're on staging now", "I'm on Windows now", 我们现在在 …): the
# place of the moment, no rule; a "never" / "always" after it in its sentence still rules
@pytest.mark.parametrize(
    "text",
    [
        "Remember we're on staging now.",
        "remember we are on the feature branch right now",
        "Remember, I'm on Windows now.",
        "Recuerda que ahora estamos en staging.",
        "记住，我们现在在 staging 环境。",
    ],
)
def test_a_reminder_of_where_someone_is_now_sets_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Remember: we never push to main.",
        "Remember, from now on we're on pnpm.",
        "Remember we're on pnpm now, never npm.",
        "Remember we currently deploy through the CI only, never by hand.",
    ],
)
def test_a_reminder_with_a_standing_word_still_rules(text):
    assert preference(text) is not None
