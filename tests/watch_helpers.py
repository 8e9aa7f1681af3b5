"""Helpers for the watcher and scheduler tests: Claude Code lines, agents with sources, pumping.

The fixtures `transcripts`, `demo` (an agent watching that folder) and `watcher` are taken by
a module as `transcripts, demo, watcher = watch_helpers.transcripts, ...`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.store import ledger
from evolve.watch.loop import Watcher
from evolve.workspace.agent import Agent
from tests.helpers import git_out, make_agent


class Transcript:
    """Appends Claude Code lines shaped like real ones (user string content, assistant blocks)."""

    def __init__(self, path: Path, session: str = "0b6f8c1e-5d7a-4c61-9a0e-2f1d3c4b5a69") -> None:
        self.path = path
        self.session = session
        self.n = 0
        self.last: str | None = None

    def _line(self, obj: dict) -> str:
        self.n += 1
        uuid = f"{self.session[:8]}-{self.n:04d}-4000-8000-000000000000"
        head = {
            "parentUuid": self.last,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/me/project",
            "sessionId": self.session,
            "version": "2.1.38",
            "gitBranch": "main",
        }
        self.last = uuid
        stamp = f"2026-02-10T21:{self.n // 60 % 60:02d}:{self.n % 60:02d}.123Z"
        return json.dumps({**head, **obj, "uuid": uuid, "timestamp": stamp}, separators=(",", ":"))

    def turn(self, request: str = "please run the tests", answer: str = "All tests pass.") -> None:
        """One run: a human request and the assistant's final answer."""
        lines = [
            self._line({"type": "user", "message": {"role": "user", "content": request}}),
            self._line(
                {
                    "type": "assistant",
                    "requestId": f"req_{self.n:04d}",
                    "message": {
                        "id": f"msg_{self.n:04d}",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": answer}],
                        "stop_reason": "end_turn",
                    },
                }
            ),
        ]
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")


def agent_with_sources(name: str, globs: list[str], home: Path | None = None) -> Agent:
    """A new agent whose agent.toml points at `globs` (committed, so the tree is clean)."""
    agent = make_agent(name, home)
    quoted = ", ".join(json.dumps(g) for g in globs)
    (agent.path / "agent.toml").write_text(f"[sources]\nclaude_code = [{quoted}]\n")
    agent.commit_human_edits()
    return agent


def new_watcher(home: Home | None = None, **options) -> Watcher:
    """A started watcher with tiny delays and no cycle (tests drive it with `pump`)."""
    settings = {
        "debounce_s": 0.05,
        "quiet_s": 0.15,
        "rescan_s": 3600.0,
        "cycle_s": None,
        "reflect": None,
        **options,
    }
    watcher = Watcher(home or Home.resolve(), **settings)
    watcher.start()
    return watcher


def pump(watcher: Watcher, until: Callable[[], bool], timeout: float = 5.0) -> float:
    """Tick until `until()` holds; the seconds it took (fails the test on timeout)."""
    started = time.monotonic()
    while True:
        watcher.tick()
        if until():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.01)


def settle(watcher: Watcher, seconds: float) -> None:
    """Keep ticking for a while (to show that nothing more happens)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        watcher.tick()
        time.sleep(0.01)


def db(home: Home | None = None):
    return ledger.connect((home or Home.resolve()).state_db)


def runs_of(agent: str, path: Path | None = None) -> int:
    conn = db()
    try:
        if path is None:
            return conn.execute("SELECT COUNT(*) FROM runs WHERE agent = ?", (agent,)).fetchone()[0]
        return conn.execute(
            "SELECT COUNT(*) FROM runs WHERE agent = ? AND path = ?", (agent, str(path))
        ).fetchone()[0]
    finally:
        conn.close()


def is_dirty(agent: str) -> bool:
    conn = db()
    try:
        row = conn.execute("SELECT dirty FROM agents WHERE name = ?", (agent,)).fetchone()
        return bool(row and row[0])
    finally:
        conn.close()


def clear_dirty(agent: str) -> None:
    conn = db()
    try:
        conn.execute("UPDATE agents SET dirty = 0, dirty_at = NULL WHERE name = ?", (agent,))
    finally:
        conn.close()


def events_of(agent: str, kind: str = "human_edit") -> list[dict]:
    conn = db()
    try:
        return (
            ledger.events_since(conn, agent, None)
            if kind is None
            else [e for e in ledger.events_since(conn, agent, None) if e["kind"] == kind]
        )
    finally:
        conn.close()


@pytest.fixture
def transcripts(tmp_path) -> Path:
    folder = tmp_path / "projects" / "-home-me-project"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def demo(transcripts):
    return agent_with_sources("demo", [f"{transcripts}/*.jsonl"])


@pytest.fixture
def watcher(demo):
    w = new_watcher()
    yield w
    w.close()


def commits(agent) -> int:
    return int(git_out(agent.path, "rev-list", "--count", "HEAD"))
