"""Adapter for an in-memory Anthropic Messages API conversation (the Python API's input).

Agents built on the anthropic SDK hold their conversation as a list of messages; this turns
that list into the same events as a transcript file so one RunBuilder scores both. Messages
and blocks may be dicts or SDK objects (read through attributes).

Rules: a user message made only of text/image blocks is a human request; one holding
tool_result blocks is tool output (any text next to them is not a new request); a user text
starting "[Request interrupted by user" is an interrupt, and a tool result saying so (or
that the person refused the call) is an abort, not an error. `offset` is the message's index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from evolve.transcripts.model import (
    ASSISTANT_TEXT,
    ERROR_TEXT_CAP,
    HUMAN,
    INTERRUPT,
    REQUEST_CAP,
    SKILL,
    TEXT_CAP,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Head,
    cut,
    head_and_tail,
    iso_utc,
    stopped_by_person,
    summarize_input,
    written_path,
)

_REJECT = ("The user doesn't want to proceed with this tool use", "User rejected tool use")


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "\n".join(t for b in content if isinstance(t := _get(b, "text"), str))
    return ""


def message_events(
    messages: Iterable[Any],
    session_id: str = "",
    cwd: str | None = None,
    timestamp: Any = None,
    skill_tools: tuple[str, ...] = ("Skill",),
) -> Iterator[Event]:
    """Yield the events of a Messages API conversation, in order.

    `timestamp` (ISO string or epoch) stamps every event: the API messages carry none.
    A tool_use whose name is in `skill_tools` with input {"skill": name} is also a skill event.
    """
    ts = iso_utc(timestamp)
    tools: dict[str, str] = {}
    for index, message in enumerate(messages):
        head = Head(session_id, ts, index, index + 1, None, None)
        role = _get(message, "role")
        content = _get(message, "content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list | tuple):
            continue
        if role == "assistant":
            for block in blocks:
                kind = _get(block, "type")
                if kind == "text" and isinstance(_get(block, "text"), str):
                    yield Event(ASSISTANT_TEXT, *head, text=cut(_get(block, "text"), TEXT_CAP))
                elif kind == "tool_use":
                    name = _get(block, "name") or ""
                    tool_id = _get(block, "id") or ""
                    tool_input = _get(block, "input")
                    tools[tool_id] = name
                    yield Event(
                        TOOL_CALL,
                        *head,
                        name=name,
                        tool_use_id=tool_id,
                        input=summarize_input(tool_input),
                        file_path=written_path(name, tool_input),
                    )
                    skill = _get(tool_input, "skill") if tool_input is not None else None
                    if name in skill_tools and isinstance(skill, str) and skill:
                        yield Event(SKILL, *head, name=skill, tool_use_id=tool_id)
            continue
        if role != "user":
            continue
        results = [b for b in blocks if _get(b, "type") == "tool_result"]
        if results:
            for block in results:
                tool_id = _get(block, "tool_use_id") or ""
                text = _text(_get(block, "content"))
                is_error = _get(block, "is_error") is True
                rejected = is_error and (any(p in text[:400] for p in _REJECT) or stopped_by_person(text))
                is_error = is_error and not rejected
                text = head_and_tail(text, ERROR_TEXT_CAP) if is_error else ""
                yield Event(
                    TOOL_RESULT,
                    *head,
                    name=tools.pop(tool_id, ""),
                    tool_use_id=tool_id,
                    text=text,
                    is_error=is_error,
                    rejected=rejected,
                )
            continue
        text = _text(blocks).strip()
        if stopped_by_person(text):
            yield Event(INTERRUPT, *head, text=text[:200])
        elif text or any(_get(b, "type") == "image" for b in blocks):
            yield Event(HUMAN, *head, text=cut(text or "[image]", REQUEST_CAP), cwd=cwd)
