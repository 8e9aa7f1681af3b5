"""What the fake model APIs of the conformance tests share: a scripted server that records all.

A `ScriptedServer` on 127.0.0.1 records every request (whatever its method and path) and
answers each model turn its `Recorded` type recognises with the next scripted answer; an
empty script answers with the subclass's `unscripted()` turn and notes it, so `check_done()`
fails a test for turns beyond the script and for turns left unused. `Handler` is the request
handler base: read and record, answer JSON, stream server-sent events.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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
        """A model turn of the CLI's agent loop (what takes a scripted answer)."""
        raise NotImplementedError

    def text(self) -> str:
        """Every text the request carries to the model, joined."""
        raise NotImplementedError

    def tool_names(self) -> list[str]:
        body = self.body if isinstance(self.body, dict) else {}
        return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


class ScriptedServer:
    """The server: a script of turns, every request recorded. Subclasses name their types."""

    recorded: type[Recorded] = Recorded

    def __init__(self, handler: type[Handler]) -> None:
        self.requests: list[Recorded] = []
        self.unscripted: list[Recorded] = []
        self._script: deque[Any] = deque()
        self._turns_served = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), type("Bound", (handler,), {"api": self}))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def unscripted_turn(self) -> Any:
        """The answer to a turn beyond the script (one that ends the CLI's turn)."""
        raise NotImplementedError

    def agent_turns(self) -> list[Recorded]:
        """The agent-loop requests, in order (each answered with one scripted turn)."""
        with self._lock:
            return [r for r in self.requests if r.turn is not None]

    def check_done(self) -> None:
        """Every scripted turn was asked for, and nothing beyond the script."""
        with self._lock:
            left, extra = len(self._script), list(self.unscripted)
        assert not extra, (
            f"{len(extra)} agent turn(s) beyond the script; the last asked:\n{extra[-1].text()[-2000:]}"
        )
        assert not left, f"{left} scripted turn(s) never asked for (the CLI stopped early?)"

    def answer(self, recorded: Recorded) -> tuple[Recorded, Any]:
        """Record a request; a turn takes the next scripted answer (None: not a turn)."""
        with self._lock:
            turn = None
            if recorded.is_turn():
                if self._script:
                    turn = self._script.popleft()
                    recorded = replace(recorded, turn=self._turns_served)
                    self._turns_served += 1
                else:
                    self.unscripted.append(recorded)
                    turn = self.unscripted_turn()
            self.requests.append(recorded)
            return recorded, turn

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class Handler(BaseHTTPRequestHandler):
    """Reads and records each request through `api`; answers JSON or a stream of events."""

    protocol_version = "HTTP/1.1"
    api: ScriptedServer  # set on the class the server is made with
    json_headers: dict[str, str] = {}  # sent with every JSON answer

    def record(self) -> tuple[Recorded, Any]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        return self.api.answer(self.api.recorded(self.command, self.path, headers, body))

    def send_json(self, status: int, doc: Any, head: bool = False) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in self.json_headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def send_events(self, events: Iterable[tuple[str, dict[str, Any]]], headers: dict[str, str]) -> None:
        """Server-sent events (`event:` name, `data:` JSON), chunked, as the real APIs stream."""
        try:
            self.send_response(200)
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            for name, data in events:
                chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            pass  # the CLI went away mid-stream: nothing left to tell it

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass
