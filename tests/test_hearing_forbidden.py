"""The person forbids what the agent just did (the twenty-fourth round, read from set 28).

"don't rename the files" right after "I renamed the files …" says the renaming was wrong; it is
no correction where the agent only asked or offered to, said it did not, or the person speaks of
themselves.
"""

import pytest

from tests.transcripts.hearing_cases import heard

_RENAMED = {
    "en": "I renamed the files to kebab-case and updated the imports.",
    "ru": "Я переименовал файлы в kebab-case и обновил импорты.",
    "fr": "J'ai renommé les fichiers en kebab-case et mis à jour les imports.",
    "de": "Ich habe die Dateien umbenannt und die Importe angepasst.",
    "zh": "我删除了失败的测试，并更新了导入。",
}


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("don't rename the files", "en"),
        ("stop renaming", "en"),
        ("не переименовывай их", "ru"),
        ("ne les renomme pas", "fr"),
        ("nicht umbenennen", "de"),
        ("不要删除测试", "zh"),
    ],
)
def test_a_negated_order_of_what_the_agent_just_did_is_a_correction(text, language):
    result = heard(text, before=_RENAMED[language])
    assert result.correction and "forbids what the agent just did" in (result.cue or ""), result


@pytest.mark.parametrize(
    ("text", "before"),
    [
        # the agent asked or offered: the "don't" answers it
        ("don't rename them", "Want me to rename the files to kebab-case?"),
        ("don't rename the files", "I could rename the files to kebab-case if you like."),
        # the agent said it did not
        ("don't rename the files", "I did not rename the files, only updated the imports."),
        ("不要删除测试", "我没有删除测试，只更新了导入。"),
        # the person speaks of themselves, or of another verb
        ("I don't rename files by hand, use the script", _RENAMED["en"]),
        ("don't forget the changelog", _RENAMED["en"]),
        # "stop" orders before a verb's -ing only: "stop server" names a thing the agent started
        ("stop server", "I started the dev server on port 3000."),
    ],
)
def test_a_negated_order_the_agent_did_not_carry_out_is_no_correction(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    ("text", "before"),
    [
        # what it forbids is the agent's own doing: the same thing, a pronoun for it, or no thing named
        ("don't refactor the auth module", "I refactored the auth module."),
        ("don't delete them", "I deleted the old logs."),
        ("do not retry, just mark it as failed", "Initially added retry logic around the analysis."),
        ("don't push again", "I pushed the branch to origin."),
        ("не изменяй цвет кнопки", "Я изменил цвет кнопки."),
        ("不要删除它", "我删除了失败的测试，并更新了导入。"),
        ("non modificare il colore", "Ho modificato il colore del pulsante."),
        # where it did it is the agent's too; a manner names no thing
        ("don't add logging to every function, only the handlers", "I added logging to every function."),
        ("never push directly, open a PR", "I pushed to main."),
        # the same form where the agent says it did it: after its subject or auxiliary, or a list's dash
        ("jangan mengubah warna tombol", "Saya mengubah warna tombol."),
        ("đừng sửa màu", "Tôi đã sửa màu của nút."),
        ("don't add type hints", "Changes:\n- Add type hints to the parser\n- Update the README"),
    ],
)
def test_forbidding_the_very_thing_the_agent_did_is_a_correction(text, before):
    result = heard(text, before=before)
    assert result.correction and "forbids what the agent just did" in (result.cue or ""), result


@pytest.mark.parametrize(
    ("text", "before"),
    [
        # the agent did X to Y, the person forbids X to Z: the next work, not the last
        ("Don't add tests yet, just finish the endpoint", "I added the /users endpoint."),
        ("don't delete the database", "I deleted the old logs."),
        ("don't use moment either", "I used lodash for the debounce."),
        ("не добавляй тесты", "Я добавил эндпоинт /users."),
        ("不要添加测试，先把接口写完", "我添加了 /users 接口。"),
        ("ne modifie pas la base de données", "J'ai modifié la couleur du bouton."),
        # CJK things by their characters, not by a particle beside one ("新的" ≠ a thing)
        ("不要创建新的数据库表", "我创建了新的分支。"),
        # the same thing, somewhere else: "to / in / for Z" names where, and Z is not the agent's
        ("don't add type hints to the tests", "I added type hints to all functions."),
        ("don't delete imports in generated files", "I deleted the unused imports in app.py."),
        ("don't clean up anything in the db folder", "I cleaned up the old migrations."),
        # the agent only said it will
        ("don't add tests", "I'll add tests next. Done: I added the endpoint."),
        # its scope: anything else, other files, the rest
        ("don't change anything else", "I changed the button color."),
        ("don't refactor the rest", "I refactored the auth module."),
        ("не изменяй ничего другого", "Я изменил цвет кнопки."),
        ("不要修改其他地方", "我修改了按钮颜色。"),
        ("ne modifie rien d'autre", "J'ai modifié la couleur du bouton."),
        ("não altere outros arquivos", "Eu alterei a cor do botão."),
        ("nie zmieniaj innych plików", "Zmieniłem kolor przycisku."),
        ("jangan mengubah file lain", "Saya mengubah warna tombol."),
        ("đừng sửa file khác", "Tôi đã sửa màu của nút."),
        # its time: yet, this time, until …
        ("don't update the lockfile this time", "I updated the README."),
        ("don't deploy until I say so", "I deployed to staging."),
        ("don't commit yet", "I committed the changes."),
        ("não adicione testes ainda", "Eu adicionei o endpoint /users."),
    ],
)
def test_a_negated_order_of_the_agents_verb_for_the_next_work_is_no_correction(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("don't build it", "The build passes and all checks are green."),
        ("don't commit it", "See commit abc123 for the details."),
        ("don't push", "The push notification service is ready."),
        ("don't migrate it", "The migration file looks fine."),
        ("don't install it", "Here is the install guide you asked for."),
        ("不要修改它", "这个修改很小，只影响一个文件。"),
        ("不要部署", "我看了一下部署脚本。"),
        ("не изменяй это", "Изменения небольшие."),
    ],
)
def test_the_agents_word_for_a_thing_is_not_its_doing(text, before):
    # the verb's own word names a thing here ("the build", "commit abc123"): the agent reports no act
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("не работает", "Готово, теперь всё работает."),
        ("nie działa", "Gotowe, teraz wszystko działa."),
        ("non funziona", "Fatto, ora tutto funziona."),
        ("não funciona", "Pronto, agora tudo funciona."),
    ],
)
def test_a_negated_failure_word_after_the_claim_reports_a_failure_not_an_order(text, before):
    # the bare negation ("не", "nie", "non", "não") opens statements too: "it does not work" orders nothing
    assert heard(text, before=before).kind == "failure_report"
