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


# Eighteenth round: a language that is a sentence of its own, with at most a "please", asks the
# agent to talk in it (no verb of speaking needed); beside other words it names what is in it
@pytest.mark.parametrize(
    "text",
    [
        "In German please.",
        "en français s'il te plaît",
        "Auf Deutsch, bitte! Dann die Tests.",
        "em português. Agora rode os testes",
        "日本語でお願いします。テストも実行してください",
        "한국어로 부탁해요",
        "po polsku, proszę",
        "по-русски пожалуйста",
    ],
)
def test_a_language_alone_in_its_sentence_asks_to_talk_in_it(text):
    assert preference(text) is not None
    assert preference(text, first=True) is not None


@pytest.mark.parametrize(
    "text",
    [
        "in German?",  # asks
        "the error pages in German are broken",
        "Add a toggle for the docs in German",
        "the second screenshot, in Spanish, shows the bug",
        "Is the changelog en français aussi ?",
    ],
)
def test_a_language_beside_other_words_of_its_sentence_asks_nothing(text):
    assert preference(text) is None


# The agent asked which language something is in: the language alone answers it, for that
# thing, as "I prefer the second one" picks one of its options
@pytest.mark.parametrize(
    ("before", "text"),
    [
        ("Which language should the README be in?", "In Spanish, please."),
        ("Should the code comments be in French or in English?", "In English!"),
        ("Les commentaires du code, en français ou en anglais ?", "En anglais."),
        ("In welcher Sprache soll die Fehlermeldung stehen?", "Auf Deutsch, bitte."),
        ("Em que idioma devo escrever o changelog?", "Em português."),
        ("На каком языке писать документацию?", "На русском, пожалуйста."),
        ("Jakim językiem mają być pisane komentarze?", "Po polsku, proszę."),
        ("ドキュメントは何語で書きますか？", "日本語でお願いします"),
    ],
)
def test_a_language_alone_answering_which_language_states_no_preference(before, text):
    assert preference(text, before=before) is None


@pytest.mark.parametrize(
    ("before", "text"),
    [
        ("Would you like me to search the web for it?", "日本語でお願いします"),
        ("Which package manager should I use for the new workspace?", "en français s'il te plaît"),
        # the agent asks which language to talk in: the answer is how it should talk
        ("Should I answer in Spanish or in English?", "In English."),
        ("¿Quieres que te responda en español o en inglés?", "En español, por favor."),
        ("На каком языке тебе отвечать?", "На русском."),
    ],
)
def test_a_language_alone_after_another_question_or_one_of_how_to_talk_asks_to_talk_in_it(before, text):
    assert preference(text, before=before) is not None


# A message that asks for a translation: the language alone names what to translate into
@pytest.mark.parametrize(
    "text",
    [
        "Can you translate the README? In French.",
        "Übersetze die Fehlermeldungen. Auf Englisch, bitte.",
        "Traduis ce paragraphe. En anglais.",
        "Переведи этот абзац. На английском, пожалуйста.",
        "Przetłumacz ten akapit. Po angielsku.",
        "翻訳してください。英語でお願いします",
    ],
)
def test_a_language_alone_beside_a_translation_asked_for_is_its_target(text):
    assert preference(text) is None


# A language as an item of a numbered list, or two languages alone: items or options ("1. In
# English 2. In Spanish"), not the one to talk in
@pytest.mark.parametrize(
    "text",
    [
        "README sections:\n1. In English\n2. In Spanish",
        "Deux onglets. En français. En anglais.",
        "Varianten:\n1) Auf Deutsch\n2) Auf Englisch",
    ],
)
def test_two_languages_alone_are_items_not_the_one_to_talk_in(text):
    assert preference(text) is None


def test_the_same_language_alone_twice_asks_to_talk_in_it():
    assert preference("In English please. In English!") is not None


# Eighteenth round: a rule the person says was given before ("I keep telling you", "I remind you
# …", "in case you forget again") holds beyond this task, in every lexicon language
@pytest.mark.parametrize(
    "text",
    [
        "I keep telling you: run the formatter before every commit.",
        "I've told you this before, tabs not spaces in the templates.",
        "Just to remind you that the public API must stay backward compatible.",
        "I remind you the release notes go in CHANGES.md, not in the README.",
        "write the steps into a file in case you forget again",
        "te recuerdo que los mensajes de commit van en inglés",
        "je te rappelle que les commits sont en anglais",
        "ich erinnere dich daran, dass wir Tabs benutzen",
        "напоминаю: коммиты пишем на английском",
        "przypominam, commity piszemy po angielsku",
        "提醒你一下，提交信息一律写英文",
    ],
)
def test_a_rule_said_again_is_a_standing_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "I remind you that we already have a logger in utils.",  # a fact of this task
        "te recuerdo que ya tenemos un logger en utils",
        "Remind me how the cache is invalidated.",
        "how many times does the retry loop run",
        "I keep getting the same timeout on the upload",
    ],
)
def test_a_reminder_of_a_fact_or_a_repeated_symptom_states_no_rule(text):
    assert preference(text) is None


