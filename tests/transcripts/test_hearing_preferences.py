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

DONE = "Done: I renamed the function and the tests pass now."
ASKED = "Which package manager should I use for the new workspace?"


def preference(text: str, before: str = DONE, *, first: bool = False):
    heard = hear(load_lexicons(), text, "" if first else before, first=first)
    return heard.preference_cue if heard.preference else None


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
    assert preference(text, ASKED) is not None  # typed as the answer to the agent's question too


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


# Twelfth round: a session's first message that opens by setting the language to talk in sets it
# for the session; the same words deep in a long first task are about its documents.
@pytest.mark.parametrize(
    "text",
    [
        "Talk to me in Spanish, we are setting up the project today",
        "Fale comigo em português, preciso configurar o deploy",
        "Отвечай на русском. Сначала посмотри структуру проекта",
        "用中文回答，先帮我看看这个项目的结构",
        "Antworte auf Deutsch und richte zuerst die Tests ein",
    ],
)
def test_a_first_message_opening_with_the_language_to_talk_in_states_a_preference(text):
    assert preference(text, first=True)


@pytest.mark.parametrize(
    "text",
    [
        "Build the landing page from PLAN.md with a hero section, a pricing table and a contact form. "
        "Write the release notes in Japanese.",
        "Set up the CI pipeline for the monorepo first. Then translate the README, write it in German.",
    ],
)
def test_a_language_deep_in_a_long_first_task_is_about_its_documents(text):
    assert preference(text, first=True) is None


# The language something else speaks (a bot, the users, the app's UI) is the work's, first
# message or later
@pytest.mark.parametrize(
    "text",
    [
        "Build a chatbot that replies in Italian",
        "Add i18n so users can speak to the bot in Italian",
        "Write the app's UI in Spanish: a todo list with due dates",
        # fourteenth round: a product's words, in every lexicon language
        "Make sure the product's labels are always in English",
        "Asegúrate de que las etiquetas del producto estén siempre en inglés",
        "Stelle sicher, dass die Beschriftungen des Produkts immer auf Englisch sind",
        "确保产品的标签全部用英文",
    ],
)
def test_the_language_another_speaker_talks_in_is_no_preference(text):
    assert preference(text, first=True) is None and preference(text) is None


# A product's word in a clause of its own names the person or the topic, not what speaks
@pytest.mark.parametrize(
    "text",
    [
        "As the product lead, I want your replies in English",
        "Regardless of the app's locale, answer me in Spanish",
        "als Produktmanagerin: antworte mir auf Deutsch",
        "我是产品经理，用中文回答我",
        "The app is in Spanish but answer me in English",
        "the users speak German but talk to me in English",
        "产品是英文的但是用中文回答我",
        "Como product manager, respóndeme en inglés",  # "me" glued on the verb
    ],
)
def test_a_product_word_in_a_clause_of_its_own_hides_no_language_preference(text):
    assert preference(text) is not None


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


# Sixteenth round: a setting asked for carries the rule; "I prefer …" picks one of the agent's
# options; "toujours" says "still" as well as "always"; a stop order over all the agent writes holds
@pytest.mark.parametrize(
    "text",
    [
        "configure git so that from now on it signs every commit",
        "set it up so we never have to type the token again",
        "add the build folder to gitignore so it stays out going forward",
        "настрой линтер так, чтобы он запускался без моего участия",
        "今後は毎回ドライランで起動するように設定ファイルを書き換えてください",
    ],
)
def test_a_setting_that_will_keep_the_rule_is_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "From now on, always run the type checker before you push.",
        "We use tabs here, never spaces.",  # no setting named in the sentence
        "Always keep the config in sync with the docs.",  # a config named, not one asked for
        "From now on, set up a venv for every new project.",
        "From now on, update the settings page when you add a flag.",
    ],
)
def test_a_rule_that_asks_for_no_setting_is_still_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("I prefer the second approach", ASKED),
        ("Prefiro a versão com menos arquivos", "Posso manter as duas versões, ou prefere a mais curta."),
        ("I'd rather keep both handlers for now", "Both handlers work. Which one do you prefer"),
    ],
)
def test_i_prefer_opening_the_answer_to_the_agents_options_picks_one(text, before):
    assert preference(text, before) is None


@pytest.mark.parametrize(
    "text",
    [
        "I prefer small commits with one change each.",  # after the agent's claim: how to work
        "Ok. I prefer named exports over default ones.",  # not opening the reply
    ],
)
def test_i_prefer_after_no_offer_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    ["Toujours pas.", "toujours rien", "Toujours la même erreur", "Immer noch kaputt.", "toujours ..."],
)
def test_toujours_saying_still_is_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    ["Toujours répondre en français.", "Toujours utiliser const dans ce projet", "Immer Tabs verwenden."],
)
def test_toujours_opening_an_instruction_is_a_preference_and_no_failure(text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.preference and not heard.correction


def test_a_stop_order_over_everything_the_agent_writes_is_a_preference():
    assert preference("Stop using em dashes in anything you write for me") is not None


@pytest.mark.parametrize("text", ["추측하지 마", "거짓말하지 마, 로그를 봐"])
def test_a_korean_dont_guess_is_an_order_of_the_moment(text):
    assert preference(text) is None


# Sixteenth round: a request to record a rule where the agent keeps it states the rule
@pytest.mark.parametrize(
    "text",
    [
        "good catch, add this to your memory",
        "Add this to the ruleset: every handler logs its request id.",
        "put that in your instructions so it sticks",
        "write a short note in docs/ recording this preference",
    ],
)
def test_asking_to_record_a_rule_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "add this to the readme under Setup",
        "add a new rule to the linter config",
        "add this route to the router",
    ],
)
def test_adding_a_thing_to_a_file_or_tool_records_no_rule(text):
    assert preference(text) is None


