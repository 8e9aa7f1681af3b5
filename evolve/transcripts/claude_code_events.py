"""Claude Code lines, once parsed, → normalized events (the semantics; no byte handling).

claude_code.py decodes a line (the keys that matter); this module turns it into events and
keeps the adapter state: pending tool names, assistant-block dedupe keys, the open
API-error incident and a typed slash command waiting for the agent to act on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from zlib import crc32

from evolve.transcripts.model import (
    ANSWER,
    API_ERROR,
    ASSISTANT_TEXT,
    ERROR_TEXT_CAP,
    FEEDBACK,
    HUMAN,
    INTERRUPT,
    MARKER,
    REPLY,
    REQUEST_CAP,
    SKILL,
    TEXT_CAP,
    TOOL_CALL,
    TOOL_RESULT,
    WRITE_TOOLS,
    Event,
    Head,
    block_text,
    cut,
    error_object_text,
    head_and_tail,
    stopped_by_person,
    summarize_input,
    written_path,
)
from evolve.transcripts.redact import redact

SEEN_CAP = 256  # recent assistant block keys kept for dedupe
# A Head, or the same fields as a plain tuple.
HeadFields = tuple[str, str | None, int, int, str | None, str | None]
PENDING_CAP = 512  # tool_use ids awaiting a result
NONE: tuple[Event, ...] = ()

REJECTED = "User rejected tool use"  # toolUseResult of a call the user refused
ASK_TOOL = "AskUserQuestion"  # its result holds the person's answers
LABELS_CAP = 64  # option labels remembered per question asked
_SAID = "To tell you how to proceed, the user said:"  # rejection feedback follows it
_CLARIFY = "The user wants to clarify these questions"  # the CLI's words, not the person's
_ANSWER_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')
_REJECT = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
)
_NOT_HUMAN = (
    "<local-command-",
    "<task-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-memory-input>",
    "Caveat: The messages below were generated",
)
_CONTEXT_BLOCKS = re.compile(
    r"<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics)>.*?</\1>", re.DOTALL
)
_COMMAND_NAME = re.compile(r"<command-name>\s*([^<]*?)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)


def withhold(state: dict, events: Sequence[Event], uuid: str | None, end: int) -> Sequence[Event]:
    """While a slash command waits for the agent, hold back its uuid-only followers."""
    cmd = state.get("cmd")
    if cmd is None:
        return events
    if uuid:
        cmd["last_uuid"] = uuid
    cmd["last_end"] = end
    return NONE


def confirm(state: dict, events: Sequence[Event]) -> Sequence[Event]:
    """The agent acted: a waiting slash command becomes the human request of a new run."""
    cmd = state.get("cmd")
    if cmd is None:
        return events
    state["cmd"] = None
    first = [
        Event(
            HUMAN,
            cmd["session_id"],
            cmd["timestamp"],
            cmd["offset"],
            cmd["end"],
            cmd["uuid"],
            cmd["parent_uuid"],
            text=cmd["text"],
            cwd=cmd["cwd"],
        )
    ]
    if cmd.get("last_uuid") and cmd["last_uuid"] != cmd["uuid"]:
        first.append(Event(MARKER, cmd["session_id"], None, cmd["offset"], cmd["last_end"], cmd["last_uuid"]))
    return [*first, *events]


def _cancel(state: dict, head: Head, with_line: bool) -> list[Event]:
    """A waiting slash command was local: its lines (+ this one) stay with the previous run."""
    cmd = state.get("cmd")
    if cmd is None:
        return []
    state["cmd"] = None
    uuid, end = cmd.get("last_uuid"), cmd["last_end"]
    if with_line:
        uuid, end = head.uuid or uuid, head.end
    if not uuid:
        return []
    return [Event(MARKER, cmd["session_id"], None, cmd["offset"], end, uuid)]


def assistant_events(obj: dict, message: dict, head: Head, state: dict) -> Sequence[Event]:
    """Events of an assistant line: text, tool calls (+ skills), or an API error message."""
    content = message.get("content")
    if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
        text = block_text(content) if content is not None else ""
        if obj.get("isApiErrorMessage") or text.startswith("API Error"):
            return confirm(state, api_incident(text or "API Error", head, state, final=True))
    state["api"] = None  # the model answered: any retry sequence is over
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    elif not isinstance(content, list):
        content = []
    msg_id = message.get("id")
    prefix = f"{msg_id}|{obj.get('requestId')}|" if isinstance(msg_id, str) else None
    events: list[Event] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "tool_use":
            tool_call(block.get("id"), block.get("name"), block.get("input"), prefix, head, state, events)
        elif btype == "text":
            said(block.get("text"), prefix, head, state, events)
    return finish(events, head, state)


def seen_before(state: dict, key: str) -> bool:
    """True when this assistant block was seen already (same message, request and block)."""
    seen = state.get("seen")
    if seen is None:
        seen = state["seen"] = {}
    if key in seen:
        return True
    seen[key] = 1
    if len(seen) > SEEN_CAP:
        del seen[next(iter(seen))]
    return False


# What Claude Code writes for a text block the model left empty: no words of the agent's (its
# first words after a message are the answer to it, the words before one are what it asked)
NO_CONTENT = "(no content)"


def said(text: object, prefix: str | None, head: HeadFields, state: dict, events: list[Event]) -> None:
    """A text block: one assistant_text event, unless empty or a duplicate.

    `head` is a Head or a plain tuple of its fields.
    """
    if not isinstance(text, str) or not text or text.isspace() or text == NO_CONTENT:  # strip() would copy it
        return
    # the block by its length and a checksum of its start, never its words (the cursor's
    # state is kept in state.db)
    if prefix is not None and seen_before(
        state, f"{prefix}t{len(text)}:{crc32(text[:48].encode('utf-8', 'surrogatepass')):08x}"
    ):
        return
    events.append(Event(ASSISTANT_TEXT, *head, cut(text, TEXT_CAP)))


def tool_call(
    raw_id: object,
    raw_name: object,
    tool_input: object,
    prefix: str | None,
    head: HeadFields,
    state: dict,
    events: list[Event],
) -> None:
    """A tool_use block: a tool_call event (+ a skill event for `Skill`), unless a duplicate.

    With `state["prose"]` False (observing: only facts are kept) the input is left whole;
    RunBuilder summarises it only while the run's tool_inputs_text has room.
    """
    tool_id = raw_id if isinstance(raw_id, str) else ""
    if prefix is not None and seen_before(state, prefix + tool_id):
        return
    name = raw_name if isinstance(raw_name, str) else ""
    if tool_id:
        tools = state.setdefault("tools", {})
        tools[tool_id] = name
        if len(tools) > PENDING_CAP:
            del tools[next(iter(tools))]
    if name == ASK_TOOL and tool_id:
        asks = state.setdefault("asks", {})
        asks[tool_id] = _option_labels(tool_input)
        if len(asks) > PENDING_CAP:
            del asks[next(iter(asks))]
    shown = summarize_input(tool_input) if state.get("prose", True) else tool_input
    # (kind, *head, text, cwd, name, tool_use_id, input, file_path)
    events.append(
        Event(
            TOOL_CALL,
            *head,
            "",
            None,
            name,
            tool_id,
            shown,
            written_path(name, tool_input) if name in WRITE_TOOLS else None,
        )
    )
    if name == "Skill" and isinstance(tool_input, dict):
        skill = tool_input.get("skill") or tool_input.get("command")
        if isinstance(skill, str) and skill:
            events.append(Event(SKILL, *head, "", None, skill, tool_id))


def _option_labels(tool_input: object) -> list[str]:
    """The labels of the options an AskUserQuestion call offered (an answer equal to one was picked)."""
    questions = tool_input.get("questions") if isinstance(tool_input, dict) else None
    labels: list[str] = []
    for question in questions if isinstance(questions, list) else ():
        options = question.get("options") if isinstance(question, dict) else None
        for option in options if isinstance(options, list) else ():
            label = option.get("label") if isinstance(option, dict) else None
            if isinstance(label, str) and len(labels) < LABELS_CAP:
                labels.append(label)
    return labels


def finish(events: list[Event], head: HeadFields, state: dict) -> Sequence[Event]:
    """An assistant line's events: a marker when it had none, after a waiting command."""
    if not events and head[4]:  # the uuid
        events.append(Event(MARKER, *head))
    return confirm(state, events) if state.get("cmd") else events


