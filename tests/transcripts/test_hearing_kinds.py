"""Kinds of correction heard with the agent's words before them, in several languages each.

Pushback, objections, scorn, undo, a fact restated, a failure reported after the agent's
claim; and the same words where they are a request, an answer or pasted output. The lexicon
per language is in test_hearing.py.
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.transcripts.hearing_cases import DONE, heard

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
    ("what do you mean by a worker", "Hello! How can I help you today?"),  # nothing to challenge yet
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


def test_a_cjk_reply_after_an_interruption_is_as_brief_as_what_it_says():
    # seventeen characters, as much as a fifty-letter English reply: not a bare retry
    stopped = "正在修改配置文件。"
    result = hear(load_lexicons(), "这个配置文件不是之前就已经改好了吗？", stopped, after_error=True)
    assert result.correction and result.kind == "pushback", result
    assert not hear(load_lexicons(), "好的，重新来一次吧", stopped, after_error=True).correction


@pytest.mark.parametrize(
    "text",
    [
        "Shouldn't this use the existing HTTP client?",
        "so wouldn't the map be simpler here?",
        "¿No debería ir en el módulo de red?",
        "Não deveria ficar no módulo de rede?",
        "Ça ne devrait pas être dans le module réseau ?",
        "Non dovrebbe stare nel modulo di rete?",
        "Разве это не должно быть в сетевом модуле?",
        "Хіба це не має бути в мережевому модулі?",
        "ここは enum で十分なのでは？",
    ],
)
def test_a_negative_question_opening_the_reply_challenges_the_agents_work(text):
    result = heard(text)
    assert result.correction and result.kind == "pushback", result


@pytest.mark.parametrize(
    "text",
    [
        "shouldn't matter, go ahead with the rename",  # no question
        "Shouldn't take long: add the flag and run the tests.",
        "one more idea, shouldn't we log the retries too",  # not its opening, no question mark
    ],
)
def test_a_negative_modal_that_asks_nothing_is_no_pushback(text):
    assert heard(text).kind != "pushback"


@pytest.mark.parametrize(
    "text",
    ["ダークモードの切り替えがうまく動作していないです", "保存ボタンが機能しません", "刷新按钮点了不管用"],
)
def test_it_does_not_work_said_in_everyday_japanese_and_chinese_after_the_agents_claim(text):
    result = heard(text)
    assert result.correction and result.kind == "failure_report", result


@pytest.mark.parametrize(
    "text",
    [
        "你真笨，又改错了文件",
        "笨死了",
        "ты тупой?",
        "bist du dumm?",
        "t'es débile ou quoi",
        "bodoh sekali",
        "aptal mısın",
    ],
)
def test_calling_the_agent_stupid_is_scorn_in_every_lexicon_language(text):
    result = heard(text)
    assert result.correction and result.kind == "negation", result


@pytest.mark.parametrize(
    "text",
    [
        "这个函数有点笨重，拆成两个",
        "バカみたいに簡単なタスクです。READMEを書いて",
        "Это тупой вопрос, но где лежит конфиг?",
    ],
)
def test_words_that_only_look_like_calling_the_agent_stupid_are_no_scorn(text):
    assert heard(text).kind != "negation"


# Twelfth round: a later message whose agent text is unknown (a prompt-only log, a turn of tools
# only) is weighed by the rules that need no claim; the session's first words still are not.
@pytest.mark.parametrize(
    "text",
    [
        "still the same error when I open the page",
        "всё равно та же ошибка",
        "还是同样的错误",
        "immer noch derselbe Fehler beim Start",
    ],
)
def test_a_later_message_with_no_agent_text_still_reports_a_failure(text):
    assert hear(load_lexicons(), text, "").correction
    assert not hear(load_lexicons(), text, "", first=True).correction  # nothing done yet to fail


@pytest.mark.parametrize(
    "text",
    [
        "the page is blank",  # a symptom weighs only against the agent's claim
        "add a footer with the error count",
        "show me the errors again",
        "Fix the login error again please",
    ],
)
def test_a_later_message_with_no_agent_text_needs_more_than_a_failure_word(text):
    assert not hear(load_lexicons(), text, "").correction


# A word that is both "go on" and "still" (Spanish "sigue", Portuguese "continua") before a
# failure reports that it still fails; alone, or with no failure after it, it lets the agent go on.
@pytest.mark.parametrize("text", ["sigue saliendo el mismo error", "continua dando o mesmo erro na tela"])
def test_go_on_that_is_still_before_a_failure_reports_it(text):
    assert heard(text).correction


@pytest.mark.parametrize("text", ["sigue", "sigue con el siguiente paso", "continua por favor"])
def test_go_on_with_no_failure_after_it_is_a_retry(text):
    assert not heard(text).correction


# Praise followed by "nothing works" is sarcasm: the failure after the praise reports it; a
# success said with a failure word ("no more errors", "nothing is broken", stopped "by mistake") is none.
@pytest.mark.parametrize(
    "text",
    [
        "great, now nothing works",
        "Super, jetzt geht gar nichts mehr",
        "génial, maintenant plus rien ne marche",
        "perfecto, ahora nada funciona",
        "ótimo, agora nada funciona",
    ],
)
def test_praise_then_nothing_works_is_a_failure_report(text):
    assert heard(text).kind == "failure_report"


@pytest.mark.parametrize(
    "text",
    [
        "ошибок больше нет, спасибо",
        "нет ошибок",
        "nothing is broken, I just wanted to look at the logs",
        "it isn't broken, just curious how it works",
        "je l'ai arrêté par erreur",
        "lo paré por error",
        "Es funktioniert, nichts geht mehr schief",
        "Awesome, nothing works better than a simple loop.",  # praise of a way of doing it
        "nothing works like a cold restart, let's keep it",
    ],
)
def test_a_success_or_a_stop_by_mistake_said_with_a_failure_word_is_no_correction(text):
    assert not heard(text).correction


# "It is not working" in its progressive and "seems" forms, after the agent's claim
@pytest.mark.parametrize(
    "text",
    [
        "that didn't seem to work",
        "o login não está funcionando",
        "el botón no está funcionando",
        "non sta funzionando",
    ],
)
def test_it_is_not_working_said_in_its_progressive_form_reports_a_failure(text):
    assert heard(text).kind == "failure_report"


def test_it_is_not_working_inside_a_new_task_is_its_spec():
    assert not heard("add a banner that says when the sync is not working", before=ASKED).correction


# An urgent "don't …!" opening a brief reply forbids what the agent is about to do or did, in
# any lexicon language; not a "don't worry!", a question, an answer to the agent's question, nor
# a "don't" further into a request.
ABOUT_TO = "I'll remove the build directory now and reset the database."


@pytest.mark.parametrize(
    "text",
    ["don't delete that directory!", "Do not touch the database!", "不要删除这个文件夹！", "не трогай базу!"],
)
def test_an_urgent_dont_opening_a_brief_reply_forbids(text):
    assert heard(text, before=ABOUT_TO).kind == "rule"


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("don't worry!", ABOUT_TO),
        ("don't forget the tests!", ABOUT_TO),
        ("Nicht vergessen: die Tests!", ABOUT_TO),  # a reminder, in any language
        ("N'oublie pas les tests !", DONE),
        ("don't delete that directory?", ABOUT_TO),
        ("please add a test first. don't mock the db!", ABOUT_TO),
        ("don't delete that directory!", "Should I remove the build directory?"),  # answers it
        ("Great work, don't change anything else!", DONE),
    ],
)
def test_a_dont_that_is_no_urgent_order_forbids_nothing(text, before):
    assert not heard(text, before=before).correction


# Thirteenth round: telling the agent it wastes the person's time, in the lexicon languages
@pytest.mark.parametrize(
    "text",
    [
        "are you even reading the logs or are you wasting my time?",
        "you're wasting my time, the build is red again",
        "You keep wasting my time with the same patch",
        "no me hagas perder el tiempo con eso",
        "tu me fais perdre mon temps avec ces essais",
        "du verschwendest meine Zeit",
        "ты тратишь моё время",
        "你在浪费我的时间",
        # the order to stop, said to the agent at the start of a sentence
        "Stop wasting my time and run the tests.",
        "ok. quit wasting my time, just fix the import",
        # fourteenth round: the order, "don't waste" too, in every lexicon language
        "Don't waste my time, the build still fails",
        "Deja de hacerme perder el tiempo",
        "Arrête de me faire perdre mon temps",
        "Verschwende nicht meine Zeit",
        "Не трать моё время",
        "Не марнуй мій час",
        "Nie marnuj mojego czasu",
        "Non farmi perdere tempo",
        "Não me faça perder tempo",
        "别浪费我的时间",
        "時間を無駄にしないで",
        "내 시간 낭비하지 마",
        "jangan buang waktu saya",
        # after a dash, or as a list item: a sentence's start too
        "fine - stop wasting my time with the mocks",
        "Two things: 1) don't waste my time, 2) read the logs",
        # after a word that opens the sentence, on its own line or not ("ok\nstop …" reads "ok stop …")
        "ok\nstop wasting my time and read the trace",
        "seriously stop wasting my time",
        # the everyday form of the order, word order and politeness of each language
        "No pierdas mi tiempo, revisa el log",
        "Não perca meu tempo, leia o erro",
        "Ne perds pas mon temps, lis la trace",
        "Verschwende meine Zeit nicht, lies das Log",
        "Non sprecare il mio tempo, leggi il log",
        "不要再浪费我的时间了，先看日志",
        "Не тратьте моё время, посмотрите лог",
        "Не марнуйте мій час",
        "Zamanımı boşa harcama",
    ],
)
def test_telling_the_agent_it_wastes_the_persons_time_is_a_correction(text):
    assert heard(text).correction


@pytest.mark.parametrize(
    "text",
    [
        "Write a compose file so that setting up won't waste my time again",
        "Automate the release so I stop wasting my time on it",
        "this script saves me from wasting my time on manual deploys",
        "Add a button so reviewers stop wasting my time with pings",
        "I don't waste my time on flaky tests, delete them",
        "don't waste time on the old parser, rewrite it",
    ],
)
def test_the_person_wasting_their_own_time_is_no_correction(text):
    assert not heard(text).correction
