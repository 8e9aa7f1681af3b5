"""The replay corpus's people cases: every valid lesson lands, a person's work and undo win.

Each case with `[[steps]]` (tests/corpus/trust.py) is replayed through the real SDK and the
local fake Messages API with a scripted person between reflections. The issue's targets:
no valid operation rejected, no line of a person's lost, no lesson re-learned after an
undo, no wrong block — and the protections really were exercised.
"""

from __future__ import annotations

import pytest

from evolve.home import Home
from tests.corpus import trust
from tests.corpus.loader import cases

PEOPLE = [case for case in cases() if case.steps]


def test_the_corpus_has_people_cases() -> None:
    assert len(PEOPLE) >= 2


@pytest.mark.parametrize("case", PEOPLE, ids=lambda c: c.name)
def test_a_person_wins_and_every_valid_lesson_lands(case) -> None:
    if not case.available:
        pytest.skip(f"{case.name}: its shared transcripts are not here (../shared/data/claude-code)")
    report = trust.replay(case, Home.resolve())
    shown = trust.table([report])
    assert report.valid_rejected == [], shown
    assert report.person_lines_lost == [], shown
    assert report.relearned == [], shown
    assert report.wrong_blocks == [], shown
    expect = case.expect
    assert report.landed >= expect.get("landed_at_least", 1), shown
    assert report.waiting >= expect.get("waiting_at_least", 0), shown
    assert report.kept >= expect.get("kept_at_least", 0), shown
    assert report.left_out + sum(n for r, n in report.rejected.items() if trust._undoing(r)) >= expect.get(
        "undo_refusals_at_least", 0
    ), shown
    assert report.unchanged >= expect.get("unchanged_at_least", 0), shown
