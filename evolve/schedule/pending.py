"""What happened since an agent last reflected: its runs, scored when read.

Signals are computed from stored facts at read time, so a change of weights or threshold
in config applies to everything already observed.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from evolve.config import Config
from evolve.schedule.signals import SignalSettings, score_run, weakness_keywords
from evolve.store import ledger
from evolve.workspace import memo as memo_mod


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
        }


def settings_for(config: Config) -> SignalSettings:
    return SignalSettings.from_config(config.signals)


def weaknesses_for(memo_text: str) -> list[frozenset[str]]:
    return weakness_keywords(memo_mod.section_content(memo_text, memo_mod.SELF))


def scored_runs(
    conn: sqlite3.Connection,
    agent: str,
    config: Config,
    memo_text: str,
    since: float | None = None,
    *,
    all_runs: bool = False,
) -> list[ScoredRun]:
    """Active (not superseded) runs observed after `since` (default: the last reflection)."""
    if since is None and not all_runs:
        since = ledger.last_reflection_at(conn, agent)
    rows = ledger.pending_run_rows(conn, agent, since)
    sources = ledger.cursor_adapters(conn, agent) if rows else {}
    settings = settings_for(config)
    weaknesses = weaknesses_for(memo_text)
    scored = []
    for row in rows:
        facts = json.loads(row["facts"])
        result = score_run(facts, settings, weaknesses)
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
            )
        )
    return scored
