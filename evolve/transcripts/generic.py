"""Generic JSONL adapter: any agent can write this small documented format to be observed.

One JSON object per line, discriminated by `type`; the format is documented in
docs/transcript-format.md. It maps one-to-one onto the normalized events, so other agents
get the same facts as Claude Code without evolve knowing their internals.
"""

from __future__ import annotations

from evolve.transcripts.model import (
    API_ERROR,
    ASSISTANT_TEXT,
    ERROR_TEXT_CAP,
    HUMAN,
    INTERRUPT,
    MARKER,
    REQUEST_CAP,
    SKILL,
    TEXT_CAP,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Head,
    block_text,
    cut,
    head_and_tail,
    iso_utc,
    stopped_by_person,
    summarize_input,
    written_path,
)
from evolve.transcripts.reader import loads_object

NAME = "generic"
PENDING_CAP = 512

_KINDS = {
    "user": HUMAN,
    "human": HUMAN,
    "assistant": ASSISTANT_TEXT,
    "assistant_text": ASSISTANT_TEXT,
    "tool_call": TOOL_CALL,
    "tool_result": TOOL_RESULT,
    "skill": SKILL,
    "interrupt": INTERRUPT,
    "api_error": API_ERROR,
}


def new_state(session_id: str = "") -> dict:
    """Fresh adapter state (JSON-serialisable, bounded)."""
    return {"session_id": session_id, "tools": {}, "bad": 0}


def _str(obj: dict, key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) and value else None


def parse_line(line: bytes, offset: int, state: dict) -> list[Event]:
    """Events for one line of the generic format; bad lines are counted in state["bad"]."""
    obj = loads_object(line)
    if obj is None:
        if line.strip():
            state["bad"] = state.get("bad", 0) + 1
        return []
    head = Head(
        _str(obj, "session") or state.get("session_id") or "",
        iso_utc(obj.get("ts")),
        offset,
        offset + len(line) + 1,
        _str(obj, "id"),
        _str(obj, "parent"),
    )
    kind = _KINDS.get(obj.get("type"))  # type: ignore[arg-type]
    if kind is None:
        return [Event(MARKER, *head)] if head.uuid else []
    text = obj.get("text")
    text = text if isinstance(text, str) else block_text(text)
    if kind == HUMAN:
        if not text.strip():
            return [Event(MARKER, *head)] if head.uuid else []
        if stopped_by_person(text):  # Claude Code's words, copied: the person stopped the agent
            return [Event(INTERRUPT, *head, text=text.strip()[:200])]
        return [Event(HUMAN, *head, text=cut(text, REQUEST_CAP), cwd=_str(obj, "cwd"))]
    if kind == ASSISTANT_TEXT:
        return [Event(ASSISTANT_TEXT, *head, text=cut(text, TEXT_CAP))]
    call_id = _str(obj, "call_id") or ""
    tools = state.setdefault("tools", {})
    if kind == TOOL_CALL:
        tool = _str(obj, "tool") or ""
        tool_input = obj.get("input")
        if call_id:
            tools[call_id] = tool
            if len(tools) > PENDING_CAP:
                for old in list(tools)[: len(tools) - PENDING_CAP]:
                    del tools[old]
        path = _str(obj, "writes") or written_path(tool, tool_input)
        return [
            Event(
                TOOL_CALL,
                *head,
                name=tool,
                tool_use_id=call_id,
                input=summarize_input(tool_input),
                file_path=path,
            )
        ]
    if kind == TOOL_RESULT:
        output = obj.get("output")
        output = output if isinstance(output, str) else block_text(output)
        rejected = obj.get("rejected") is True or (obj.get("error") is True and stopped_by_person(output))
        is_error = obj.get("error") is True and not rejected
        output = head_and_tail(output, ERROR_TEXT_CAP) if is_error else ""
        transient = obj.get("transient")  # the writer's own word, else the classifier's
        return [
            Event(
                TOOL_RESULT,
                *head,
                name=_str(obj, "tool") or tools.pop(call_id, ""),
                tool_use_id=call_id,
                text=output,
                is_error=is_error,
                rejected=rejected,
                transient=is_error and transient if isinstance(transient, bool) else None,
            )
        ]
    if kind == SKILL:
        name = _str(obj, "name")
        if not name:
            return [Event(MARKER, *head)] if head.uuid else []
        return [Event(SKILL, *head, name=name, tool_use_id=call_id)]
    if kind == INTERRUPT:
        return [Event(INTERRUPT, *head, text=text[:200])]
    text = head_and_tail(text or "API error", ERROR_TEXT_CAP)
    transient = obj.get("transient")
    attempt = obj.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0
    return [
        Event(
            API_ERROR,
            *head,
            text=text,
            attempt=attempt,
            transient=transient if isinstance(transient, bool) else None,
        )
    ]
