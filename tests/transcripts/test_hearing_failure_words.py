"""Failure words in the languages whose lexicon lacked them, and look-alikes that report nothing.

"It doesn't compile" and a red build after the agent's claim; the same words inside a request;
German "mal" that is no Spanish "mal"; slowness denied.
"""

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.transcripts.hearing_cases import DONE, heard


# Nineteenth round, the leftovers of attack48: "it doesn't compile" and a red build in the languages
# whose lexicon lacked them, said after the agent's claim
@pytest.mark.parametrize(
    "text",
    [
        "ça ne compile pas",
        "le projet ne compile plus depuis ta modif",
        "es kompiliert nicht",
        "проект не компилируется",
        "не збирається після твоєї правки",
        "projekt nie kompiluje się",
        "ビルドが通らないです",
        "コンパイルできない",
        "编译报错",
        "现在构建报错",
        "CI is red",
        "the pipeline is red on main",
        "c'est toujours super lent",
    ],
)
def test_it_does_not_compile_or_the_build_is_red_after_the_agents_claim(text):
    result = heard(text)
    assert result.correction and result.kind == "failure_report", result


@pytest.mark.parametrize(
    "text",
    [
        "看下编译日志里的报错",  # a request to read the errors: the guard holds beside 编译 too
        "make the tests red first, then green",  # a red test is the step, no build reported
        "checks are required before merge",
    ],
)
def test_build_words_in_a_request_report_nothing(text):
    assert not heard(text).correction


def test_toujours_super_lent_reports_slowness_and_states_no_preference():
    result = hear(load_lexicons(), "toujours super lent", DONE)
    assert result.correction and not result.preference, result


# attack50: the German "mal" ("schau mal", "das nächste Mal") is no Spanish "mal" (badly), which the
# lists of every language read; "está mal" and "noch mal" still count
@pytest.mark.parametrize(
    "text",
    [
        "Schau mal in die Konsole, da steht noch mehr",
        "Das nächste Mal deploye ich selbst.",
        "Mach das mal so",
    ],
)
def test_the_german_mal_reports_nothing(text):
    assert not heard(text).correction, text


@pytest.mark.parametrize("text", ["lo hiciste mal", "esto está mal", "noch mal bitte"])
def test_mal_of_a_mistake_or_again_still_counts(text):
    assert heard(text).correction, text


# attack50: slowness denied ("plus très lent", "pas trop lent") after the agent's claim is praise, not
# the "très lent" cf63529 added
@pytest.mark.parametrize("text", ["ce n'est plus très lent, merci", "pas trop lent du tout, c'est bon"])
def test_slowness_denied_reports_nothing(text):
    assert not heard(text).correction, text
