"""Did learning help? The numbers behind `evolve report`, as plain data.

For each reflection commit: corrections and real errors per 100 runs in the runs just
before it and just after it. For the lessons (metrics.lessons): corrections on their points
per 100 runs before and after they landed, the lessons ignored most, and those whose point
the person corrected no less often after they landed. For each skill: its rates per week.
Then the skills that look useless (shown often, never used) or harmful (often ending in
real errors, or corrected after use). Where a side or a week has too few runs, the numbers
are None and `thin` says why, so nobody reads noise as a trend.
"""

from __future__ import annotations

import bisect
import sqlite3
import time
from datetime import UTC, datetime, timedelta

from evolve.clock import seconds, stamp
from evolve.metrics import lessons as lessons_mod
from evolve.metrics import proven
from evolve.metrics.rates import (
    DAY,
    Counts,
    RunRecord,
    by_source,
    iso_week,
    load_invoked,
    load_runs,
    load_shown,
    skill_usage,
    tally,
)
from evolve.store import ledger
from evolve.workspace import undo
from evolve.workspace.agent import Agent

WINDOW_RUNS = 50  # runs compared on each side of a reflection
THIN_RUNS = 10  # fewer runs on a side (or in a week): too thin to say anything
THIN_SHOWN = 5  # a skill's week needs this many runs it was shown in
USELESS_RUNS = 20  # shown in this many runs and never invoked
HARMFUL_RATE = 0.5
HARMFUL_MIN = 5  # judged (or invoked) runs before a high rate counts as harmful


def side(runs: list[RunRecord]) -> dict:
    """Corrections and runs with a real error, per 100 runs; None when thin."""
    n = len(runs)
    thin = n < THIN_RUNS
    return {
        "runs": n,
        "thin": thin,
        "corrections_per_100": None if thin else round(100 * sum(r.correction for r in runs) / n, 1),
        "errors_per_100": None if thin else round(100 * sum(r.real_error for r in runs) / n, 1),
    }


def around(timeline: list[RunRecord], starts: list[str], at: str) -> tuple[dict, dict]:
    """The WINDOW_RUNS runs started before `at` and from `at` on (timeline sorted by start)."""
    cut = bisect.bisect_left(starts, at)
    return side(timeline[max(0, cut - WINDOW_RUNS) : cut]), side(timeline[cut : cut + WINDOW_RUNS])


def _delta(before: dict, after: dict, key: str) -> float | None:
    if before[key] is None or after[key] is None:
        return None
    return round(after[key] - before[key], 1)


def _headline(timeline: list[RunRecord], starts: list[str], kept: list[dict]) -> dict:
    """The one-line verdict: every run before the first kept reflection against every run since."""
    if not kept:
        return {"first_reflection": None, "before": side([]), "after": side([])}
    cut = bisect.bisect_left(starts, kept[0]["at"])
    return {"first_reflection": kept[0]["at"], "before": side(timeline[:cut]), "after": side(timeline[cut:])}


def headline_text(data: dict) -> str:
    """'Since the first reflection: corrections 20 → 2 per 100 runs, real errors 34 → 20 …'."""
    head = data["headline"]
    before, after = head["before"], head["after"]
    if head["first_reflection"] is None:
        return f"No reflection yet: nothing to compare ({data['runs']} runs observed)."
    counts = f"{before['runs']} runs before, {after['runs']} since"
    if before["thin"] or after["thin"]:
        needed = f"{data['thin_runs']} a side needed"
        return f"Since the first reflection: too few runs to say yet ({counts}; {needed})."
    return (
        f"Since the first reflection: corrections {before['corrections_per_100']:g} → "
        f"{after['corrections_per_100']:g} per 100 runs, real errors {before['errors_per_100']:g} → "
        f"{after['errors_per_100']:g} ({counts})."
    )


