"""The normalized event model every transcript adapter produces, and the `Run` facts record.

Adapters (Claude Code JSONL, generic JSONL, an in-memory Messages API list) all turn their
input into the same small `Event`s so one state machine (`runs.RunBuilder`) derives the
facts, redacted as they are extracted. Standard library only: this sits on the observer's
hot path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, NamedTuple

from evolve.transcripts import classify
from evolve.transcripts.redact import redact

# Event kinds.
HUMAN = "human"  # a real human request: starts a run
ASSISTANT_TEXT = "assistant_text"
TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
SKILL = "skill"  # a skill invocation (Claude Code: the `Skill` tool call)
INTERRUPT = "interrupt"  # the user stopped the agent
REPLY = "reply"  # the person's words inside a run: an answer to the agent's question, rejection feedback
API_ERROR = "api_error"  # one incident of the model API failing
MARKER = "marker"  # a line that only carries a uuid (keeps a run's tail_uuid exact)
KINDS = (HUMAN, ASSISTANT_TEXT, TOOL_CALL, TOOL_RESULT, SKILL, INTERRUPT, REPLY, API_ERROR, MARKER)
ANSWER, FEEDBACK = "answer", "feedback"  # the two kinds of REPLY (its `name`)
# Claude Code's words when the person stops the agent: as a message, and as the result of
# the call it was running ("[Request interrupted by user for tool use]"): an abort, not an error.
INTERRUPTED = "[Request interrupted by user"

# Tools whose input names a file they write, and the input key holding it.
WRITE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}

REQUEST_CAP = 4000
RUN_REPLIES = 5  # typed replies kept per run
RUN_REPLY_CAP = 500
ERROR_TEXT_CAP = 2000  # on events
RUN_ERROR_TEXTS = 5
RUN_ERROR_TEXT_CAP = 500
TOOL_INPUTS_CAP = 2000
FILES_CAP = 50
SKILLS_CAP = 50
TEXT_CAP = 2000  # assistant text kept on events
SAID_CAP = 300  # the end of the agent's last text, kept to judge the person's next words
INPUT_VALUE_CAP = 200  # per value of a summarised tool input
REDACT_MARGIN = 200  # characters past a cut that redaction still sees (a secret straddling it)
WORD_CHARS = 120  # a cut moves back at most this far to keep a word (a secret) whole or out
_LAST_SPACE = re.compile(r".*\s", re.DOTALL)
_FIRST_SPACE = re.compile(r"\s")
INPUT_KEYS_CAP = 12


@dataclass(slots=True)
class Event:
    """One normalized thing that happened in a transcript; treat it as immutable.

    Fields not meaningful for a kind keep their defaults. `offset`/`end` are the byte range of
    the source line (or the index of the message for in-memory input). Not `frozen=True`:
    a frozen dataclass's __init__ costs ~3x more, and events are made for every line.
    """

    kind: str
    session_id: str = ""
    timestamp: str | None = None  # normalized "YYYY-MM-DDTHH:MM:SSZ"
    offset: int = 0
    end: int = 0
    uuid: str | None = None
    parent_uuid: str | None = None
    text: str = ""  # human request, assistant text, error text, the reply as shown (capped)
    cwd: str | None = None
    name: str = ""  # tool name (tool_call / tool_result), skill name (skill)
    tool_use_id: str = ""
    input: Any = None  # summarised, redacted tool input (observing: the raw one; RunBuilder shortens it)
    file_path: str | None = None  # file a tool call writes
    is_error: bool = False
    rejected: bool = False  # tool_result: the user rejected the call (an abort, not an error)
    transient: bool | None = None  # the source's own word, if it says (see judged_transient)
    attempt: int = 0  # api_error: retry attempt reported by the agent
    continued: bool = False  # api_error: the final word on an incident already reported
    typed: str = ""  # reply: what the person typed (not an offered option they picked)


class Head(NamedTuple):
    """The first fields of every Event of one source line: `Event(kind, *head, ...)`."""

    session_id: str
    timestamp: str | None
    offset: int
    end: int
    uuid: str | None
    parent_uuid: str | None


@dataclass(slots=True)
class Run:
    """Facts about one run: a human request and everything the agent did until the next one."""

    session_id: str = ""
    index: int = 0
    started_at: str | None = None
    ended_at: str | None = None
    cwd: str | None = None
    request: str = ""
    tool_calls: int = 0
    errors: int = 0
    transient_errors: int = 0
    aborted: bool = False
    correction: bool = False
    skills: list[dict] = field(default_factory=list)
    files_written: list[str] = field(default_factory=list)
    user_edited_files: list[str] = field(default_factory=list)  # set by observe (file mtimes)
    ended_in_error: bool = False
    recovered: bool = False
    replies: list[str] = field(default_factory=list)  # typed answers and rejection feedback, in order
    correction_reply: str = ""  # the reply that made `correction` true, when the request did not
    correction_cue: str = ""  # why it counts as a correction, in words (hearing.Heard.cue)
    correction_kind: str = ""  # how the person corrected (hearing's kinds)
    preference: bool = False  # the person stated a standing instruction or preference
    preference_text: str = ""  # the words that stated it (the request, or a typed reply)
    preference_cue: str = ""
    error_texts: list[str] = field(default_factory=list)
    error_calls: list[str] = field(default_factory=list)  # the call behind each error text ("" unknown)
    tool_inputs_text: str = ""
    start_offset: int = 0
    end_offset: int = 0
    head_uuid: str | None = None
    tail_uuid: str | None = None
    complete: bool = False
    superseded: bool = False
    # Set on the first run after a rewind: runs superseded_from..index-1 were abandoned.
    superseded_from: int | None = None

    def to_dict(self) -> dict:
        """A JSON-serialisable copy (asdict's generic deep copy costs ~20x more)."""
        data = {name: getattr(self, name) for name in _RUN_FIELDS}
        data["skills"] = [dict(skill) for skill in self.skills]
        for name in _RUN_LISTS:
            data[name] = list(data[name])
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Run:
        """Inverse of to_dict; unknown keys are ignored so old stored runs still load."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


_RUN_FIELDS = tuple(f.name for f in fields(Run))
_RUN_LISTS = ("files_written", "user_edited_files", "replies", "error_texts", "error_calls")


def iso_utc(value: Any) -> str | None:
    """Normalize a timestamp (ISO string or epoch seconds) to "YYYY-MM-DDTHH:MM:SSZ"."""
    if isinstance(value, str):
        # Fast path for the usual "2025-07-20T18:27:41.846Z".
        if len(value) >= 20 and value[10] == "T" and value[-1] == "Z" and value[19] in ".Z":
            return value[:19] + "Z"
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            dt = datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    else:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# The input keys that say what a call did, per tool; the rest is detail.
MEANINGFUL = {
    "Bash": ("command",),
    "Read": ("file_path", "offset", "limit"),
    "Write": ("file_path",),
    "Edit": ("file_path", "old_string"),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Grep": ("pattern", "path", "glob"),
    "Glob": ("pattern", "path"),
    "LS": ("path",),
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "Task": ("description", "subagent_type"),
    "Agent": ("description", "subagent_type"),
    "Skill": ("skill", "args"),
    "AskUserQuestion": ("questions",),
    "TodoWrite": (),
}
BULKY = frozenset({"content", "old_string", "new_string", "edits", "todos", "new_source", "prompt"})


def meaningful_keys(tool: str, tool_input: dict) -> tuple[str, ...]:
    """The keys of a call's input that say what it did (an unknown tool: its short values)."""
    keys = MEANINGFUL.get(tool)
    if keys is None:
        keys = tuple(k for k, v in tool_input.items() if k not in BULKY and not bulky(v))[:4]
    return keys


def meaningful_text(tool: str, tool_input: Any) -> str:
    """What a call did, for keyword matching: its meaningful input values, each shortened.

    Not redacted: RunBuilder redacts a run's tool inputs in one go.
    """
    if not isinstance(tool_input, dict):
        return "" if tool_input is None else _short(tool_input, redacting=False)
    parts = []
    for key in meaningful_keys(tool, tool_input):
        value = tool_input.get(key)
        if value is None or bulky(value):
            continue
        parts.append(str(value) if isinstance(value, (bool, int, float)) else _short(value, redacting=False))
    return " ".join(parts)


def bulky(value: Any) -> bool:
    """A value too big to say what a call did: a list, a dict, a long or multi-line text."""
    return isinstance(value, (list, dict)) or (isinstance(value, str) and ("\n" in value or len(value) > 120))


def summarize_input(value: Any) -> dict:
    """A small copy of a tool input: at most a dozen keys, each value a capped string.

    Each value is redacted before it is cut (between words), so a secret that straddles the
    cut is still found.
    """
    if not isinstance(value, dict):
        return {} if value is None else {"value": _short(value)}
    out = {}
    for i, (key, item) in enumerate(value.items()):
        if i >= INPUT_KEYS_CAP:
            break
        out[str(key)] = item if isinstance(item, (bool, int, float)) else _short(item)
    return out


def _short(item: Any, redacting: bool = True) -> str:
    if isinstance(item, str):
        text = item[: INPUT_VALUE_CAP + REDACT_MARGIN]
    elif type(item) is list or type(item) is dict:
        try:  # only the start of the repr is kept: a long todo list need not be printed
            text = _repr_start(item, INPUT_VALUE_CAP + REDACT_MARGIN)
        except RecursionError:  # repr itself would raise again: say so instead
            text = f"[{type(item).__name__} nested too deep to show]"
    else:
        text = repr(item)
    if redacting:
        text = redact(text)
    # at most INPUT_VALUE_CAP characters with the mark: shortening it again changes nothing
    return text if len(text) <= INPUT_VALUE_CAP else cut(text, INPUT_VALUE_CAP - 1) + "…"


def _repr_start(item: list | dict, limit: int) -> str:
    """repr(item), or a prefix of it longer than `limit` (the same characters).

    Entries are printed by repr (in C) one at a time until the text is long enough: a
    long todo list is not printed whole. An entry that is the container itself prints as
    repr does ("[...]"); JSON values have no deeper cycles.
    """
    if isinstance(item, list):
        first, last = "[", "]"
        entries = ("[...]" if entry is item else repr(entry) for entry in item)
    else:
        first, last = "{", "}"
        entries = (f"{key!r}: {'{...}' if value is item else repr(value)}" for key, value in item.items())
    parts = [first]
    size = 1
    for entry in entries:
        if size > 1:
            parts.append(", ")
            size += 2
        parts.append(entry)
        size += len(entry)
        if size > limit:
            return "".join(parts)
    parts.append(last)
    return "".join(parts)


def cut(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, without the word the cut falls in.

    The word may be a secret: half of one is no longer recognised, so it is dropped, not
    kept (unless it is very long: then the cut stays where it is).
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    if text[limit].isspace() or not head or head[-1].isspace():
        return head
    start = _LAST_SPACE.search(head, max(0, limit - WORD_CHARS))
    return head[: start.end()] if start else head


def head_and_tail(text: str, cap: int) -> str:
    """`text` within `cap` characters, the cut marked.

    Its head and its tail are kept (the tail is where a tool says what failed), each
    without the word the cut falls in.
    """
    if len(text) <= cap:
        return text
    keep = max(0, cap - len(f"\n[… {len(text)} characters cut …]\n"))
    head = cut(text, keep - keep // 2)
    tail = text[len(text) - keep // 2 :] if keep // 2 else ""
    if tail and not tail[0].isspace() and not text[len(text) - len(tail) - 1].isspace():
        space = _FIRST_SPACE.search(tail, 0, WORD_CHARS)
        tail = tail[space.start() :] if space else tail
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters cut …]\n{tail}"


def stopped_by_person(text: str) -> bool:
    """Whether a message or a tool's result is the person stopping the agent (never an error)."""
    return text.lstrip().startswith(INTERRUPTED)


def written_path(tool: str, tool_input: Any) -> str | None:
    """The file a Write/Edit/MultiEdit/NotebookEdit call writes, else None."""
    key = WRITE_TOOLS.get(tool)
    if key and isinstance(tool_input, dict):
        path = tool_input.get(key)
        if isinstance(path, str) and path:
            return path
    return None


def error_object_text(err: Any, depth: int = 0) -> str:
    """A short readable text for an API error object (status, types, codes, messages)."""
    if isinstance(err, str):
        return err
    if not isinstance(err, dict) or depth > 4:
        return ""
    parts = []
    for key in ("status", "type", "code", "message"):
        value = err.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            parts.append(str(value))
    for key in ("error", "cause"):
        inner = error_object_text(err.get(key), depth + 1)
        if inner:
            parts.append(inner)
    return " ".join(parts)


def block_text(content: Any) -> str:
    """The text of a tool_result / message content: a string or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return ""


# --- classification -------------------------------------------------------------------------
def judged_transient(event: Event, classifier: classify.Classifier) -> bool:
    """Whether a tool_result or api_error event is the environment failing, not a lesson.

    The transcript's own word wins (the generic format may say); otherwise the agent's
    classifier judges the error text, so every reader of a transcript judges it alike.
    """
    if event.transient is not None:
        return event.transient
    if event.kind == API_ERROR:
        return classifier.api_error_transient(event.text)
    return event.is_error and classifier.is_transient(event.text)
