"""Hearing the person: corrections and preferences in every language, with the agent's words before."""

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
    ],
    "fr": [
        "Pas de problème, merci",
        "Pas mal ! Ajoute les tests maintenant",
        "Qu'est-ce qui ne va pas avec le build ?",
        "Pourquoi c'est faux dans le pied de page ?",
        "Ne t'inquiète pas pour la doc",
    ],
    "ja": [
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
    ],
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


@pytest.mark.parametrize("mark", ["“", "«"])
def test_a_run_of_opening_quotes_costs_what_a_run_of_plain_ones_does(mark):
    """Each opening mark reads up to the next one, not 200 characters on (once: 25 times slower)."""
    plain, curly = (_seconds(prose, quote * 400_000) for quote in ('"', mark))
    assert curly < 5 * plain + 0.05


def test_long_messages_are_read_at_the_start_only():
    paste = "Here is the log of the nightly job, please summarise it.\n" + "step ok\n" * 400
    assert not heard(paste + "you forgot the tests").correction
    assert heard("You forgot the tests. Log:\n" + "step ok\n" * 400).correction


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


# Kinds of correction heard with the agent's words before them, in several languages each
# (written for these tests: how people push back, object, scorn, undo, restate a fact).
ASKED = "I can add a cache or move the lookup to a worker. Which one would you like?"
WORKED = "The lookup now goes through `cache.get` in `lookup.py`."
HEARD_AS = [
    ("what do you mean by a worker", WORKED, "pushback"),
    ("那不是又多了一次请求", DONE, "pushback"),
    ("무슨 말이야 캐시는 이미 있어", DONE, "pushback"),
    ("что значит без кэша", DONE, "pushback"),
    ("the build can't find it?", DONE, "pushback"),
    ("But the old page still loads the same data", DONE, "contradiction"),
    ("可是我的浏览器不支持这个 API", DONE, "contradiction"),
    ("Mais le cache ne sert à rien ici", DONE, "contradiction"),
    ("Aber das macht die Seite langsamer", DONE, "contradiction"),
    ("this looks ugly as hell", DONE, "negation"),
    ("c'est moche", DONE, "negation"),
    ("это ужасно", DONE, "negation"),
    ("remove what you just added to the config", DONE, "undo"),
    ("删掉你刚才加的那个依赖", DONE, "undo"),
    ("supprime ce que tu viens d'ajouter", DONE, "undo"),
    ("don't create a new helper, it already exists in utils", DONE, "fact"),
    ("不要新建文件，已经存在了", DONE, "fact"),
    ("the page is blank", WORKED, "failure_report"),
    ("页面打不开了", WORKED, "failure_report"),
    ("홈 화면이 안 열려요", WORKED, "failure_report"),
    ("сторінка не відкривається", WORKED, "failure_report"),
    ("nadal nie działa", WORKED, "negation"),
    ("Stop", WORKED, "stop"),
    ("хватит", WORKED, "stop"),
    ("停下", WORKED, "stop"),
    ("zapomniałeś o testach", WORKED, "negation"),
    # general vocabulary a third round added: each kind's ordinary words, in several languages
    ("the migration is not done, two tables are left", DONE, "failure_report"),
    ("the admin panel is unreachable", WORKED, "failure_report"),
    ("your patch conflicts with the cache decorator", DONE, "failure_report"),
    ("why do you always rename the variables?", DONE, "pushback"),
    ("We deploy with docker... wasn't that clear?", DONE, "pushback"),
    ("I'm rejecting this change, the timeout must stay at 30s", DONE, "negation"),
    ("点了按钮没有响应", WORKED, "failure_report"),
    ("我是说侧边栏，不是顶栏", WORKED, "negation"),
    ("按钮还没有改好", DONE, "failure_report"),
    ("ボタンが画面に出てきません", WORKED, "failure_report"),
    ("nó báo lỗi khi mở trang", DONE, "failure_report"),
    ("ý tôi là trang chủ, không phải trang cài đặt", WORKED, "negation"),
    ("页面显示Not Found", WORKED, "failure_report"),  # a Latin word glued to CJK text
    ("ok. but the cache makes it slower, no?", DONE, "contradiction"),  # an objection after "ok"
    ("the same", DONE, "failure_report"),  # nothing changed, after the agent's claim
    ("всё так же", DONE, "failure_report"),
    ("it should still link to https://example.com/" + "a" * 200 + " like before", DONE, "failure_report"),
    # the fourth round: each kind's general vocabulary that new people used
    ("the settings page is not able to load the theme", DONE, "failure_report"),
    ("the export dosent finish", DONE, "failure_report"),  # a common misspelling
    ("the upload seems not work", DONE, "failure_report"),
    ("why is the old banner showing on the home page!", DONE, "failure_report"),  # no "?"
    ("can't you read the config yourself?", DONE, "pushback"),
    ("how did you come up with these numbers? the spec says ten", WORKED, "pushback"),
    ("then how do we keep the old links working?", DONE, "pushback"),
    ("did you even open the log", DONE, "pushback"),  # scorn without a question mark
    ("not sure what you did, the game is broken", "Here is a summary of the layout.", "failure_report"),
    ("ya but the router does have that route", "The router has no such route.", "contradiction"),
    ("I don't want you to touch the tests", ASKED, "negation"),  # even in the answer to a question
    ("no, I wanted you to compare the two files", WORKED, "negation"),
    ("please un-delete them", DONE, "negation"),
    ("i was asking about the other folder", WORKED, "negation"),
    ("tôi đang hỏi về thư mục kia", WORKED, "negation"),
    ("mam blad przy starcie", "Zmienione. Uruchom ponownie.", "failure_report"),  # Polish without its marks
    ("the build fails: error TS2304: cannot find name 'user'", DONE, "failure_report"),  # own words first
    ("我问的是另一个文件夹", WORKED, "negation"),
    ("je voulais que tu compares les deux fichiers", WORKED, "negation"),
    ("der Server ist nicht erreichbar", DONE, "failure_report"),
    ("я спрашивал про другой файл", WORKED, "negation"),
]


