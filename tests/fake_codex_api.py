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
import threading
from collections import deque
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

UNSCRIPTED = "fake server: no turn was scripted for this request"
SHELL_TOOL = "exec_command"  # Codex 0.171's shell tool (older releases: `shell`)
_ids = itertools.count(1)


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it (header names lower-cased; body parsed when JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    turn: int | None = None  # the index of the scripted turn it was answered with

    @property
    def route(self) -> str:
        return self.path.split("?")[0]

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

    def tool_names(self) -> list[str]:
        body = self.body if isinstance(self.body, dict) else {}
        return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


class FakeCodexAPI:
    """The server; `url` is the provider's `base_url` (with `/v1`)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.unscripted: list[Recorded] = []
        self._script: deque[list[dict[str, Any]]] = deque()
        self._turns_served = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- the script -------------------------------------------------------------------
    def text(self, text: str) -> None:
        """Queue a turn that answers with text (and so ends the agent's turn)."""
        self._script.append(
            [
                {
                    "type": "message",
                    "id": f"msg_fake{next(_ids):06d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ]
        )

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

    def turns(self) -> list[Recorded]:
        """The agent-loop requests, in order (each answered with one scripted turn)."""
        with self._lock:
            return [r for r in self.requests if r.turn is not None]

    def check_done(self) -> None:
        """Every scripted turn was asked for, and nothing beyond the script."""
        with self._lock:
            left, extra = len(self._script), list(self.unscripted)
        assert not extra, (
            f"{len(extra)} turn(s) beyond the script; the last asked:\n{extra[-1].text()[-2000:]}"
        )
        assert not left, f"{left} scripted turn(s) never asked for (the CLI stopped early?)"

    # -- serving ----------------------------------------------------------------------
    def _answer(self, recorded: Recorded) -> tuple[Recorded, list[dict[str, Any]] | None]:
        with self._lock:
            items = None
            if recorded.is_turn():
                if self._script:
                    items = self._script.popleft()
                    recorded = replace(recorded, turn=self._turns_served)
                    self._turns_served += 1
                else:
                    self.unscripted.append(recorded)
                    items = [
                        {
                            "type": "message",
                            "id": f"msg_fake{next(_ids):06d}",
                            "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": UNSCRIPTED, "annotations": []}],
                        }
                    ]
            self.requests.append(recorded)
            return recorded, items

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


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


def _handler_for(api: FakeCodexAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _record(self) -> tuple[Recorded, list[dict[str, Any]] | None]:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            return api._answer(Recorded(self.command, self.path, headers, body))

        def _json(self, doc: Any) -> None:
            data = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._record()
            self._json({"object": "list", "data": [], "models": []})

        def do_POST(self) -> None:  # noqa: N802
            recorded, items = self._record()
            if items is None:
                self._json({})
                return
            body = recorded.body if isinstance(recorded.body, dict) else {}
            try:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for event in sse_events(items, str(body.get("model") or "gpt-fake")):
                    chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                pass  # the CLI went away mid-stream: nothing left to tell it

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

    return Handler


@pytest.fixture
def fake_codex_api():
    """A running FakeCodexAPI for one test; closed afterwards."""
    api = FakeCodexAPI()
    try:
        yield api
    finally:
        api.close()
