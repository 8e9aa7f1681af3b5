"""Did a lesson stick? Per lesson: in context, ignored, when it landed, and recurrence.

For every lesson (memo bullets and skills together, `workspace.lessons`), over the window:

- in context: runs whose session carried it (a bullet shown whole at session start; a
  skill listed there or read in the session);
- ignored: of those, runs that came back to its point (`observe.adherence` judged them);
- recurrence: how often the person corrected (or stated as a preference) the same point —
  `transcripts.anchors.said_again`, whatever the context — per 100 runs before the lesson
  landed and per 100 runs since. A lesson that landed before the window has no "before".

A side with fewer than THIN_RUNS runs is thin: its number is shown but not judged, and a
lesson is marked as not having helped only when both sides are not thin and the rate did
not drop. The counting is pure (`recurrence`, `side`, `pooled`); `build` loads state.db
and git once for every lesson.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evolve.clock import stamp
from evolve.metrics import proven
from evolve.metrics.rates import DAY
from evolve.store import ledger
from evolve.transcripts.anchors import Anchors, Point, lesson_anchors, person_words, run_point, said_again
from evolve.workspace import lessons as lessons_mod
from evolve.workspace.lessons import MEMO, SKILL, Lesson, Origin

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.workspace.agent import Agent

THIN_RUNS = 10  # runs on a side of a lesson's landing before its rate says anything
TEXT_CHARS = 200  # of a lesson's text in the listing


@dataclass(frozen=True)
class PersonRun:
    """A run in which the person corrected the agent or stated a preference."""

    started_at: str
    point: Point


def side(runs: int, corrections: int) -> dict:
    """Corrections on a lesson's point per 100 runs (None without runs; `thin` below THIN_RUNS)."""
    return {
        "runs": runs,
        "corrections": corrections,
        "per_100": round(100 * corrections / runs, 1) if runs else None,
        "thin": runs < THIN_RUNS,
    }


def verdict(before: dict, after: dict) -> bool | None:
    """Whether the rate dropped after the lesson landed; None when a side is thin or both are 0."""
    if before["thin"] or after["thin"] or not (before["corrections"] or after["corrections"]):
        return None
    return after["per_100"] < before["per_100"]


def said_again_at(anchored: list[Anchors], person: Iterable[PersonRun]) -> list[list[str]]:
    """For each lesson's anchors, when the person said its point again (their runs' starts).

    Each run is matched only against the lessons one of its tokens can anchor (an index
    of the lessons' keys): 200 skills and thousands of corrections stay cheap.
    """
    index: dict[str, set[int]] = {}
    for number, anchors in enumerate(anchored):
        for key in anchors.keys() | anchors.tools:
            index.setdefault(key, set()).add(number)
    found: list[list[str]] = [[] for _ in anchored]
    for run in person:
        words = run.point.words
        candidates = set().union(*(index.get(t, ()) for t in (*words.found, *words.tools)))
        for number in sorted(candidates):
            if said_again(anchored[number], run.point) is not None:
                found[number].append(run.started_at)
    return found


def recurrence(landed_at: str | None, starts: list[str], said_at: Iterable[str]) -> dict:
    """Before/after the lesson landed: runs, corrections on its point, per 100, and the verdict.

    `starts`: every run's start in the window, sorted; `said_at`: the starts of the runs where
    the person corrected (or stated) its point.
    """
    cut = bisect.bisect_left(starts, landed_at) if landed_at else len(starts)  # not landed: all before
    times = list(said_at)
    after_hits = sum(1 for at in times if landed_at is not None and at >= landed_at)
    before, after = side(cut, len(times) - after_hits), side(len(starts) - cut, after_hits)
    return {"before": before, "after": after, "dropped": verdict(before, after)}


def pooled(rows: list[dict]) -> dict:
    """Corrections per 100 runs on the points of lessons that landed inside the window.

    Before: on each such lesson's point before it landed; after: since. Every lesson with
    runs on both sides counts, each side weighted by its runs.
    """
    trends = [r["recurrence"] for r in rows]
    both = [t for t in trends if t["before"]["runs"] and t["after"]["runs"]]
    before = side(sum(r["before"]["runs"] for r in both), sum(r["before"]["corrections"] for r in both))
    after = side(sum(r["after"]["runs"] for r in both), sum(r["after"]["corrections"] for r in both))
    return {"lessons": len(both), "before": before, "after": after}


