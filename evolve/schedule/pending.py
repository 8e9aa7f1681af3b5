"""What happened since an agent last reflected: its runs, scored when read.

Signals are computed from stored facts at read time, so a change of weights or threshold
in config applies to everything already observed. Which lessons a run ignored is judged
once per run (`observe.adherence`) and read with it: lesson_ignored.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from evolve.config import Config
from evolve.observe import adherence
from evolve.schedule.signals import SignalSettings, score_run, weakness_keywords
from evolve.store import ledger
from evolve.workspace import memo as memo_mod

TYPE_CHECKING = False  # typing's own flag without importing typing
if TYPE_CHECKING:
    from evolve.workspace.agent import Agent


@dataclass
class ScoredRun:
    id: int
    path: str
    session: str
    run: int
    observed_at: float
    facts: dict
    signals: dict[str, float]
    score: float
    reflect: bool
    source: str = "generic"  # the harness: claude_code, codex, generic or api (its file's format)
    ignored: list[dict] = field(default_factory=list)  # the lessons it ignored (ignored_of)

    def to_dict(self) -> dict:
        f = self.facts
        return {
            "session": self.session,
            "run": self.run,
            "started_at": f.get("started_at"),
            "score": self.score,
            "signals": self.signals,
            "reflect": self.reflect,
            "tool_calls": f.get("tool_calls", 0),
            "errors": f.get("errors", 0),
            "transient_errors": f.get("transient_errors", 0),
            "aborted": f.get("aborted", False),
            "correction": f.get("correction", False),
            "correction_cue": f.get("correction_cue") or None,
            "preference": f.get("preference", False),
            "preference_cue": f.get("preference_cue") or None,
            "recovered": f.get("recovered", False),
            "ended_in_error": f.get("ended_in_error", False),
            "complete": f.get("complete", False),
            "skills": [s.get("name") for s in f.get("skills", [])],
            "cwd": f.get("cwd"),
            "request": (f.get("request") or "")[:200],
            "path": self.path,
            "source": self.source,
            "ignored": self.ignored,
        }


def settings_for(config: Config) -> SignalSettings:
    return SignalSettings.from_config(config.signals)


def weaknesses_for(memo_text: str) -> list[frozenset[str]]:
    return weakness_keywords(memo_mod.section_content(memo_text, memo_mod.SELF))


def ignored_of(conn: sqlite3.Connection, agent: str) -> dict[tuple[str, int], list[dict]]:
    """(path, run) → the lessons that run ignored, each as the bundle and `evolve score` show it.

    Its kind, id (a bullet's id or a skill's name), where it was, the commit that last
    wrote it, how the run came back to it, what matched, and its text then.
    """
    found: dict[tuple[str, int], list[dict]] = {}
    for row in ledger.ignored_rows(conn, agent):
        evidence = json.loads(row["evidence"] or "{}")
        found.setdefault((row["path"], row["idx"]), []).append(
            {
                "kind": row["kind"],
                "lesson": row["lesson"],
                "place": row["place"],
                "commit": row["commit_sha"],
                "how": row["how"],
                "terms": evidence.get("terms", []),
                "text": evidence.get("text", ""),
                "where": evidence.get("where", ""),
            }
        )
    return found


def scored_runs(
    conn: sqlite3.Connection,
    agent: str,
    config: Config,
    memo_text: str,
    since: float | None = None,
    *,
    all_runs: bool = False,
    judge: Agent | None = None,
) -> list[ScoredRun]:
    """Active (not superseded) runs observed after `since` (default: the last reflection).

    `judge`: the agent (its repository), to judge the runs not judged yet first.
    """
    if judge is not None:
        adherence.judge(conn, judge)
    if since is None and not all_runs:
        since = ledger.last_reflection_at(conn, agent)
    rows = ledger.pending_run_rows(conn, agent, since)
    sources = ledger.cursor_adapters(conn, agent) if rows else {}
    ignored = ignored_of(conn, agent) if rows else {}
    settings = settings_for(config)
    weaknesses = weaknesses_for(memo_text)
    scored = []
    for row in rows:
        facts = json.loads(row["facts"])
        lessons = ignored.get((row["path"], row["idx"]), [])
        result = score_run(facts, settings, weaknesses, lessons)
        scored.append(
            ScoredRun(
                row["id"],
                row["path"],
                row["session"],
                row["idx"],
                row["observed_at"],
                facts,
                result.signals,
                result.score,
                result.reflect,
                sources.get(row["path"], "generic"),
                lessons,
            )
        )
    return scored
