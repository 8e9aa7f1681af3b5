"""Skill usage from state.db: what the reflection bundle and the index show per skill."""

from __future__ import annotations

import sqlite3


def skill_usage(conn: sqlite3.Connection, agent: str) -> dict[str, dict]:
    """Name → {invocations, last_used_at, impressions} (only skills with any data)."""
    usage: dict[str, dict] = {}
    for row in conn.execute(
        "SELECT skill, COUNT(*) AS n, MAX(at) AS last FROM invocations WHERE agent = ? "
        "GROUP BY skill", (agent,)):
        usage[row["skill"]] = {"invocations": row["n"], "last_used_at": row["last"],
                               "impressions": 0}
    for row in conn.execute(
        "SELECT skill, COUNT(*) AS n FROM impressions WHERE agent = ? GROUP BY skill", (agent,)):
        usage.setdefault(row["skill"], {"invocations": 0, "last_used_at": None})
        usage[row["skill"]]["impressions"] = row["n"]
    return usage
