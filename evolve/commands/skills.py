"""`evolve skills`: every skill with its validity and history."""

from __future__ import annotations

from evolve.agent import Agent
from evolve.commands.output import emit_json, say, table
from evolve.home import Home


def skills(home: Home, name: str, as_json: bool = False) -> int:
    records = Agent.open(name, home).skill_records()
    if as_json:
        emit_json(records)
        return 0
    if not records:
        say(f"agent {name!r} has no skills yet")
        return 0
    rows = [[r["name"], "ok" if r["valid"] else "BROKEN", str(r["patch_count"]),
             r["updated_at"] or "-", r["description"][:60]] for r in records]
    say(table(rows, ["SKILL", "STATE", "PATCHES", "UPDATED", "DESCRIPTION"]))
    for r in records:
        for problem in r["problems"]:
            say(f"  {r['path']}: {problem}")
    return 0