def headline_text(data: dict) -> str:
    """'Corrections per 100 runs: before learning 6.0, after 1.5 (4 lessons; …)'."""
    head = data["pooled"]
    before, after = head["before"], head["after"]
    if not head["lessons"]:
        return "Corrections per 100 runs: no lesson landed inside the window yet, nothing to compare."
    if before["thin"] or after["thin"]:
        return (
            f"Corrections per 100 runs: too few runs to say yet ({before['runs']} before the lessons "
            f"landed, {after['runs']} after; {THIN_RUNS} a side needed)."
        )
    lessons = f"{head['lessons']} lesson" + ("" if head["lessons"] == 1 else "s")
    return (
        f"Corrections per 100 runs: before learning {before['per_100']:g}, after {after['per_100']:g} "
        f"(on the points of {lessons}; {before['runs']} runs before, {after['runs']} after)."
    )


def row_of(
    lesson: Lesson,
    origin: Origin | None,
    in_context: int,
    ignored: int,
    trend: dict,
    case: str | None = None,
    proof: dict | None = None,
) -> dict:
    """One lesson as `evolve lessons --json` lists it.

    `eval_case`: its eval case's folder, or None; `eval`: its latest full eval, or None.
    """
    first = lesson.text.strip().split("\n", 1)[0] if lesson.kind == MEMO else _description(lesson.text)
    return {
        "kind": lesson.kind,
        "id": lesson.id,
        "where": lesson.where,
        "text": first[:TEXT_CHARS],
        **(origin or Origin()).to_dict(),
        "in_context": in_context,
        "ignored": ignored,
        "recurrence": trend,
        "eval_case": case,
        "eval": proof,
    }


def _description(text: str) -> str:
    for line in text.split("\n"):
        if line.startswith("description:"):
            return line.partition(":")[2].strip().strip("\"'")
    return ""


# -- loading: state.db (the window's runs, contexts, verdicts) and git, once per listing ---------
_PERSON = (
    "SELECT started_at, json_extract(facts, '$.correction', '$.preference', '$.request', "
    "'$.correction_reply', '$.preference_text', '$.cwd', '$.tool_inputs_text') FROM runs "
    "WHERE agent = ? AND superseded = 0 AND started_at >= ? "
    "AND (json_extract(facts, '$.correction') OR json_extract(facts, '$.preference'))"
)
_KEYS = (
    "correction",
    "preference",
    "request",
    "correction_reply",
    "preference_text",
    "cwd",
    "tool_inputs_text",
)


def _plain(conn: sqlite3.Connection, sql: str, args: tuple) -> list[tuple]:
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, args).fetchall()


def load_person_runs(conn: sqlite3.Connection, agent: str, since_stamp: str) -> list[PersonRun]:
    """The window's runs in which the person corrected the agent or stated a preference."""
    found = []
    for started, raw in _plain(conn, _PERSON, (agent, since_stamp)):
        facts = dict(zip(_KEYS, json.loads(raw), strict=False))
        if person_words(facts)[1]:
            found.append(PersonRun(started, run_point(facts, errors=False)))
    return found


def load_starts(conn: sqlite3.Connection, agent: str, since_stamp: str) -> list[str]:
    sql = "SELECT started_at FROM runs WHERE agent = ? AND superseded = 0 AND started_at >= ?"
    return [row[0] for row in _plain(conn, sql + " ORDER BY started_at", (agent, since_stamp))]


_RUNS_OF = (  # each session of the window with its runs: what a context spreads over
    "(SELECT session, COUNT(*) AS n FROM runs WHERE agent = ? AND superseded = 0 AND started_at >= ? "
    "GROUP BY session)"
)


def memo_in_context(conn: sqlite3.Connection, agent: str, since_stamp: str) -> dict[str, int]:
    """Bullet id → runs whose session showed it (summed in SQLite, per session)."""
    sql = (
        f"SELECT m.lesson, SUM(r.n) FROM memo_impressions m JOIN {_RUNS_OF} r ON r.session = m.session "
        "WHERE m.agent = ? GROUP BY m.lesson"
    )
    return dict(_plain(conn, sql, (agent, since_stamp, agent)))