# A rule said again only sounds like a question: "how many times do I have to tell you …?"
@pytest.mark.parametrize(
    "text",
    [
        "How many times do I have to tell you to use pnpm?",
        "we keep mentioning this, why don't you rebuild after every change?",
        "you forgot again to run the migrations?",
        "¿ya se te olvidó que los tests van primero?",
        "już zapomniałeś, że testy piszemy najpierw?",
    ],
)
def test_a_rule_said_again_as_a_question_is_still_a_preference(text):
    assert preference(text) is not None


# "How many times must I …" says a rule again only when what is done again is telling the agent;
# doing a chore again ("restart the server", "relancer le build") is a complaint of the moment
@pytest.mark.parametrize(
    "text",
    [
        "how many times do I have to restart this server before it reads the env?",
        "Wie oft muss ich den Server neu starten?",
        "Combien de fois dois-je relancer le build ?",
        "Quante volte devo riavviare il container?",
        "Quantas vezes eu tenho que rodar a migração?",
        "Сколько раз повторять тест, чтобы поймать ошибку?",
    ],
)
def test_a_chore_done_again_is_no_rule_said_again(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "How many times have I told the team to rebase before merging?",  # told someone else
        "How many times have I told my boss that the server is slow?",
    ],
)
def test_told_someone_else_again_is_no_rule_said_again(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "how many times do I need to remind you: no console.log in src",
        "how many times have i told u to rebase",
        "Wie oft muss ich dir sagen, dass wir pnpm benutzen?",
        "Combien de fois dois-je te le dire : pas de console.log",
        "Quante volte devo ripetertelo? Niente console.log nel codice",
        "Quantas vezes eu tenho que te dizer para usar pnpm?",
        "Сколько раз повторять: коммиты пишем на английском",
    ],
)
def test_telling_the_agent_again_is_a_rule_said_again(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Do you always squash before merging?",
        "Did I remind you to push?",
        "Have I told you this before?",
        # "in case you forget" says no rule was given before: asked, it asks
        "In case you forget, where would you look first?",
        "Por si se te olvida, ¿dónde lo buscarías?",
        "Au cas où tu oublierais, où chercherais-tu ?",
    ],
)
def test_a_standing_word_in_a_real_question_states_nothing(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I keep asking the API for a token and it returns 401",
        "I keep telling myself the build is fine but it takes ten minutes",
    ],
)
def test_keep_asking_something_else_is_no_rule_said_again(text):
    assert preference(text) is None


# "keep saying / repeating this" says a rule again where "this" stands for it ("I keep saying this:
# tests first", "we keep mentioning this same thing"); before a noun or a clause it is that thing
# or a fact ("this pattern", "that step", "it works on my machine"), and repeating oneself in code
# is a repetition to factor out
@pytest.mark.parametrize(
    "text",
    [
        "We keep repeating this pattern in every component, make a hook.",
        "I keep repeating that step manually, automate it.",
        "I keep saying it works on my machine but CI disagrees.",
        "We keep saying that the API is slow, can you profile it?",
        "I keep repeating myself in the handlers, extract a helper.",
        "The code repeats itself; I repeat myself in every handler.",
    ],
)
def test_keep_repeating_a_thing_is_no_rule_said_again(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I keep saying this: tests first.",
        "we keep repeating it again and again, no emojis",
        "I keep repeating myself.",
    ],
)
def test_keep_saying_this_is_a_rule_said_again(text):
    assert preference(text) is not None


# Told or reminded "about" / "of" a thing, asked "for" or "whether": a subject or a request said
# again, no rule ("I remind you of the demo", "Напоминаю о встрече", "I keep asking you for the logs")
@pytest.mark.parametrize(
    "text",
    [
        "I remind you of the demo at three.",
        "I keep telling you about the outage, did you read the status page?",
        "I keep asking you for the logs and you send me a summary",
        "I keep asking you whether the fix is deployed",
        "How many times have I told you about this bug?",
        "Напоминаю о встрече в три часа.",
        "Przypominam o spotkaniu o trzeciej.",
        "Нагадую про зустріч о третій.",
    ],
)
def test_told_again_about_a_thing_or_asked_for_one_is_no_rule(text):
    assert preference(text) is None


