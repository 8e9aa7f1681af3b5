"""Hearing the person: each lexicon language, its guards, and how words are matched.

Kinds of correction heard with the agent's words before them are in test_hearing_kinds.py.
"""

from __future__ import annotations

import time

import pytest

from evolve.transcripts.classify import Classifier
from evolve.transcripts.hearing import Heard, hear
from evolve.transcripts.lexicons import LONG_REQUEST_CHARS, load_lexicons, prose

# What the agent said before the person's words, unless a test says otherwise: it claims done.
DONE = "Done: I renamed the function and the tests pass now."


def heard(text: str, phrases: dict | None = None, *, first: bool = False, before: str = DONE) -> Heard:
    return hear(load_lexicons(phrases), text, "" if first else before, first=first)


CORRECTIONS = {
    "en": [
        "No, use pnpm instead of npm.",
        "That's wrong, the config lives in ~/.config",
        "You forgot to update the tests.",
        "I said the blue button, not the red one",
        "revert that change please",
        "that’s not what I asked for",
        "Why did you delete the migrations folder?",
        "still doesn't work, same error",
    ],
    "zh": [
        "不对，应该用 pnpm",
        "错了，配置文件在 ~/.config 下面",
        "我说的是蓝色按钮",
        "你忘了更新测试",
        "还是不行",
        "这个不对吧，重新来",
    ],
    "de": [
        "Nein, das ist falsch. Nimm pnpm.",
        "Das stimmt nicht, die Datei liegt woanders",
        "Ich sagte doch, keine Mocks",
        "Du hast die Tests vergessen",
        "Mach das rückgängig",
        "Eigentlich wollte ich pnpm, nicht npm",
    ],
    "es": [
        "No, eso está mal. Usa pnpm.",
        "Te dije que no tocaras el archivo",
        "Olvidaste actualizar las pruebas",
        "Esta mal, usa la otra tabla",
        "En realidad quería pnpm, en lugar de npm",
    ],
    "fr": [
        "Non, c'est faux, utilise pnpm",
        "Ce n'est pas ça que je voulais",
        "Je t'ai dit de ne pas toucher ce fichier",
        "Tu as oublié les tests",
        "En fait, utilise plutôt pnpm",
    ],
    "ja": [
        "違う、pnpm を使って",
        "そうじゃない。設定ファイルは別の場所です",
        "間違っています。やり直して",
        "テストを忘れてる",
        "元に戻して",
    ],
    "hi": [
        "यह गलत है, pnpm इस्तेमाल करो",
        "ऐसा नहीं, मैंने कहा था नीला बटन",
        "तुम टेस्ट अपडेट करना भूल गए",
        "galat hai, pnpm use karo",
        "maine kaha tha blue button",
    ],
    "pt": [
        "Não, está errado. Use pnpm.",
        "Eu disse para não mexer nesse arquivo",
        "Você esqueceu de atualizar os testes",
        "Na verdade, use pnpm em vez de npm",
        "isso não é o que eu pedi",
    ],
}

