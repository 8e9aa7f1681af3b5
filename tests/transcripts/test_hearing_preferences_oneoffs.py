"""Twenty-first round: what only sounds like a rule for later, read from the false preferences of sets 22–25.

A reminder of where things stand now, of who the agent is or of the step at hand, "I'd rather just …"
for this task, a sentence opening "Never …" deep in a long task's spec; and what is still a rule beside
them ("I wish you would always …", a request to record rules in every claude file).
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import ASKED_WHICH_TOOL, preference


# "Remember we currently are in Mac OS", "Remember that you are a skilled web developer": the
# state of the moment or the role the agent plays, not how to work from now on
@pytest.mark.parametrize(
    "text",
    [
        "Is there a way you can test it yourself? Remember we currently are in Mac OS.",
        "Remember, we're currently on the staging database.",
        "Remember that you are a skilled web developer, proficient in GUI design.",
        "remember you're an expert in React and Tailwind",
    ],
)
def test_a_reminder_of_the_moment_or_of_the_agents_role_sets_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "please restart the app. Remember we are not using docker for anything anymore",
        "Remember, we are a tabs shop.",
        "Remember that you always run the linter before committing.",
        "Remember you should never push to main.",
    ],
)
def test_a_reminder_of_how_things_are_done_is_still_a_rule(text):
    assert preference(text) is not None


# "I'd rather just add a small UI touch", "I prefer simpler approach: just enlarge the chunk size":
# the least to do for this task, chosen over what was proposed, not a way of working
@pytest.mark.parametrize(
    "text",
    [
        "The current design is correct, and I'd rather just add a small badge on each card.",
        "this change is not good. I prefer simpler approach: just enlarge the chunk size to 100.",
        "I would rather just drop the migration for now.",
    ],
)
def test_i_d_rather_just_do_the_least_for_this_task_sets_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I prefer having one class per module.",
        "I'd rather you always just ask me than guess.",  # an "always" makes it a rule again
        "I prefer small commits, just one change each.",  # "just" after a comma qualifies the rule
        # the attack on the twenty-first round: the repo or "in general" makes it a rule too
        "I'd rather we just use pnpm in this repo.",
        "I'd rather just keep PRs small in general.",
        "I prefer to just use pnpm everywhere.",
    ],
)
def test_i_prefer_a_way_of_working_is_still_a_rule(text):
    assert preference(text) is not None


def test_i_d_rather_just_answering_the_agents_question_still_picks():
    assert preference("I'd rather just use npm", ASKED_WHICH_TOOL) is None


# "I wish you would always …", "I wish you'd never …": a standing wish, said the way "you should
# always …" is (no set holds one; the attack on the twentieth round asked)
@pytest.mark.parametrize(
    "text",
    [
        "I wish you would always run the tests before saying it's done.",
        "i wish you'd never touch the lockfile",
    ],
)
def test_a_wish_that_the_agent_always_or_never_did_something_is_a_rule(text):
    assert preference(text) is not None


def test_a_wish_for_this_task_is_no_rule():
    assert preference("I wish you would look at the login bug first.") is None


# "记住，目前这一步先不写程序" ("remember, for now this step writes no code"): a reminder for the step
# at hand, in every lexicon language; a "remember" with no such word, or another standing word, rules
@pytest.mark.parametrize(
    "text",
    [
        "记住，目前这一步先是不写任何的程序，就是你只是生成这个 plan。",
        "Remember, for now don't write any code, just the plan.",
        "Remember: this time only touch the tests.",
        "覚えておいて、今回はテストだけ直して",
        "ricordati che per ora non tocchiamo il database",
    ],
)
def test_a_reminder_for_the_step_at_hand_sets_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "记住，提交信息一律写英文",
        "记住，以后每次提交前都先跑测试",
        "Remember to always run the tests first.",
        "覚えておいて、コミットは英語で書くこと",
    ],
)
def test_a_reminder_with_no_word_of_the_moment_still_rules(text):
    assert preference(text) is not None


SPEC = (
    "Now continue working on the front-end implementation: sub-step 3: selection and submit state "
    "model. Be deliberate here: profiles holds each profile's persisted team from the api, and a "
    "separate draft selection holds the working set; seed it from the active profile's persisted "
    "team when a profile is selected, then let it diverge as the user toggles. "
)


# A sentence opening "Never …", "Remember …", 记住 past the first of a long task is a line of its
# spec, as a rule cue is past a short reply; in its opening sentence, or said as "from now on",
# it still rules
@pytest.mark.parametrize(
    "text",
    [
        SPEC + "Never mutate profiles on toggle. On submit, overwrite the entry with the response.",
        SPEC + "Remember the response body is the source of truth after a submit.",
        "请按下面的规格实现报表页面。" * 10 + "记住，导出按钮放在右上角。",
    ],
)
def test_a_sentence_opening_cue_deep_in_a_long_task_is_its_spec(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Always answer in short sentences. " + SPEC,
        SPEC + "From now on, never mutate state in place.",
        SPEC + "Add this to all claude files: never use pip, use uv.",
    ],
)
def test_a_long_task_still_states_a_rule_in_its_opening_or_with_a_cue_said_anywhere(text):
    assert preference(text) is not None


def test_a_short_message_opening_a_sentence_with_never_still_rules():
    assert preference("Thanks. Never mutate profiles on toggle.") is not None


@pytest.mark.parametrize(
    "text",
    ["I want to add this to all claude files as well", "put these rules in all the agents files"],
)
def test_asked_to_record_rules_in_every_claude_file_is_a_preference(text):
    assert preference(text) is not None
