"""A fake Anthropic Messages API on 127.0.0.1, so the real SDK is tested over real HTTP.

`POST /v1/messages` records each request (path, headers, JSON body, the Host it was sent
to) and answers from a queue of canned responses: a `tool_use` answer built from an input
dict, a text-only answer, an Anthropic-shaped error with a status code, or a raw body for
malformed cases; any of them can be delayed to trigger client timeouts. An empty queue
answers 500, so a test that forgot to queue fails loudly instead of hanging.

The fixture `fake_messages_api` is shared through tests/conftest.py.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Canned:
    """One queued response: status, body bytes, extra headers, delay in seconds."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def host(self) -> str:
        return self.headers.get("host", "")


class FakeMessagesAPI:
    """The server; `url` is the base_url to configure (no `/v1`: the SDK adds it)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queue: deque[Canned] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- queueing ---------------------------------------------------------------------
    def reply_tool(
        self,
        tool_input: Any,
        *,
        name: str = "apply_reflection",
        model: str = "claude-fake-1",
        input_tokens: int = 1200,
        output_tokens: int = 80,
        stop_reason: str = "tool_use",
        text: str | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue a message whose content is (optional text and) one tool_use block."""
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content.append({"type": "tool_use", "id": "toolu_fake01", "name": name, "input": tool_input})
        self.reply_message(
            content,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            stop_reason=stop_reason,
            delay=delay,
        )

    def reply_text(self, text: str, *, stop_reason: str = "end_turn", delay: float = 0.0) -> None:
        """Queue a message with a text block only (the model ignored the tool)."""
        self.reply_message([{"type": "text", "text": text}], stop_reason=stop_reason, delay=delay)

    def reply_message(
        self,
        content: list[dict[str, Any]],
        *,
        model: str = "claude-fake-1",
        input_tokens: int = 1200,
        output_tokens: int = 80,
        stop_reason: str | None = "end_turn",
        delay: float = 0.0,
    ) -> None:
        """Queue a Messages API response with the given content blocks."""
        message = {
            "id": "msg_fake01",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
        self.reply_raw(json.dumps(message), delay=delay)

    def reply_error(
        self,
        status: int,
        message: str = "fake failure",
        *,
        error_type: str | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue an error shaped like Anthropic's: {"type": "error", "error": {...}}."""
        kind = error_type or _ERROR_TYPES.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": message}}
        self.reply_raw(json.dumps(body), status=status, headers=headers, delay=delay)

    def reply_raw(
        self,
        body: str | bytes,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue any body as-is (malformed JSON, wrong shapes)."""
        data = body.encode() if isinstance(body, str) else body
        with self._lock:
            self._queue.append(Canned(status, data, dict(headers or {}), delay))

    def clear(self) -> int:
        """Drop what is still queued (a reflection that stopped before asking); how many there were."""
        with self._lock:
            count = len(self._queue)
            self._queue.clear()
        return count

    # -- serving ----------------------------------------------------------------------
    def _next(self, recorded: Recorded) -> Canned:
        with self._lock:
            self.requests.append(recorded)
            if recorded.path.split("?")[0] != "/v1/messages":
                body = {"type": "error", "error": {"type": "not_found_error", "message": "no route"}}
                return Canned(404, json.dumps(body).encode())
            refusal = _refused_as_the_real_api_would(recorded.body)
            if refusal:
                return refusal
            if self._queue:
                return self._queue.popleft()
        body = {"type": "error", "error": {"type": "api_error", "message": "fake server: nothing queued"}}
        return Canned(500, json.dumps(body).encode(), {"x-should-retry": "false"})

    def close(self) -> None:
        self._closing.set()  # wakes delayed handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# Models that answer a forced tool choice with a 400, as the real API does ("What's new in
# Claude Sonnet 5.5": forced tool use returns an error). evolve's default model is one.
FORCING_REJECTED = ("claude-sonnet-5-5",)


def _refused_as_the_real_api_would(body: Any) -> Canned | None:
    if not isinstance(body, dict) or body.get("model") not in FORCING_REJECTED:
        return None
    choice = body.get("tool_choice") or {}
    if isinstance(choice, dict) and choice.get("type") in ("tool", "any"):
        message = f"tool_choice {choice.get('type')!r} is not supported with {body['model']}; use 'auto'"
        error = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        return Canned(400, json.dumps(error).encode())
    return None


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def _handler_for(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            canned = api._next(Recorded("POST", self.path, headers, body))
            if canned.delay and api._closing.wait(canned.delay):
                return
            try:
                self.send_response(canned.status)
                self.send_header("content-type", canned.headers.pop("content-type", "application/json"))
                self.send_header("content-length", str(len(canned.body)))
                self.send_header("request-id", "req_fake01")
                for key, value in canned.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(canned.body)
            except OSError:
                pass  # the client gave up (timeout test): nothing to tell it

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

    return Handler


@pytest.fixture
def fake_messages_api():
    """A running FakeMessagesAPI for one test; closed afterwards."""
    api = FakeMessagesAPI()
    try:
        yield api
    finally:
        api.close()
