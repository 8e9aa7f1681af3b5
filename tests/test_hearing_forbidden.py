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
        ("не работает", "Готово, теперь всё работает."),
        ("nie działa", "Gotowe, teraz wszystko działa."),
        ("non funziona", "Fatto, ora tutto funziona."),
        ("não funciona", "Pronto, agora tudo funciona."),
    ],
)
def test_a_negated_failure_word_after_the_claim_reports_a_failure_not_an_order(text, before):
    # the bare negation ("не", "nie", "non", "não") opens statements too: "it does not work" orders nothing
    assert heard(text, before=before).kind == "failure_report"