GUARDED = {
    "en": [
        "No problem, thanks! Now add a README.",
        "No worries. Can you add a CLI flag?",
        "What's wrong with the build on CI?",
        "Why is the date wrong in the footer?",
        "Not bad at all. Please add tests now.",
        "Don't worry about the docs, just ship it",
        "Please implement undo/redo in the editor",
        "Nothing wrong with the approach, go on",
        "I know you're busy; add a note about the new API",
        "It actually works now, thanks!",
        "still need the changelog entry too",  # work still wanted, no failure
        "Still want a dark theme for the settings page",
    ],
    "zh": [
        "不错，继续吧",
        "没问题，接下来加个 README",
        "为什么测试结果不对？",
        "启动时报错了，帮我看看",
        "已经很不错了，提交吧",
    ],
    "de": [
        "Kein Problem, danke!",
        "Keine Sorge, mach weiter",
        "Was ist falsch an dem Build?",
        "Nicht schlecht! Jetzt die Tests.",
        "Das ist nicht so schlimm, mach weiter",
    ],
    "es": [
        "No hay problema, gracias",
        "No te preocupes, sigue",
        "¿Por qué está mal la fecha?",
        "No está mal, ahora agrega pruebas",
        "¿Qué está mal en el build?",
        "por qué no, hazlo así",  # why not: a yes
    ],
    "fr": [
        "Pas de problème, merci",
        "Pas mal ! Ajoute les tests maintenant",
        "Qu'est-ce qui ne va pas avec le build ?",
        "Pourquoi c'est faux dans le pied de page ?",
        "Ne t'inquiète pas pour la doc",
    ],
    "ja": [
        "なんでもいいので進めてください",  # anything: not the why it starts with
        "問題ないです、続けてください",
        "大丈夫です。次は README を追加して",
        "何が違うのか教えて",
        "間違いないです。コミットして",
        "この二つの違いは何ですか",
    ],
    "hi": [
        "कोई बात नहीं, आगे बढ़ो",
        "कोई समस्या नहीं, README जोड़ो",
        "क्या गलत है इस बिल्ड में?",
        "koi baat nahi, aage badho",
        "चिंता मत करो, बस शिप करो",
    ],
    "pt": [
        "Sem problema, obrigado",
        "Não se preocupe, continue",
        "O que está errado no build?",
        "Não, obrigado, eu faço isso",
        "Nada errado com a abordagem, continue",
        "por que não, pode seguir",  # why not: a yes
    ],
    "ru": ["почему бы и нет, делай"],  # why not: a yes
    "pl": ["czemu nie, rób"],
    "ko": ["왜냐하면 스테이징에서 먼저 봐야 해서요"],  # because: not the why it starts with
    "id": ["kenapa tidak, lanjutkan saja"],  # why not: a yes
}

FRESH = {
    "en": "Add a function multiply_numbers(a: int, b: int) -> int and a test for it.",
    "zh": "实现一个登录页面，使用 React 和 TypeScript",
    "de": "Schreibe eine Funktion, die zwei Zahlen addiert, und einen Test dazu.",
    "es": "Crea una función que sume dos números y una prueba para ella.",
    "fr": "Écris une fonction qui additionne deux nombres, avec un test.",
    "ja": "二つの数を足す関数とそのテストを書いてください",
    "hi": "दो संख्याओं को जोड़ने वाला फ़ंक्शन और उसका टेस्ट लिखो",
    "pt": "Escreva uma função que soma dois números e um teste para ela.",
}


@pytest.mark.parametrize(("lang", "text"), [(lang, t) for lang, texts in CORRECTIONS.items() for t in texts])
def test_correction_in_every_language(lang, text):
    assert heard(text).language == lang
    assert heard(text).correction


@pytest.mark.parametrize(("lang", "text"), [(lang, t) for lang, texts in GUARDED.items() for t in texts])
def test_guards_in_every_language(lang, text):
    assert not heard(text).correction, lang


@pytest.mark.parametrize(("lang", "text"), list(FRESH.items()))
def test_fresh_request_is_no_correction(lang, text):
    assert not heard(text).correction, lang
    assert not heard(text, first=True).correction, lang


@pytest.mark.parametrize(
    "text",
    [
        "Now add a README",
        "I know the API",
        "Nothing to add, ship it",
        "The wrongful-termination module needs a test",
        "nobody uses it",
    ],
)
def test_whole_words_only(text):
    assert not heard(text).correction


def test_a_guard_hides_only_its_own_words():
    assert heard("No worries, but you forgot the tests").correction


def test_code_quotes_and_quoted_lines_are_ignored():
    assert not heard("Run it:\n```\nassert result == 'wrong'\n```\nthanks").correction
    assert not heard("The log says `that's wrong` at startup, add a retry").correction
    assert not heard('The API answers "that is wrong input", handle it').correction
    assert not heard("I got this:\n> you forgot the token\nAdd auth please.").correction
    assert not heard("It prints «you forgot the token» and “that is wrong”, add auth").correction


