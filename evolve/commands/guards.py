"""`evolve guard NAME [ID] [--deny|--remind|--off]`: the agent's guards, or one's action changed."""

from __future__ import annotations

from evolve.commands.output import emit_json, say, table, warn
from evolve.errors import UserError
from evolve.home import Home
from evolve.workspace.agent import Agent

NEVER = {"fired": 0, "denied": 0, "last_fired_at": None}


def firings(home: Home, name: str) -> dict[str, dict]:
    """Per guard id: how often it fired (reminded or denied a call), denied, and when last."""
    from evolve.observe.records import drain_pending
    from evolve.store import ledger

    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)  # what the hooks spooled since the watcher last drained
        events = ledger.events_since(conn, name, None)
    found: dict[str, dict] = {}
    for event in (e for e in events if e["kind"] == "guard"):
        for guard_id in event.get("guards") or ():
            entry = found.setdefault(guard_id, dict(NEVER))
            entry["fired"] += 1
            entry["denied"] += event.get("action") == "deny"
            entry["last_fired_at"] = event.get("at")
    return found


def guard(
    home: Home, name: str, guard_id: str | None = None, action: str | None = None, as_json: bool = False
) -> int:
    from evolve.workspace import guarding

    agent = Agent.open(name, home)
    if action is not None:
        if guard_id is None:
            raise UserError(f"--{action} needs the guard's id: `evolve guard {name} ID --{action}`")
        sha, before = guarding.set_action(agent, guard_id, action)
        if as_json:
            emit_json({"agent": name, "id": guard_id, "action": action, "was": before, "commit": sha})
        elif sha is None:
            say(f"guard {guard_id} is already {action}")
        else:
            say(f"guard {guard_id}: {before} -> {action} (commit {sha[:12]}, as you)")
        return 0
    listed, problems = guarding.listing(agent)
    fired = firings(home, name)
    if guard_id is not None:
        listed = [item for item in listed if item.guard.id == guard_id]
        if not listed:
            raise UserError(f"agent {name!r} has no usable guard {guard_id!r}; see `evolve guard {name}`")
    if as_json:
        guards = [{**item.to_dict(), **fired.get(item.guard.id, NEVER)} for item in listed]
        emit_json({"agent": name, "guards": guards, "problems": problems})
        return 0
    for problem in problems:
        warn(problem)
    if not listed:
        say(f"agent {name!r} has no guards (write them in {agent.path / 'guards.toml'}; docs/guards.md)")
        return 0
    rows = [
        [
            item.guard.id,
            item.guard.shown_tool(),
            item.guard.action,
            item.guard.project or "everywhere",
            item.guard.lesson or "-",
            "person" if item.by_person else "evolve",
            str(fired.get(item.guard.id, NEVER)["fired"]),
            item.guard.message,
        ]
        for item in listed
    ]
    say(table(rows, ["ID", "TOOL", "ACTION", "SCOPE", "LESSON", "BY", "FIRED", "MESSAGE"]))
    return 0
