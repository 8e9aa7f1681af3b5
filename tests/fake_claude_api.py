"""A fake Anthropic Messages API with SSE streaming on 127.0.0.1, for the real `claude` CLI.

Claude Code (2.1.x) sends `POST /v1/messages?beta=true` with `"stream": true` for every
model turn of its agent loop and reads the answer as server-sent events: `message_start`,
then per content block `content_block_start` / `content_block_delta`... / `content_block_stop`,
then `message_delta` (stop reason, output tokens) and `message_stop`. This server answers
those from a script: a queue of turns, each a list of content blocks (text, `tool_use`),
queued by the test in the order the agent loop will ask for them (`text`, `tool`). Every
request is recorded, whatever its method and path, so a test can inspect how the CLI shaped
it (system prompt, messages, tools, headers).

Requests that are not agent turns are answered without touching the script:
`/v1/messages/count_tokens` gets a token count, a non-streaming or tool-less `/v1/messages`
(a side query such as a title) a short text, HEAD and any other GET a 200 with an empty
JSON body. When the script is empty, an agent turn is answered with a text saying so (so the
CLI ends the session instead of retrying) and noted in `unscripted`; `check_done()` fails
the test for it and for turns left unused.

The fixture `fake_claude_api` is shared through tests/conftest.py.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests import fake_http

UNSCRIPTED = "fake server: no turn was scripted for this request"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Recorded(fake_http.Recorded):
    """A request to the Messages API."""

    def is_turn(self) -> bool:
        """A streamed model call with tools: what Claude Code's agent loop sends."""
        return (
            self.method == "POST"
            and self.route == "/v1/messages"
            and isinstance(self.body, dict)
            and self.body.get("stream") is True
            and bool(self.body.get("tools"))
        )

    def text(self) -> str:
        """Every text the request carries to the model (system prompt and messages), joined."""
        body = self.body if isinstance(self.body, dict) else {}
        parts = list(_texts(body.get("system")))
        for message in body.get("messages") or []:
            parts.extend(_texts(message.get("content")))
        return "\n".join(parts)


def _texts(content: Any):
    """The text in a system prompt or message content: a string or a list of blocks, nested."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    yield block["text"]
                if "content" in block:  # tool_result blocks
                    yield from _texts(block["content"])


@dataclass
class Turn:
    """One scripted model answer: its content blocks (text / tool_use)."""

    content: list[dict[str, Any]]
    model_id: str = field(default_factory=lambda: f"msg_fake{next(_ids):06d}")

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.content) else "end_turn"


class FakeClaudeAPI(fake_http.ScriptedServer):
    """The server; `url` is ANTHROPIC_BASE_URL (no `/v1`: the CLI adds it)."""

    recorded = Recorded

    def __init__(self) -> None:
        super().__init__(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def unscripted_turn(self) -> Turn:
        return Turn([{"type": "text", "text": UNSCRIPTED}])

    # -- the script -------------------------------------------------------------------
    def text(self, text: str) -> None:
        """Queue a turn that answers with text and ends the agent's turn."""
        self._script.append(Turn([{"type": "text", "text": text}]))

    def tool(self, name: str, tool_input: dict[str, Any], *, text: str | None = None) -> str:
        """Queue a turn that calls one tool (after an optional text); returns its tool_use id."""
        tool_id = f"toolu_fake{next(_ids):06d}"
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self._script.append(Turn(blocks))
        return tool_id


def sse_events(turn: Turn, model: str) -> list[tuple[str, dict[str, Any]]]:
    """The event stream of one turn, as the Messages API sends it (deltas in small pieces)."""
    usage = {
        "input_tokens": 50,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": turn.model_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(turn.content):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
        elif block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _pieces(json.dumps(block["input"]))
            ]
        else:
            raise ValueError(f"no stream for a {block['type']!r} block")
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        events.extend(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 10},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _pieces(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class Handler(fake_http.Handler):
    json_headers = {"request-id": "req_fake"}

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
        self.record()
        self.send_json(200, {}, head=True)

    def do_GET(self) -> None:  # noqa: N802
        self.record()
        self.send_json(200, {})

    def do_POST(self) -> None:  # noqa: N802
        recorded, turn = self.record()
        body = recorded.body if isinstance(recorded.body, dict) else {}
        model = str(body.get("model") or "claude-fake")
        if recorded.route == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": 50})
        elif recorded.route != "/v1/messages":
            error = {"type": "error", "error": {"type": "not_found_error", "message": "no route"}}
            self.send_json(404, error)
        elif turn is None:  # a side query (no tools, or not streamed): a short answer
            side = Turn([{"type": "text", "text": "Fake side answer"}])
            if body.get("stream"):
                self._stream(side, model)
            else:
                self.send_json(
                    200,
                    {
                        "id": side.model_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": side.content,
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": 5, "output_tokens": 3},
                    },
                )
        else:
            self._stream(turn, model)

    def _stream(self, turn: Turn, model: str) -> None:
        headers = {"content-type": "text/event-stream; charset=utf-8", "request-id": f"req_{turn.model_id}"}
        self.send_events(sse_events(turn, model), headers)


@pytest.fixture
def fake_claude_api():
    """A running FakeClaudeAPI for one test; closed afterwards."""
    api = FakeClaudeAPI()
    try:
        yield api
    finally:
        api.close()
