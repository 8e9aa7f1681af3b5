"""The Python API for agents built on the anthropic SDK: memo and skills in, runs out.

    from evolve.api import open_agent

    agent = open_agent("helper", create=True)
    session = agent.session()
    system = session.system_prompt("You are a careful assistant.")   # + memo + skill index
    ...  # the agent's loop, with `messages` as sent to client.messages.create
    session.record_run(messages)            # after every turn: only new messages are added
    session.record_skill_read("fix-flaky-tests", tool_use_id=block.id)

A session's messages are kept as a transcript in evolve's generic format under
`<home>/transcripts/<agent>/<session>.jsonl` and observed like any transcript, so runs,
signals and the reflection bundle see an API agent exactly as they see Claude Code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evolve import clock
from evolve.errors import UserError
from evolve.home import Home
from evolve.names import check_name
from evolve.workspace.agent import Agent

_SESSION_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def open_agent(
    name: str, home: Home | str | os.PathLike[str] | None = None, create: bool = False
) -> AgentHandle:
    """An agent of the home (default: $EVOLVE_HOME); `create=True` makes it if missing."""
    home = home if isinstance(home, Home) else Home.resolve(home)
    check_name(name, "agent")
    if create and not (home.agent_dir(name) / ".git").is_dir():
        return AgentHandle(Agent.create(name, home))
    return AgentHandle(Agent.open(name, home))


class AgentHandle:
    """One agent, for an application: open sessions on it."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def home(self) -> Home:
        return self.agent.home

    @property
    def skills_dir(self) -> Path:
        return self.agent.skills_dir

    def session(
        self,
        session_id: str | None = None,
        cwd: str | None = None,
        skill_tools: Sequence[str] = ("Skill", "read_skill"),
    ) -> Session:
        """A conversation; `skill_tools` are tool names whose `{"skill": name}` input reads a skill."""
        return Session(self, session_id or os.urandom(16).hex(), cwd, tuple(skill_tools))


class Session:
    """One conversation of the agent: the system prompt in, the messages out."""

    def __init__(
        self, agent: AgentHandle, session_id: str, cwd: str | None, skill_tools: tuple[str, ...]
    ) -> None:
        if not (
            0 < len(session_id) <= 128
            and set(session_id) <= _SESSION_CHARS
            and not session_id.startswith(".")
        ):
            raise UserError(f"session id {session_id[:80]!r}: use 1-128 of A-Z a-z 0-9 . _ -")
        self.agent, self.id, self.cwd, self.skill_tools = agent, session_id, cwd, skill_tools
        self._digests: list[str | None] | None = None  # per recorded message (see _recorded)
        self._aligned: int | None = None  # the caller's list length at the last record_run

    @property
    def transcript_path(self) -> Path:
        return self.agent.home.root / "transcripts" / self.agent.name / f"{self.id}.jsonl"

    def system_prompt(self, base: str = "") -> str:
        """`base`, then the memo and the skill index; records an impression per listed skill."""
        from evolve.session.prompt import render

        text = render(self.agent.home, self.agent.name, session=self.id, record=True).text.strip()
        if not text:
            return base
        return f"{base.rstrip()}\n\n{text}\n" if base.strip() else text + "\n"

    def record_run(self, messages: Sequence[Any], *, cwd: str | None = None) -> dict:
        """Add the messages not recorded yet (pass the whole list each time) and observe them.

        Messages are Messages API dicts or SDK objects: user text, assistant text and
        tool_use blocks, tool_result blocks with `is_error`. Returns what observing found.
        The list may be trimmed or summarised between calls: what is new is found by the
        messages' content, not their positions, so no turn is dropped.
        """
        from evolve.observe import ingest as observe
        from evolve.observe.records import drain_pending
        from evolve.store import ledger
        from evolve.transcripts import classify

        messages = _checked(messages)
        digests = [_digest(m) for m in messages]
        recorded = self._recorded()
        fresh = _new_since(digests, recorded, self._aligned)
        lines = _lines(
            messages[fresh:], digests[fresh:], len(recorded), self.id, cwd or self.cwd, self.skill_tools
        )
        if lines:
            path = self.transcript_path
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as handle:
                handle.write("".join(lines))
        recorded.extend(digests[fresh:])
        self._aligned = len(messages)
        with ledger.opened(self.agent.home.state_db) as conn:
            drain_pending(conn, self.agent.home)  # the impressions system_prompt spooled
            if not self.transcript_path.exists():
                return observe.ObserveResult().to_dict()
            return observe.observe(
                conn,
                self.agent.name,
                [(str(self.transcript_path), "api")],  # the generic format; "api" its source
                classifier=classify.for_signals(self.agent.agent.config.signals),
            ).to_dict()

    def record_skill_read(self, name: str, tool_use_id: str | None = None) -> bool:
        """The agent read a skill: one invocation (the same tool-use id counts once).

        False, and nothing counted, when the agent has no such skill (a name it made up).
        """
        from evolve.metrics.usage import record_skill_read
        from evolve.store import ledger

        check_name(name, "skill")
        if not (self.agent.skills_dir / name / "SKILL.md").is_file():
            return False
        with ledger.opened(self.agent.home.state_db) as conn:
            return record_skill_read(
                conn, self.agent.name, name, self.id, tool_use_id=tool_use_id, source="api"
            )

    def _recorded(self) -> list[str | None]:
        """The digest of every message the transcript holds, in order (read back once per session).

        Lines carry their message's number (`msg`) and digest; a message that made no line
        (nothing evolve reads) is None.
        """
        if self._digests is None:
            self._digests = []
            try:
                with self.transcript_path.open(encoding="utf-8") as handle:
                    for raw in handle:
                        line = json.loads(raw)
                        number = int(line["msg"])
                        self._digests += [None] * (number + 1 - len(self._digests))
                        self._digests[number] = line.get("digest")
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass
        return self._digests


