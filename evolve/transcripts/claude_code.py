"""Claude Code transcript adapter: one JSONL line (bytes) → normalized events.

The format is internal to Claude Code and changes between releases (see
shared/reference/claude-code.md), so every field is read defensively and unknown line types
are skipped. Transcripts reach hundreds of megabytes: a line is decoded by msgspec against a
schema of the few keys that matter, so usage blocks, thinking, tool output, toolUseResult
objects and images are skipped in C (still validated: a corrupt line fails as with json). A
line the schema does not fit (a value of an unexpected type) is parsed with json instead:
the events are the same, `parse_object` reads both.

Slash commands: a `<command-name>` line the user typed becomes a human request only once the
agent acts on it (an assistant line, a tool result, an API error or an interrupt follows).
Built-in local commands (/clear, /model, /exit, /mcp …) only print `<local-command-stdout>`
and are not requests; their lines stay with the previous run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Sequence
from typing import Any

from evolve.transcripts.claude_code_events import (
    NONE,
    api_error_events,
    assistant_events,
    user_events,
    withhold,
)
from evolve.transcripts.model import MARKER, Event, Head, iso_utc
from evolve.transcripts.reader import loads_object

NAME = "claude_code"

# Top-level types that never matter, even with a uuid (a run's tail is a conversation line).
_SKIP = {
    "file-history-snapshot",
    "queue-operation",
    "last-prompt",
    "permission-mode",
    "summary",
    "custom-title",
    "agent-name",
    "tag",
}
_CONVERSATION = ("user", "assistant")
_make_head = tuple.__new__


def new_state(session_id: str = "") -> dict:
    """Fresh adapter state (JSON-serialisable, bounded)."""
    return {
        "session_id": session_id,  # the last sessionId seen (the file stem before that)
        "side": None,  # None: not known yet; False: main transcript; True: subagent file
        "seen": {},  # recent dedupe keys of assistant blocks (insertion-ordered)
        "tools": {},  # tool_use_id -> tool name, awaiting results
        "asks": {},  # tool_use_id of an AskUserQuestion call -> the option labels it offered
        "api": None,  # open API-error incident: {"transient": bool}
        "cmd": None,  # a typed slash command waiting for the agent to act on it
        "bad": 0,  # corrupt / non-object lines skipped
        "prose": True,  # False when only facts are wanted (observe): tool inputs stay whole
    }


def parse_line(line: bytes, offset: int, state: dict) -> Sequence[Event]:
    """Events for one raw line (without its newline) starting at byte `offset`."""
    obj = decode_line(line, state.get("asks"))
    if obj is None:
        if line.strip():
            state["bad"] = state.get("bad", 0) + 1
        return NONE
    return parse_object(obj, offset, offset + len(line) + 1, state)


def decode_line(line: bytes, asks: Container[str] | None = None) -> dict | None:
    """The keys of a line that matter, as a dict; None for bad JSON or a non-object.

    A `toolUseResult` is kept only when it is a string (an error or rejection summary) or
    answers a question asked (a tool id in `asks`), a tool result's output only when it may
    be an error's text or the person's answer: the rest stay undecoded.
    """
    decode, decode_str, decode_output, decode_any, errors = _DECODERS or _decoder()
    try:
        obj = decode(line)
        if obj.get("type") == "user":  # tool results: the only readers of what stays raw
            message = obj.get("message")
            blocks = message.get("content") if message is not None else None
            if type(blocks) is not list:
                blocks = ()
            wanted = asks or ()
            answered = bool(wanted) and any(block.get("tool_use_id") in wanted for block in blocks)
            summary = obj.get("toolUseResult")
            if summary is not None:
                if answered:
                    summary = decode_any(summary)
                else:
                    summary = decode_str(summary) if memoryview(summary)[0] == 34 else None  # '"'
                obj["toolUseResult"] = summary
            for block in blocks:
                output = block.get("content")
                if output is not None:  # an error needs its text, an answer too
                    block["content"] = (
                        decode_output(output)
                        if summary is not None or answered or block.get("is_error") is True
                        else None
                    )
    except errors:
        return loads_object(line)  # an unexpected type somewhere, or a corrupt line
    return obj


_DECODERS: tuple = ()  # `_decoder()`, once made: read per line without a call


@functools.cache
def _decoder() -> tuple[
    Callable[[bytes], Any],
    Callable[[Any], str],
    Callable[[Any], Any],
    Callable[[Any], Any],
    tuple[type[Exception], ...],
]:
    """Decoders (msgspec) for a line, a string, a tool output and any value, and msgspec's errors.

    msgspec is imported on first use: only observing decodes transcripts.
    """
    from typing import TypedDict

    import msgspec

    def shape(name: str, keys: dict) -> Any:
        return TypedDict(name, keys, total=False)  # type: ignore[operator]

    item = shape("Item", {"type": Any, "text": Any})  # images' data is skipped
    block = shape(
        "Block",
        {
            "type": Any,
            "text": Any,
            "id": Any,
            "name": Any,
            "input": Any,
            "tool_use_id": Any,
            "content": msgspec.Raw,
            "is_error": Any,
        },
    )
    # The shapes are made at run time: mypy cannot read them as types.
    message = shape("Message", {"id": Any, "model": Any, "content": str | list[block] | None})  # type: ignore[valid-type]
    line = shape(
        "Line",
        {
            "type": Any,
            "subtype": Any,
            "parentUuid": Any,
            "isSidechain": Any,
            "sessionId": Any,
            "uuid": Any,
            "timestamp": Any,
            "requestId": Any,
            "cwd": Any,
            "isMeta": Any,
            "isCompactSummary": Any,
            "isVisibleInTranscriptOnly": Any,
            "isApiErrorMessage": Any,
            "message": message,
            "toolUseResult": msgspec.Raw,
            "retryAttempt": Any,
            "error": Any,
            "content": Any,
        },
    )
    global _DECODERS
    _DECODERS = (
        msgspec.json.Decoder(line).decode,
        msgspec.json.Decoder(str).decode,
        msgspec.json.Decoder(str | list[item] | None).decode,  # type: ignore[valid-type]
        msgspec.json.Decoder().decode,
        (msgspec.DecodeError, msgspec.ValidationError, RecursionError),
    )
    return _DECODERS


def parse_object(obj: dict, offset: int, end: int, state: dict) -> Sequence[Event]:
    """Events for a decoded line (by the schema, or by json for an odd one)."""
    get = obj.get
    kind = get("type")
    if isinstance(kind, str) and kind in _SKIP:
        return NONE
    side = get("isSidechain") is True
    if kind in _CONVERSATION and state.get("side") is None:
        state["side"] = side
    if side and not state.get("side"):
        return NONE  # a subagent's line inside the main transcript
    session = get("sessionId")
    if session and isinstance(session, str):
        state["session_id"] = session
    uuid = get("uuid")
    uuid = uuid if isinstance(uuid, str) else None
    parent = get("parentUuid")
    stamp = get("timestamp")
    # iso_utc's fast path for the usual "2025-07-20T18:27:41.846Z", inlined: every line has one
    if isinstance(stamp, str) and len(stamp) >= 20 and stamp[10] == "T" and stamp[19] in ".Z":
        stamp = stamp[:19] + "Z" if stamp[-1] == "Z" else iso_utc(stamp)
    else:
        stamp = iso_utc(stamp)
    # Events are built as Event(kind, *head, ...): positional fields cost ~4x less than
    # keywords; the Head is made by tuple.__new__, without its Python-level constructor.
    head = _make_head(
        Head,
        (
            state.get("session_id") or "",
            stamp,
            offset,
            end,
            uuid,
            parent if isinstance(parent, str) else None,
        ),
    )
    message = get("message")
    if not isinstance(message, dict):
        message = {}
    if kind == "assistant":
        return assistant_events(obj, message, head, state)
    if kind == "user":
        return user_events(obj, message, head, state)
    if kind == "system" and get("subtype") == "api_error":
        return api_error_events(obj, head, state)
    if uuid:
        return withhold(state, [Event(MARKER, *head)], uuid, end)
    return NONE
