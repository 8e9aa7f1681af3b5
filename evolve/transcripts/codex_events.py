"""Codex rollout items, once decoded, → normalized events (the semantics; no byte handling).

- **The person** speaks in `user` messages and `user_message` events (older releases write
  both for one request, newer ones only the message: it is counted once). Harness context
  is never the person: developer messages, and user content that Codex marks as harness
  (`provenance`) or that is one of its context fragments (`<environment_context>…`,
  `# AGENTS.md instructions for …`, `<skill>…`, `<turn_aborted>…`: a whole text wrapped in
  one tag).
- **Failures**: a command's output says `Process exited with code N` (older: `Exit code:
  N`, or JSON with `metadata.exit_code`); a tool's own failure starts `<tool> failed: …`;
  `exec command rejected by user` is the person refusing, and `aborted` / `aborted by user
  [after Ns]` the person stopping a call that ran (aborts, not errors). A command still
  running reports its exit code on the later `write_stdin` poll.
- **Model-service errors**: `stream_error` (Codex retrying: transient by its own word)
  opens an incident; the final `error` is its last word, judged by the classifier.
- **Skills**: the `<skills_instructions>` developer message lists name and path of each
  skill; the agent reading one of those SKILL.md files (any tool whose input names the
  path) is an invocation, once per call id and skill, and so is the person's `$name` in a
  request (once per message).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from evolve.transcripts.claude_code_events import api_incident, seen_before
from evolve.transcripts.model import (
    ASSISTANT_TEXT,
    ERROR_TEXT_CAP,
    HUMAN,
    INTERRUPT,
    REQUEST_CAP,
    SKILL,
    SKILLS_CAP,
    TEXT_CAP,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Head,
    block_text,
    cut,
    head_and_tail,
    stopped_by_person,
    summarize_input,
)
from evolve.transcripts.reader import loads_object

NONE: tuple[Event, ...] = ()
PENDING_CAP = 512  # call ids awaiting their output
AGENTS_MD = "# AGENTS.md instructions for "
REJECTED = ("exec command rejected by user", "patch rejected by user")
ABORTS = {"interrupted", "replaced"}  # turn_aborted reasons that are the person stopping it
HEADER_CHARS = 400  # a command output's header (exit code) is within its first characters

_SESSION = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_FRAGMENT = re.compile(r"<([a-z][a-z0-9_]*)\b[^>]*>", re.IGNORECASE)
_ABORTED = re.compile(r"(?:Wall time: [\d.]+ seconds\n)?aborted(?: by user(?: after [\d.]+s)?)?\s*\Z")
_EXIT = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)\s*$", re.MULTILINE)
_FAILED = re.compile(
    r"(?:[\w .:-]{0,60}? failed\b|failed to |error: |unsupported call|execution error)", re.I
)
_ROOT = re.compile(r"^- `([^`]+)` = `([^`]+)`\s*$", re.MULTILINE)
_SKILL_PATH = re.compile(r"[^\s'\"`;|&<>(){}\[\],=]*SKILL\.md")
_MENTION = re.compile(r"(?<![\w$])\$([A-Za-z0-9][\w.:-]*)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+?)\s*$", re.MULTILINE)

Handler = Callable[[dict, Head, dict], Sequence[Event]]


def session_from_stem(stem: str) -> str:
    """The session id at the end of a rollout's file name (`rollout-<time>-<id>`), else the stem."""
    found = _SESSION.search(stem)
    return found.group(0) if found else stem


def session_context(payload: dict, state: dict, meta: bool) -> None:
    """session_meta (the session's id and folder) or turn_context (the folder of the turn)."""
    if meta:
        session = payload.get("id") or payload.get("session_id")
        if isinstance(session, str) and session:
            state["session_id"] = session
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        state["cwd"] = cwd


# -- the person ------------------------------------------------------------------------------
def is_context(text: str) -> bool:
    """Codex's own context put in a user message: AGENTS.md text, or one tag-wrapped fragment."""
    text = text.strip()
    if text.startswith(AGENTS_MD):
        return True
    opening = _FRAGMENT.match(text)
    return opening is not None and text.lower().endswith(f"</{opening.group(1).lower()}>")


