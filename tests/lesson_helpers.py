"""Claude Code sessions for the lesson tests: the installed hooks, transcripts as Claude Code writes them.

`Project.start(session)` runs the SessionStart command `evolve install claude-code` wrote
(a real subprocess, its JSON on stdin); `Session` appends the transcript's lines (a request,
tool calls with their results, the agent's answer), timestamped from `start`, one second
apart; `Project.stop(session)` runs the Stop command. What they spool is applied by the
next command that drains the spool (score, lessons, skills, report, reflect).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evolve.home import Home
from evolve.integrations import claude_code, hookfile
from tests.helpers import git


def now_minus(hours: float) -> datetime:
    return datetime.now(UTC).replace(microsecond=0) - timedelta(hours=hours)


class Session:
    """The lines of one Claude Code session (v2.1 shapes), appended to its transcript file."""

    def __init__(self, path: Path, session: str, cwd: str, start: datetime) -> None:
        self.path, self.id, self.cwd, self.start = path, session, cwd, start
        self.parent: str | None = None
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _add(self, kind: str, message: dict, **extra) -> None:
        self.n += 1
        uuid = f"{self.id[:8]}-0000-4000-8000-{self.n:012d}"
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.id,
            "version": "2.1.38",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": (self.start + timedelta(seconds=self.n)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            **extra,
        }
        self.parent = uuid
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    def ask(self, text: str) -> Session:
        self._add("user", {"role": "user", "content": text})
        return self

    def call(self, name: str, tool_input: dict, output: str = "ok", error: bool = False) -> Session:
        tool_id = f"toolu_{self.id[:6]}{self.n:05d}"
        message = {
            "model": "claude-opus-4-6",
            "id": f"msg_{tool_id}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
        }
        self._add("assistant", message, requestId=f"req_{tool_id}")
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": output}
        if error:
            block["is_error"] = True
        result = f"Error: {output}" if error else {"stdout": output}
        self._add("user", {"role": "user", "content": [block]}, toolUseResult=result)
        return self

    def say(self, text: str) -> Session:
        message = {
            "model": "claude-opus-4-6",
            "id": f"msg_t{self.id[:6]}{self.n}",
            "type": "message",
            "role": "assistant",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}],
        }
        self._add("assistant", message, requestId=f"req_t{self.id[:6]}{self.n}")
        return self


class Project:
    """A project `evolve install claude-code` connected to `agent`; its hooks run as Claude Code runs them."""

    def __init__(self, home: Home, agent: str, folder: Path) -> None:
        self.home, self.agent, self.folder = home, agent, folder
        folder.mkdir(parents=True, exist_ok=True)
        git(folder, "init", "-q")
        claude_code.install(home, agent, "project", str(folder))
        self.settings = json.loads((folder / ".claude" / "settings.local.json").read_text())

    def transcript(self, session: str) -> Path:
        name = "".join(c if c.isalnum() else "-" for c in str(self.folder.resolve()))
        return claude_code.claude_dir() / "projects" / name / f"{session}.jsonl"

    def session(self, session: str, start: datetime) -> Session:
        return Session(self.transcript(session), session, str(self.folder), start)

    def hook(self, event: str, session: str, **payload) -> subprocess.CompletedProcess:
        [command] = [
            h["command"]
            for group in self.settings["hooks"][event]
            for h in group["hooks"]
            if hookfile.MARK in h["command"]
        ]
        data = {
            "session_id": session,
            "transcript_path": str(self.transcript(session)),
            "cwd": str(self.folder),
            "hook_event_name": event,
            **payload,
        }
        proc = subprocess.run(
            shlex.split(command),
            input=json.dumps(data).encode(),
            cwd=self.folder,
            capture_output=True,
            timeout=30,
            env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
        )
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        return proc

    def start(self, session: str) -> str:
        """SessionStart: what the session's context shows (the hook's stdout)."""
        return self.hook("SessionStart", session, source="startup").stdout.decode()

    def stop(self, session: str) -> None:
        self.hook("Stop", session, stop_hook_active=False)
