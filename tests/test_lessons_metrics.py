"""Did a lesson stick: corrections on its point per 100 runs before it landed and since (pure)."""

from __future__ import annotations

from evolve.metrics import lessons as m
from evolve.transcripts.anchors import lesson_anchors, run_point

PNPM = lesson_anchors("Use `pnpm`, never `npm`.")


def starts(day: int, count: int) -> list[str]:
    return [f"2026-11-{day + n // 24:02d}T{n % 24:02d}:00:00Z" for n in range(count)]


def recur(landed: str | None, timeline: list[str], said: list[m.PersonRun]) -> dict:
    """The lesson's recurrence over the person's runs (matched through the lessons' index)."""
    return m.recurrence(landed, timeline, m.said_again_at([PNPM], said)[0])


def person(started: str, words: str) -> m.PersonRun:
    return m.PersonRun(started, run_point({"correction": True, "request": words, "cwd": "/home/dev/shop"}))


def test_recurrence_counts_the_persons_corrections_on_the_point_before_and_after_it_landed():
    timeline = starts(1, 20) + starts(10, 30)  # 20 runs before the 10th, 30 from it
    landed = "2026-11-10T00:00:00Z"
    said = [person(timeline[i], "no, not npm: pnpm") for i in (2, 7, 15, 40)]
    said += [person(timeline[5], "the release notes are wrong")]  # another point: not counted
    trend = recur(landed, timeline, said)
    assert trend["before"] == {"runs": 20, "corrections": 3, "per_100": 15.0, "thin": False}
    assert trend["after"] == {"runs": 30, "corrections": 1, "per_100": 3.3, "thin": False}
    assert trend["dropped"] is True
    again = recur(landed, timeline, [*said, *(person(timeline[i], "npm again?! no") for i in (30, 45))])
    assert again["after"]["corrections"] == 3 and again["dropped"] is True  # 10 per 100 < 15
    worse = recur(landed, timeline, [said[0], *(person(timeline[i], "not npm") for i in (30, 35))])
    assert worse["dropped"] is False  # 5 per 100 before, 6.7 after: it did not drop


def test_a_thin_side_is_shown_but_not_judged_and_a_lesson_not_landed_has_no_after():
    timeline = starts(1, 25)
    said = [person(timeline[1], "not npm"), person(timeline[20], "not npm")]
    thin = recur(timeline[20], timeline, said)
    assert thin["after"] == {"runs": 5, "corrections": 1, "per_100": 20.0, "thin": True}
    assert thin["dropped"] is None
    never = recur(None, timeline, said)  # not committed: every run is before it
    assert never["before"]["corrections"] == 2 and never["after"]["runs"] == 0
    assert never["after"]["per_100"] is None


def test_the_pooled_headline_weights_each_side_by_its_runs():
    rows = [
        {"recurrence": {"before": m.side(20, 4), "after": m.side(20, 1)}},
        {"recurrence": {"before": m.side(0, 0), "after": m.side(40, 2)}},  # landed before the window
        {"recurrence": {"before": m.side(10, 1), "after": m.side(30, 0)}},
    ]
    pooled = m.pooled(rows)
    assert pooled["lessons"] == 2
    assert (pooled["before"]["per_100"], pooled["after"]["per_100"]) == (16.7, 2.0)
    text = m.headline_text({"pooled": pooled})
    assert text.startswith(
        "Corrections per 100 runs: before learning 16.7, after 2 (on the points of 2 lessons"
    )
    assert "nothing to compare" in m.headline_text({"pooled": m.pooled([])})
