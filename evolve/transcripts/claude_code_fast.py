"""The common Claude Code line layouts, read in place: no json.loads of the whole line.

Nine lines in ten of a long transcript are one assistant content block (text, thinking or
tool_use) or one successful tool result, in a few key orders. What matters sits at known
places: the top-level scalars around `message`, the block's ids, a text block's text, a tool
call's input. Only those are read (anchored searches and short regexes); usage, thinking,
tool output and `toolUseResult` are skipped, and the scalars a session repeats on every
line (cwd, version, sessionId…) are checked once per distinct run of bytes. A line that
does not fit exactly returns None and the caller parses it: the events are the same.

Corrupt lines come from a write cut short, maybe followed by the next line on the same
line: a cut line lacks the exact tail; in a glued one, a cut inside a string or an input
breaks the structure read after it, and a cut after the block leaves a second line start
between the block and the tail. Both are parsed (and counted as bad) like any line the
fast path is unsure of. One residue: a tool result cut inside `toolUseResult` exactly
after a "}" still counts as the result it is (its fields are whole); json drops the line.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable, Sequence
from typing import Any

from evolve.transcripts.claude_code_events import (
    NONE,
    REJECTED,
    confirm,
    finish,
    said,
    tool_call,
    tool_result,
)
from evolve.transcripts.model import Event, iso_utc
from evolve.transcripts.reader import scan_value

# The C string scanner json uses: (text, index after the opening quote) -> (str, end).
scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
START = b'{"parentUuid":'  # every conversation line so far starts so (then isSidechain)
_MESSAGE = b',"message":{"'
_RESULT = b'role":"user","content":[{"tool_use_id":"'
_ERROR = b'role":"user","content":[{"type":"tool_result","content":"'
_ERROR_END = b'","is_error":true,"tool_use_id":"'
# Values are matched as [^"]* (sre runs a one-character class about twice as fast as
# [^"\\]*); an escape in them is caught afterwards, and the line parsed instead.
_BLOCK = (r'","type":"message","role":"assistant"(?:,"model":"([^"]*)")?,"content":\[\{"type":"'
          r'(?:(text)","text":"|(thinking)","thinking":"|tool_use","id":"([^"]*)",'
          r'"name":"([^"]*)","input":)')
_ASSISTANT = re.compile(r'(?:"model":"([^"]*)",)?"id":"([^"]*)' + _BLOCK)
_ASSISTANT_TAIL = re.compile(
    r',"requestId":"([^"]*)","type":"assistant","uuid":"([^"]*)","timestamp":"([^"]*)"')
_RESULT_TAIL = re.compile(
    rb'"uuid":"([^"]*)","timestamp":"([^"]*)","toolUseResult":(?!"Error: |"User rejected )')
_ERROR_TAIL = re.compile(rb'"\}\]\},"uuid":"([^"]*)","timestamp":"([^"]*)","toolUseResult":')
# Keys with meaning that a run of plain scalars must not hide: in the head (after
# isSidechain), the first three; in an assistant line's tail, all of them.
_MEANINGFUL = ('"isApiErrorMessage"', '"isSidechain"', '"parentUuid"', '"uuid"',
               '"timestamp"', '"type"', '"requestId"', '"message"', '"toolUseResult"')
_SCALARS: dict = {}  # run of top-level scalars (str or bytes) -> (sidechain, session, type)
_SCALARS_CAP = 512
_UNSEEN: Any = object()  # not in _SCALARS (one atomic get: another thread may clear it)


def _scalars(seg, head: bool):
    """(isSidechain, sessionId or "", type or "") of a run of plain top-level scalars.

    None when unsure (an object, an escape in the session, a key with meaning). `head`: the
    keys between parentUuid and message (isSidechain first; the uuid, timestamp or type of
    the tail win over a duplicate there, as in json); else the keys after the last one
    read. The last sessionId and type count, as in json. Cached: sessions repeat them.
    """
    found = _SCALARS.get(seg, _UNSEEN)
    if found is not _UNSEEN:
        return found
    text = seg.decode() if isinstance(seg, bytes) else seg
    if head and text.startswith(',"isSidechain":false'):
        side, rest = False, text[20:]
    elif head and text.startswith(',"isSidechain":true'):
        side, rest = True, text[19:]
    else:
        side, rest = None, text
    at = rest.rfind(',"sessionId":"')
    session = rest[at + 14 : rest.find('"', at + 14)] if at >= 0 else ""
    at = rest.rfind(',"type":"')
    kind = rest[at + 9 : rest.find('"', at + 9)] if at >= 0 else ""
    meaningful = _MEANINGFUL[:3] if head else _MEANINGFUL
    ok = (side is not None or not head) and "{" not in rest and "}" not in rest \
        and "\\" not in session and not any(key in rest for key in meaningful)
    found = (side, session, kind) if ok else None
    if len(_SCALARS) >= _SCALARS_CAP:
        _SCALARS.clear()
    _SCALARS[seg] = found
    return found


def fast_line(line: bytes, offset: int, end: int, state: dict) -> Sequence[Event] | None:
    """Events of a common assistant or tool-result line (starting with START), or None."""
    message = line.find(_MESSAGE, 36)
    if message < 0:
        return None
    if line.startswith(_RESULT, message + 13):
        return _result(line, message, offset, end, state)
    if line.startswith(_ERROR, message + 13):
        return _error(line, message, offset, end, state)
    if line[message + 13] not in b"mi":  # an assistant message starts with "model" or "id"
        return None
    try:
        s = line.decode()
    except UnicodeDecodeError:
        return None
    if len(s) != len(line):  # not ASCII: find the message again, in characters
        message = s.find(',"message":{"', 36)
    if s[14] == '"':
        at = s.find('"', 15)
        parent: str | None = s[15:at]
        at += 1
    elif s.startswith("null", 14):
        parent, at = None, 18
    else:
        return None
    top = _SCALARS.get(seg := s[at:message], _UNSEEN)
    if top is _UNSEEN:
        top = _scalars(seg, True)
    found = _ASSISTANT.match(s, message + 12)
    if top is None or found is None or (parent and "\\" in parent) \
            or s.find("\\", message, found.end()) >= 0:
        return None
    model, msg_id, model2, is_text, is_thinking, tool_id, name = found.groups()
    if "<synthetic>" in (model, model2):
        return None
    at = found.end()
    try:
        if is_text:
            words, at = scanstring(s, at)
        elif is_thinking:
            at = scanstring(s, at)[1]
            if not s.startswith('","signature":"', at - 1):
                return None
            at = s.find('"', at + 14) + 1  # base64: no quote, no escape
        else:
            tool_input, at = scan_value(s, at)
            if s.startswith(',"caller":', at):  # newer API versions: who made the call
                at = scan_value(s, at + 10)[1]
    except (StopIteration, ValueError, RecursionError):
        return None
    last = len(s) - 1
    if not s.startswith("}],", at) or s[last] != "}":
        return None
    # The message ends at the last "}": the tail after it holds plain scalars only.
    close = s.rfind("}", at, last)
    tail = _ASSISTANT_TAIL.match(s, close + 1)
    if tail is None or s.find("\\", close, tail.end()) >= 0 \
            or s.find('{"parentUuid":', at, close) >= 0:  # the next line glued to a cut one
        return None
    request, uuid, stamp = tail.groups()
    rest = _SCALARS.get(seg := s[tail.end() : last], _UNSEEN)
    if rest is _UNSEEN:
        rest = _scalars(seg, False)
    if rest is None:
        return None
    if not _keep(state, top[0], rest[1] or top[1]):
        return NONE
    if len(stamp) == 24 and stamp[19] == "." and stamp[23] == "Z" and stamp[10] == "T":
        stamp = stamp[:19] + "Z"  # iso_utc's common case, without the call
    else:
        stamp = iso_utc(stamp)
    head = (state.get("session_id") or "", stamp, offset, end, uuid, parent)
    events: list[Event] = []
    if is_text:
        said(words, f"{msg_id}|{request}|", head, state, events)
    elif not is_thinking:
        tool_call(tool_id, name, tool_input, f"{msg_id}|{request}|", head, state, events)
    return finish(events, head, state)


def _user_head(line: bytes, message: int) -> tuple[bytes | None, tuple] | None:
    """(parent uuid, (sidechain, session, type)) of a user line's head; None when unsure."""
    if line[14] == 34:  # '"'
        at = line.find(b'"', 15)
        parent: bytes | None = line[15:at]
        at += 1
    elif line.startswith(b"null", 14):
        parent, at = None, 18
    else:
        return None
    top = _SCALARS.get(seg := line[at:message], _UNSEEN)
    if top is _UNSEEN:
        top = _scalars(seg, True)
    if top is None or top[2] != "user":
        return None
    return parent, top


