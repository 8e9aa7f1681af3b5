"""A failure a new request names is a case to handle, a thing to make or to find, not a report.

"If the build is broken, notify Slack", "Implement the missing export button" and "list any that
are missing" ask for new work after the agent's claim of success; the same words said as what
happened ("the build is broken") report a failure. Each sentence is our own, typed after the
agent's claim (`CLAIMS` of the parity matrix).
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from evolve.transcripts.sentences import in_a_condition
from tests.hearing.parity_sentences import CLAIMS

# (language, a request naming a failure as its condition): nothing to correct
IN_A_CONDITION = [
    ("en", "Add a step to the CI job: if the build is broken, notify Slack."),
    ("en", "Remove the cache layer if it's not working."),
    ("en", "Whenever the upload fails, show a retry button on the form."),
    ("en", "If you'd like, show a retry button when the upload fails."),
    ("es", "Añade un aviso: si la subida falla, muestra un botón para reintentar."),
    ("fr", "Ajoute une alerte : si le build ne marche pas, envoie un mail à l'équipe."),
    ("de", "Schreib einen Check: falls der Import fehlschlägt, schick eine Warnung an Slack."),
    ("ru", "Добавь проверку: если загрузка не работает, покажи кнопку повтора."),
    ("zh", "加一个功能：如果上传失败，显示重试按钮。"),
    ("ja", "アップロードに失敗した場合は再試行ボタンを表示する機能を追加してください。"),
    ("ko", "업로드 오류가 발생할 경우 재시도 버튼을 보여주는 기능을 추가해줘."),
]

# (language, a request for new work whose opening sentence names a failure): nothing to correct
NEW_WORK = [
    ("en", "Implement the missing export button on the settings page."),
    ("en", "Add a third button which does the same thing as the reset link."),
    ("en", "Write a commit message that doesn't mention the agent."),
    ("es", "Añade un test para el login que no funciona en Safari."),
    ("fr", "Ajoute un test pour le login qui ne marche pas sur Safari."),
    ("de", "Erstelle einen Test für den Login, der in Safari nicht funktioniert."),
    ("pt", "Adicione um teste para o login que não funciona no Safari."),
    ("ru", "Добавь тест для логина, который не работает в Safari."),
    ("zh", "添加一个页面，显示导入失败的文件。"),
]

# (language, a request to find or list failures, if any): nothing to correct
ASKED_WHICH = [
    ("en", "Check the config and list any that are missing from the example file."),
    ("en", "Do what is needed to fix the errors."),
    ("en", "Check whether anything is broken in the export."),
    ("zh", "告诉我哪些接口失败了。"),
    ("ja", "エラーがあるかどうか確認して。"),
    ("ko", "오류가 있는지 확인해줘."),
]

# (language, the same failure said as what happened): heard
REPORTED = [
    ("en", "The build is broken, CI shows red."),
    ("es", "La subida falla otra vez."),
    ("fr", "Le build ne marche pas."),
    ("de", "Der Import schlägt fehl."),
    ("ru", "Загрузка не работает."),
    ("zh", "上传失败了。"),
    ("ja", "アップロードに失敗しました。"),
    ("en", "When I ran it I got an error on startup."),  # "when" tells what happened
    ("pt", "Verifique se há um erro no log, o build falhou."),  # "se" of "check whether"
    ("en", "Update: the login still fails."),  # a heading over a report, not the verb
    ("en", "Add: it crashes on startup."),
    ("en", "Thanks. Now add a footer. The header is still broken though."),  # past the opening sentence
    ("en", "What you did is wrong."),  # "what" of the agent's work, not of a request
    ("en", "Which is why the build is broken now."),
    ("en", "What I see is a blank page with an error."),  # what the person sees, not what to find
    ("en", "What it prints is an error about the import."),
    ("zh", "无论是否重启页面都崩溃了"),  # "no matter whether": a report, not a question
    # "still" reports even in the opening sentence of new work (it once raised IndexError)
    ("en", "Create the file again, it's still missing."),
    ("de", "Füge den Import hinzu, es schlägt immer noch fehl."),
    ("ru", "Добавь импорт, всё ещё падает."),
    ("en", "Write it again, the output is wrong."),  # "it": the agent's work to redo, not new work
    ("en", "Now write the tests properly, they fail."),  # a clause of its own after the comma
    ("fr", "Ajoute le test, il échoue toujours."),
    # a reproach of what the agent did not do, not a case to handle
    ("en", "If you had run the tests you'd see they fail."),
    ("en", "If you'd run it you would see it crashes."),
    ("es", "Si lo hubieras probado verías que no funciona."),
    ("pt", "Se você tivesse testado veria que não funciona."),
    ("zh", "如果你跑过测试就知道它崩溃了"),
    # what happens when the person does something, or "even if": a report, not a case to handle
    ("en", "If I click save it crashes."),
    ("en", "Whenever I click save it crashes."),
    ("en", "Even if it compiles the login is broken."),
    ("en", "Unless I'm missing something it's broken."),
    ("de", "Wenn ich speichere kommt ein Fehler."),
    ("fr", "Si je clique sur enregistrer ça plante."),
]


@pytest.fixture(scope="module")
def lexicons():
    return load_lexicons()


@pytest.mark.parametrize(("lang", "message"), IN_A_CONDITION)
def test_a_failure_in_a_condition_is_a_spec(lexicons, lang, message):
    heard = hear(lexicons, message, CLAIMS[lang])
    assert not heard.correction, heard.why


@pytest.mark.parametrize(("lang", "message"), NEW_WORK)
def test_a_failure_in_the_opening_of_new_work_is_its_spec(lexicons, lang, message):
    heard = hear(lexicons, message, CLAIMS[lang])
    assert not heard.correction, heard.why


@pytest.mark.parametrize(("lang", "message"), ASKED_WHICH)
def test_a_failure_a_request_asks_to_find_is_no_report(lexicons, lang, message):
    heard = hear(lexicons, message, CLAIMS[lang])
    assert not heard.correction, heard.why


@pytest.mark.parametrize(("lang", "message"), REPORTED)
def test_the_same_failure_said_as_what_happened_is_heard(lexicons, lang, message):
    heard = hear(lexicons, message, CLAIMS.get(lang, CLAIMS["en"]))
    assert heard.correction, message


def test_a_condition_opens_the_clause_or_closes_it_after_the_verb():
    words = "add a check: if the build is broken, notify slack"
    at = words.index("broken")
    assert in_a_condition(words, at, at + len("broken"))
    words = "the build is broken, if you ask me"
    assert not in_a_condition(words, words.index("broken"), words.index("broken") + 6)
    words = "失敗した場合は再試行"
    assert in_a_condition(words, 0, 2)
