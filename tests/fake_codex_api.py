"""A fake OpenAI Responses API with SSE streaming on 127.0.0.1, for the real `codex` CLI.

Codex (0.171) sends `POST /v1/responses` with `"stream": true` for every model turn and
reads the answer as server-sent events: `response.created`, then per output item
`response.output_item.added` / `response.output_item.done`, then `response.completed`
carrying the whole response (its `output` items and `usage`). An output item is a
`message` (`output_text` content) or a `function_call` (`name`, `call_id`, `arguments` as a
JSON string). This server answers those from a script: a queue of turns queued by the test
in the order the agent loop asks for them (`text`, `command`). Every request is recorded,
whatever its method and path, so a test can read what the CLI sent (instructions, input
items, tools).

Anything else (a GET for models, a POST elsewhere) gets a 200 with an empty JSON list or
object. When the script is empty a turn is answered with a text saying so (the CLI then
ends its turn) and noted in `unscripted`; `check_done()` fails the test for it and for
turns left unused.

The fixture `fake_codex_api` is shared through tests/conftest.py.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests import fake_http

UNSCRIPTED = "fake server: no turn was scripted for this request"
SHELL_TOOL = "exec_command"  # Codex 0.171's shell tool (older releases: `shell`)
_ids = itertools.count(1)


@dataclass(frozen=True)
class Recorded(fake_http.Recorded):
    """A request to the Responses API."""

    def is_turn(self) -> bool:
        """A streamed model call: what Codex's agent loop sends."""
        return (
            self.method == "POST"
            and self.route.endswith("/responses")
            and isinstance(self.body, dict)
            and self.body.get("stream") is True
        )

    def text(self) -> str:
        """Every text the request carries to the model (instructions and input items), joined."""
        body = self.body if isinstance(self.body, dict) else {}
        parts = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
        for item in body.get("input") or []:
            if not isinstance(item, dict):
                continue
            for block in item.get("content") or []:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    parts.append(block["text"])
            if isinstance(item.get("output"), str):
                parts.append(item["output"])
        return "\n".join(parts)

    def outputs(self) -> dict[str, str]:
        """call_id → the output text of every function call result the request carries."""
        body = self.body if isinstance(self.body, dict) else {}
        return {
            item["call_id"]: item.get("output") if isinstance(item.get("output"), str) else json.dumps(item)
            for item in body.get("input") or []
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        }


class FakeCodexAPI(fake_http.ScriptedServer):
    """The server; `url` is the provider's `base_url` (with `/v1`)."""

    recorded = Recorded

    def __init__(self) -> None:
        super().__init__(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def unscripted_turn(self) -> list[dict[str, Any]]:
        return [_message(UNSCRIPTED)]

    # -- the script -------------------------------------------------------------------
    def text(self, text: str) -> None:
        """Queue a turn that answers with text (and so ends the agent's turn)."""
        self._script.append([_message(text)])

    def command(self, cmd: str) -> str:
        """Queue a turn that runs one shell command; returns its call id."""
        call_id = f"call_fake{next(_ids):06d}"
        self._script.append(
            [
                {
                    "type": "function_call",
                    "id": f"fc_fake{next(_ids):06d}",
                    "status": "completed",
                    "call_id": call_id,
                    "name": SHELL_TOOL,
                    "arguments": json.dumps({"cmd": cmd}),
                }
            ]
        )
        return call_id


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_fake{next(_ids):06d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def sse_events(items: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """The event stream of one turn, as the Responses API sends it."""
    response_id = f"resp_fake{next(_ids):06d}"
    base = {"id": response_id, "object": "response", "model": model, "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": base}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {
        "input_tokens": 50,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 55,
    }
    events.append(
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": items, "usage": usage},
        }
    )
    return events


class Handler(fake_http.Handler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.record()
        self.send_json(200, {"object": "list", "data": [], "models": []})

    def do_POST(self) -> None:  # noqa: N802
        recorded, items = self.record()
        if items is None:
            self.send_json(200, {})
            return
        body = recorded.body if isinstance(recorded.body, dict) else {}
        events = sse_events(items, str(body.get("model") or "gpt-fake"))
        self.send_events([(event["type"], event) for event in events], {"content-type": "text/event-stream"})


@pytest.fixture
def fake_codex_api():
    """A running FakeCodexAPI for one test; closed afterwards."""
    api = FakeCodexAPI()
    try:
        yield api
    finally:
        api.close()
