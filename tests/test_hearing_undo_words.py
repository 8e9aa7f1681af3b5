"""Undo words the lists lacked (the twenty-fourth round): "roll back" in one word, "rewind" what was changed.

Each is an order opening a sentence, in several languages, with the look-alikes that name the
product's feature or the person's plan and must be left alone.
"""

import pytest

from tests.transcripts.hearing_cases import heard

_LOOKED = {
    "en": "I looked at the loader.",
    "ja": "ローダーを見ました。",
    "ko": "로더를 봤습니다.",
    "ru": "Я посмотрел загрузчик.",
}


@pytest.mark.parametrize(
    ("text", "language", "word"),
    [
        ("rollback", "en", "rollback"),
        ("please roll-back the last commit", "en", "please roll-back"),
        ("rewind the last changes", "en", "rewind the last changes"),
        ("rewind it", "en", "rewind it"),
        ("can we rollback?", "en", "can we rollback"),
        ("can we rewind all background changes?", "en", "rewind all background changes"),
        ("全部巻き戻して", "ja", "巻き戻して"),
        ("롤백 해줘", "ko", "롤백 해"),
        ("откатись на прошлый коммит", "ru", "откатись"),
    ],
)
def test_an_undo_word_in_another_spelling_is_a_correction(text, language, word):
    result = heard(text, before=_LOOKED[language])
    assert result.correction and f"“{word}”" in (result.cue or ""), result


@pytest.mark.parametrize(
    "text",
    [
        "add rollback support to the deploy script",
        "commit each fix so I can rollback to a specific one later",
        "add a rewind button that resets the last changes",
        "the player should rewind the video by ten seconds",
        "rollback should happen automatically when a deploy fails",
        "rollback the db migration when the tests fail in CI",
        "rewind the changes log to its first entry",
        "rewind the last changes in the editor history whenever ctrl+z is pressed",
        "откатись назад в меню, если пользователь нажмёт «Назад»",
        "動画を巻き戻して最初から再生する機能を追加して",
        "失敗したら自動で巻き戻して",
        "실패하면 자동으로 롤백 해주는 기능 추가해줘",
        # the feature as a subject, or "rewind it" as what the product does
        "rollback is not implemented yet, can you add it?",
        "Rollback is broken in prod, the migration stays applied",
        "when the user presses back, rewind it to the start",
        "the audio player needs a button to rewind it by 10s",
    ],
)
def test_rollback_or_rewind_as_a_feature_or_the_persons_plan_is_no_correction(text):
    assert not heard(text, before=_LOOKED["en"]).correction