# A reminder dated today or tomorrow is of an event of the moment; "from tomorrow on" sets a rule
@pytest.mark.parametrize(
    "text",
    [
        "I remind you the deadline is tomorrow.",
        "Przypominam, że jutro jest wydanie.",
        "Напоминаю: завтра релиз.",
        "Je te rappelle que le serveur est coupé ce soir.",
        "Ti ricordo che il server è giù oggi.",
        "Te recuerdo que hoy no hay despliegue.",
        "提醒你一下，明天要发布。",
        "Нагадую, що сьогодні реліз.",
    ],
)
def test_a_reminder_of_today_or_tomorrow_is_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I remind you that from tomorrow on we use pnpm.",
        "Je te rappelle qu'à partir de demain on utilise pnpm.",
    ],
)
def test_a_reminder_of_a_rule_from_tomorrow_on_is_a_preference(text):
    assert preference(text) is not None


# Told again that something fails: a failure said again (a correction's matter), no rule
@pytest.mark.parametrize(
    "text",
    [
        "I keep telling you the build is broken",
        "I've told you this before: the login doesn't work.",
        "I remind you that the cache is broken on staging",
        "Je te rappelle que ça ne marche pas sur Firefox.",
        "Te recuerdo que el login no funciona.",
        "Przypominam, że logowanie nie działa.",
        "Напоминаю, что логин не работает.",
        "提醒你，登录还是不行。",
    ],
)
def test_a_failure_said_again_is_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I keep telling you, if the build fails, do not merge",
        "Just to remind you that deploys must stop when the build fails",
        "te recuerdo que si el build falla no se hace merge",
    ],
)
def test_a_rule_said_again_for_when_something_fails_is_a_preference(text):
    assert preference(text) is not None


# "You forgot again" before a thing (a name, an import, "what the error said") forgot that thing;
# before "to …" / "that …" (an infinitive, "que", "что", "że") it forgot a rule
@pytest.mark.parametrize(
    "text",
    [
        "You already forgot what the error said?",
        "you forgot again the semicolon on line 3",
        "Tu as déjà oublié le nom du fichier ?",
        "¿Ya se te olvidó el nombre del archivo?",
        "Hai già dimenticato il nome del file?",
        "Já esqueceu o nome do arquivo?",
        "Ты уже забыл, как называется файл?",
        "Ты опять забыл импорт",
        "Już zapomniałeś, gdzie jest plik?",
    ],
)
def test_forgetting_a_thing_again_is_no_rule(text):
    assert preference(text) is None


# "In case you forget" a thing ("… your password") is a product's spec or a fact, not a rule
@pytest.mark.parametrize(
    "text",
    [
        "Add a reset link in case you forget your password.",
        "In case you forget, the staging password is in the vault.",
        "Por si se te olvida la contraseña, añade un enlace de recuperación.",
        "Ajoute un lien au cas où tu oublierais ton mot de passe.",
        "Adicione um link caso você esqueça a senha.",
    ],
)
def test_in_case_you_forget_a_thing_is_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Tu as déjà oublié qu'on écrit les commits en anglais ?",
        "Já esqueceu que usamos pnpm?",
        "Ты опять забыл запустить линтер",
        "Ты уже забыл, что коммиты пишем на английском?",
        "znowu zapomniałeś uruchomić testy",
    ],
)
def test_forgetting_again_what_to_do_is_a_rule_said_again(text):
    assert preference(text) is not None


# Said of the person or someone else ("I forgot again", "the client has often said"), not to the
# agent: no rule given before
@pytest.mark.parametrize(
    "text",
    [
        "我又忘了密码，怎么重置？",
        "Ich habe schon wieder vergessen, das Passwort zu ändern.",
        "Я опять забыл закоммитить, сделай это за меня",
        "Він вже забув запустити міграції, запусти їх",
        "Ele já esqueceu de rodar as migrações, rode você",
        "Der Kunde hat schon oft gesagt, dass die Seite langsam ist.",
    ],
)
def test_forgotten_or_said_by_someone_else_is_no_rule_said_again(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Ich habe dir schon oft gesagt: keine Tabs.",
        "Du hast schon wieder vergessen, die Tests laufen zu lassen.",
    ],
)
def test_said_or_forgotten_by_the_agent_in_german_is_a_rule_said_again(text):
    assert preference(text) is not None
