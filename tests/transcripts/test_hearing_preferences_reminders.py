"""Hearing a rule said again, and what only sounds like one (reminders.py).

"I keep telling you", "I remind you …", "in case you forget again" say a rule given before; a
chore done again, a reminder of an event, a thing forgotten say none.
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference


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
