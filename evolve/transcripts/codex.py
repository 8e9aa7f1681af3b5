"""OpenAI Codex CLI rollout adapter: one JSONL line (bytes) → normalized events.

A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) holds one line per
item: `session_meta` first, then `turn_context`, `response_item` (messages, function calls
and their outputs), `event_msg` (user messages, aborted turns, model-service errors) and
kinds evolve does not need (token counts, world state…), which are skipped. The format
changes between releases (see shared/reference/codex.md): every field is read
defensively. Rollouts grow to hundreds of megabytes, so a line is decoded by msgspec
against a schema of the few keys that matter (reasoning, token counts, base instructions
and command echoes are skipped in C); a line the schema does not fit goes through json,
and both feed `parse_object`. The semantics (what is the person, what failed, which skill
was read) are in codex_events.py.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from evolve.transcripts import codex_events as ev
from evolve.transcripts.model import Event, Head, iso_utc
from evolve.transcripts.reader import loads_object

NAME = "codex"
_make_head = tuple.__new__


def new_state(session_id: str = "") -> dict:
    """Fresh adapter state (JSON-serialisable, bounded)."""
    return {
        "session_id": ev.session_from_stem(session_id),  # session_meta's id replaces it
        "cwd": None,  # the session's folder (session_meta, then each turn_context)
        "skills": {},  # listed skill path -> name (from the <skills_instructions> message)
        "tools": {},  # call_id -> tool name, awaiting its output
        "seen": {},  # recent call ids (a call is counted once)
        "human": None,  # the last request while the agent has not acted (reported twice)
        "api": None,  # open model-service error incident
        "bad": 0,  # corrupt / non-object lines skipped
        "prose": True,  # False when only facts are wanted (observe): tool inputs stay whole
    }


def parse_line(line: bytes, offset: int, state: dict) -> Sequence[Event]:
    """Events for one raw line (without its newline) starting at byte `offset`."""
    obj = decode_line(line)
    if obj is None:
        if line.strip():
            state["bad"] = state.get("bad", 0) + 1
        return ev.NONE
    return parse_object(obj, offset, offset + len(line) + 1, state)


# A call output that is fine by its header (exit code 0, still running): its text is not kept.
_FINE = re.compile(
    rb'"(?:Chunk ID: [^"\\]*\\n)?(?:Wall time: [^"\\]*\\n)?'
    rb"(?:Process exited with code 0|Exit code: 0|Process running with session ID \d+)\\n"
)


def decode_line(line: bytes) -> dict | None:
    """The keys of a line that matter, as a dict; None for bad JSON or a non-object.

    A call's output (most of a rollout's bytes) stays undecoded when its header says the
    command went fine: only a failure's text is ever kept.
    """
    decode, decode_output, errors = _decoder()
    try:
        obj = decode(line)
        payload = obj.get("payload")
        output = payload.get("output") if payload is not None else None
        if output is not None:
            fine = _FINE.match(memoryview(output)[: ev.HEADER_CHARS].tobytes())
            payload["output"] = "" if fine else decode_output(output)
    except errors:
        return loads_object(line)  # an unexpected type somewhere, or a corrupt line
    return obj


@functools.cache
def _decoder() -> tuple[Callable[[bytes], Any], Callable[[Any], Any], tuple[type[Exception], ...]]:
    """Decoders (msgspec) for a rollout line and a call output, and msgspec's errors.

    msgspec is imported on first use: only observing decodes rollouts.
    """
    from typing import TypedDict

    import msgspec

    def shape(name: str, keys: dict) -> Any:
        return TypedDict(name, keys, total=False)  # type: ignore[operator]

    block = shape("Block", {"type": Any, "text": Any})  # images' data is skipped
    provenance = shape("Provenance", {"provenance": Any})
    passthrough = shape("Passthrough", {"content_item_metadata": list[provenance] | None})  # type: ignore[valid-type]
    # The shapes are made at run time: mypy cannot read them as types.
    payload = shape(
        "Payload",
        {
            "type": Any,
            "id": Any,
            "cwd": Any,
            "role": Any,
            "content": str | list[block] | None,  # type: ignore[valid-type]
            "name": Any,
            "call_id": Any,
            "arguments": Any,
            "input": Any,
            "output": msgspec.Raw,
            "action": Any,
            "message": Any,
            "images": Any,
            "reason": Any,
            "internal_chat_message_metadata_passthrough": passthrough,
        },
    )
    line = shape("Line", {"type": Any, "timestamp": Any, "payload": payload})
    return (
        msgspec.json.Decoder(line).decode,
        msgspec.json.Decoder().decode,
        (msgspec.DecodeError, msgspec.ValidationError, RecursionError),
    )


def parse_object(obj: dict, offset: int, end: int, state: dict) -> Sequence[Event]:
    """Events for a decoded line (by the schema, or by json for an odd one)."""
    kind = obj.get("type")
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return ev.NONE
    if kind == "response_item":
        item = payload.get("type")
        if item == "reasoning":  # the model answered: any model-service incident is over
            state["api"] = None
            return ev.NONE
        handler = ev.RESPONSE_ITEMS.get(item) or ev.generic_call(item)  # type: ignore[arg-type]
    elif kind == "event_msg":
        handler = ev.EVENT_MESSAGES.get(payload.get("type"))  # type: ignore[arg-type]
    elif kind == "session_meta" or kind == "turn_context":
        ev.session_context(payload, state, kind == "session_meta")
        return ev.NONE
    else:
        return ev.NONE
    if handler is None:
        return ev.NONE
    # Events are built as Event(kind, *head, ...): positional fields cost ~4x less than keywords.
    head = _make_head(
        Head, (state.get("session_id") or "", iso_utc(obj.get("timestamp")), offset, end, None, None)
    )
    return handler(payload, head, state)