def _result(line: bytes, message: int, offset: int, end: int, state: dict):
    """One successful tool result with string content; None when unsure (or an error)."""
    found = _user_head(line, message)
    if found is None:
        return None
    at = message + 13 + len(_RESULT)
    q = line.find(b'"', at)
    tool_id = line[at:q]
    if not line.startswith(b'","type":"tool_result","content":"', q):
        return None
    start = q + 34
    stop = line.find(b'"}]},"', start)  # the content string's end: `"` then a key
    rest = stop + 5
    # Every quote inside the content is escaped, so it is one string (one result block);
    # memchr finds no quote at all in most outputs, a count is needed for the others.
    if stop < 0 or line.find(b'"', start, stop) >= 0 and \
            line.count(b'"', start, stop) != line.count(b'\\"', start, stop):
        flag = line.find(b'","is_error":false}]},"', start, stop if stop >= 0 else len(line))
        if flag < 0 or line.count(b'"', start, flag) != line.count(b'\\"', start, flag):
            return None  # is_error true needs its text, other layouts need json
        rest = flag + 22
    tail = _RESULT_TAIL.match(line, rest)
    if tail is None or line[-1] != 125:  # "}"
        return None
    return _result_event(line, found, tool_id, tail, "", False, None, offset, end, state)


def _error(line: bytes, message: int, offset: int, end: int, state: dict):
    """One failed tool call with string content: its text is read, not the whole line."""
    found = _user_head(line, message)
    if found is None:
        return None
    start = message + 13 + len(_ERROR)
    at = line.find(_ERROR_END, start)  # a quote inside the text is escaped: its end
    try:
        text, stop = scanstring(value := line[start : at + 1].decode(), 0)
    except (UnicodeDecodeError, ValueError):
        return None
    q = line.find(b'"', at + len(_ERROR_END))
    tail = _ERROR_TAIL.match(line, q)
    if stop != len(value) or not text or tail is None or line[-1] != 125 \
            or line.find(START, tail.end()) >= 0:  # the next line glued to a cut one
        return None  # an empty text is replaced by toolUseResult's: parse the line
    rejected = line.startswith(b'"%s"' % REJECTED.encode(), tail.end())
    return _result_event(line, found, line[at + len(_ERROR_END) : q], tail, text, True,
                         REJECTED if rejected else None, offset, end, state)


