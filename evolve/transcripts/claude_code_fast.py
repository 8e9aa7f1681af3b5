"""The common Claude Code line layouts, read in place: no json.loads of the whole line.

Nine lines in ten of a long transcript are one assistant content block (text, thinking or
tool_use) or one successful tool result, in a few key orders. What matters in them sits at
known places: the top-level scalars around `message`, the block's ids, a text block's text,
a tool call's input. They are read there with anchored byte searches (a regex costs ~20
instructions a character; `find` a fraction of one) and only a text or an input is
decoded; usage, thinking, tool output and `toolUseResult` are skipped. A line that does not
fit exactly returns None and the caller parses it: the events are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.decoder import scanstring
from typing import NamedTuple

from evolve.transcripts.claude_code_events import NONE, confirm, finish, said, tool_call
from evolve.transcripts.model import TOOL_RESULT, Event, Head, iso_utc
from evolve.transcripts.reader import scan_value


class _Keys(NamedTuple):
    """The literals of the line head, as str (assistant lines) or bytes (tool results)."""

    start: str | bytes = '{"parentUuid":'
    quote: str | bytes = '"'
    null: str | bytes = "null"
    side_false: str | bytes = ',"isSidechain":false'
    side_true: str | bytes = ',"isSidechain":true'
    message: str | bytes = ',"message":{'
    brace: str | bytes = "{"
    session: str | bytes = ',"sessionId":"'
    close: str | bytes = "}"


_STR = _Keys()
_BYTES = _Keys(*(k.encode() for k in _STR))
_MODEL_FIRST = '","type":"message","role":"assistant","content":[{"type":"'
_MODEL_LAST = '","type":"message","role":"assistant","model":"'
_RESULT = b',"message":{"role":"user","content":[{"tool_use_id":"'


def _head(s, k: _Keys) -> tuple | None:
    """(parentUuid, isSidechain, end of those, start of `,"message":{`), or None.

    Every Claude Code version so far starts a conversation line with these two keys. The
    keys between them and `message` must be plain scalars (no object that could hide one).
    """
    if not s.startswith(k.start):
        return None
    if s.startswith(k.quote, 14):
        at = s.find(k.quote, 15)
        parent = s[15:at]
        at += 1
    elif s.startswith(k.null, 14):
        parent, at = None, 18
    else:
        return None
    if s.startswith(k.side_false, at):
        side, at = False, at + 20
    elif s.startswith(k.side_true, at):
        side, at = True, at + 19
    else:
        return None
    message = s.find(k.message, at)
    if message < 0 or s.find(k.brace, at, message) >= 0:
        return None
    return parent, side, at, message


def _sidechain(side: bool, state: dict) -> bool:
    """True when the line belongs to a subagent inside a main transcript (skip it)."""
    if state.get("side") is None:
        state["side"] = side
    return side and not state["side"]


def assistant_line(s: str, offset: int, end: int, state: dict) -> Sequence[Event] | None:
    """One text / thinking / tool_use block of an assistant line; None when unsure."""
    head = _head(s, _STR)
    if head is None or '"isApiErrorMessage"' in s:
        return None
    parent, side, at, message = head
    at = message + 12
    if s.startswith('"model":"', at):  # model, id, type, role
        q = s.find('"', at + 9)
        model = s[at + 9 : q]
        if not s.startswith('","id":"', q):
            return None
        at = s.find('"', q + 8)
        msg_id = s[q + 8 : at]
        if not s.startswith(_MODEL_FIRST, at):
            return None
        at += len(_MODEL_FIRST)
    elif s.startswith('"id":"', at):  # id, type, role, model
        q = s.find('"', at + 6)
        msg_id = s[at + 6 : q]
        if not s.startswith(_MODEL_LAST, q):
            return None
        at = s.find('"', q + len(_MODEL_LAST))
        model = s[q + len(_MODEL_LAST) : at]
        if not s.startswith('","content":[{"type":"', at):
            return None
        at += 22
    else:
        return None
    if model == "<synthetic>":
        return None
    try:
        if s.startswith('text","text":"', at):
            kind, (words, at) = 1, scanstring(s, at + 14)
        elif s.startswith('thinking","thinking":"', at):
            kind, at = 0, s.find('","signature":"', at + 22)  # a raw `","` ends the string
            if at < 0 or s[at - 1] == "\\":
                return None
            at = s.find('"', at + 15) + 1  # base64: no quote, no escape
        elif s.startswith('tool_use","id":"', at):
            q = s.find('"', at + 16)
            tool_id = s[at + 16 : q]
            if not s.startswith('","name":"', q):
                return None
            at = s.find('"', q + 10)
            name = s[q + 10 : at]
            if not s.startswith('","input":', at):
                return None
            kind, (tool_input, at) = 2, scan_value(s, at + 10)
            if s.startswith(',"caller":', at):  # newer API versions: who made the call
                at = scan_value(s, at + 10)[1]
        else:
            return None
    except (StopIteration, ValueError, RecursionError):
        return None
    last = len(s) - 1
    if not s.startswith("}],", at) or s[last] != "}":
        return None
    # The message ends at the last "}" before a tail of scalars, if the braces balance.
    at += 3
    close = s.rfind("}", at, last)
    if close < 0 or s.count("{", at, close) != s.count("}", at, close):
        return None
    if not s.startswith(',"requestId":"', close + 1):
        return None
    q = s.find('"', close + 15)
    request = s[close + 15 : q]
    if not s.startswith('","type":"assistant","uuid":"', q):
        return None
    at = s.find('"', q + 29)
    uuid = s[q + 29 : at]
    if not s.startswith('","timestamp":"', at):
        return None
    q = s.find('"', at + 15)
    stamp = s[at + 15 : q]
    session = _session(s, _STR, head[2], message, q, last)
    if session is None or "\\" in f"{parent}{msg_id}{request}{uuid}{stamp}{session}":
        return None  # an escape: leave the decoding to json
    if _sidechain(side, state):
        return NONE
    if session:
        state["session_id"] = session
    state["api"] = None
    fields = Head(state.get("session_id") or "", iso_utc(stamp), offset, end, uuid, parent)
    events: list[Event] = []
    if kind == 1:
        said(words, f"{msg_id}|{request}|", fields, state, events)
    elif kind == 2:
        tool_call(tool_id, name, tool_input, f"{msg_id}|{request}|", fields, state, events)
    return finish(events, fields, state)


def _session(s, k: _Keys, head: int, message: int, tail: int, last: int):
    """The top-level sessionId: among the head's scalars, else in the tail; "" when absent.

    None when the only one found is followed by an object's end (nested: parse the line).
    """
    at = s.find(k.session, head, message)
    if at < 0:
        at = s.rfind(k.session, tail, last)
        if at < 0:
            return s[:0]
        if s.find(k.close, at, last) >= 0:
            return None
    return s[at + 14 : s.find(k.quote, at + 14)]


def result_line(line: bytes, offset: int, end: int, state: dict) -> Sequence[Event] | None:
    """One successful tool result with string content; None when unsure (or an error)."""
    head = _head(line, _BYTES)
    if head is None:
        return None
    parent, side, after, message = head
    if not line.startswith(_RESULT, message):
        return None
    at = message + len(_RESULT)
    q = line.find(b'"', at)
    tool_id = line[at:q]
    if not line.startswith(b'","type":"tool_result","content":"', q):
        return None
    start = q + 34
    stop = line.find(b'"}]},"', start)  # the content string's end: `"` then a key
    rest = stop + 5
    # Every quote inside the content is escaped, so it is one string (one result block).
    if stop < 0 or line.count(b'"', start, stop) != line.count(b'\\"', start, stop):
        flag = line.find(b'","is_error":false}]},"', start, stop if stop >= 0 else len(line))
        if flag < 0 or line.count(b'"', start, flag) != line.count(b'\\"', start, flag):
            return None  # is_error true needs its text, other layouts need json
        rest = flag + 22
    if not line.startswith(b'"uuid":"', rest):
        return None
    q = line.find(b'"', rest + 8)
    uuid = line[rest + 8 : q]
    if not line.startswith(b'","timestamp":"', q):
        return None
    at = line.find(b'"', q + 15)
    stamp = line[q + 15 : at]
    if not line.startswith(b'","toolUseResult":', at) or line.startswith(b'"Error: ', at + 18) \
            or line.startswith(b'"User rejected ', at + 18) or line[-1] != 125:  # "}"
        return None
    session = _session(line, _BYTES, after, message, at + 18, len(line) - 1)
    if session is None or b"\\" in b"".join((parent or b"", tool_id, uuid, stamp, session)):
        return None
    try:
        fields = (tool_id.decode(), uuid.decode(), parent.decode() if parent else parent,
                  iso_utc(stamp.decode()), session.decode())
    except UnicodeDecodeError:
        return None
    if _sidechain(side, state):
        return NONE
    if fields[4]:
        state["session_id"] = fields[4]
    state["api"] = None
    tool = fields[0]
    event = Event(TOOL_RESULT, state.get("session_id") or "", fields[3], offset, end,
                  fields[1], fields[2], "", None, state.setdefault("tools", {}).pop(tool, ""),
                  tool)
    return confirm(state, [event])