@pytest.mark.parametrize(("text", "before", "kind"), HEARD_AS)
def test_each_kind_of_correction_is_heard_with_its_cue(text, before, kind):
    result = heard(text, before=before)
    assert result.correction and result.kind == kind, result
    assert result.cue


NOT_CORRECTIONS = [
    ("fix the error in the login form", DONE),  # the task names the error: a request
    ("проанализируй ошибку", DONE),
    ("エラーを修正してください", DONE),
    ("Traceback (most recent call last): File app.py, line 3 KeyError: 'user'", DONE),
    ("Actually the second option, the worker", ASKED),  # an answer to the agent's question
    ("add a loading state, but keep the old spinner", DONE),  # "but" inside a request
    ("the settings file already exists, add a theme key to it", DONE),
    ("what do you mean by a worker", ""),  # nothing to challenge yet
    ("what do you mean by a worker?", ASKED),  # asks what the agent's question means
    ("stop the dev server once the tests pass", DONE),  # a stop word in a task
    ("hmm ok, that works. Now add a footer", DONE),  # hesitation is no objection
    ("Moment handles the dates here, add a helper for time zones", DONE),
    ("dumb question, but where does the config live?", DONE),
    ("I already have node installed, not sure the script needs more", DONE),
    ("logs/ 也不要提交到 git", "已把 `.env` 加入 .gitignore，git 不再跟踪它。"),  # one more rule
    ("I reload the page and then it is not there", "I added logging to the login. Let me know what you see."),
    # look-alikes of the third round's cues
    ("list the tasks that are not done yet", ASKED),
    ("resolve the merge conflicts with main", DONE),
    ("same for the footer please", DONE),  # "the same" that asks for more
    ("thêm key trong env nhé", DONE),  # "trong" (in) is "trống" (empty) without its marks
    ("tôi muốn log khi lỗi", DONE),  # errors as the task's topic
    ("$ ls logs\nls: logs: No such file or directory", DONE),  # pasted at a shell prompt
    ("this repo has no .env.local file, why?", WORKED),  # a dot in a name ends no sentence
    ("validate the form, no autofill of the last login", "Shall I also enable autofill of the last login?"),
    # the work is fine now, the person is still busy with it, or asks for the same elsewhere
    ("No errors anymore. Great job", DONE),
    ("the build has no more errors, thanks", DONE),
    ("still reviewing your diff, give me a minute", DONE),
    ("ok same thing for the tests folder", DONE),
    ("doesn't matter, either is fine", DONE),
    # look-alikes of the fourth round's cues
    ("you only need to change the README", ASKED),  # "you only" answering a question
    ("I want you to add the tests next", DONE),
    ("ログまたはエラーを出力する関数を追加して", ASKED),  # または ("or") holds no また ("again")
    ("where did you save the export?", DONE),  # asks where, doubts nothing
    ("Now I get these: Program.cs(12,5): error CS1513: } expected", DONE),  # a compiler's output, pasted
    ("yes, the same for the error page", "Shall I do the same for the home page?"),  # takes up the offer
    ("ja, bitte das Gleiche für die Fehlerseite", "Wenn du willst, mache ich das Gleiche für den Kopf."),
]