def skills_in_context(conn: sqlite3.Connection, agent: str, since: float) -> dict[str, int]:
    """Skill → runs that had it: every run of a session that listed it, and each run reading it.

    A read in a session that did not list the skill counts its own run (where observe placed it).
    """
    since_stamp = stamp(since)
    listed = (
        f"SELECT i.skill, SUM(r.n) FROM impressions i JOIN {_RUNS_OF} r ON r.session = i.session "
        "WHERE i.agent = ? GROUP BY i.skill"
    )
    found = dict(_plain(conn, listed, (agent, since_stamp, agent)))
    read = (
        "SELECT skill, COUNT(DISTINCT session || '#' || run_idx) FROM invocations v WHERE agent = ? "
        "AND at >= ? AND session IS NOT NULL AND run_idx IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
        "impressions i WHERE i.agent = v.agent AND i.skill = v.skill AND i.session = v.session) "
        "GROUP BY skill"
    )
    for skill, runs in _plain(conn, read, (agent, since)):
        found[skill] = found.get(skill, 0) + runs
    return found


def ignored_counts(conn: sqlite3.Connection, agent: str, since: float) -> dict[tuple[str, str], int]:
    """(kind, lesson) → runs of the window that ignored it."""
    found: dict[tuple[str, str], int] = {}
    for row in ledger.ignored_rows(conn, agent, since):
        key = (row["kind"], row["lesson"])
        found[key] = found.get(key, 0) + 1
    return found


def build(
    conn: sqlite3.Connection,
    agent: Agent,
    *,
    now: float | None = None,
    window_days: float | None = None,
    lessons: list[Lesson] | None = None,
) -> dict:
    """Every lesson of `agent` with its adherence, and the pooled before/after (the report's headline)."""
    now = now or time.time()
    window_days = window_days or agent.config.limits.retention_days
    since = now - window_days * DAY
    since_stamp = stamp(since)
    lessons = lessons_mod.current(agent) if lessons is None else lessons
    found = lessons_mod.origins(agent, lessons)
    starts = load_starts(conn, agent.name, since_stamp)
    person = load_person_runs(conn, agent.name, since_stamp)
    memo_seen = memo_in_context(conn, agent.name, since_stamp)
    skill_seen = skills_in_context(conn, agent.name, since)
    ignored = ignored_counts(conn, agent.name, since)
    proofs = proven.latest(conn, agent.name)
    anchored = [lesson_anchors(lesson.text, lesson.id if lesson.kind == SKILL else "") for lesson in lessons]
    said = said_again_at(anchored, person)
    cases = lessons_mod.case_folders(agent.repo)
    rows = []
    for lesson, said_at in zip(lessons, said, strict=True):
        origin = found.get(lesson.key)
        trend = recurrence(origin.landed_at if origin else None, starts, said_at)
        seen = memo_seen if lesson.kind == MEMO else skill_seen
        counts = (seen.get(lesson.id, 0), ignored.get(lesson.key, 0))
        rows.append(row_of(lesson, origin, *counts, trend, cases.get(lesson.id), proofs.get(lesson.key)))
    return {
        "agent": agent.name,
        "generated_at": stamp(now),
        "window_days": window_days,
        "since": since_stamp,
        "runs": len(starts),
        "thin_runs": THIN_RUNS,
        "lessons": rows,
        "pooled": pooled(rows),
        "proven": proven.summary(rows),
    }


def most_ignored(rows: Iterable[Mapping], limit: int = 5) -> list[Mapping]:
    """The lessons ignored most (at least once), most first."""
    found = sorted((r for r in rows if r["ignored"]), key=lambda r: (-r["ignored"], r["kind"], r["id"]))
    return found[:limit]


def not_dropped(rows: Iterable[Mapping]) -> list[Mapping]:
    """The lessons whose point the person corrected no less often after they landed."""
    return [r for r in rows if r["recurrence"]["dropped"] is False]