_ALIGN_CONTEXT = 3  # messages that must match before a position counts as "already recorded"


def _checked(messages: object) -> list[Any]:
    """The messages as a list, or TypeError naming what was passed instead."""
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
        raise TypeError(
            "record_run takes the conversation as a list of messages (dicts or SDK objects with "
            f"'role' and 'content'), got {type(messages).__name__}"
        )
    items = list(messages)
    for index, message in enumerate(items):
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        if role not in ("user", "assistant"):
            raise TypeError(
                f"record_run: message {index} is {type(message).__name__} {str(message)[:60]!r}, "
                "not a message with role 'user' or 'assistant'"
            )
    return items


def _plain(value: Any, depth: int = 0) -> Any:
    """JSON-able content of a message, dicts or SDK objects, cut 64 levels deep (digest only)."""
    if depth > 64:  # a nested-too-deep input must never raise RecursionError
        return "…"
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(exclude_none=True), depth + 1)
    return repr(value)


def _digest(message: Any) -> str:
    """What a message says (role and content), as a short hash: equal content, equal digest."""
    import hashlib

    role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    text = json.dumps([role, _plain(content)], sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _new_since(digests: list[str], recorded: list[str | None], aligned: int | None) -> int:
    """Where the messages not recorded yet start in `digests`.

    The caller's list usually only grew since the last call (`aligned`: its length then).
    Otherwise it was trimmed or summarised, or a new process resumes the session: the
    recorded tail is looked for by content, the best match (most messages agreeing before
    it) wins, an earlier one on a tie (recording a message twice beats dropping one), and
    a list that shares nothing with what was recorded is new from its start.
    """
    known = [d for d in recorded if d is not None]
    if not known:  # nothing yet, or a transcript from before digests: positions are all there is
        return min(len(recorded), len(digests))
    if aligned is not None and 0 < aligned <= len(digests) and digests[aligned - 1] == known[-1]:
        return aligned
    best, best_overlap = 0, 0
    for end in range(len(digests)):
        if digests[end] != known[-1]:
            continue
        overlap = 0
        while (
            overlap <= end
            and overlap < len(known)
            and overlap < _ALIGN_CONTEXT
            and digests[end - overlap] == known[-1 - overlap]
        ):
            overlap += 1
        if overlap > best_overlap:
            best, best_overlap = end + 1, overlap
    return best


def _lines(
    messages: list[Any],
    digests: list[str],
    first: int,
    session: str,
    cwd: str | None,
    skill_tools: tuple[str, ...],
) -> list[str]:
    """Generic-format lines (docs/transcript-format.md) for messages numbered from `first`."""
    from evolve.transcripts import model
    from evolve.transcripts.messages import message_events

    now = clock.now_stamp()
    lines = []
    for event in message_events(messages, session, cwd, now, skill_tools):
        if event.kind == model.HUMAN:
            line: dict[str, Any] = {"type": "user", "text": event.text, "cwd": event.cwd}
        elif event.kind == model.ASSISTANT_TEXT:
            line = {"type": "assistant", "text": event.text}
        elif event.kind == model.TOOL_CALL:
            line = {
                "type": "tool_call",
                "tool": event.name,
                "call_id": event.tool_use_id,
                "input": event.input,
                "writes": event.file_path,
            }
        elif event.kind == model.TOOL_RESULT:
            line = {
                "type": "tool_result",
                "tool": event.name,
                "call_id": event.tool_use_id,
                "error": event.is_error,
                "output": event.text,
                "rejected": event.rejected,
                "transient": event.transient,
            }
        elif event.kind == model.SKILL:
            line = {"type": "skill", "name": event.name, "call_id": event.tool_use_id}
        elif event.kind == model.INTERRUPT:
            line = {"type": "interrupt", "text": event.text}
        else:
            continue
        line.update(ts=now, session=session, msg=first + event.offset, digest=digests[event.offset])
        lines.append(json.dumps({k: v for k, v in line.items() if v is not None}, ensure_ascii=False) + "\n")
    return lines
