"""A Claude Code session played end to end through the installed hooks and the spool.

install → SessionStart → transcript lines appended as Claude Code writes them (a Skill
call, a failing then passing tool, a correction, an interrupt) → PostToolUse and Stop →
the spool drained as the watcher drains it. Then: impressions, the invocation counted
once (hook and transcript both report it), runs, signals and the dirty mark.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from evolve.home import Home
from evolve.integrations import claude_code, hookfile
from evolve.observe import ingest as observe
from evolve.observe.records import apply_hook_records
from evolve.schedule import pending
from evolve.store import ledger, spool
from evolve.workspace.agent import Agent
from tests.helpers import evolve_commit, git, make_agent, skill_text

SESSION = "5b1c7e2a-0d4f-4a8e-9c61-3f2b8d9e1a01"


class Transcript:
    """Appends lines shaped like Claude Code's (v2.1) to a session file."""

    def __init__(self, path: Path, cwd: Path) -> None:
        self.path, self.cwd, self.parent, self.n = path, str(cwd), None, 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _add(self, kind: str, message: dict, **extra) -> None:
        self.n += 1
        uuid = f"00000000-0000-4000-8000-{self.n:012d}"
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": SESSION,
            "version": "2.1.38",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": f"2026-03-01T10:{self.n:02d}:00.000Z",
            **extra,
        }
        self.parent = uuid
        with self.path.open("a") as handle:
            handle.write(json.dumps(line) + "\n")

    def user(self, text: str) -> None:
        self._add("user", {"role": "user", "content": text})

    def tool_use(self, tool_id: str, name: str, tool_input: dict) -> None:
        self._add(
            "assistant",
            {
                "model": "claude-opus-4-6",
                "id": f"msg_{tool_id}",
                "type": "message",
                "role": "assistant",
                "stop_reason": None,
                "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            },
            requestId=f"req_{tool_id}",
        )

    def result(self, tool_id: str, text: str, error: bool = False) -> None:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": text}
        if error:
            block["is_error"] = True
        self._add(
            "user",
            {"role": "user", "content": [block]},
            toolUseResult=f"Error: {text}" if error else {"stdout": text},
        )

    def meta(self, text: str) -> None:
        self._add("user", {"role": "user", "content": [{"type": "text", "text": text}]}, isMeta=True)

    def say(self, text: str) -> None:
        self._add(
            "assistant",
            {
                "model": "claude-opus-4-6",
                "id": f"msg_t{self.n}",
                "type": "message",
                "role": "assistant",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": text}],
            },
            requestId=f"req_t{self.n}",
        )


def hook(settings: dict, event: str, payload: dict, cwd: Path) -> subprocess.CompletedProcess:
    """Run the command install wrote for `event`, with the payload on stdin, as Claude Code does."""
    [command] = [
        h["command"]
        for group in settings["hooks"][event]
        for h in group["hooks"]
        if hookfile.MARK in h["command"]
    ]
    proc = subprocess.run(
        shlex.split(command),
        input=json.dumps(payload).encode(),
        cwd=cwd,
        capture_output=True,
        timeout=30,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc


def drain(home: Home) -> dict[str, int]:
    """What the watcher does with the spool."""
    conn = ledger.connect(home.state_db)
    try:
        with spool.drain(home.spool_dir) as records:
            return apply_hook_records(conn, home, records)
    finally:
        conn.close()


def test_a_claude_code_session_end_to_end(evolve_home, tmp_path):
    agent = make_agent("demo")
    evolve_commit(
        agent,
        {
            "skills/fix-tests/SKILL.md": skill_text("fix-tests", "Use when tests fail.").encode(),
            "skills/deploy-safely/SKILL.md": skill_text("deploy-safely").encode(),
            "memo.md": (agent.memo_text() + "\n- Run the tests before saying they pass.\n").encode(),
        },
    )
    home = Home.resolve()
    project = tmp_path / "shop"
    project.mkdir()
    git(project, "init", "-q")
    claude_code.install(home, "demo", "project", str(project))
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    folder = "".join(c if c.isalnum() else "-" for c in str(project.resolve()))
    path = claude_code.claude_dir() / "projects" / folder / f"{SESSION}.jsonl"
    base = {
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(project),
        "permission_mode": "default",
    }

    start = hook(
        settings,
        "SessionStart",
        {**base, "hook_event_name": "SessionStart", "source": "startup", "model": "claude-opus-4-6"},
        project,
    )
    assert b"Run the tests before saying they pass." in start.stdout

    t = Transcript(path, project)
    t.user("The checkout tests fail, fix them")
    t.tool_use("toolu_skill", "Skill", {"skill": "fix-tests"})
    t.result("toolu_skill", "Launching skill: fix-tests")
    t.meta("Base directory for this skill: ...\n\n- step one\n")
    hook(
        settings,
        "PostToolUse",
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Skill",
            "tool_input": {"skill": "fix-tests"},
            "tool_use_id": "toolu_skill",
            "tool_response": {"success": True, "commandName": "fix-tests"},
        },
        project,
    )
    t.tool_use("toolu_b1", "Bash", {"command": "pytest tests/test_checkout.py"})
    t.result("toolu_b1", "FAILED tests/test_checkout.py::test_total - AssertionError: 9 != 10", error=True)
    t.tool_use(
        "toolu_e1",
        "Edit",
        {"file_path": str(project / "shop" / "cart.py"), "old_string": "a", "new_string": "b"},
    )
    t.result("toolu_e1", "The file has been updated.")
    t.tool_use("toolu_b2", "Bash", {"command": "pytest tests/test_checkout.py"})
    t.result("toolu_b2", "1 passed")
    t.say("Fixed: the total now includes tax, and the tests pass.")
    hook(
        settings,
        "Stop",
        {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Fixed."},
        project,
    )

    t.user("No, that's wrong: you changed the test instead of the code. Fix cart.py")
    t.tool_use("toolu_b3", "Bash", {"command": "git diff"})
    t.user("[Request interrupted by user]")
    t.user("Just summarise what you changed")
    t.say("I changed shop/cart.py to add tax.")
    hook(settings, "Stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False}, project)

    assert drain(home) == {"impressions": 1, "invocation": 1, "observed": 1}
    conn = ledger.connect(home.state_db)
    try:
        impressions = conn.execute(
            "SELECT skill FROM impressions WHERE agent = 'demo' AND session = ?", (SESSION,)
        ).fetchall()
        assert sorted(r["skill"] for r in impressions) == ["deploy-safely", "fix-tests"]
        # the watcher also reads the agent's sources: nothing may count twice
        sources = observe.source_files(Agent.open("demo", home).config.sources)
        assert [p for p, _ in sources] == [str(path)]
        observe.observe(conn, "demo", sources)
        invocations = conn.execute(
            "SELECT skill, tool_use_id, session, run_idx, source FROM invocations WHERE agent = 'demo'"
        ).fetchall()
        assert [tuple(r) for r in invocations] == [("fix-tests", "toolu_skill", SESSION, 0, "hook")]
        runs = conn.execute(
            "SELECT idx, complete, facts FROM runs WHERE agent = 'demo' ORDER BY idx"
        ).fetchall()
        facts = [json.loads(r["facts"]) for r in runs]
        assert [r["complete"] for r in runs] == [1, 1, 0]
        assert facts[0]["skills"] == [{"name": "fix-tests", "tool_use_id": "toolu_skill"}]
        assert facts[0]["errors"] == 1 and facts[0]["recovered"] and not facts[0]["correction"]
        assert facts[1]["correction"] and facts[1]["aborted"]
        assert facts[2]["request"] == "Just summarise what you changed"
        scored = pending.scored_runs(conn, "demo", agent.config, agent.memo_text())
        signals = {s.run: set(s.signals) for s in scored}
        assert "error_recovered" in signals[0] and "user_correction" in signals[1]
        assert ledger.agent_row(conn, "demo")["dirty"] == 1
    finally:
        conn.close()
    assert drain(home) == {}
    assert not (home.logs_dir / "hooks.log").exists()
