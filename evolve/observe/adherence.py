"""Which runs ignored a lesson their session had: judged once per run, stored beside it.

A run ignored a lesson when its session's context carried the lesson — a memo bullet the
session-start text showed whole, a skill listed there or read in the session by that run —
and the run comes back to the lesson's point (`transcripts.anchors.covered`): the person
corrects the agent, or states the preference, again on it, or the real error it covers
recurs. The lesson is read as the session saw it, at the commit its start recorded (the
files as they are now when it recorded none), and the verdict names the commit that last
wrote it. Judged when runs are read (score, the cycle, the bundle, the reading commands),
once per run: again only when observe stores the run anew or its session's context
arrives after it. Deterministic and cheap: facts, context and git decide, and only runs in
which the person spoke or a real error happened are matched.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from evolve.clock import seconds
from evolve.store import ledger
from evolve.store.history import read_commits
from evolve.transcripts.anchors import Anchors, covered, lesson_anchors, run_point
from evolve.transcripts.redact import redact
from evolve.workspace import lessons as lessons_mod
from evolve.workspace.lessons import MEMO, SKILL, Lesson

TYPE_CHECKING = False  # typing's own flag without importing typing
if TYPE_CHECKING:
    from evolve.workspace.agent import Agent

LISTED, LOADED = "listed", "loaded"  # where a skill was: in the index, or read in the session
TEXT_CHARS = 600  # of the lesson's text kept with a verdict (the bundle shows it)


def judge(conn: sqlite3.Connection, agent: Agent) -> int:
    """Judge the agent's runs not judged yet; how many of them ignored a lesson.

    A read-only home judges nothing (its verdicts cannot be kept): what is stored counts.
    """
    if ledger.read_only(conn):
        return 0
    rows = _runs_to_judge(conn, agent.name)
    if not rows:
        return 0
    judge_ = _Judge(agent)
    hits: list[tuple] = []
    for session, group in groupby(rows, key=lambda row: row["session"]):
        context: dict[str, Any] | None = None
        for row in group:
            facts = json.loads(row["facts"])
            if row["superseded"] or not _speaks(facts):
                continue
            context = context or _session_context(conn, agent.name, session)
            hits += judge_.run(context, row, facts)
    _record(conn, agent.name, rows, hits)
    return len({(hit[1], hit[2]) for hit in hits})


def _speaks(facts: dict) -> bool:
    """The person corrected or stated a preference, or a real error happened: something to match."""
    return bool(facts.get("correction") or facts.get("preference") or facts.get("error_texts"))


@dataclass
class _Judge:
    """The lessons and their anchors as each commit held them, read once per judging."""

    agent: Agent
    snapshots: dict[str, lessons_mod.Snapshot] = field(default_factory=dict)
    anchors: dict[tuple[str, str, str], Anchors] = field(default_factory=dict)
    memo_shas: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    skill_shas: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _now: dict[tuple[str, str], Lesson] | None = None
    _tip: str | None = None

    def now(self) -> dict[tuple[str, str], Lesson]:
        """The lessons in the files now (for a session whose start recorded no commit)."""
        if self._now is None:
            self._now = dict(lessons_mod.by_key(lessons_mod.current(self.agent)))
        return self._now

    def tip(self) -> str | None:
        if self._tip is None:
            self._tip = self.agent.repo.tip() or ""
        return self._tip or None

    def lesson(self, kind: str, ref: str, rev: str | None) -> Lesson | None:
        if rev:
            snapshot = self.snapshots.setdefault(rev, lessons_mod.at_commit(self.agent.repo, rev))
            found = snapshot.memo().get(ref) if kind == MEMO else snapshot.skills([ref]).get(ref)
            if found is not None:
                return found
        return self.now().get((kind, ref))  # not committed when the session started

    def anchors_of(self, lesson: Lesson, rev: str | None) -> Anchors:
        key = (lesson.kind, lesson.id, rev or "")
        if key not in self.anchors:
            name = lesson.id if lesson.kind == SKILL else ""
            self.anchors[key] = lesson_anchors(lesson.text, name)
        return self.anchors[key]

    def commit(self, lesson: Lesson, rev: str | None) -> str | None:
        """The commit that last wrote the lesson as of `rev` (the tip now, when unknown)."""
        rev = rev or self.tip()
        if rev is None:
            return None
        repo = self.agent.repo
        if lesson.kind == SKILL:
            key = (lesson.id, rev)
            if key not in self.skill_shas:
                self.skill_shas[key] = lessons_mod.skill_commit(repo, lesson.id, rev)
            return self.skill_shas[key]
        if rev not in self.memo_shas:
            self.memo_shas[rev] = lessons_mod.memo_commits(repo, rev)
        shas = self.memo_shas[rev].get(lesson.id) or []
        if len(shas) > 1:
            dated = read_commits(repo, shas)
            shas = sorted(shas, key=lambda sha: dated[sha].date if sha in dated else "")
        return shas[-1] if shas else None

    def run(self, context: dict[str, Any], row: sqlite3.Row, facts: dict) -> list[tuple]:
        """The ignored rows of one run (ledger's `ignored` columns, in order)."""
        point = run_point(facts)
        at = seconds(row["started_at"]) or 0.0
        hits = []
        for kind, ref, place, rev in _carried(context, row["idx"]):
            lesson = self.lesson(kind, ref, rev)
            if lesson is None:
                continue
            match = covered(self.anchors_of(lesson, rev), point)
            if match is None:
                continue
            evidence = {**match.to_dict(), "text": redact(lesson.text[:TEXT_CHARS]), "where": lesson.where}
            hits.append(
                (
                    self.agent.name,
                    row["path"],
                    row["idx"],
                    row["session"],
                    kind,
                    ref,
                    place,
                    self.commit(lesson, rev),
                    match.how,
                    json.dumps(evidence, ensure_ascii=False),
                    at,
                )
            )
        return hits


def _carried(context: dict[str, Any], idx: int) -> list[tuple[str, str, str, str | None]]:
    """(kind, id, where it was, the commit it came from) of each lesson the run's context held."""
    carried = [(MEMO, ref, section, tip) for ref, (section, tip) in context["memo"].items()]
    loaded = {skill for skill, run_idx, _ in context["read"] if run_idx is None or run_idx <= idx}
    for name in sorted(context["listed"] | loaded):
        carried.append((SKILL, name, LOADED if name in loaded else LISTED, context["tip"]))
    return carried


# -- state.db: the runs to judge, a session's context, the verdicts ----------------------------
def _runs_to_judge(conn: sqlite3.Connection, agent: str) -> list[sqlite3.Row]:
    """The agent's runs not judged yet whose session had a context; the rest are marked judged.

    A context is a session start, an impression or a skill read: without one no lesson
    was in the session, so there is nothing it could have ignored.
    """
    if conn.execute("SELECT 1 FROM runs WHERE agent = ? AND judged = 0 LIMIT 1", (agent,)).fetchone() is None:
        return []  # the usual case: every run judged already
    none = " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM {table} c WHERE c.agent = runs.agent AND c.session = runs.session)"
        for table in ("session_starts", "impressions", "invocations")
    )
    with ledger.transaction(conn):
        conn.execute(f"UPDATE runs SET judged = 1 WHERE agent = ? AND judged = 0 AND {none}", (agent,))
    return conn.execute(
        "SELECT id, path, idx, session, started_at, superseded, facts FROM runs "
        "WHERE agent = ? AND judged = 0 ORDER BY session, path, idx",
        (agent,),
    ).fetchall()


