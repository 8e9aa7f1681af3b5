"""What the agent hooks left in the spool, applied to state.db by the watcher.

Hooks only append a line (their time budget is tiny); the work happens here. One handler
per record kind, in a dict the integrations add to. A bad record is counted and skipped:
it never blocks the records after it (the spool would otherwise be retried forever).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

from evolve import config
from evolve.home import Home
from evolve.metrics import usage
from evolve.observe import ingest as observe
from evolve.store import codex_rollouts, ledger, spool
from evolve.transcripts import classify
from evolve.workspace import links

log = logging.getLogger("evolve.watch")

Handler = Callable[[sqlite3.Connection, Home, dict], str]


def observe_transcript(conn: sqlite3.Connection, home: Home, record: dict) -> str:
    """A run ended (Stop, SessionEnd, StopFailure): observe that transcript now.

    The agent's `[sources]` may not cover the path (a project the globs miss); it is
    observed anyway, in the record's format (Claude Code's when it names none), since the
    hook named it for this agent.
    """
    name = usage.spooled_agent(home, record)
    fmt = record.get("format") or "claude_code"
    if fmt not in observe.FORMATS:
        raise ValueError(f"unknown transcript format {fmt!r}")
    raw = record.get("transcript_path")
    if not isinstance(raw, str) or not raw:
        raise ValueError("no transcript_path")
    path = Path(raw).expanduser()
    if not path.is_absolute() or not path.is_file():
        raise ValueError(f"{raw}: not a transcript file")
    agent_config = config.load(home.config_file, home.agent_dir(name) / "agent.toml")
    result = observe.observe_file(
        conn, name, path, fmt, classifier=classify.for_signals(agent_config.signals)
    )
    if result.error:
        raise ValueError(f"{raw}: {result.error}")
    return "observed"


def guard_fired(conn: sqlite3.Connection, home: Home, record: dict) -> str:
    """A guard reminded or denied a tool call: an event (`evolve guard` counts it, the bundle shows it)."""
    name = usage.spooled_agent(home, record)
    ids = record.get("guards")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and len(i) <= 64 for i in ids):
        raise ValueError("no guard ids")
    data = {"guards": ids, "action": str(record.get("action"))[:10]}
    for key in ("tool", "session", "tool_use_id"):
        if isinstance(record.get(key), str):
            data[key] = record[key][:200]
    at = record.get("at")
    ledger.add_event(conn, name, "guard", data, at if isinstance(at, (int, float)) else None, dirty=False)
    return "noted"


HANDLERS: dict[str, Handler] = {
    "stop": observe_transcript,
    "session_end": observe_transcript,
    "stop_failure": observe_transcript,
    "impressions": usage.handle_impressions,  # inject: the skills a session was shown
    "invocation": usage.handle_invocation,  # a skill read reported outside a transcript
    "skill": usage.handle_invocation,  # Claude Code's PostToolUse for the Skill tool
    "codex_hook": lambda conn, home, record: "noted",  # Codex's SessionStart ran: see note_codex_hooks
    "guard": guard_fired,  # PreToolUse: a guard reminded or denied
}


def _dedupe(records: list[dict]) -> list[dict]:
    """One observe per (agent, transcript) in a drain: later records add nothing."""
    seen: set[tuple] = set()
    kept = []
    for record in records:
        if HANDLERS.get(record.get("event")) is observe_transcript:  # type: ignore[arg-type]
            key = (record.get("agent"), record.get("transcript_path"))
            if key in seen:
                continue
            seen.add(key)
        kept.append(record)
    return kept


def note_codex_hooks(home: Home, records: list[dict]) -> int:
    """Codex installs whose hooks are proven to run (a record from them): `hook_seen_at` set.

    Codex runs a hook only once the person trusted it, silently skipping it before: a
    record of an agent from a folder its install covers, written after the hooks last
    changed, is what tells `evolve status` "working" from "waiting for trust".
    """
    seen = [r for r in records if r.get("harness") == "codex" and isinstance(r.get("at"), (int, float))]
    if not seen:
        return 0
    marked = 0
    with links.registry_lock(home, "codex"):
        try:
            installs = links.load_installs(home, "codex")
        except links.UnreadableInstalls:  # doctor says so; the records are evidence again next time
            return 0
        for install in installs:
            if install.get("hook_seen_at") is not None:
                continue
            since = max(install.get("installed_at") or 0, install.get("hooks_changed_at") or 0)
            for record in seen:
                cwd = record.get("cwd")
                where = (
                    codex_rollouts.rule_folder(cwd) if isinstance(cwd, str) and cwd.startswith("/") else ""
                )
                if (
                    record.get("agent") == install.get("agent")
                    and record["at"] >= since
                    and codex_rollouts.covers(install.get("folder") or "", where)
                ):
                    install["hook_seen_at"] = record["at"]
                    marked += 1
                    break
        if marked:
            links.save_installs(home, "codex", installs)
    return marked


def apply_hook_records(conn: sqlite3.Connection, home: Home, records: list[dict]) -> dict[str, int]:
    """Apply each record with its kind's handler; returns counts by outcome."""
    note_codex_hooks(home, records)
    counts: dict[str, int] = {}
    for record in _dedupe(records):
        kind = record.get("event")
        handler = HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            outcome = "ignored"
        else:
            try:
                outcome = handler(conn, home, record)
            except Exception as exc:  # one bad record never blocks the rest
                log.info("hook record %s for %r skipped: %s", kind, record.get("agent"), exc)
                outcome = "skipped"
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def drain_pending(conn: sqlite3.Connection, home: Home) -> dict[str, int]:
    """Apply what hooks left in the spool now (a reading command must not wait for the watcher).

    A read-only home keeps its spool for when it is writable again.
    """
    if ledger.read_only(conn):
        return {}
    if not (home.spool_dir / spool.SPOOL).exists() and not any(home.spool_dir.glob("*.draining")):
        return {}
    with spool.drain(home.spool_dir) as records:
        return apply_hook_records(conn, home, records) if records else {}
