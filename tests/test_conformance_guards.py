"""Guards with the real CLIs: what Claude Code and Codex do with the PreToolUse hook's answer.

evolve installed as a person installs it, a guards.toml in the agent repository, and a
session of the pinned `claude -p` / `codex exec` against the fake APIs (the setup of
tests/test_conformance_claude_code.py and tests/test_conformance_codex.py). A `deny`
guard refuses `npm install`: the command never runs and the model's next request carries
the guard's message as the reason; a `remind` guard lets the call run and the next request
carries its message. What each harness shows is recorded in docs/guards.md.
"""

from __future__ import annotations

import json

import pytest

from evolve.home import Home
from evolve.workspace.agent import Agent
from tests.conformance import evolve_cli
from tests.fake_claude_api import Recorded
from tests.helpers import commit_all
from tests.test_conformance_claude_code import Claude, claude_bin  # noqa: F401 - the fixture
from tests.test_conformance_claude_code import make_project as claude_project
from tests.test_conformance_codex import Codex, codex_bin  # noqa: F401 - the fixture
from tests.test_conformance_codex import make_project as codex_project

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(120, func_only=True)]

AGENT = "shop"
DENY = "This repo uses pnpm, never npm (lesson: use-pnpm)."
REMIND = "Say hello to the person too (lesson: greet)."
GUARDS = f"""[no-npm]
tool = "shell"
pattern = '\\bnpm (install|i|add)\\b'
action = "deny"
lesson = "use-pnpm"
message = "{DENY}"

[greet]
tool = "Bash"
pattern = '^echo hello'
action = "remind"
lesson = "greet"
message = "{REMIND}"
"""
DENIED = "touch ran.txt && npm install left-pad"
REMINDED = "echo hello-from-the-call"


def agent_with_guards(home: Home) -> Agent:
    evolve_cli("init", AGENT)
    agent = Agent.open(AGENT, home)
    (agent.path / "guards.toml").write_text(GUARDS)
    commit_all(agent.path, "guards: pnpm only, and greet")
    return agent


def tool_results(request: Recorded) -> dict[str, dict]:
    return {
        block["tool_use_id"]: block
        for message in request.body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


def test_real_claude_code_obeys_a_deny_guard_and_shows_a_remind_guard(
    claude_bin,  # noqa: F811
    fake_claude_api,
    closed_port,
    tmp_path,
    evolve_home,
):
    api, home = fake_claude_api, Home.resolve()
    project, _ = claude_project(tmp_path)
    settings = project / ".claude" / "settings.local.json"
    doc = json.loads(settings.read_text())
    doc["permissions"]["allow"] += ["Bash(echo:*)", "Bash(touch:*)"]
    settings.write_text(json.dumps(doc, indent=4))
    agent_with_guards(home)
    evolve_cli("install", "claude-code", "--agent", AGENT, "--project", str(project))
    claude = Claude(claude_bin, api, project, closed_port)

    denied = api.tool("Bash", {"command": DENIED, "description": "Install left-pad"})
    reminded = api.tool("Bash", {"command": REMINDED, "description": "Say hello"})
    api.text("Done.")
    claude.run("Add left-pad, then say hello")
    turns = api.agent_turns()
    refused = tool_results(turns[1])[denied]
    assert refused.get("is_error") is True
    assert f"PreToolUse:Bash hook error: {DENY}" in json.dumps(refused["content"])
    assert not (project / "ran.txt").exists()  # the call never ran
    ran = tool_results(turns[2])[reminded]  # the reminded call ran
    assert not ran.get("is_error") and "hello-from-the-call" in json.dumps(ran["content"])
    assert f"PreToolUse:Bash hook additional context: {REMIND}" in turns[2].text()
    assert not (home.logs_dir / "hooks.log").exists()


def test_real_codex_obeys_a_deny_guard_and_shows_a_remind_guard(
    codex_bin,  # noqa: F811
    fake_codex_api,
    closed_port,
    tmp_path,
    evolve_home,
):
    api, home = fake_codex_api, Home.resolve()
    project, _ = codex_project(tmp_path, api)
    agent_with_guards(home)
    evolve_cli("install", "codex", "--agent", AGENT, "--project", str(project))
    cli = Codex(codex_bin, api, project, closed_port)

    denied = api.command(DENIED)
    reminded = api.command(REMINDED)
    api.text("Done.")
    cli.run("Add left-pad, then say hello")
    turns = api.agent_turns()
    refused = turns[1].outputs()[denied]
    assert refused == f"Command blocked by PreToolUse hook: {DENY}. Command: {DENIED}"
    assert not (project / "ran.txt").exists()
    ran = turns[2].outputs()[reminded]  # the reminded call ran
    assert "Process exited with code 0" in ran and "hello-from-the-call" in ran
    developer = [
        block["text"]
        for item in turns[2].body["input"]
        if item.get("role") == "developer"
        for block in item.get("content") or []
    ]
    assert REMIND in developer  # a developer message of its own, beside the call's output
    assert not (home.logs_dir / "hooks.log").exists()