def _texts(content: object) -> tuple[list[str], int]:
    """The text blocks of a message's content, and how many images it holds."""
    if isinstance(content, str):
        return [content], 0
    texts, images = [], 0
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") in ("input_image", "image"):
            images += 1
    return texts, images


def _provenance(payload: dict) -> list:
    """Each content item's provenance type (newer releases say who wrote it), or []."""
    passthrough = payload.get("internal_chat_message_metadata_passthrough")
    items = passthrough.get("content_item_metadata") if isinstance(passthrough, dict) else None
    if not isinstance(items, list):
        return []
    kinds = []
    for item in items:
        origin = item.get("provenance") if isinstance(item, dict) else None
        kinds.append(origin.get("type") if isinstance(origin, dict) else None)
    return kinds


def message(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """A response_item message: the agent's text, the person's request, or harness context."""
    role = payload.get("role")
    content = payload.get("content")
    if role == "assistant":
        state["api"] = state["human"] = None
        text = "\n".join(_texts(content)[0])
        return [Event(ASSISTANT_TEXT, *head, cut(text, TEXT_CAP))] if text.strip() else NONE
    if role == "developer":
        for text in _texts(content)[0]:
            if text.lstrip().startswith("<skills_instructions>"):
                state["skills"] = listed_skills(text)
        return NONE
    if role != "user":
        return NONE
    origins = _provenance(payload)
    texts, images = [], 0
    blocks = content if isinstance(content, list) else [{"type": "input_text", "text": content}]
    for number, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        origin = origins[number] if number < len(origins) else None
        value = block.get("text")
        if origin is not None and origin != "user":
            continue
        if isinstance(value, str):
            if origin == "user" or not is_context(value):
                texts.append(value)
        elif block.get("type") in ("input_image", "image"):
            images += 1
    return human("\n".join(texts), images, head, state)


def user_message(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """An event_msg user_message: what the person typed (images attached counted)."""
    text = payload.get("message")
    text = text if isinstance(text, str) and not is_context(text) else ""
    images = payload.get("images")
    return human(text, len(images) if isinstance(images, list) else 0, head, state)


def human(text: str, images: int, head: Head, state: dict) -> Sequence[Event]:
    """A request of the person (unless empty, or the same one reported twice) and its `$skill`s."""
    text = text.strip()
    if (not text and not images) or state.get("human") == text:
        return NONE
    state["human"], state["api"] = text, None
    events = [Event(HUMAN, *head, text=cut(text or "[image]", REQUEST_CAP), cwd=state.get("cwd"))]
    names = set(state.get("skills", {}).values()) if "$" in text else ()
    if names:
        mentioned: list[str] = []
        for token in _MENTION.findall(text):
            name = token if token in names else token.rstrip(".:-")
            if name in names and name not in mentioned and len(mentioned) < SKILLS_CAP:
                mentioned.append(name)
                events.append(Event(SKILL, *head, "", None, name, ""))  # one per message: ids by run
    return events


# -- the agent -------------------------------------------------------------------------------
def _remember(state: dict, call_id: str, name: str) -> None:
    tools = state.setdefault("tools", {})
    tools[call_id] = name
    if len(tools) > PENDING_CAP:
        del tools[next(iter(tools))]


def _call(payload: dict, head: Head, state: dict, name: str, tool_input: object, raw: str) -> Sequence[Event]:
    """A tool call (and the skill it reads), unless its call id was seen already."""
    call_id = payload.get("call_id")
    call_id = call_id if isinstance(call_id, str) else ""
    state["api"] = state["human"] = None
    if call_id and seen_before(state, call_id):
        return NONE
    if call_id:
        _remember(state, call_id, name)
    patched = _PATCH_FILE.search(raw) if "*** " in raw else None
    # Read for the model (prose), an input is summarised and redacted, as every adapter's is.
    shown = summarize_input(tool_input) if state.get("prose", True) else tool_input
    # (kind, *head, text, cwd, name, tool_use_id, input, file_path)
    events = [Event(TOOL_CALL, *head, "", None, name, call_id, shown, patched.group(1) if patched else None)]
    if "SKILL.md" in raw and not patched:  # a patch edits a SKILL.md: no reading of it
        for number, skill in enumerate(read_skills(raw, tool_input, state)):
            # once per call id and skill: the first is the call's own id
            events.append(Event(SKILL, *head, "", None, skill, f"{call_id}#{skill}" if number else call_id))
    return events


def function_call(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """A function_call (arguments: a JSON string) or custom_tool_call (input: free text)."""
    name = payload.get("name")
    name = name if isinstance(name, str) else ""
    arguments = payload.get("arguments")
    if isinstance(arguments, str):
        parsed = loads_object(arguments)
        if parsed is None:  # not JSON after all: the text itself
            return _call(payload, head, state, name, arguments, arguments)
        touches = "SKILL.md" in arguments or "*** " in arguments  # a skill read, a patch: worth a look
        return _call(payload, head, state, name, parsed, _command(parsed) if touches else "")
    free = payload.get("input")
    free = free if isinstance(free, str) else ""
    return _call(payload, head, state, name, {"input": free}, free)


def local_shell_call(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """An older release's shell call: `action.command` is the argv."""
    action = payload.get("action")
    argv = action.get("command") if isinstance(action, dict) else None
    command = " ".join(a for a in argv if isinstance(a, str)) if isinstance(argv, list) else ""
    return _call(payload, head, state, "local_shell", {"command": command}, command)


def generic_call(item_type: object) -> Handler | None:
    """Other `*_call` items (web search, tool search…) are tool calls; `*_call_output`, results."""
    if not isinstance(item_type, str):
        return None
    if item_type.endswith("_call_output"):
        return call_output
    if not item_type.endswith("_call"):
        return None

    def other_call(payload: dict, head: Head, state: dict) -> Sequence[Event]:
        name = payload.get("name")
        return _call(payload, head, state, name if isinstance(name, str) else item_type[:-5], None, "")

    return other_call


def _command(arguments: dict | None) -> str:
    """The strings of a call's arguments (the command, its workdir…), joined: what it touches."""
    if not arguments:
        return ""
    parts = []
    for value in arguments.values():
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return " ".join(parts)


# -- results and failures --------------------------------------------------------------------
def output_text(output: object) -> str:
    """A call output as text: a string, content items, or an object holding either."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return block_text(output)
    if isinstance(output, dict):
        return output_text(output.get("content") if "content" in output else output.get("output"))
    return ""


def failure(text: str) -> tuple[bool, bool, str]:
    """(is_error, rejected, error text) of a call's output."""
    head = text[:HEADER_CHARS]
    if head.startswith(REJECTED) or _ABORTED.match(head) or stopped_by_person(head):
        return False, True, ""
    marker = head.find("\nOutput:")
    header = head[:marker] if marker >= 0 else head.partition("\n")[0]
    found = _EXIT.search(header)
    if found:
        code = int(found.group(1))
        body = text[marker + len("\nOutput:\n") :] if marker >= 0 else text[len(header) :]
        return (True, False, f"exit code {code}: {body.strip()}") if code else (False, False, "")
    if head.lstrip().startswith("{") and '"exit_code"' in text:
        wrapped = loads_object(text)
        meta = wrapped.get("metadata") if wrapped else None
        status = meta.get("exit_code") if isinstance(meta, dict) else None
        if isinstance(status, int) and not isinstance(status, bool):
            inner = output_text(wrapped.get("output") if wrapped else None)
            return (True, False, f"exit code {status}: {inner.strip()}") if status else (False, False, "")
    if _FAILED.match(head):
        return True, False, text
    return False, False, ""


def call_output(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """A function_call_output / custom_tool_call_output: the call's result."""
    call_id = payload.get("call_id")
    call_id = call_id if isinstance(call_id, str) else ""
    state["human"] = None
    output = output_text(payload.get("output"))  # "" when the decoder saw it went fine
    is_error, rejected, text = failure(output) if output else (False, False, "")
    name = state.setdefault("tools", {}).pop(call_id, "")
    # (kind, *head, text, cwd, name, tool_use_id, input, file_path, is_error, rejected)
    return [
        Event(
            TOOL_RESULT,
            *head,
            head_and_tail(text, ERROR_TEXT_CAP),
            None,
            name,
            call_id,
            None,
            None,
            is_error,
            rejected,
        )
    ]


def turn_aborted(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """The person stopped the turn (or replaced it with a new request)."""
    reason = payload.get("reason")
    if reason is not None and reason not in ABORTS:
        return NONE
    state["api"] = state["human"] = None
    return [Event(INTERRUPT, *head, text=f"turn aborted: {reason or 'interrupted'}")]


def stream_error(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """Codex retrying the model service: one transient incident however many retries."""
    state["human"] = None
    events = api_incident(_error_text(payload), head, state, final=False)
    for event in events:
        event.transient = True  # the transcript's own word: Codex retries only what may pass
    return events


def error(payload: dict, head: Head, state: dict) -> Sequence[Event]:
    """The model service failed for good: the last word on an incident, or one of its own."""
    state["human"] = None
    return api_incident(_error_text(payload), head, state, final=True)


def _error_text(payload: dict) -> str:
    text = payload.get("message")
    return text if isinstance(text, str) and text else "model service error"


# -- skills ----------------------------------------------------------------------------------
def listed_skills(text: str) -> dict[str, str]:
    """Path → name of each skill a `<skills_instructions>` message lists (roots expanded)."""
    roots = dict(_ROOT.findall(text))
    skills: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("- ") and line.endswith(")") and "(file: " in line):
            continue
        name = line[2:].partition(": ")[0].strip()
        path = line.rpartition("(file: ")[2][:-1].strip()
        root, _, rest = path.partition("/")
        if root in roots:
            path = f"{roots[root].rstrip('/')}/{rest}"
        if name and len(skills) < PENDING_CAP:
            skills[os.path.normpath(path)] = name
    return skills


def read_skills(raw: str, tool_input: object, state: dict) -> list[str]:
    """The skills whose SKILL.md the call reads, in order, each once.

    With a listing, only listed skills count: a relative path is taken from the call's
    workdir (or the session's folder), and a path that still matches no listed one
    (`~/…`, another spelling) by its last folder and file when exactly one listed skill
    ends so. A rollout without a listing (some releases do not record it) names each
    skill by the folder holding its SKILL.md.
    """
    skills = state.get("skills") or {}
    base = tool_input.get("workdir") if isinstance(tool_input, dict) else None
    base = base if isinstance(base, str) and base.startswith("/") else state.get("cwd")
    found: list[str] = []
    for token in _SKILL_PATH.findall(raw):
        name = _listed(token, base, skills) if skills else token.rsplit("/", 2)[-2] if "/" in token else None
        if name and name not in found and len(found) < SKILLS_CAP:
            found.append(name)
    return found


def _listed(token: str, base: str | None, skills: dict[str, str]) -> str | None:
    if token.startswith("/") or (base and not token.startswith("~")):
        path = os.path.normpath(os.path.join(base or "/", token))  # noqa: PTH118 - pure path logic
        if path in skills:
            return skills[path]
    tail = "/" + "/".join(token.rsplit("/", 2)[-2:])
    names = {name for listed, name in skills.items() if listed.endswith(tail)}
    return names.pop() if len(names) == 1 else None


RESPONSE_ITEMS: dict[str, Handler] = {
    "message": message,
    "function_call": function_call,
    "custom_tool_call": function_call,
    "local_shell_call": local_shell_call,
    "function_call_output": call_output,
    "custom_tool_call_output": call_output,
}
EVENT_MESSAGES: dict[str, Handler] = {
    "user_message": user_message,
    "turn_aborted": turn_aborted,
    "stream_error": stream_error,
    "error": error,
}
