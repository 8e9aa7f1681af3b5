"""Objections with no "wrong" word, heard where they answer the agent's work.

A denial of the agent's claim, a negative question, a "you should be using …", a failure
the person pastes or sees right after the agent said done. The same words inside a task's
text, a product's spec ("you should only see the dashboard") or a session's first request
are no correction.
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons

DONE = "Done: the server is up on port 8080 and the tests pass."
PLAN = "I'll skip the notification step and finish the import first."


def heard(text: str, before: str = DONE, *, first: bool = False):
    return hear(load_lexicons(), text, "" if first else before, first=first)


OBJECTIONS = [
    ("That's not true, the cache is per user.", DONE, "negation"),
    ("No, this isn't correct: the port is taken by nginx.", DONE, "negation"),
    ("Hmm this was not correct either", DONE, "negation"),
    ("Didn't you read the README first?", DONE, "pushback"),
    ("But can't you just call the API directly?", PLAN, "pushback"),
    ("Don't you have shell access in this session ?", PLAN, "pushback"),
    ("You should be calling the bulk endpoint for this.", PLAN, "rule"),
    ("you must never touch the vendored folder", PLAN, "rule"),
    ("the browser says connection refused on 8080", DONE, "failure_report"),
    ("接口返回错误了", "已经修好了。", "failure_report"),  # the error is the report, not the topic
    ("太简单了，边界情况都没处理", "已经完成了。", "failure_report"),
    ("no , use the staging bucket", PLAN, "negation"),  # a space before the comma
    ("the frontend didnt build", DONE, "failure_report"),
    ("I don't trust these numbers, rerun the benchmark", DONE, "negation"),
    ("うーん、思ってたのと違うな", "画面を作り直しました。", "negation"),
    ("这个函数不是早就已经写好了吗？", "我新建了 utils.py。", "pushback"),
    ("thats not correct, the limit is per project", DONE, "negation"),  # typed without the apostrophe
]


@pytest.mark.parametrize(("text", "before", "kind"), OBJECTIONS)
def test_an_objection_without_a_wrong_word_is_heard_with_its_cue(text, before, kind):
    result = heard(text, before)
    assert result.correction, text
    assert result.kind == kind, (text, result.why)
    assert result.cue


def test_a_rule_for_how_the_agent_works_is_a_standing_preference_too():
    result = heard("You should always run the formatter before committing.", PLAN)
    assert result.correction and result.preference


NOT_OBJECTIONS = [
    # the words inside a sentence of a task: what the code must check
    ("Write a validator that reports whether this is not correct input.", DONE),
    ("Add a test that the parser rejects input that is not correct UTF-8.", DONE),
    # a product's spec: "you" is the user of the product
    ("After login you should only see the dashboard; add that to the e2e test.", DONE),
    ("you should see the new header on every page", DONE),
    # a request, not a challenge: no question mark
    ("don't you dare push to main before the release", DONE),
    # the person's own words about the API, the agent did not claim anything yet
    ("The old endpoint refused large payloads, so add paging", PLAN),
    ("沒有問題", DONE),  # "no problem"
    # the person corrects themselves, or quotes what the product must print
    ("Sorry, that was not correct, I gave you the wrong path: it is src/app.yml", PLAN),
    ("The quiz should print: That is not correct. Try again!", DONE),
    # a deduction or a promise, not a rule for how the agent works
    ("You must be using an old Python, the walrus operator is newer.", DONE),
    ("The form says you must not use your old password; add that check.", DONE),  # the product's words
    ("I raised the quota, so you should not run into the limit now.", DONE),
    ("检查一下用户是不是已经登录，如果不是就跳转到登录页，可以吗？", DONE),  # a new task
    ("没有了", "已完成。还有其他需要吗？"),  # "nothing more"
    ("太好了！接下来把导出按钮放到右上角", DONE),  # praise shaped like "太慢了"
    ("好的。缺少参数时抛出错误并记录日志", DONE),  # an error the code must raise
]


STOPPED = "Let me start by rewriting the config loader:"  # the person stopped the agent here


@pytest.mark.parametrize(
    "text",
    [
        "no in the other folder, under packages/api",
        "no i want the staging bucket",
        "ok no in the root folder please",
        "you're not running it inside the container",
        "не тот файл, другой",
        "nie ten plik, tylko config",
    ],
)
def test_no_opening_the_reply_to_a_stopped_agent_is_a_correction(text):
    result = hear(load_lexicons(), text, STOPPED, after_error=True)
    assert result.correction and result.kind == "negation", (text, result.why)
    assert not heard(text, first=True).correction  # a session's first words correct nothing
    assert not heard(text, STOPPED).correction  # the agent was not stopped: "no" may answer anything


@pytest.mark.parametrize(
    "text",
    [
        # a retry, a hedge, "no" as a determiner or a number: a new instruction
        "not sure what happened, continue",
        "now try again",
        "nothing to add, go on",
        "not sure, but add a test too",
        "no idea what happened there, the session crashed",
        "no tests needed for this one, just ship the change",
        # agreeing or apologising after stopping the agent by mistake
        "no you're right, that approach is better",
        "no it's fine, I hit escape by accident",
        "not your fault, the server was down",
        "no wait i was wrong, your first version was fine",
        "you're not going to believe it, the bug was in my shell config",
        "不是那么急，先把测试加上",
        "違うブランチでも同じ変更をして",
        "No. 3 on the list is next: the exporter",
        "Not only the loader, update the writer as well",
        # other languages' "not" opening an ordinary sentence, "si no" ("if not")
        "не забудь потом обновить README",
        "不是很急，先把测试加上",
        "si no funciona, usa el otro archivo",
        "não sei o que aconteceu, caiu a rede",
    ],
)
def test_a_retry_or_a_new_instruction_after_an_interruption_is_no_refusal(text):
    assert not hear(load_lexicons(), text, STOPPED, after_error=True).correction


@pytest.mark.parametrize("text", ["no", "nope, leave it as it is"])
def test_no_answering_the_agents_question_before_the_error_is_no_refusal(text):
    asked = "Should I also update the README, or leave it as is?"
    assert not hear(load_lexicons(), text, asked, after_error=True).correction


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("the page can't be reached now", DONE),
        ("it gets stuck on the login screen", DONE),
        ("Slackで試したけど反応ない", "ボットを起動しました。"),
        ("页面没有样式", "已经部署好了。"),
    ],
)
def test_a_failure_said_in_everyday_words_after_a_claim_is_heard(text, before):
    result = heard(text, before)
    assert result.correction and result.kind == "failure_report", (text, result.why)


@pytest.mark.parametrize(
    "text",
    [
        "I'm stuck choosing a name for the module, any ideas?",
        "next: if the upload fails, retry it three times",  # what the work must handle
    ],
)
def test_a_failure_the_work_must_handle_is_no_report(text):
    assert not heard(text).correction, heard(text).why


@pytest.mark.parametrize("text", ["when I open the page it crashes", "it crashes when I click save"])
def test_a_failure_the_person_saw_in_a_when_clause_is_a_report(text):
    assert heard(text).kind == "failure_report"


@pytest.mark.parametrize("text", ["again", "try it again", "again please"])
def test_again_with_no_failure_after_an_interruption_is_still_a_retry(text):
    assert not hear(load_lexicons(), text, DONE, after_error=True).correction
    assert not heard(text).correction


@pytest.mark.parametrize(("text", "before"), NOT_OBJECTIONS)
def test_the_same_words_in_a_task_or_a_spec_are_no_correction(text, before):
    result = heard(text, before)
    assert not result.correction, (text, result.why)


@pytest.mark.parametrize(
    "text",
    [
        "Don't you think a queue fits better?",
        "You should be using the bulk endpoint for imports.",
    ],
)
def test_a_sessions_first_request_holds_no_objection(text):
    assert not heard(text, first=True).correction


# The person stopped the agent at work and, in the opening sentence of a short reply, says
# what not to do or where instead: the agent was heading the wrong way.
REDIRECTS = [
    "put the new helper in utils/strings.py, not in the models module",
    "use the staging bucket instead of the production one for these uploads",
    "coloque o relatório na pasta docs e não na raiz do projeto",
    "это надо делать в тестах, а не в основном коде сервиса",
    "bitte die Tests anpassen, nicht den Produktionscode im Modul",
    "不要再改数据库迁移脚本了，这次只需要改前端页面里的表单校验代码，其他文件都先别碰",
]


@pytest.mark.parametrize("text", REDIRECTS)
def test_a_not_in_the_reply_to_a_stopped_agent_turns_it(text):
    result = hear(load_lexicons(), text, STOPPED, after_error=True)
    assert result.correction and result.kind == "negation", (text, result.why)
    assert "stopped" in (result.cue or ""), result.why
    assert not heard(text, first=True).correction  # a session's first words correct nothing


@pytest.mark.parametrize(
    "text",
    [
        # a condition, an aside, the person speaking of themselves: nothing the agent did wrong
        "if not, leave the loader alone and move on to the writer module",
        "not sure it matters much, but also add a docstring to the loader",
        "I'm not at my desk for a while, just finish the loader on your own",
        "I have not read your plan for the loader yet, but start with the writer module",
        "I’ve not read your plan for the loader yet, but start with the writer module",
        "it's not urgent, take your time and finish the loader rewrite properly",
        "it was not you, my build machine rebooted; run the loader tests once more",
        "not a big deal, the network just hiccupped, carry on with the loader please",
        # asked, or further on than the opening sentence: a question or a new remark
        "could we keep the old loader around for now and not delete it right away?",
        "Add a docstring to the loader as well. Not urgent, do it at the end.",
        # a bare "no" opening the reply is the refuse cue's to weigh ("no you're right", "no wait")
        "no you're right, rewriting the loader first is the better order",
    ],
)
def test_a_not_after_a_stop_that_turns_nothing_is_no_correction(text):
    assert not hear(load_lexicons(), text, STOPPED, after_error=True).correction, text


def test_a_redirect_needs_the_stop_and_no_question_of_the_agents():
    text = REDIRECTS[0]
    assert not heard(text, STOPPED).correction  # not stopped: "not in X" may be the spec of a new task
    asked = "Should the helper go into utils/strings.py or into the models module?"
    assert not hear(load_lexicons(), text, asked, after_error=True).correction  # it answers the question


# Right after the person stopped the agent, a short statement opening with a definite subject
# tells it how things are (where a thing is, what a setting is): the agent was working from a
# wrong picture. An order opens with its verb; a stop by mistake corrects nothing.
@pytest.mark.parametrize(
    "text",
    [
        "the vendored sdk already lives in third_party/sdk, next to the build scripts",
        "our staging database is the one on port 5433, the other is production",
        "this module is generated from the schema, edits to it are overwritten",
        "the loader looks good, but the schema file lives in config/schema.json now",  # praise, "but"
    ],
)
def test_a_statement_to_a_stopped_agent_tells_it_how_things_are(text):
    result = hear(load_lexicons(), text, STOPPED, after_error=True)
    assert result.correction and result.kind == "fact", (text, result.why)
    assert not heard(text, STOPPED).correction  # not stopped: a statement may open any new request
    assert not heard(text, first=True).correction


@pytest.mark.parametrize(
    "text",
    [
        "add a second loader for the yaml files, then run the whole test suite",
        "the meeting just ended, where were we with the loader rewrite?",
        "that was my mistake, I pressed escape by accident while typing",
        "Desculpa, não era para parar, pode seguir com o refactor do módulo de carga",  # by mistake
        "Entschuldigung, das Stoppen war aus Versehen, nicht absichtlich; bitte den Loader zu Ende schreiben",
        "Perdón, te detuve sin querer, no era mi intención; termina el cargador por favor",
        "Извини, остановил тебя случайно, это не нарочно, допиши загрузчик пожалуйста",
        "this looks fine so far, keep going with the loader",
        # a statement that lets the stopped agent go on, or praises it with no "but"
        "the tests pass now on my machine, please go ahead with the loader rewrite",
        "my laptop went to sleep halfway through, please pick up where you left off",
        "the second loader is fine as well, now also add a test for an empty file",
        "that is exactly right, thanks, now please move on to the writer module",
        "The loader tests pass now. Should I merge the branch or wait for the review first?",
        "the new loader is awesome, love it, now do the same for the writer module",
        "the plan sounds good to me, start with step one and show me the diff afterwards",
    ],
)
def test_an_order_a_question_or_a_stop_by_mistake_is_no_statement_of_fact(text):
    assert not hear(load_lexicons(), text, STOPPED, after_error=True).correction, text


NPM_DONE = "I installed the dependencies with npm and started the dev server on port 3000."


def test_a_reply_opening_with_not_x_rejects_the_agents_word():
    assert heard("not npm, this repo uses pnpm", NPM_DONE).kind == "convention"


@pytest.mark.parametrize(
    "before", ["I added the dropdown with jQuery.", "Dropdown added, built on jquery: done"]
)
def test_the_agents_word_ending_its_sentence_is_rejected_like_any_other(before):
    assert heard("Don't use jquery, the project is React", before).kind == "convention"


@pytest.mark.parametrize(
    "text",
    [
        "Next, add a pagination bar under the orders table and keep the filters above it. "
        "The scripts should not use npm here.",
        "Next, add a pagination bar under the orders table and keep the filters above it; "
        "the build scripts are not npm based.",
    ],
)
def test_a_not_x_past_the_opening_sentence_is_the_requests_spec(text):
    """Even in a reply under 200 characters, a "not X" further on describes the new work."""
    assert not heard(text, NPM_DONE).correction


@pytest.mark.parametrize(
    "text",
    [
        "Nice. Why does the sidebar use a grid there?",
        "Excellent. I don't want a modal for this, put the form inline.",
        "完美。为什么导出按钮在菜单里？",
        "Great, thanks. The error is gone.",  # a failure word past the sentence after the praise
    ],
)
def test_a_reply_opening_with_praise_takes_the_work_and_asks_for_more(text):
    assert not heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "Perfect, but it still crashes when I save a file",
        "nice try, the page is still blank",
        "perfect… except it crashes on startup",  # sarcasm: a failure in the opening sentence
        "Perfecto, ahora no compila nada",
    ],
)
def test_praise_then_still_failing_is_a_failure_report(text):
    assert heard(text).kind == "failure_report"