def user_events(obj: dict, message: dict, head: Head, state: dict) -> Sequence[Event]:
    """Events of a user line: tool results, an interrupt, a request, or nothing."""
    content = message.get("content")
    results = []
    texts = []
    images = 0
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                results.append(block)
            elif btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype == "image":
                images += 1
    if results:
        state["api"] = None
        return confirm(state, _tool_results(obj, results, head, state))
    marker = [Event(MARKER, *head)] if head.uuid else []
    if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
        return withhold(state, marker, head.uuid, head.end)
    text = "\n".join(texts).strip()
    if stopped_by_person(text):
        state["api"] = None
        return confirm(state, [Event(INTERRUPT, *head, text=text[:200])])
    if text.startswith("<command-") and "<command-name>" in text[:4000]:
        previous = _cancel(state, head, False)
        name = _COMMAND_NAME.search(text)
        args = _COMMAND_ARGS.search(text)
        request = (name.group(1) if name else "/").strip()
        if args and args.group(1).strip():
            request = f"{request} {args.group(1).strip()}"
        state["cmd"] = {
            **head._asdict(),
            "text": redact(cut(request, REQUEST_CAP)),  # kept in the cursor's state
            "cwd": obj.get("cwd") if isinstance(obj.get("cwd"), str) else None,
            "last_uuid": head.uuid,
            "last_end": head.end,
        }
        return previous
    if text.startswith("<local-command-") and state.get("cmd"):
        return _cancel(state, head, True)
    if text.startswith(_NOT_HUMAN):
        return withhold(state, marker, head.uuid, head.end)
    if "<" in text:
        text = _CONTEXT_BLOCKS.sub("", text).strip()
    if not text and not images:
        return withhold(state, marker, head.uuid, head.end)
    previous = _cancel(state, head, False)
    state["api"] = None
    cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
    return [*previous, Event(HUMAN, *head, text=cut(text or "[image]", REQUEST_CAP), cwd=cwd)]


