"""An independent count of what a Codex rollout holds, to check the adapter against.

Deliberately naive and built from other evidence than the adapter reads: whole file, plain
json, no state machine; requests from `user_message` events when the rollout has them
(else from user messages Codex did not mark as harness), failed commands from the exit
codes Codex's own `exec_command_end` / `CommandExecution` events carry, skill reads from
the `parsed_cmd` reads Codex itself parsed out of each command.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

_TOOL_FAILED = re.compile(r"^[\w.-]+ failed: ")


def _objects(path: Path) -> list[dict]:
    objs = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("payload"), dict):
            objs.append(obj)
    return objs


def _typed_by_person(payload: dict) -> bool:
    meta = (payload.get("internal_chat_message_metadata_passthrough") or {}).get("content_item_metadata")
    if meta is not None:
        return any((m.get("provenance") or {}).get("type") == "user" for m in meta)
    text = "".join(b.get("text", "") for b in payload.get("content") or []).lstrip()
    return not text.startswith(("<", "# AGENTS.md instructions for"))


def independent_counts(path: Path) -> Counter:
    """runs, tool_calls, tool_errors (failed commands + tools saying they failed), skills, interrupts."""
    objs = _objects(path)
    payloads = [(o["type"], o["payload"]) for o in objs]
    counts: Counter = Counter()
    events = [p for kind, p in payloads if kind == "event_msg" and p.get("type") == "user_message"]
    if events:
        counts["runs"] = len(events)
    else:
        counts["runs"] = sum(
            kind == "response_item"
            and p.get("type") == "message"
            and p.get("role") == "user"
            and _typed_by_person(p)
            for kind, p in payloads
        )
    calls = set()
    reads = set()
    for kind, p in payloads:
        item = p.get("type")
        if kind == "response_item" and isinstance(item, str) and item.endswith("_call"):
            calls.add(p.get("call_id") or id(p))
        if kind == "response_item" and item in ("function_call_output", "custom_tool_call_output"):
            output = p.get("output")
            counts["tool_errors"] += isinstance(output, str) and bool(_TOOL_FAILED.match(output))
        if kind != "event_msg":
            continue
        command = p if item == "exec_command_end" else p.get("item") if item == "item_completed" else None
        if not isinstance(command, dict) or (
            item == "item_completed" and command.get("type") != "CommandExecution"
        ):
            continue
        code = command.get("exit_code")
        counts["tool_errors"] += isinstance(code, int) and code != 0
        for parsed in command.get("parsed_cmd") or []:
            if parsed.get("type") == "read" and parsed.get("name") == "SKILL.md":
                reads.add((command.get("call_id") or command.get("id"), parsed.get("path")))
    counts["tool_calls"] = len(calls)
    counts["skills"] = len(reads)
    counts["interrupts"] = sum(
        kind == "event_msg" and p.get("type") == "turn_aborted" for kind, p in payloads
    )
    counts["command_events"] = sum(
        kind == "event_msg"
        and (p.get("type") == "exec_command_end" or (p.get("item") or {}).get("type") == "CommandExecution")
        for kind, p in payloads
    )
    return counts


def parsed_counts(path: Path) -> Counter:
    """The same numbers from the adapter's runs."""
    from evolve.transcripts import ADAPTERS, parse_file
    from evolve.transcripts.reader import read_lines

    runs = parse_file(path, "codex")
    adapter = ADAPTERS["codex"]
    state = adapter.new_state(path.stem)
    events = [e for offset, line in read_lines(path) for e in adapter.parse_line(line, offset, state)]
    return Counter(
        runs=len(runs),
        tool_calls=sum(r.tool_calls for r in runs),
        tool_errors=sum(r.errors + r.transient_errors for r in runs),
        skills=sum(len(r.skills) for r in runs),
        interrupts=sum(e.kind == "interrupt" for e in events),
        bad=state["bad"],
    )
