"""Hearing the language the person wants the agent to talk in, and the languages that are only the work's.

A session's first message opening with a language sets it; a language alone in its sentence
asks for it; the language of a bot, the users, a document, a translation, an answer to the
agent's "which language …?" or an item of a list is the work's (preferences.py,
answer_language.py).
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference


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
