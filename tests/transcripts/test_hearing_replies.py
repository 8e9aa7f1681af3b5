"""How a brief reply opens: a "why" that questions the agent's work, a "still" that says nothing changed.

And the same words where they ask nothing ("why not, ship it"), mean "because" (Italian "perché"),
"nevertheless" ("still, let's ship it") or "or" (Chinese "还是" in a question).
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.transcripts.hearing_cases import DONE, heard


@pytest.mark.parametrize(
    "text",
    [
        "why is the header on two lines?",
        "warum ist der Button grau?",
        "pourquoi la page est vide ?",
        "почему открывается модалка?",
        "为什么又加了一个文件？",
        "neden iki tane dosya var?",
        "so why is the header on two lines?",  # one word may come first
        "bunu neden sildin?",
        "你这里为什么用全局变量？",
    ],
)
def test_a_short_reply_opening_with_why_questions_what_the_agent_just_did(text):
    result = heard(text)
    assert result.correction and result.kind == "pushback", result
    assert not heard(text, before="Hello! What can I help you with?").correction  # it asks back


@pytest.mark.parametrize(
    "text",
    [
        "why is the header on two lines",
        "why the build is not running in CI",
        "Why was it faster before. check the old branch",
        "warum ist der Button grau",
        "pourquoi le bouton est bleu",
        "почему кнопка серая",
        "为什么页面用了两种字体",
    ],
)
def test_a_why_opening_a_short_reply_questions_the_agent_without_a_question_mark(text):
    result = heard(text)
    assert result.correction and result.kind == "pushback", result
    assert not heard(text, before="Hello! What can I help you with?").correction  # it asks back


@pytest.mark.parametrize(
    "text",
    [
        "why not, ship it",
        "Why, thanks a lot",
        "why yes, that works",
        "为什么不呢，就这么办",
        "pourquoi pas, lance-le",
        "tại sao không, cứ làm đi",  # the negation of each lexicon language
    ],
)
def test_a_why_opening_a_reply_whose_clause_says_yes_questions_nothing(text):
    assert not heard(text).correction


def test_a_why_that_means_because_too_asks_with_its_question_mark_only():
    """Italian "perché" opens a reason as often as a question."""
    assert not heard("perché serve anche in staging, procedi").correction
    assert heard("perché la pagina è ancora vuota?").correction


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("why is the header still on two lines?", ""),  # the session's first words: nothing to question
        ("the header, why? " + "it needs one line on phones, two on wide screens. " * 6, DONE),  # a spec
        ("and why does the cache matter here, it is the same either way", DONE),  # no question mark
        ("can you explain why this works?", DONE),  # further into its sentence, the why names a reason
        ("Why not?", DONE),  # a yes
        ("warum nicht?", DONE),
        ("why not", DONE),
    ],
)
def test_a_why_that_opens_no_short_question_after_the_agents_work_is_no_pushback(text, before):
    result = hear(load_lexicons(), text, before, first=not before)
    assert result.kind != "pushback", result


EXPLAINED = "The title comes from `layout.tsx`; the dev server reloads it when the file is saved."


@pytest.mark.parametrize(
    "text",
    [
        "still the old title",
        "всё равно старый заголовок",
        "todavía el título viejo",
        "还是旧的标题",
        "toujours le vieux titre",
    ],
)
def test_a_still_opening_a_brief_reply_reports_nothing_changed_claimed_or_not(text):
    result = heard(text, before=EXPLAINED)
    assert result.correction and result.kind == "failure_report", result
    assert heard(text, before="").correction  # a later message whose agent text is unknown
    assert not heard(text, before="Should I rename the tab's title too?").correction  # it answers
    assert not heard(text, first=True).correction


def test_a_still_further_into_a_reply_or_a_long_one_is_no_report_without_a_claim():
    assert not heard("the header is fine, still the footer needs a link", before=EXPLAINED).correction
    spec = "still on the title: it should read the project name, then the section, then the app, in pale grey"
    assert not heard(spec, before=EXPLAINED).correction


@pytest.mark.parametrize(
    "text",
    [
        "still, merge it as it is",  # nevertheless
        "Still — nice job on the parser",
        "всё равно, давай оставим так",
        "まだ、このままでいいです",
        "still around?",  # it asks
        "还是换成 pnpm 吧",  # rather: a suggestion
        "still, thank you for trying",
    ],
)
def test_a_still_opening_a_brief_reply_that_says_nothing_stayed_so_reports_nothing(text):
    assert not heard(text, before=EXPLAINED).correction


@pytest.mark.parametrize("text", ["部署用 docker 还是 k8s？", "这个我自己合并吗？还是你来合并？"])
def test_a_haishi_that_asks_or_reports_nothing_still_so(text):
    """Chinese "还是" is "still", and "or" in a question past its start."""
    assert not heard(text).correction  # after the agent's claim
    assert heard("还是旧的标题？").correction


def test_thanks_after_a_still_that_reports_nothing_changed_takes_nothing_back():
    assert heard("still the old logo in the navbar, thanks", before=EXPLAINED).correction
    assert not heard("still looks fine on my phone", before=EXPLAINED).correction


@pytest.mark.parametrize(
    "text",
    [
        "still, great work on the parser",  # nevertheless, after the agent's claim too
        "Still — nice job, thanks",
        "immer noch super, danke",
        "还是很好，谢谢",
    ],
)
def test_praise_after_a_still_opening_a_reply_reports_nothing_after_the_agents_claim(text):
    assert not heard(text).correction  # DONE: the agent claimed its work


@pytest.mark.parametrize(
    "text",
    [
        "I still haven't tested it, I'll try tonight",
        "todavía no lo he probado",
        "je n'ai toujours pas testé",
        "ainda não testei",
        "まだです",
        "まだ試していません",
        "还没试",
    ],
)
def test_not_tried_yet_is_no_failure_report(text):
    assert not heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "you still haven't tested it",
        "You still didn't run the tests!",
        "tu n'as toujours pas testé",
        "vous n'avez toujours pas vérifié",
        "你还没测试",
        "您还没试就说好了",
        "まだテストしていないですよね",
        "まだ確認してないでしょ",
    ],
)
def test_the_agent_not_having_tried_yet_is_a_complaint(text):
    """Said of the agent ("you still haven't tested it"), not of the person: a claim doubted."""
    assert heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "still the same after your fix",
        "still broken?",
        "todavía no funciona",
        "まだ動かない",
        "还没看到按钮",
        "Still looks too good to be true, test it more carefully",
        "still super slow",  # "super" intensifies what follows: no praise
        "immer noch super langsam",
        "ancora super lento",
        "ainda super lento",
        "всё ещё супер медленно",
    ],
)
def test_a_still_that_reports_a_failure_after_the_agents_claim_is_heard(text):
    """Praise further into its clause is no praise of the work ("still looks too good to be true")."""
    assert heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "why don't we also add a dark mode toggle?",
        "why not also cache the results?",
        "pourquoi ne pas aussi ajouter un test ?",
        "¿por qué no agregamos también un test?",
        "warum fügen wir nicht auch einen Test hinzu?",
        "por que não também adicionar um teste?",
    ],
)
def test_why_not_also_suggests_more_work_and_challenges_nothing(text):
    assert not heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "why not also fix the bug you introduced?",
        "why don't you also restore the tests you deleted?",
        "why not also read the instructions I gave you?",
        "pourquoi ne pas aussi corriger le bug que tu as introduit ?",
        "pourquoi pas aussi lire les consignes que je t'ai données ?",
        "¿por qué no arreglas también el bug que introdujiste?",
        "warum nicht auch den Bug fixen, den du eingebaut hast?",
        "por que não também corrigir o bug que você introduziu?",
    ],
)
def test_why_not_also_undo_what_the_agent_did_wrong_challenges_it(text):
    """More work that mends the agent's own doing, or heeds what it was told, is a challenge."""
    assert heard(text).correction
    assert not heard("why don't we also add tests for the endpoint you added?").correction


@pytest.mark.parametrize(
    "text",
    ["why don't you use the existing helper?", "why did you also delete the tests?", "¿por qué no funciona?"],
)
def test_why_not_without_also_still_challenges_the_agent(text):
    assert heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "Hi there Claude, hello! That's wrong, the API is v2.",
        "Hey Claude, good morning. This is wrong: use pnpm.",
        "Bonjour Claude, salut ! C'est faux, l'API est en v2.",
        "Здравствуй, Claude! Это неправильно, API v2.",
    ],
)
def test_a_greeting_of_a_few_words_before_a_first_messages_correction_is_skipped(text):
    assert heard(text, first=True).correction


def test_a_first_sentence_that_greets_and_asks_is_the_opening():
    assert not heard("Hi, I need a login page. That's wrong in the old one.", first=True).correction