@pytest.mark.parametrize(("text", "before"), NOT_CORRECTIONS)
def test_requests_answers_and_pasted_output_are_no_correction(text, before):
    assert not heard(text, before=before).correction


def test_a_question_about_a_failure_only_doubts_a_claim_when_negative():
    assert heard("so it can't compile now?").kind == "pushback"
    assert not heard("is the error fixed now?").correction


def _seconds(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


@pytest.mark.parametrize("text", ["fail-fast mode is fine here", "the console is error-free now, thanks"])
def test_a_failure_word_inside_a_hyphenated_one_reports_nothing(text):
    assert not heard(text).correction
    assert heard(text.replace("-", " - ")).correction  # a dash between words is an edge


@pytest.mark.parametrize("text", ["dont run the migration", "不要改测试", "не надо коммитить"])
def test_a_prohibition_right_after_an_interruption_says_why_the_person_stopped_the_agent(text):
    result = hear(load_lexicons(), text, "", after_error=True)  # interrupted mid-tool: no words yet
    assert result.correction and result.kind == "rule", result


@pytest.mark.parametrize("text", ["continue, and don't skip the tests", "do not forget the tests, try again"])
def test_a_retry_that_holds_a_dont_is_still_a_retry(text):
    assert not hear(load_lexicons(), text, DONE, after_error=True).correction
    assert not hear(load_lexicons(), "dont run the migration", "", first=True, after_error=True).correction


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
    ("text", "before"),
    [
        ("why is the header still on two lines?", ""),  # the session's first words: nothing to question
        ("the header, why? " + "it needs one line on phones, two on wide screens. " * 6, DONE),  # a spec
        ("and why does the cache matter here, it is the same either way", DONE),  # no question mark
        ("can you explain why this works?", DONE),  # further into its sentence, the why names a reason
        ("Why not?", DONE),  # a yes
        ("warum nicht?", DONE),
    ],
)
def test_a_why_that_opens_no_short_question_after_the_agents_work_is_no_pushback(text, before):
    result = hear(load_lexicons(), text, before, first=not before)
    assert result.kind != "pushback", result


def test_a_yes_to_the_agents_offer_that_names_errors_reports_no_failure():
    offer = "The form now validates every field. If you'd like, I can show the validation errors in a banner."
    assert not heard("Yes please, show the validation errors in the banner.", before=offer).correction
    assert heard("the validation errors are still not shown", before=DONE).correction


def test_the_same_far_into_a_long_new_request_is_no_failure_report():
    text = "build the settings page next. " * 8 + "the layout should be like the profile page, same thing"
    assert not heard(text).correction
    assert heard("same thing, the page is still blank").correction


@pytest.mark.parametrize(
    "text", ["yanlış anladın, randevuyu müşteri açmıyor", "yanlis anladin, randevuyu musteri acmiyor"]
)
def test_turkish_is_heard_typed_with_or_without_its_marks(text):
    result = heard(text)
    assert result.correction and result.language == "tr", result
    assert not heard("sorun yok, teşekkürler").correction


def test_still_in_russian_said_as_all_the_same_after_the_agents_fix():
    result = heard("всё равно требует авторизацию на главной", before="Исправил: теперь редирект работает.")
    assert result.correction and result.kind == "failure_report", result


@pytest.mark.parametrize("text", ["ok, the login page shows an error now", "yes, errors everywhere now"])
def test_a_yes_that_reports_a_failure_the_offer_never_named_is_a_failure_report(text):
    offer = "Done: the login page is fixed and the tests pass. If you'd like, I can also add tests."
    assert heard(text, before=offer).kind == "failure_report"


@pytest.mark.parametrize("text", ["¡Hala, qué rápido! gracias", "Dur de choisir, mais merci"])
def test_words_other_languages_share_with_turkish_cues_report_nothing(text):
    assert not heard(text, before="Done ✅ the tests pass.").correction