def older_text(data: dict) -> str | None:
    """Runs outside the window, and how to see them (backfilled history would hide silently)."""
    older = data["older_runs"]
    if not older["count"]:
        return None
    age = (seconds(data["generated_at"]) or 0.0) - (seconds(older["oldest"]) or 0.0)
    days = max(1, int(age // DAY) + 1)
    return (
        f"{older['count']} older runs (from {older['oldest'][:10]}) are outside this "
        f"{data['window_days']:g}-day window: `evolve report {data['agent']} --days {days}` includes them "
        f"(the next cycle deletes runs older than [limits] retention_days = {older['retention_days']})"
    )


def reflections(conn: sqlite3.Connection, agent: Agent) -> list[dict]:
    """Reflection commits on the agent's branch, oldest first (state.db's time when known)."""
    recorded = {
        row["commit_sha"]: row for row in ledger.reflection_rows(conn, agent.name) if row["commit_sha"]
    }
    commits = agent.repo.log()
    reverted = {c.reverts for c in commits if c.reverts}
    found = []
    for commit in reversed(commits):
        if commit.kind != "reflection":
            continue
        row = recorded.get(commit.sha)
        found.append(
            {
                "sha": commit.sha,
                "id": commit.trailers.get("Evolve-Reflection"),
                "at": stamp(row["at"]) if row else commit.date,
                "summary": commit.subject,
                "ops": commit.trailers.get("Evolve-Ops", ""),
                "reverted": commit.sha in reverted,
            }
        )
    return found


def weeks_between(first: str, last: str) -> list[str]:
    """Every ISO week from the one holding `first` to the one holding `last`."""
    start, end = seconds(first), seconds(last)
    if start is None or end is None:
        return []
    day = datetime.fromtimestamp(start, UTC).date()
    day -= timedelta(days=day.weekday())
    stop = datetime.fromtimestamp(end, UTC).date()
    out = []
    while day <= stop:
        year, week, _ = day.isocalendar()
        out.append(f"{year}-W{week:02d}")
        day += timedelta(days=7)
    return out


def _week_rates(counts: Counts) -> dict:
    thin = counts.shown < THIN_SHOWN and counts.invoked < THIN_SHOWN
    rates = counts.rates()
    if thin:
        rates = dict.fromkeys(rates)
    return {"shown": counts.shown, "invoked": counts.invoked, "thin": thin, **rates}


def build(
    conn: sqlite3.Connection, agent: Agent, *, now: float | None = None, window_days: float | None = None
) -> dict:
    """Everything the report shows, for `agent` (an evolve.workspace.agent.Agent)."""
    now = now or time.time()
    window_days = window_days or agent.config.limits.retention_days
    since = now - window_days * DAY
    runs = load_runs(conn, agent.name, since)
    timeline = sorted((r for r in runs if r.started_at), key=lambda r: r.started_at or "")
    starts = [r.started_at or "" for r in timeline]
    found = reflections(conn, agent)
    for item in found:
        item["before"], item["after"] = around(timeline, starts, item["at"])
        item["change"] = {
            k: _delta(item["before"], item["after"], k) for k in ("corrections_per_100", "errors_per_100")
        }
    headline = _headline(timeline, starts, [r for r in found if not r["reverted"]])
    older, oldest = ledger.older_runs(conn, agent.name, stamp(since))
    weeks = weeks_between(starts[0], starts[-1]) if starts else []
    by_week: dict[str, list[RunRecord]] = {}
    for run in timeline:
        by_week.setdefault(iso_week(run) or "", []).append(run)
    week_rows = [{"week": w, **side(by_week.get(w, []))} for w in weeks]
    shown = load_shown(conn, agent.name, since)
    invoked = load_invoked(conn, agent.name, since, runs)
    weekly = tally(runs, shown, invoked, bucket=iso_week)
    totals = tally(runs, shown, invoked)
    per_source = by_source(tally(runs, shown, invoked, bucket=lambda run: run.source))
    harnesses: dict[str, list[RunRecord]] = {}
    for run in runs:
        harnesses.setdefault(run.source, []).append(run)
    usage = skill_usage(conn, agent.name, window_days=window_days, now=now)
    skills, useless, harmful = [], [], []
    for skill in agent.skills():
        use = usage.get(skill.name, {})
        total = totals.get((skill.name, None), Counts())
        entry = {
            "name": skill.name,
            "valid": skill.valid,
            "pinned": skill.pinned,
            "impressions": use.get("impressions", 0),
            "invocations": use.get("invocations", 0),
            "runs_shown": total.shown,
            "runs_invoked": total.invoked,
            "runs_judged": total.judged,
            **total.rates(),
            "by_source": per_source.get(skill.name, []),
            "weeks": [{"week": w, **_week_rates(weekly.get((skill.name, w), Counts()))} for w in weeks],
        }
        skills.append(entry)
        if total.shown >= USELESS_RUNS and total.invoked == 0 and not entry["invocations"]:
            useless.append(
                {"name": skill.name, "runs_shown": total.shown, "impressions": entry["impressions"]}
            )
        if total.judged >= HARMFUL_MIN and (entry["ineffective_rate"] or 0) >= HARMFUL_RATE:
            harmful.append(
                {
                    "name": skill.name,
                    "reason": "often ends in a real error",
                    "rate": entry["ineffective_rate"],
                    "runs": total.judged,
                }
            )
        elif total.invoked >= HARMFUL_MIN and (entry["post_use_edit_rate"] or 0) >= HARMFUL_RATE:
            harmful.append(
                {
                    "name": skill.name,
                    "reason": "often corrected after use",
                    "rate": entry["post_use_edit_rate"],
                    "runs": total.invoked,
                }
            )
    return {
        "agent": agent.name,
        "generated_at": stamp(now),
        "window_days": window_days,
        "since": stamp(since),
        "runs": len(runs),
        "older_runs": {
            "count": older,
            "oldest": oldest,
            "retention_days": agent.config.limits.retention_days,
        },
        "headline": headline,
        "window_runs": WINDOW_RUNS,
        "thin_runs": THIN_RUNS,
        "reflections": found,
        "sources": [{"source": source, **side(group)} for source, group in sorted(harnesses.items())],
        "weeks": week_rows,
        "skills": skills,
        "useless": useless,
        "harmful": harmful,
        "blocks": [b.to_dict() for b in undo.blocks(agent.repo).values()],  # not learned again
        "lessons": lessons_summary(lessons_mod.build(conn, agent, now=now, window_days=window_days)),
    }


def lessons_summary(data: dict) -> dict:
    """The report's part of `evolve lessons`: the pooled before/after, ignored most, not dropped."""
    rows = data["lessons"]
    return {
        "pooled": data["pooled"],
        "headline": lessons_mod.headline_text(data),
        "most_ignored": [dict(r) for r in lessons_mod.most_ignored(rows)],
        "not_dropped": [dict(r) for r in lessons_mod.not_dropped(rows)],
        "ignored_total": sum(r["ignored"] for r in rows),
        "count": len(rows),
        "proven": data["proven"],
        "proven_headline": proven.summary_text(data["proven"]),
    }


def lesson_line(row: dict) -> str:
    """'memo 3f2a9c1b0d4e (strategies): ignored 2 of 9 runs in context, 6 → 4 per 100 · In this …'."""
    trend = row["recurrence"]
    rates = [trend[k]["per_100"] for k in ("before", "after")]
    shown = " → ".join("-" if r is None else f"{r:g}" for r in rates)
    return (
        f"{row['kind']} {row['id']} ({row['where']}): ignored {row['ignored']} of {row['in_context']} runs "
        f"in context, {shown} corrections per 100 runs · {row['text'][:60]}"
    )


def text_summary(data: dict) -> str:
    """The report for a terminal."""
    lines = [
        headline_text(data),
        data["lessons"]["headline"],
        data["lessons"]["proven_headline"],
        f"{data['agent']}: {data['runs']} runs since {data['since'][:10]} "
        f"(window {data['window_days']:g} days)",
    ]
    older = older_text(data)
    lines += [older] if older else []
    lines += [
        "",
        f"Reflections (per 100 runs, {data['window_runs']} runs each side):",
    ]
    for item in data["reflections"] or []:
        before, after = item["before"], item["after"]
        if before["thin"] or after["thin"]:
            numbers = f"too few runs to say (before {before['runs']}, after {after['runs']})"
        else:
            numbers = (
                f"corrections {before['corrections_per_100']:g} → "
                f"{after['corrections_per_100']:g}, real errors {before['errors_per_100']:g} → "
                f"{after['errors_per_100']:g}"
            )
        mark = " (reverted)" if item["reverted"] else ""
        summary = item["summary"] if len(item["summary"]) <= 50 else item["summary"][:49].rstrip() + "…"
        lines.append(f"  {item['at'][:16]} {item['sha'][:10]} {summary}{mark} — {numbers}")
    if not data["reflections"]:
        lines.append("  (no reflection commits yet)")
    lines += ["", "Runs by source (the harness whose transcripts they are):"]
    for item in data["sources"] or []:
        numbers = (
            "too few to rate"
            if item["thin"]
            else f"per 100: corrections {item['corrections_per_100']:g}, errors {item['errors_per_100']:g}"
        )
        lines.append(f"  {item['source']}: {item['runs']} runs, {numbers}")
    if not data["sources"]:
        lines.append("  (no runs yet)")
    lines += ["", "Lessons ignored most (the agent had them and the person corrected the same point):"]
    lines += [f"  {lesson_line(r)}" for r in data["lessons"]["most_ignored"]] or ["  (none)"]
    lines += ["", "Lessons whose point the person corrected no less often after they landed:"]
    lines += [f"  {lesson_line(r)}" for r in data["lessons"]["not_dropped"]] or ["  (none)"]
    lines += ["", "Skills that look useless (shown often, never used):"]
    lines += [f"  {u['name']}: shown in {u['runs_shown']} runs" for u in data["useless"]] or ["  (none)"]
    lines += ["", "Skills that look harmful:"]
    lines += [
        f"  {h['name']}: {h['reason']} ({h['rate'] * 100:.0f}% of {h['runs']} runs)" for h in data["harmful"]
    ] or ["  (none)"]
    lines += ["", "Lessons a person undid (evolve will not learn them again; `evolve unblock` lifts one):"]
    lines += [
        f"  {b['id']}: {b['line'][:80]} (by {b['undone_by']}, {b['commit'][:10]})"
        for b in data.get("blocks", [])
    ] or ["  (none)"]
    return "\n".join(lines)