def _tool_results(obj: dict, results: list[dict], head: Head, state: dict) -> list[Event]:
    summary = obj.get("toolUseResult")
    events = []
    for block in results:
        raw_id = block.get("tool_use_id")
        is_error = block.get("is_error") is True
        if not is_error and len(results) == 1 and isinstance(summary, str) and summary.startswith("Error: "):
            is_error = True
        content = block.get("content")  # None unless it may be an error's text or an answer
        text = "" if content is None else block_text(content)
        result = tool_result(raw_id if isinstance(raw_id, str) else "", text, is_error, summary, head, state)
        events.append(result)
        if result.rejected or state.get("asks"):  # else no reply: most results
            reply = _reply(result, text, summary, head, state)
            if reply is not None:
                events.append(reply)
    return events


def _reply(result: Event, text: str, summary: object, head: Head, state: dict) -> Event | None:
    """The person's words in a tool result: answers to the agent's question, rejection feedback."""
    labels = state["asks"].pop(result.tool_use_id, None) if state.get("asks") else None
    if result.rejected:
        said = text.partition(_SAID)[2].strip()
        if not said or said.startswith(_CLARIFY):
            return None
        said = cut(said, REQUEST_CAP)
        return Event(REPLY, *head, text=said, name=FEEDBACK, tool_use_id=result.tool_use_id, typed=said)
    if labels is None or result.is_error:
        return None
    answers = summary.get("answers") if isinstance(summary, dict) else None
    if isinstance(answers, dict):
        pairs = [(str(q), str(a)) for q, a in answers.items()]
    else:
        pairs = _ANSWER_PAIR.findall(text)
    if not pairs:
        return None
    offered = set(labels)
    shown, typed = [], []
    for question, answer in pairs:
        picked = answer in offered or all(part in offered for part in answer.split(", "))
        shown.append(f'"{question}" → "{answer}"' + ("" if picked else " (typed)"))
        if not picked:
            typed.append(answer)
    return Event(
        REPLY,
        *head,
        text=cut("; ".join(shown), REQUEST_CAP),
        name=ANSWER,
        tool_use_id=result.tool_use_id,
        typed=cut("\n".join(typed), REQUEST_CAP),
    )


def tool_result(
    tool_id: str, text: str, is_error: bool, summary: object, head: HeadFields, state: dict
) -> Event:
    """A tool_result event; `summary` is the line's toolUseResult (a rejection says so).

    A call the person rejected, or stopped while it ran, is an abort, not an error.
    """
    rejected = summary == REJECTED or (
        is_error and (any(phrase in text[:400] for phrase in _REJECT) or stopped_by_person(text))
    )
    if rejected:
        is_error = False
    if is_error and not text:
        text = summary if isinstance(summary, str) else "error"
    text = head_and_tail(text, ERROR_TEXT_CAP) if is_error else ""
    # (kind, *head, text, cwd, name, tool_use_id, input, file_path, is_error, rejected, transient)
    return Event(
        TOOL_RESULT,
        *head,
        text,
        None,
        state.setdefault("tools", {}).pop(tool_id, ""),
        tool_id,
        None,
        None,
        is_error,
        rejected,
    )


def api_error_events(obj: dict, head: Head, state: dict) -> Sequence[Event]:
    """Events of a `system/api_error` retry line: one api_error per incident."""
    attempt = obj.get("retryAttempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0
    if attempt == 1:
        state["api"] = None  # a new retry sequence
    text = error_object_text(obj.get("error")) or error_object_text(obj.get("content")) or "API error"
    return confirm(state, api_incident(text, head, state, final=False, attempt=attempt))


def api_incident(text: str, head: Head, state: dict, final: bool, attempt: int = 0) -> list[Event]:
    """One event per incident: the first line of a retry sequence, or the final message."""
    text = head_and_tail(text, ERROR_TEXT_CAP)
    incident = state.get("api")
    if incident is not None:
        state["api"] = None if final else incident
        if final:  # the final word on an incident already counted
            return [Event(API_ERROR, *head, text=text, continued=True)]
        return [Event(MARKER, *head)] if head.uuid else []
    state["api"] = None if final else {"open": True}
    return [Event(API_ERROR, *head, text=text, attempt=attempt)]
