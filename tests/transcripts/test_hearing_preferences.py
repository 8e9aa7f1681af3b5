"""Hearing a standing preference: how the person wants things done from now on, in every language.

A preference is said as a standing word ("from now on", "今后"), a word that opens a
sentence ("Always …", "Thanks, never …"), a rule for how the agent works ("don't ask me for
confirmation", "New rule: …"), or a language to answer in. The same words inside a task
("after clicking Preview", "set it up in this project", "we don't have access", "add a new
rule to the linter") state nothing.
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.transcripts.hearing_cases import ASKED_WHICH_TOOL, DONE, preference

PREFERENCES = [
    ("en", "From now on, run the linter before you commit."),
    ("en", "Rules for this repo:\nnever commit generated files"),
    ("en", "New rule: every migration gets a rollback script."),
    ("en", "fix the flaky test and do not ask me for confirmation"),
    ("en", "ask me when you need to push, I will do it myself"),
    ("en", "We don't use mocks in the integration tests."),
    ("en", "we don't rebase, we merge"),
    ("en", "Thanks, always use pnpm"),
    ("en", "From now\non use pnpm for everything"),  # a hard-wrapped line reads as one
    ("zh", "以后都用 pnpm，不要再用 npm 了"),
    ("zh", "好的，以后用pnpm"),
    ("ja", "今後は必ずテストを書いてください"),
    ("it", "D'ora in poi scrivi i commenti in inglese."),
    ("es", "En este proyecto usamos pnpm, no npm."),
    ("pt", "Neste projeto usamos pnpm."),
    ("uk", "Надалі пиши коміти англійською."),
    ("tr", "benimle türkçe konuşacaksın"),
    ("tr", "Benimle turkce konusacaksin lutfen"),
    ("en", "Keep the public API, but never expose the admin routes."),
    ("en", "use rebase but never force push"),
    ("en", "ok so always run the linter first"),
    ("en", "fyi the fixtures are in tests/data here, not in src"),
    ("en", "the api keys belong in .env here, never in the code"),
    ("zh", "今后的代码都用 TypeScript 写"),
    ("de", "Nie wieder direkt auf main pushen."),
    ("it", "Mai usare var nel frontend."),
    # a scope of "wherever it applies": how to work, not this one task
    ("en", "prefer pure functions over classes wherever possible"),
    ("en", "Reuse the shared fixtures whenever possible."),
    ("de", "Nutze wo möglich die Standardbibliothek."),
    ("es", "Usa tipos estrictos siempre que sea posible."),
    ("fr", "Évite les dépendances externes dans la mesure du possible."),
    ("pt", "Use async sempre que possível."),
    ("it", "Usa le funzioni pure ove possibile."),
    ("ru", "По возможности пиши тесты до кода."),
    # the language of everything the agent writes: "all" / "always" and a language in one sentence
    ("en", "Please keep all commit messages and code comments in English."),
    ("es", "Todos los comentarios del código siempre en inglés, por favor."),
    ("pt", "Todo texto da interface deve ser em português."),
    ("zh", "注释和提交信息全部用中文"),
    ("de", "Bitte alle Kommentare auf Englisch."),
    ("fr", "Tous les messages de commit en anglais, s'il te plaît."),
    ("ru", "Все комментарии в коде на английском."),
    ("en", "Remember to always run the formatter before you commit."),
    ("en", "Remember when you open a PR to add a changelog entry."),
    ("en", "Remember we use tabs, not spaces."),
]


@pytest.mark.parametrize(("lang", "text"), PREFERENCES)
def test_a_standing_preference_is_heard_with_its_cue(lang, text):
    assert preference(text) is not None, (lang, text)
    assert preference(text, ASKED_WHICH_TOOL) is not None  # typed as the answer to the agent's question too


NOT_PREFERENCES = [
    "点击预览以后弹出一个窗口",  # "after clicking": 以后 inside a sentence
    "我以后也要用这个报告",
    "改完以后请跑一下测试",
    "empieza configurando el correo en este proyecto",  # a task set in this project
    "configura il database in questo progetto",
    "We don't have access to the staging server yet.",
    "the page says we do not support this browser",
    "Add a new rule to the eslint config for unused imports",
    "Don't ask me, I have no idea what the API returns.",
    "never mind, fix the other bug first",
    # what something does, not how to work: a linter's words, a report, a status
    "src/api.ts\n  12:7  warning  'token' is assigned a value but never used",
    "It compiles, but never terminates on the big inputs.",
    "ok so it always returns null when the cache is cold",
    "Always the same error, please help",  # the attack on the twenty-first round: a report
    "Never seen this before. What does it mean?",
    "Never had this issue on the old laptop.",
    "The old report is in archive/ now, have a look at its totals.",
    "The spec is in docs. Fix the parser here first.",  # "in … here" across two sentences
    "nie w tym katalogu, w src",  # Polish "not", which German reads as "never"
    "mai làm tiếp phần này nhé",  # Vietnamese "tomorrow", which Italian reads as "never"
    "if possible, add a test for the parser too",  # this task's wish, not a standing scope
    # "remember" before a fact of the task at hand reminds, it sets no rule
    "Drop the extra helper, and remember we already have a retry wrapper in utils.",
    "Remember that we already have a logger, so reuse it here.",
    "Remember this only applies to the staging config.",
    "recuerda que ya tenemos un cliente http en utils",
    "lembre-se que já temos um cliente http em utils",
    "Are all the error messages in English now?",  # asks, does not set the language
    # beside "all", a language that names what is, what is seen or what to translate
    "The error messages are all in English, the docs too.",
    "todos los textos están en inglés y el menú también",
    "I see all the labels in English although the locale is German",
    "Translate all the strings in English to German.",
    "Alle Texte sind auf Englisch, bitte übersetzen.",
    # what a product shows is a sight too, whoever shows it
    "La aplicación muestra todo en inglés aunque el navegador esté en español.",
    "The dashboard displays all dates in English even with a French locale, why?",
]


@pytest.mark.parametrize("text", NOT_PREFERENCES)
def test_the_same_words_inside_a_task_state_no_preference(text):
    assert preference(text) is None


def test_dont_ask_me_states_a_preference_and_corrects_nothing():
    heard = hear(load_lexicons(), "just fix it and do not ask me for confirmation", DONE)
    assert heard.preference and not heard.correction


# Fourteenth round: how the agent talks from now on, said as "don't waste my time with …"
@pytest.mark.parametrize(
    "text",
    [
        "Don't waste my time with long explanations",
        "No me hagas perder el tiempo con explicaciones largas",
        "Verschwende nicht meine Zeit mit langen Erklärungen",
        "Не трать моё время на длинные объяснения",
        "Ne me fais pas perdre mon temps avec de longues explications",
        "For the review:\n- don't waste my time with recaps\n- show the diff",
        "fine\n\ndon't waste my time with summaries of the diff",
        "No pierdas mi tiempo con resúmenes largos",
        "Verschwende meine Zeit nicht mit Zusammenfassungen",
    ],
)
def test_not_wasting_the_persons_time_with_a_way_of_talking_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "don't waste my time, the build still fails",
        "I don't waste my time with flaky tests, delete them",
        "내 시간 낭비하지 마",  # its "하지 마" ("don't") is the order of the moment
        "시간 낭비하게 하지 마, 로그부터 봐",
    ],
)
def test_time_wasted_on_this_task_sets_no_preference(text):
    assert preference(text) is None


# Fourteenth round: an order to stop what the agent is doing now corrects it; it sets no standing
# preference, unless it stops the agent asking
@pytest.mark.parametrize(
    "text",
    [
        "stop using the old client, call the new one",
        "Para de tentar abrir o arquivo",
        "хватит гадать, поищи в документации",
        "deja de usar npm en este paso",
        "Stop guessing, read the schema first",
        "stop assuming the API returns JSON",
    ],
)
def test_an_order_to_stop_what_the_agent_does_now_sets_no_preference(text):
    assert preference(text) is None and hear(load_lexicons(), text, DONE).correction


@pytest.mark.parametrize(
    "text",
    [
        "stop asking me for confirmation",
        "Перестань спрашивать меня",
        "hör auf zu fragen",
        "deja de preguntarme",
    ],
)
def test_an_order_to_stop_asking_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("stop using moment.js, always use date-fns", "always"),
        ("stop adding type: ignore, never silence mypy again", "never"),
        ("deja de usar console.log, usa siempre el logger", "siempre"),
        ("хватит писать комментарии, всегда пиши docstring", "всегда"),
        ("przestań używać print, zawsze używaj loggera", "zawsze"),
    ],
)
def test_a_stop_order_saying_what_to_do_always_instead_is_a_preference(text, cue):
    assert preference(text) == f"states a standing preference: “{cue}”"


@pytest.mark.parametrize(
    "text",
    [
        "stop adding emoji to the commit messages in this repo",
        "stop creating helper files, ever",
        "Please stop using relative imports in our codebase",
    ],
)
def test_a_stop_order_for_the_whole_project_or_for_ever_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "stop using the mock server, it always returns 200",
        "stop using moment, it is always slow",
        "stop using var, it's always wrong",
        "deja de usar var, siempre falla",
    ],
)
def test_a_stop_order_beside_what_always_happens_sets_no_preference(text):
    assert preference(text) is None
