"""`evolve skills`: every skill with its validity, history and usage metrics."""

from __future__ import annotations

import shutil
import textwrap

from evolve.commands.output import emit_json, say, table
from evolve.errors import UserError
from evolve.home import Home
from evolve.workspace.agent import Agent

KEYS = (
    "name",
    "description",
    "impressions",
    "invocations",
    "invocation_rate",
    "post_use_edit_rate",
    "ineffective_rate",
    "last_used_at",
    "created_at",
    "updated_at",
    "patch_count",
    "pinned",
    "valid",
    "problems",
    "path",
    "runs_shown",
    "runs_invoked",
    "window_days",
    "by_source",
    "ignored",
)


def skill_metrics(home: Home, agent: Agent) -> list[dict]:
    """`skill_records()` joined with the usage metrics; refreshes the session-start cache.

    `ignored`: runs of the window that had the skill and ignored it (observe.adherence).
    """
    import time

    from evolve.clock import stamp
    from evolve.metrics.lessons import ignored_counts
    from evolve.metrics.rates import DAY
    from evolve.metrics.usage import refresh_rates
    from evolve.observe.adherence import judge
    from evolve.observe.records import drain_pending
    from evolve.store import ledger
    from evolve.workspace.lessons import SKILL

    records = agent.skill_records()
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)
        judge(conn, agent)
        window = agent.config.limits.retention_days
        usage = refresh_rates(conn, home, agent.name, window_days=window)
        ignored = ignored_counts(conn, agent.name, time.time() - window * DAY)
    merged = []
    for record in records:
        use = usage.get(record["name"], {})
        last = use.get("last_used_at")
        values = {
            "impressions": 0,
            "invocations": 0,
            "invocation_rate": None,
            "post_use_edit_rate": None,
            "ineffective_rate": None,
            "runs_shown": 0,
            "runs_invoked": 0,
            "by_source": [],
            **use,
            "window_days": window,
            "last_used_at": stamp(last) if last else None,
            "ignored": ignored.get((SKILL, record["name"]), 0),
        }
        merged.append({key: record.get(key, values.get(key)) for key in KEYS})
    return merged


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _fit(text: str) -> str:
    """Cut the last column (the description) so each line fits the terminal (at least 20 of it)."""
    width = shutil.get_terminal_size((100, 24)).columns
    lines = text.splitlines()
    start = lines[0].index("DESCRIPTION") if lines else 0
    room = max(20, width - start - 1)
    return "\n".join(line if len(line) - start <= room else line[: start + room - 1] + "…" for line in lines)


def skills(home: Home, name: str, skill: str | None = None, as_json: bool = False) -> int:
    agent = Agent.open(name, home)
    records = skill_metrics(home, agent)
    if skill is not None:
        records = [r for r in records if r["name"] == skill]
        if not records:
            raise UserError(f"agent {name!r} has no skill {skill!r}; see `evolve skills {name}`")
    if as_json:
        emit_json(records[0] if skill is not None else records)
        return 0
    if not records:
        say(f"agent {name!r} has no skills yet")
        return 0
    headers = ["SKILL", "STATE", "SHOWN", "USED", "USE%", "EDITED%", "INEFF%", "IGNORED", "LAST USED"]
    headers += ["PATCHES"]
    headers += ["CREATED", "UPDATED", "DESCRIPTION"]
    rows = [
        [
            r["name"],
            ("ok" if r["valid"] else "BROKEN") + (" pinned" if r["pinned"] else ""),
            str(r["runs_shown"]),  # USE% = USED / SHOWN: both count runs
            str(r["runs_invoked"]),
            _pct(r["invocation_rate"]),
            _pct(r["post_use_edit_rate"]),
            _pct(r["ineffective_rate"]),
            str(r["ignored"]),
            (r["last_used_at"] or "-")[:10],
            str(r["patch_count"]),
            (r["created_at"] or "-")[:10],
            (r["updated_at"] or "-")[:10],
            r["description"],
        ]
        for r in records
    ]
    say(_fit(table(rows, headers)))
    say(
        textwrap.fill(
            f"(rates over the last {records[0]['window_days']} days: SHOWN = runs it was listed in, "
            "USED = runs that invoked it, USE% = USED / SHOWN; EDITED% = invoked runs the user "
            "corrected; INEFF% = invoked runs ending in a real error; IGNORED = runs that had it and "
            "came back to its point anyway: `evolve lessons`; docs/metrics.md)",
            width=max(40, shutil.get_terminal_size((100, 24)).columns - 1),
        )
    )
    for r in records:
        if len(r["by_source"]) > 1:  # one agent, several harnesses: how each uses it
            parts = [
                f"{s['source']} used in {s['runs_invoked']} of {s['runs_shown']} runs shown"
                for s in r["by_source"]
            ]
            say(f"  {r['name']}: " + "; ".join(parts))
        for problem in r["problems"]:
            say(f"  {r['path']}: {problem}")
    return 0
