"""Claude Code transcript adapter: one JSONL line (bytes) → normalized events.

The format is internal to Claude Code and changes between releases (see
shared/reference/claude-code.md), so every field is read defensively and unknown line types
are skipped. Transcripts reach hundreds of megabytes, so lines that cannot matter, uuid-only
lines and the common assistant-block and tool-result layouts (claude_code_fast) are handled
from their raw bytes without `json.loads` — only where the bytes leave no doubt; otherwise
the line is parsed.

Slash commands: a `<command-name>` line the user typed becomes a human request only once the
agent acts on it (an assistant line, a tool result, an API error or an interrupt follows).
Built-in local commands (/clear, /model, /exit, /mcp …) only print `<local-command-stdout>`
and are not requests; their lines stay with the previous run.
"""

from __future__ import annotations

from collections.abc import Sequence

from evolve.transcripts.claude_code_events import (
    NONE,
    api_error_events,
    assistant_events,
    user_events,
    withhold,
)
from evolve.transcripts.claude_code_fast import START, fast_line
from evolve.transcripts.model import MARKER, Event, Head, iso_utc
from evolve.transcripts.reader import elide_blobs, loads_object

NAME = "claude_code"

# Top-level types that never matter; `progress` / `attachment` / most `system` lines only
# carry a uuid (kept so a run's tail_uuid is exact for rewind detection).
_SKIP = {
    b"file-history-snapshot", b"queue-operation", b"last-prompt", b"permission-mode",
    b"summary", b"custom-title", b"agent-name", b"tag",
}
_UUID_ONLY = {b"progress", b"attachment", b"system"}
_CONVERSATION = ("user", "assistant")


def new_state(session_id: str = "") -> dict:
    """Fresh adapter state (JSON-serialisable, bounded)."""
    return {
        "session_id": session_id,  # the last sessionId seen (the file stem before that)
        "side": None,  # None: not known yet; False: main transcript; True: subagent file
        "seen": {},  # recent dedupe keys of assistant blocks (insertion-ordered)
        "tools": {},  # tool_use_id -> tool name, awaiting results
        "api": None,  # open API-error incident: {"transient": bool}
        "cmd": None,  # a typed slash command waiting for the agent to act on it
        "bad": 0,  # corrupt / non-object lines skipped
        "prose": True,  # False when only facts are wanted (observe): tool inputs stay whole
    }


def parse_line(line: bytes, offset: int, state: dict) -> Sequence[Event]:
    """Events for one raw line (without its newline) starting at byte `offset`."""
    end = offset + len(line) + 1
    if line.startswith(START):  # the common assistant and tool-result layouts
        fast = fast_line(line, offset, end, state)
        if fast is not None:
            return fast
    i = line.find(b'"type":"')
    if i > 0 and line.find(b"{", 1, i) < 0 and line.find(b"[", 1, i) < 0:
        # The first "type" key sits at the top level: decide from bytes where that is safe.
        kind = line[i + 8 : line.find(b'"', i + 8)]
        if kind in _SKIP:
            return NONE
        if kind in _UUID_ONLY and (kind != b"system" or b'"api_error"' not in line):
            fast = _fast_marker(line, i, offset, end, state)
            if fast is not None:
                return fast
    if b"base64" in line:
        line = elide_blobs(line)
    obj = loads_object(line)
    if obj is None:
        if line.strip():
            state["bad"] = state.get("bad", 0) + 1
        return NONE
    return parse_object(obj, offset, end, state)


def _value(line: bytes, start: int) -> str:
    """The (escape-free) string value starting at `start`."""
    return line[start : line.find(b'"', start)].decode("utf-8", "replace")


def _side(line: bytes, i: int) -> bool | None:
    """The isSidechain flag of a line whose top-level keys before byte i are plain, or None."""
    at = line.find(b'"isSidechain":', 1, i)
    if at >= 0:
        return line.startswith(b"true", at + 14)
    return None if b'"isSidechain":true' in line else False


def _fast_marker(line: bytes, i: int, offset: int, end: int, state: dict):
    """A marker for a uuid-only line, from bytes; None when unsure (then parse it)."""
    side = _side(line, i)
    u = line.find(b'"uuid":"', 1, i)
    if u < 0:
        u = line.rfind(b'"uuid":"')
        if u < 0:
            return NONE if b'"uuid"' not in line else None
        rest = line[line.find(b'"', u + 8) + 1 :].rstrip()
        # Only trust a uuid key followed by plain top-level scalars up to the closing brace.
        if rest.count(b"}") != 1 or not rest.endswith(b"}") or b"]" in rest:
            return None
    if side is None:
        return None
    if side and not state.get("side"):
        return NONE
    uuid = _value(line, u + 8)
    return withhold(state, [Event(MARKER, offset=offset, end=end, uuid=uuid)], uuid, end)


def parse_object(obj: dict, offset: int, end: int, state: dict) -> Sequence[Event]:
    """Events for a fully parsed line (the path every fast path must agree with)."""
    get = obj.get
    kind = get("type")
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
    # Events are built as Event(kind, *head, ...): positional fields cost ~4x less than keywords.
    head = Head(state.get("session_id") or "", iso_utc(get("timestamp")), offset, end, uuid,
                parent if isinstance(parent, str) else None)
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
