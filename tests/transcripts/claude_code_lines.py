"""Claude Code transcripts built by hand, line by line, shaped like the real ones.

Shared by the Claude Code adapter's tests (test_claude_code*.py): compact JSON, one content
block per assistant line, the keys and ids Claude Code writes.
"""

from __future__ import annotations

import json

from evolve.transcripts.claude_code import new_state, parse_line
from evolve.transcripts.reader import read_lines
from tests.observe_helpers import api_error_line, assistant_line, result_line, synthetic_line

SID = "0b6f8c1e-session"


class Transcript:
    """Builds Claude Code lines (compact JSON, one content block per assistant line)."""

    def __init__(self, sidechain: bool = False):
        self.lines: list[str] = []
        self.n = 0
        self.last: str | None = None
        self.sidechain = sidechain

    def add(self, obj: dict, parent: str | None | bool = True, raw: bool = False) -> str:
        self.n += 1
        uuid = f"u-{self.n:04d}"
        if not raw:
            head = {
                "parentUuid": self.last if parent is True else (parent or None),
                "isSidechain": self.sidechain,
                "userType": "external",
                "cwd": "/work/project",
                "sessionId": SID,
                "version": "2.1.38",
            }
            obj = {
                **head,
                **obj,
                "uuid": uuid,
                "timestamp": f"2026-02-10T21:{self.n // 60:02d}:{self.n % 60:02d}.123Z",
            }
            self.last = uuid
        self.lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
        return uuid

    def user(self, content, parent: str | None | bool = True, **extra) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra}, parent)

    def text(self, text: str, msg: str = "msg_1", req: str = "req_1") -> str:
        return self.add(assistant_line({"type": "text", "text": text}, msg, req))

    def tool(self, name: str, tool_input: dict, tool_id: str, msg: str = "msg_1", req: str = "req_1") -> str:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        return self.add(assistant_line(block, msg, req))

    def result(self, tool_id: str, content: str, is_error: bool | None = None, tur=None) -> str:
        return self.add(result_line(tool_id, content, is_error, tur))

    def api_error(self, attempt: int, status: int = 529, kind: str = "overloaded_error") -> str:
        return self.add(api_error_line(attempt, status, kind))

    def synthetic(self, text: str) -> str:
        return self.add(synthetic_line(text, "synthetic-id"))

    def write(self, path):
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path


def events_of(path):
    state = new_state()
    out = []
    for offset, line in read_lines(path):
        out.extend(parse_line(line, offset, state))
    return out, state
