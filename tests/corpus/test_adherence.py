"""The adherence histories: each planted ignored lesson found, no topic-only run flagged.

Recurrence is measured before and after each lesson landed, and the next reflection puts the
ignored lessons first and names the ones its answer rewrote (tests/corpus/adherence.py).
"""

from __future__ import annotations

import pytest

from tests.corpus import adherence
from tests.corpus.eval import fresh_home
from tests.corpus.loader import load

CASES = ["adherence-memo", "adherence-skill", "adherence-control"]


@pytest.mark.parametrize("name", CASES)
def test_an_adherence_history_shows_what_its_expectations_plant(name) -> None:
    case = load(name)
    with fresh_home() as home:
        result = adherence.measure(case, home)
    planted = result.planted_lessons
    assert result.detected == result.planted == len(case.expect["ignored"])
    assert result.false == [] and result.topic_only_flagged == 0
    for expected, measured in zip(case.expect.get("recurrence", ()), result.recurrence, strict=True):
        assert (measured["before"]["per_100"], measured["after"]["per_100"]) == (
            expected["before"],
            expected["after"],
        )
        assert measured["dropped"] == expected.get("dropped")
    listed = {(r["kind"], r["id"]): r for r in result.listing}
    for kind, ref in set(planted):
        assert (
            listed[(kind, ref)]["ignored"] == planted.count((kind, ref))
            and listed[(kind, ref)]["in_context"] > 0
        )
    assert sum(r["ignored"] for r in result.listing) == len(planted)
    lessons = sorted({ref for _, ref in planted})
    assert sorted(result.bundle_ignored) == lessons and result.bundle_first == bool(lessons)
    assert sorted(result.escalated) == lessons  # the recorded answer rewrites each, and the commit says so
    not_dropped = [r["id"] for r in result.report["not_dropped"]]
    assert not_dropped == [r["id"] for r in result.recurrence if r["dropped"] is False]
    assert [r["id"] for r in result.report["most_ignored"]] == lessons
    assert result.report_text.splitlines()[1] == result.report["headline"]  # under the first headline
    assert result.report["headline"] in result.report_html
    rest = result.report_text.split("no less often after they landed:")[1].split("\n\n")[0]
    assert [line.split()[1] for line in rest.strip().splitlines() if "(none)" not in line] == not_dropped
