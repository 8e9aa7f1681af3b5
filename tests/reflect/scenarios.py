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
        tool_id = self._call(name, tool_input)
        self._result(tool_id, output, error, f"Error: {output}" if error else {"stdout": output})
        return self

    def ask(self, questions: dict[str, list[str]], answers: dict[str, str]) -> Transcript:
        """An AskUserQuestion call (question → option labels) and the person's answers."""
        asked = [
            {"question": q, "header": q[:12], "options": [{"label": o, "description": o} for o in opts]}
            for q, opts in questions.items()
        ]
        tool_id = self._call("AskUserQuestion", {"questions": asked})
        pairs = ", ".join(f'"{q}"="{a}"' for q, a in answers.items())
        text = f"User has answered your questions: {pairs}. "
        text += "You can now continue with the user's answers in mind."
        self._result(tool_id, text, False, {"questions": asked, "answers": answers})
        return self

    def reject(self, name: str, tool_input: dict, said: str | None = None) -> Transcript:
        """A call the person rejected, with the words they typed (Claude Code's feedback form)."""
        tool_id = self._call(name, tool_input)
        text = (
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
            "was a file edit, the new_string was NOT written to the file). "
        )
        text += (
            f"To tell you how to proceed, the user said:\n{said}"
            if said is not None
            else "STOP what you are doing and wait for the user to tell you how to proceed."
        )
        self._result(tool_id, text, True, f"Error: {text}")
        # Without words of the person's, the turn ends; with them, the agent goes on.
        return self.user_interrupt("[Request interrupted by user for tool use]") if said is None else self

    def user_interrupt(self, text: str = "[Request interrupted by user]") -> Transcript:
        self._add({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}})
        return self

    def _call(self, name: str, tool_input: dict) -> str:
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
        return tool_id

    def _result(self, tool_id: str, output: str, error: bool, summary: object) -> None:
        self._add(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": error}
                    ],
                },
                "toolUseResult": summary,
            }
        )


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