def test_a_quoted_or_indented_line_hides_only_itself():
    """A person quotes the agent's line, or pastes an indented log, then corrects it below."""
    assert heard("> I renamed the helper to parse_rows\nthat's wrong, put the old name back").correction
    assert heard("    at Grid.render (grid.tsx:88)\nYou broke the grid with the last refactor").correction
    assert heard("> Ich habe den Cache geleert\nDas ist falsch, der Cache ist noch voll").correction


def test_a_nested_markdown_bullet_is_the_persons_own_words():
    """Four spaces before "- " nest a list item the person wrote (attack46); other indents are pasted."""
    assert heard("Rules for this repo:\n- Style:\n    - always use pnpm\n    - never push to main").preference
    assert heard("Konventionen:\n- Tests:\n    - ab jetzt immer zuerst die Tests schreiben").preference
    assert not heard("The prompt I use:\n    RULES:\n    1. Never spend more than $1.\nthoughts?").preference
    assert not heard("Log:\n    WARN never use the v1 API\nwhat does it mean?").preference


@pytest.mark.parametrize("mark", ["“", "«"])
def test_a_run_of_opening_quotes_costs_what_a_run_of_plain_ones_does(mark):
    """Each opening mark reads up to the next one, not 200 characters on (once: 25 times slower)."""
    plain, curly = (_seconds(prose, quote * 400_000) for quote in ('"', mark))
    assert curly < 5 * plain + 0.05


def test_long_messages_are_read_at_the_start_only():
    paste = "Here is the log of the nightly job, please summarise it.\n" + "step ok\n" * 400
    assert not heard(paste + "you forgot the tests").correction
    assert heard("You forgot the tests. Log:\n" + "step ok\n" * 400).correction


def test_a_first_message_counts_outright_words_in_its_opening_only():
    """Further into a session's first message, outright words describe the task, not the agent's work."""
    brief = (
        "Take-home task: build a booking page for the clinic with a calendar and reminders. "
        "We expect the agent to slip now and then; when you see that's wrong, steer it back."
    )
    issues = (
        "请优化这些前端问题：\n- 登录页按钮颜色太浅；\n"
        "- 保存后列表刷新不及时（显示不对）；\n- 图标换成线框风格。"
    )
    for text in (brief, issues):
        assert not heard(text, first=True).correction, text
    assert heard("That's wrong, the config lives in ~/.config", first=True).correction
    assert heard("不对，应该用 pnpm", first=True).correction
    assert heard(brief).correction  # a later message: the agent's work is there to be wrong


def test_a_greeting_before_a_first_messages_opening_is_not_its_opening():
    """A greeting ("Hi!") ends a sentence of its own: the correction right after it is the opening."""
    for text in (
        "Hey there! You messed up the release notes last night, the dates are off.",
        "¡Buenas! Eso está mal otra vez: la fecha sale en inglés.",
        "Guten Morgen. Das ist falsch: der Export speichert nichts.",
        "Salut... tu as cassé la page de connexion hier.",
    ):
        assert heard(text, first=True).correction, text
    assert not heard("Fix the tests first. We will decide later if that's wrong.", first=True).correction


def test_the_colon_of_a_link_or_a_time_leads_into_no_brief():
    """A "Task:" leads into a brief; "http://…" and "10:30" do not end a first message's opening."""
    assert heard("http://localhost:8080/admin - you broke the admin page", first=True).correction
    assert heard("At 9:15 you broke the nightly build, again", first=True).correction
    assert not heard("Task: tidy the admin page; that's wrong in places", first=True).correction
    # pasted output's own colons: the person's words after it are the opening still
    pasted = "ReferenceError: user is not defined\n    at Profile.tsx:41\nYou broke the profile page again"
    assert heard(pasted, first=True).correction


def test_the_agents_tail_may_start_inside_a_code_block():
    """The kept end of the agent's text opens past a fence: its closing fence hides no closing words."""
    cut = "psql -f migrate.sql\n```\nShall I run it against the production database?"
    whole = "Run this:\n```\npsql -f migrate.sql\n```\nShall I run it against the production database?"
    for before in (cut, whole):
        assert not heard("No, the staging one.", before=before).correction  # it answers the question
    assert heard("No, the staging one.", before="psql -f migrate.sql\n```\nDone.").correction


