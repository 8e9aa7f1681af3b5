"""The common Claude Code line layouts, read in place: no json.loads of the whole line.

Nine lines in ten of a long transcript are one assistant content block (text, thinking or
tool_use) or one successful tool result, in a few key orders. What matters in them sits at
known places: the top-level scalars around `message`, the block's ids, a text block's text,
a tool call's input. Each is matched (one regex per region, anchored) or parsed alone; the
big rest (usage, thinking, tool output, `toolUseResult`) is skipped by byte search. A line
that does not fit exactly returns None, and the caller parses it: the events are the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from json.decoder import scanstring

from evolve.transcripts.claude_code_events import NONE, confirm, finish, said, tool_call
from evolve.transcripts.model import TOOL_RESULT, Event, Head, iso_utc
from evolve.transcripts.reader import scan_value

# Top-level keys with meaning: a layout carrying any of them elsewhere is parsed instead.
_KNOWN = (r"(?:uuid|timestamp|requestId|type|sessionId|parentUuid|isSidechain|message|"
          r"isApiErrorMessage|isMeta|isCompactSummary|isVisibleInTranscriptOnly|toolUseResult)")
_STR = r'"[^"\\]*(?:\\.[^"\\]*)*"'  # a JSON string, escapes included
_OTHER = rf',"(?!{_KNOWN}")\w+":(?:{_STR}|true|false|null|-?\d+)'  # a scalar without meaning
# The line up to `"message":{`: parentUuid and isSidechain first (every version so far).
_HEAD = (r'\{"parentUuid":(?:null|"([^"\\]*)"),"isSidechain":(true|false)'
         rf'(?:,"sessionId":"([^"\\]*)"|,"type":"(user|assistant)"|{_OTHER})*,"message":\{{')
_ASSISTANT = re.compile(
    _HEAD + r'(?:"model":"([^"\\]*)","id":"([^"\\]*)","type":"message","role":"assistant"'
    r'|"id":"([^"\\]*)","type":"message","role":"assistant","model":"([^"\\]*)")'
    r',"content":\[\{"type":"(?:(text)","text":"|(thinking)","thinking":"'
    r'|(tool_use)","id":"([^"\\]*)","name":"([^"\\]*)","input":)')
# After the message object: the rest of an assistant line.
_ASSISTANT_TAIL = re.compile(
    r',"requestId":"([^"\\]*)","type":"assistant","uuid":"([^"\\]*)","timestamp":"([^"\\]*)"'
    rf'(?:,"sessionId":"([^"\\]*)"|{_OTHER})*\}}')
_RESULT = re.compile(
    _HEAD.encode() + rb'"role":"user","content":\[\{"tool_use_id":"([^"\\]*)",'
    rb'"type":"tool_result","content":"')
_RESULT_TAIL = re.compile(
    rb'"uuid":"([^"\\]*)","timestamp":"([^"\\]*)","toolUseResult":(?!"Error: |"User rejected )')
_SESSION = b',"sessionId":"'


def _sidechain(side: bool, state: dict) -> bool:
    """True when the line belongs to a subagent inside a main transcript (skip it)."""
    if state.get("side") is None:
        state["side"] = side
    return side and not state["side"]


def assistant_line(text: str, offset: int, end: int, state: dict) -> Sequence[Event] | None:
    """One text / thinking / tool_use block of an assistant line; None when unsure."""
    found = _ASSISTANT.match(text)
    if found is None:
        return None
    (parent, side, session, kind, model, msg_id, msg_id2, model2, is_text, is_thinking,
     is_tool, tool_id, name) = found.groups()
    if kind is not None or (model or model2) == "<synthetic>":
        return None
    at = found.end()
    try:
        if is_text:
            words, at = scanstring(text, at)
        elif is_tool:
            tool_input, at = scan_value(text, at)
            if text.startswith(',"caller":', at):  # newer API versions: who made the call
                at = scan_value(text, at + 10)[1]
        else:
            at = text.find('","signature":"', at)  # a raw `","` cannot sit inside a string
            if at < 0 or text[at - 1] == "\\":
                return None
            at = text.find('"', at + 15) + 1  # base64: no quote, no escape
    except (StopIteration, ValueError, RecursionError):
        return None
    last = len(text) - 1
    if not text.startswith("}],", at) or text[last] != "}":
        return None
    # The message ends at the last "}" before a tail of plain scalars, if braces balance.
    at += 3
    close = text.rfind("}", at, last)
    if close < 0 or text.count("{", at, close) != text.count("}", at, close):
        return None
    tail = _ASSISTANT_TAIL.fullmatch(text, close + 1)
    if tail is None:
        return None
    request, uuid, stamp, session2 = tail.groups()
    if _sidechain(side == "true", state):
        return NONE
    if session2 or session:
        state["session_id"] = session2 or session
    state["api"] = None
    head = Head(state.get("session_id") or "", iso_utc(stamp), offset, end, uuid, parent)
    prefix = f"{msg_id or msg_id2}|{request}|"
    events: list[Event] = []
    if is_text:
        said(words, prefix, head, state, events)
    elif is_tool:
        tool_call(tool_id, name, tool_input, prefix, head, state, events)
    return finish(events, head, state)


def result_line(line: bytes, offset: int, end: int, state: dict) -> Sequence[Event] | None:
    """One successful tool result with string content; None when unsure (or an error)."""
    found = _RESULT.match(line)
    if found is None:
        return None
    parent, side, session, kind, tool_id = found.groups()
    start = found.end()
    stop = line.find(b'"}]},"', start)  # the content string's end: `"` then a key
    rest = stop + 5
    flag = line.find(b'","is_error":', start, stop if stop >= 0 else len(line))
    if flag >= 0:  # `false` only: an error needs its text (parse the line)
        stop = flag if line.startswith(b'","is_error":false}]},"', flag) else -1
        rest = flag + 22
    if stop < 0 or kind != b"user":
        return None
    # Every quote inside the content is escaped, so it is one string (one result block).
    if line.count(b'"', start, stop) != line.count(b'\\"', start, stop):
        return None
    tail = _RESULT_TAIL.match(line, rest)
    if tail is None or not line.endswith(b"}"):
        return None
    uuid, stamp = tail.groups()
    at = line.rfind(_SESSION, tail.end())
    if at >= 0:  # a later sessionId is the top-level one only when no object follows it
        if line.find(b"}", at, len(line) - 1) >= 0 or line.find(b"\\", at + 14, len(line)) >= 0:
            return None
        session = line[at + 14 : line.find(b'"', at + 14)]
    try:
        tool = tool_id.decode()
        fields = (uuid.decode(), parent.decode() if parent is not None else None,
                  iso_utc(stamp.decode()), session.decode() if session else None)
    except UnicodeDecodeError:
        return None
    if _sidechain(side == b"true", state):
        return NONE
    if fields[3]:
        state["session_id"] = fields[3]
    state["api"] = None
    event = Event(TOOL_RESULT, state.get("session_id") or "", fields[2], offset, end,
                  fields[0], fields[1], "", None, state.setdefault("tools", {}).pop(tool, ""),
                  tool)
    return confirm(state, [event])