def _result_event(line: bytes, found: tuple, tool_id: bytes, tail: re.Match, text: str,
                  is_error: bool, summary: str | None, offset: int, end: int, state: dict):
    """The events of a tool-result line read in place, from its parts; None when unsure."""
    parent, top = found
    uuid, stamp = tail.groups()
    session = top[1]
    if not session:  # newer layouts put it after toolUseResult: top level if no "}" follows
        at = line.rfind(b',"sessionId":"', tail.end())
        if at >= 0:
            q = line.find(b'"', at + 14)
            if line.find(b"}", at, len(line) - 1) >= 0 or line.find(b"\\", at, q) >= 0:
                return None
            session = line[at + 14 : q].decode()
    if b"\\" in tool_id + uuid + stamp + (parent or b""):
        return None
    try:
        head = (uuid.decode(), parent.decode() if parent is not None else None,
                iso_utc(stamp.decode()), tool_id.decode())
    except UnicodeDecodeError:
        return None
    if not _keep(state, top[0], session):
        return NONE
    return confirm(state, [tool_result(head[3], text, is_error, summary, (
        state.get("session_id") or "", head[2], offset, end, head[0], head[1]), state)])


def _keep(state: dict, sidechain: bool, session: str | None) -> bool:
    """Note the line's file kind and session; False for a subagent's line in a main file."""
    if sidechain and not state.get("side"):
        if state.get("side") is not None:
            return False
        state["side"] = True
    elif state.get("side") is None:
        state["side"] = sidechain
    if session:
        state["session_id"] = session
    state["api"] = None
    return True