def test_the_agents_tail_cut_inside_a_tilde_block_or_ending_in_an_opened_one():
    """A "~~~" block's closing fence is one too; a fence with a language opens a block, never closes one."""
    tilde = "SELECT count(*) FROM orders;\n~~~\n¿Quieres que lo ejecute también en producción?"
    opened = "Je peux aussi ajouter la colonne à l'export, tu veux ?\n```sql\nALTER TABLE orders ADD note;"
    for before in (tilde, opened):
        assert not heard("No, solo en staging.", before=before).correction, before  # it answers
    assert heard("No, solo en staging.", before="SELECT 1;\n~~~\nListo.").correction


def test_a_fence_inside_the_agents_code_is_code_not_a_block_edge():
    """A "```" inside a string of the code the tail is cut in neither opens nor closes a block."""
    cut = "    marker = '```'\n    return marker\n```\nShall I run it against the production database?"
    inline = "    s = 'a ``` b'\n```\nShall I run it against the production database?"
    for before in (cut, inline):
        assert not heard("No, the staging one.", before=before).correction, before  # it answers
    assert heard("No, the staging one.", before="    marker = '```'\n```\nDone.").correction


def test_weak_phrases_need_the_start_and_not_a_first_request():
    assert heard("Actually, use pnpm.").correction
    assert not heard("Actually, use pnpm.", first=True).correction
    assert heard("You forgot the lockfile.", first=True).correction
    late = (
        "Build a CLI that reads CSV files, validates the rows against the schema, writes a "
        "report and exits non-zero on errors; it should stream large files and it must log "
        "progress every 1000 rows. Use click instead of argparse."
    )
    assert not heard(late).correction


def test_accents_case_and_apostrophes_do_not_matter():
    assert heard("ESTA MAL, usa pnpm").language == "es"
    assert heard("nao, use pnpm").language == "pt"
    assert heard("thats not what I asked").correction
    assert heard("ｎｏ，use pnpm").correction


def test_the_language_with_most_matches_wins():
    assert heard("No, usa pnpm en lugar de npm").language == "es"


def test_user_phrases_extend_the_lexicons():
    assert not heard("bogus result").correction
    assert heard("bogus result", {"en": ["bogus"]}).correction
    assert heard("è sbagliato, usa pnpm", {"it": ["sbagliato"]}).language == "it"
    assert heard("Meh. Use pnpm.", {"en": ["weak:meh"]}).correction
    assert not heard("you forgot nothing", {"en": ["guard:you forgot nothing"]}).correction
    with pytest.raises(ValueError, match="correction pattern"):
        load_lexicons({"en": ["re:(oops"]})
    with pytest.raises(ValueError, match="empty"):
        load_lexicons({"en": ["  "]})


def test_a_persons_correction_patterns_run_in_linear_time():
    phrases = {"en": ["re:(x+x+)+y", "guard:re:(a|a)+b (x+x+)+y"]}
    long_request = "x" * (LONG_REQUEST_CHARS - 1)
    assert not heard(long_request, phrases).correction
    assert heard("xxy, do it again " + "a" * 400, phrases).correction
    assert not heard("aab xxy", phrases).correction  # the guard hides the phrase


def test_a_pattern_whose_accents_are_its_syntax_is_matched_as_written():
    # The text loses its accents before correction patterns read it, and so does a pattern;
    # `＊` becomes `*`, which would not compile: such a pattern is kept as written.
    phrases = {"en": ["re:＊nope", "bogus"]}
    lexicons = Classifier(correction_phrases=phrases).check().lexicons()
    assert hear(lexicons, "bogus result", DONE).correction


def test_empty_text():
    assert not heard("").correction
    assert not heard("   ").correction


def _seconds(function, *args) -> float:
    """The CPU time of the fastest of three calls, in this process only.

    Other processes on a loaded machine neither add to it nor, in one slow spell, decide it.
    """
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        function(*args)
        best = min(best, time.process_time() - start)
    return best
