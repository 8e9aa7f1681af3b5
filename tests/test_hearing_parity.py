"""Parity by language: the correction shapes heard in English are heard in every language people use most.

Each shape (a correction the detector hears in English: "that's wrong", "still not working",
"you forgot X" …) is written as a native speaker would type it to a coding agent, in each
language, after the agent's claim of success in that language; the look-alikes (a new
request, a question, a retry after an API error, praise, a spec with "should", a "not" in a
task) must stay silent. Our own sentences, none from the labelled sets.
`python -m tests.test_hearing_parity` prints the matrix (heard / missed per shape × language).
"""

from __future__ import annotations

import sys

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.hearing.parity_lookalikes import OFFERS, SILENT
from tests.hearing.parity_sentences import CLAIMS, LANGUAGES, NOT_YET, SHAPES


def heard(text: str, lang: str) -> bool:
    """Whether the correction is heard after the agent's claim of success in that language."""
    return hear(load_lexicons(), text, CLAIMS[lang]).correction


def silent(look_alike: str, lang: str) -> bool:
    """Whether a look-alike stays silent (after the claim; a retry after an error; "no" to an offer)."""
    text = SILENT[look_alike][lang]
    if look_alike == "retry after an API error":
        return not hear(load_lexicons(), text, after_error=True).correction
    agent_before = OFFERS[lang] if look_alike == "no to the agent's offer" else CLAIMS[lang]
    return not hear(load_lexicons(), text, agent_before).correction


_CELLS = [(shape, lang) for shape in SHAPES for lang in LANGUAGES if (shape, lang) not in NOT_YET]


@pytest.mark.parametrize(("shape", "lang"), _CELLS)
def test_a_correction_shape_is_heard_in_every_language(shape, lang):
    missed = [text for text in SHAPES[shape][lang] if not heard(text, lang)]
    assert not missed


@pytest.mark.parametrize(("look_alike", "lang"), [(kind, lang) for kind in SILENT for lang in LANGUAGES])
def test_a_look_alike_stays_silent_in_every_language(look_alike, lang):
    assert silent(look_alike, lang)


def test_every_shape_and_look_alike_is_written_in_every_language():
    written = [*SHAPES.values(), *SILENT.values(), CLAIMS, OFFERS]
    assert all(set(by_language) == set(LANGUAGES) for by_language in written)
    assert set(NOT_YET) <= {(shape, lang) for shape in SHAPES for lang in LANGUAGES}


def matrix() -> str:
    """Heard / missed per shape × language ("+" heard, "." missed, "!" a look-alike that fired)."""
    lines = [f"{'':26}" + " ".join(f"{lang:>2}" for lang in LANGUAGES)]
    totals = dict.fromkeys(LANGUAGES, 0)
    for shape, by_language in SHAPES.items():
        cells = []
        for lang in LANGUAGES:
            hits = sum(heard(text, lang) for text in by_language[lang])
            totals[lang] += hits == len(by_language[lang])
            cells.append(" +" if hits == len(by_language[lang]) else " ." if not hits else " ~")
        lines.append(f"{shape[:26]:26}" + " ".join(cells))
    lines.append(
        f"{'heard (of ' + str(len(SHAPES)) + ')':26}" + " ".join(f"{totals[lang]:>2}" for lang in LANGUAGES)
    )
    for look_alike in SILENT:
        cells = [" ." if silent(look_alike, lang) else " !" for lang in LANGUAGES]
        lines.append(f"silent: {look_alike[:18]:18}" + " ".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(matrix() + "\n")
