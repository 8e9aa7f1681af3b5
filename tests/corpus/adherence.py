"""The adherence part of `make eval`: did evolve see a lesson ignored, and only then.

A case with a timeline (tests/corpus/README.md) plants, in its `[expect]`, the runs that
ignored a lesson their session carried (`ignored`) and the runs whose correction or error
only shares a lesson's topic (`topic_only`). `measure` plays the case on a fresh agent and
reports: planted runs detected, runs flagged that were not planted (those on topic-only
runs separately: the goal is 0), each lesson's corrections per 100 runs before it landed
and after (`evolve lessons` at `[expect] now`), and what the next reflection shows and
does: whether the bundle lists every ignored lesson first, and which lessons the recorded
answer's commit names in `Evolve-Escalated`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evolve.clock import seconds
from evolve.home import Home
from evolve.metrics import lessons as lessons_metrics
from evolve.metrics import report, report_html
from evolve.reflect.run import reflect
from evolve.schedule import pending
from evolve.store import ledger
from evolve.workspace import memo as memo_mod
from evolve.workspace.agent import Agent
from tests.corpus.loader import Case

IGNORED_HEADING = "## Lessons the agent had and ignored"


@dataclass
class Adherence:
    """What one adherence case measured (see the module docstring)."""

    case: str
    planted: int = 0
    detected: int = 0
    planted_lessons: list[tuple[str, str]] = field(default_factory=list)  # (kind, id) per planted run
    false: list[str] = field(default_factory=list)  # "s06.jsonl#2 memo 82e0…": flagged, not planted
    topic_only_flagged: int = 0
    recurrence: list[dict] = field(default_factory=list)  # the expected lessons' before/after, as listed
    listing: list[dict] = field(default_factory=list)  # `evolve lessons --json`'s rows
    report: dict = field(default_factory=dict)  # `evolve report`'s lessons part
    report_text: str = ""  # `evolve report` as a terminal shows it
    report_html: str = ""  # `evolve report --html`
    bundle_first: bool = False  # every ignored lesson listed first in the next bundle
    bundle_ignored: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)

    def row(self) -> list[str]:
        trends = ", ".join(
            f"{r['id'][:12]} {_rate(r['before'])} → {_rate(r['after'])}"
            + (" (did not drop)" if r["dropped"] is False else "")
            for r in self.recurrence
        )
        return [
            self.case,
            f"{self.detected}/{self.planted}",
            str(len(self.false)),
            str(self.topic_only_flagged),
            trends or "-",
            "yes" if self.bundle_first else ("-" if not self.planted else "NO"),
            ", ".join(e[:12] for e in self.escalated) or "-",
        ]


HEADER = [
    "case",
    "ignored found/planted",
    "false",
    "on topic-only",
    "per 100 runs before → after",
    "first",
    "escalated",
]


def _rate(side: dict) -> str:
    return "-" if side["per_100"] is None else f"{side['per_100']:g}"


def lesson_ref(agent: Agent, expected: dict) -> tuple[str, str]:
    """(kind, id) of an expected lesson: a skill by name, a memo bullet by a fragment of its text."""
    if expected["kind"] == "skill":
        return ("skill", expected["name"])
    bullets = [b for items in memo_mod.section_bullets(agent.memo_text()).values() for b in items]
    [bullet] = [b for b in bullets if expected["text"] in b]
    return ("memo", memo_mod.lesson_id(bullet))


def measure(case: Case, home: Home) -> Adherence:
    """Play the case on a fresh agent in `home`, judge, list, and reflect once with its recorded answer."""
    from tests.corpus.eval import Recorded

    expect = case.expect
    now = seconds(expect["now"])
    agent = case.setup(home)
    result = Adherence(case.name)
    planted = {
        (str(case.folder / item["transcript"]), item["run"], lesson_ref(agent, item))
        for item in expect["ignored"]
    }
    topic_only = {
        (str(case.folder / item["transcript"]), item["run"]) for item in expect.get("topic_only", ())
    }
    with ledger.opened(home.state_db) as conn:
        runs = pending.scored_runs(
            conn, agent.name, agent.config, agent.memo_text(), all_runs=True, judge=agent
        )
        flagged = {(r.path, r.run, (i["kind"], i["lesson"])) for r in runs for i in r.ignored}
        listing = lessons_metrics.build(conn, agent, now=now)
        data = report.build(conn, agent, now=now)
    result.report, result.report_text = data["lessons"], report.text_summary(data)
    result.report_html = report_html.render(data, agent.memo_text())
    result.planted, result.detected = len(planted), len(planted & flagged)
    result.planted_lessons = [lesson for _, _, lesson in sorted(planted)]
    extra = sorted(flagged - planted)
    result.false = [f"{Path(path).name}#{run} {kind} {ref}" for path, run, (kind, ref) in extra]
    result.topic_only_flagged = sum(1 for path, run, _ in extra if (path, run) in topic_only)
    result.listing = listing["lessons"]
    wanted = {lesson_ref(agent, item) for item in expect.get("recurrence", ())}
    result.recurrence = [
        {"id": r["id"], "kind": r["kind"], **r["recurrence"]}
        for r in listing["lessons"]
        if (r["kind"], r["id"]) in wanted
    ]
    [answer] = case.answers()
    outcome = reflect(home, agent.name, force=True, client=Recorded(case.answer(answer)))
    assert outcome.bundle is not None, outcome.reason
    text = outcome.bundle.text
    result.bundle_ignored = [i["lesson"] for i in outcome.bundle.ignored]
    shown = {(kind, ref) for _, _, (kind, ref) in planted}
    if IGNORED_HEADING in text:
        section = text[text.index(IGNORED_HEADING) : text.index("## Current memo")]
        first = text.index(IGNORED_HEADING) < text.index("## Current memo")
        result.bundle_first = first and all(ref in section for _, ref in shown)
    if outcome.commit:
        result.escalated = agent.repo.log(outcome.commit, limit=1)[0].values("Evolve-Escalated")
    return result


def table(results: list[Adherence]) -> str:
    rows = [HEADER] + [r.row() for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    for result in results:
        lines += [f"  {result.case} flagged but not planted: {item}" for item in result.false]
    planted = sum(r.planted for r in results)
    detected = sum(r.detected for r in results)
    wrong = sum(r.topic_only_flagged for r in results)
    lines.append(
        f"  ignored lessons detected: {detected}/{planted}; false lesson_ignored on topic-only runs: {wrong}"
    )
    return "\n".join(lines)
