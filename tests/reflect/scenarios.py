"""Claude Code transcripts for reflection tests, built like the real ones."""

from __future__ import annotations

import json
import uuid
from pathlib import Path


class Transcript:
    """Append Claude Code lines to a session file: users, assistant tool calls, results."""

    def __init__(self, path: Path, cwd: str = "/home/dev/app", session: str | None = None) -> None:
        self.path = path
        self.cwd = cwd
        self.session = session or str(uuid.uuid4())
        self.parent: str | None = None
        self.clock = 0
        self.messages = 0

    def _add(self, obj: dict) -> None:
        self.clock += 5
        uid = str(uuid.uuid4())
        obj.update(
            {
                "uuid": uid,
                "parentUuid": self.parent,
                "sessionId": self.session,
                "timestamp": f"2026-11-20T10:{self.clock // 60 % 60:02d}:{self.clock % 60:02d}.000Z",
                "cwd": self.cwd,
                "isSidechain": False,
                "type": obj["type"],
            }
        )
        self.parent = uid
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(obj) + "\n")

    def user(self, text: str) -> Transcript:
        self._add({"type": "user", "message": {"role": "user", "content": text}})
        return self

    def say(self, text: str) -> Transcript:
        self.messages += 1
        self._add(
            {
                "type": "assistant",
                "requestId": f"req{self.messages}",
                "message": {
                    "id": f"msg{self.messages}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                },
            }
        )
        return self

    def tool(self, name: str, tool_input: dict, output: str, *, error: bool = False) -> Transcript:
        self.messages += 1
        tool_id = f"toolu_{uuid.uuid4().hex[:12]}"
        self._add(
            {
                "type": "assistant",
                "requestId": f"req{self.messages}",
                "message": {
                    "id": f"msg{self.messages}",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
                },
            }
        )
        self._add(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": error}
                    ],
                },
                "toolUseResult": f"Error: {output}" if error else {"stdout": output},
            }
        )
        return self


def corrected_session(folder: Path, name: str = "s1.jsonl", *, secret: str = "") -> Path:
    """A request, then the user's correction (optionally with a secret in tool output)."""
    t = Transcript(folder / name)
    t.user("Run the test suite")
    if secret:
        t.tool(
            "Bash",
            {"command": f"export ANTHROPIC_API_KEY={secret} && ./deploy"},
            f"Error: key {secret} rejected by deploy",
            error=True,
        )
    t.tool("Bash", {"command": "pip install -e . && pytest"}, "ok")
    t.say("All tests pass.")
    t.user("No, don't pip install here. Always use `uv run pytest` in this project instead.")
    t.tool("Bash", {"command": "uv run pytest"}, "14 passed")
    t.say("Done with uv.")
    return t.path


def transient_session(folder: Path, name: str = "t1.jsonl") -> Path:
    t = Transcript(folder / name)
    t.user("Fetch the release notes")
    t.tool("WebFetch", {"url": "https://example.org/notes"}, "Request failed: connect ETIMEDOUT", error=True)
    t.tool("WebFetch", {"url": "https://example.org/notes"}, "HTTP 503 Service Unavailable", error=True)
    t.tool("WebFetch", {"url": "https://example.org/notes"}, "Release 2.4 notes")
    t.say("Here are the notes.")
    return t.path