# A standing cue on the configuring verb itself makes configuring the habit asked for: no setting
# will keep the rule, the agent must (attack46)
@pytest.mark.parametrize(
    "text",
    [
        "From now on always configure new services with TLS.",
        "Never configure anything globally, keep it per project.",
        "Siempre configura el logging antes de todo.",
        "Nunca configures nada globalmente.",
    ],
)
def test_a_standing_cue_on_the_configuring_verb_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Configure prettier to always use single quotes.",
        "Configura eslint para que siempre use comillas simples.",
        "set it up so we never have to log in again",
    ],
)
def test_a_standing_cue_inside_the_setting_asked_for_is_still_no_preference(text):
    assert preference(text) is None


# "I prefer …" answering the agent's question picks an option, unless an "always" / "never" in its
# sentence makes it a rule for later (attack46)
@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("I prefer that you always run the tests before committing.", "Want me to commit now?"),
        ("I prefer you always ask before installing packages.", "Shall I install lodash?"),
        ("Prefiro que você sempre escreva testes primeiro.", "Quer que eu comece?"),
    ],
)
def test_i_prefer_with_a_standing_cue_answering_a_question_is_a_preference(text, before):
    assert preference(text, before) is not None


def test_i_prefer_describing_what_always_happens_still_picks_an_option():
    assert preference("I prefer the one that always returns a list", "Which one do you prefer?") is None


# A request to record a rule names the agent's memory or rules, not a part of a document nor a
# tool's rule set (attack46)
@pytest.mark.parametrize(
    "text",
    [
        "Add this to the instructions section of the README.",
        "Put it in the guidelines doc under testing.",
        "Add this rule to eslintrc: no-console.",
        "add this rule to the linter config",
    ],
)
def test_adding_to_a_document_part_or_a_tools_rules_records_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text", ["add this rule to CLAUDE.md", "save that in memory", "Please add this rule: no default exports."]
)
def test_recording_a_rule_where_the_agent_keeps_it_is_a_preference(text):
    assert preference(text) is not None


# An article after "toujours" says "still" ("toujours le vieux titre") unless the sentence orders
# the work: "toujours les tests d'abord" is "always tests first" (attack46)
@pytest.mark.parametrize(
    "text", ["Toujours les tests d'abord.", "Toujours la doc en premier, ensuite le code."]
)
def test_toujours_before_an_order_of_work_is_a_preference_and_no_failure(text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.preference and not heard.correction


@pytest.mark.parametrize("text", ["Toujours le vieux titre.", "Toujours la même erreur d'abord sur staging."])
def test_toujours_before_what_is_still_there_reports_it(text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.correction and not heard.preference


# An open question ("Anything else?") or the agent's own taste ("I prefer to …") offers no
# options: "I prefer …" after it states how to work (attack46)
@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("I prefer single quotes in Python.", "Done, the tests pass. Anything else?"),
        ("Prefiro commits pequenos.", "Pronto. Mais alguma coisa?"),
        ("I prefer tabs.", "Done. I prefer to keep helpers private, so I moved it."),
    ],
)
def test_i_prefer_after_no_options_offered_is_a_preference(text, before):
    assert preference(text, before) is not None


def test_i_prefer_answering_which_the_person_would_prefer_still_picks_one():
    assert preference("I prefer B.", "Would you prefer A or B") is None


# A request to record a rule is heard in the other lexicon languages too (attack46)
@pytest.mark.parametrize(
    "text",
    [
        "Guarda esto en tu memoria.",
        "Ajoute ça à tes instructions.",
        "Salve isso na sua memória.",
        "Запиши это себе в память.",
        "把这条加到你的记忆里。",
        "これをメモリに保存して。",
    ],
)
def test_asking_to_record_a_rule_is_a_preference_in_every_language(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Guarda esto en la carpeta docs.",
        "Ajoute ça à la liste des tâches.",
        "Добавь это в правила линтера.",
        "把这条加到 eslint 规则里。",
        "eslintのルールに追加して。",
    ],
)
def test_adding_to_a_folder_or_a_tools_rules_records_no_rule_in_any_language(text):
    assert preference(text) is None


# A settings file named is no setting asked for unless it is changed (attack46; the English
# "Always keep the config in sync" above)
@pytest.mark.parametrize(
    "text", ["これからはいつも設定ファイルを確認してから始めて。", "以后总是先看一下配置文件再开始。"]
)
def test_reading_a_settings_file_as_a_habit_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "以后每次都修改配置文件来关闭遥测。",
        "以后把配置文件改成每次都关闭遥测。",
        "今後は必ずキャッシュを無効にするように、設定ファイル（config/app.yml）を変更して。",
    ],
)
def test_changing_a_settings_file_so_it_keeps_the_rule_is_no_preference(text):
    assert preference(text) is None