def _session_context(conn: sqlite3.Connection, agent: str, session: str) -> dict[str, Any]:
    """What a session's context carried: its tip, memo bullets (id → section, tip), skills listed, read."""
    start = conn.execute(
        "SELECT tip FROM session_starts WHERE agent = ? AND session = ?", (agent, session)
    ).fetchone()
    memo = {
        row["lesson"]: (row["section"], row["tip"])
        for row in conn.execute(
            "SELECT lesson, section, tip FROM memo_impressions WHERE agent = ? AND session = ? ORDER BY at",
            (agent, session),
        )
    }
    listed = {
        row[0]
        for row in conn.execute(
            "SELECT skill FROM impressions WHERE agent = ? AND session = ?", (agent, session)
        )
    }
    read = conn.execute(
        "SELECT skill, run_idx, at FROM invocations WHERE agent = ? AND session = ?", (agent, session)
    ).fetchall()
    return {"tip": start["tip"] if start else None, "memo": memo, "listed": listed, "read": read}


def _record(conn: sqlite3.Connection, agent: str, runs: list[sqlite3.Row], hits: list[tuple]) -> None:
    """Replace the judged runs' verdicts and mark them judged, in one transaction.

    A run whose facts changed meanwhile (observe stored it again) stays to be judged.
    """
    with ledger.transaction(conn):
        conn.executemany(
            "DELETE FROM ignored WHERE agent = ? AND path = ? AND idx = ?",
            [(agent, run["path"], run["idx"]) for run in runs],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO ignored (agent, path, idx, session, kind, lesson, place, commit_sha, "
            "how, evidence, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            hits,
        )
        conn.executemany(
            "UPDATE runs SET judged = 1 WHERE id = ? AND facts = ?",
            [(run["id"], run["facts"]) for run in runs],
        )
