"""The agent repository as a plugin, loaded by the real pinned Claude Code CLI.

`claude plugin validate` passes on a fresh agent and on one the upgrade made a plugin; a
session through the plugin (`--plugin-dir`) carries the memo once and lists the skills as
the plugin's; with evolve's own hooks installed too it still carries it once; and a teammate
who adds the agent's git server as a marketplace and installs the plugin, with no evolve home
at all, gets the memo, and the next lesson after `claude plugin update`. The pinned Codex
CLI installs it from the same marketplace file and shows the memo once, with `evolve install
codex` too. The fake APIs record what reached the model (tests/fake_claude_api.py,
tests/fake_codex_api.py); nothing leaves the machine (tests/conformance.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations import upgrade
from evolve.store import codex_rollouts
from evolve.workspace.agent import Agent
from tests import agent_clis
from tests.conformance import cli_env, evolve_cli, installed
from tests.fake_claude_api import FakeClaudeAPI
from tests.fake_codex_api import FakeCodexAPI
from tests.git_servers import SmartHttp
from tests.helpers import evolve_commit, git, skill_text

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(180, func_only=True)]

AGENT = "shop"
BULLET = "Always use pnpm in this repository, never npm."
MEMO = (
    f"# Memo of {AGENT}\n\n## What I do well and where I often stumble\n\n"
    f"## Strategies for this user and domain\n\n- {BULLET}\n"
)
LATER = "Run the linter before every commit."
SKILL = "release-cut"
CLI_TIMEOUT_S = 60
EVOLVE_BIN = str(Path(sys.executable).parent)  # the launcher finds this test's `evolve` on PATH


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return installed(agent_clis.claude_code, agent_clis.CLAUDE_CODE)


def learned() -> Agent:
    evolve_cli("init", AGENT)
    agent = Agent.open(AGENT, Home.resolve())
    evolve_commit(agent, {"memo.md": MEMO.encode(), f"skills/{SKILL}/SKILL.md": skill_text(SKILL).encode()})
    return agent


def claude(binary: Path, *args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(binary), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, (
        f"claude {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


def session_env(api: FakeClaudeAPI, port: int, **extra: str) -> dict:
    env = cli_env(
        port,
        False,
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="sk-ant-fake-conformance",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        **extra,
    )
    env["PATH"] = f"{EVOLVE_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def memo_seen(binary: Path, api: FakeClaudeAPI, env: dict, project: Path, *flags: str) -> tuple[int, str]:
    """One `claude -p` session: how often the memo's bullet reached the model, and what it saw."""
    api.text("Done.")
    start = len(api.requests)
    claude(binary, "-p", "--output-format", "json", *flags, "Add a dependency", env=env, cwd=project)
    api.check_done()
    [turn] = [r for r in api.requests[start:] if r.is_turn()]
    text = turn.text()
    return text.count(BULLET), text


def validated(binary: Path, root: Path, env: dict) -> str:
    out = ""
    for target in (root, root / ".claude-plugin" / "marketplace.json"):
        proc = claude(binary, "plugin", "validate", str(target), env=env, cwd=root)
        assert "Validation passed" in proc.stdout, proc.stdout
        out += proc.stdout
    return out


def test_claude_plugin_validate_passes_on_a_fresh_and_an_upgraded_agent(
    claude_bin, closed_port, evolve_home, tmp_path
):
    env = cli_env(closed_port, False)
    evolve_cli("init", AGENT)
    fresh = Agent.open(AGENT, Home.resolve())
    out = validated(claude_bin, fresh.path, env)
    assert f"skills: {AGENT}:" not in out  # no skill yet
    assert 'hooks: SessionStart startup|resume|clear|compact command "sh' in out
    assert "PreToolUse" in out  # the guards of guards.toml, through the same launcher
    # an agent from before plugins, made one by the next writing command
    evolve_cli("init", "older")
    older = Agent.open("older", Home.resolve())
    git(older.path, "rm", "-r", "-q", ".claude-plugin", ".codex-plugin", "hooks")
    git(older.path, "commit", "-q", "-m", "an agent from before plugins")
    (evolve_home / upgrade.VERSION_FILE).write_text(f"{upgrade.LAYOUT - 1}\n")
    evolve_cli("cycle")  # any writing command
    assert (older.path / ".claude-plugin" / "plugin.json").exists()
    validated(claude_bin, older.path, env)


def test_a_session_through_the_plugin_carries_the_memo_once_even_with_evolve_installed(
    claude_bin, fake_claude_api, closed_port, evolve_home, tmp_path
):
    agent = learned()
    project = tmp_path / "app"
    project.mkdir()
    git(project, "init", "-q")
    env = session_env(fake_claude_api, closed_port)
    plugin = ("--plugin-dir", str(agent.path))
    seen, text = memo_seen(claude_bin, fake_claude_api, env, project, *plugin)
    assert seen == 1
    assert f"- {AGENT}:{SKILL}: " in text  # Claude Code lists the plugin's skills itself
    evolve_cli("install", "claude-code", "--agent", AGENT, "--project", str(project))
    assert memo_seen(claude_bin, fake_claude_api, env, project, *plugin)[0] == 1  # both: once
    assert memo_seen(claude_bin, fake_claude_api, env, project)[0] == 1  # evolve's hooks alone
    assert not (evolve_home / "logs" / "hooks.log").exists()


def test_a_teammate_installs_the_agent_from_its_git_server_and_gets_the_memo_without_evolves_home(
    claude_bin, fake_claude_api, closed_port, evolve_home, tmp_path
):
    agent = learned()
    server = SmartHttp(tmp_path / "server")
    server.start()
    try:
        url = server.url(AGENT)
        git(agent.path, "push", "-q", url, "main")
        nobody = tmp_path / "teammate-has-no-evolve-home"
        env = session_env(fake_claude_api, closed_port, EVOLVE_HOME=str(nobody))
        project = tmp_path / "their-app"
        project.mkdir()
        claude(claude_bin, "plugin", "marketplace", "add", url, env=env, cwd=project)
        claude(claude_bin, "plugin", "install", f"{AGENT}@{AGENT}", env=env, cwd=project)
        seen, text = memo_seen(claude_bin, fake_claude_api, env, project)
        assert seen == 1 and f"- {AGENT}:{SKILL}: " in text
        assert not nobody.exists()
        # a new lesson reaches them with the updates: no `version` freezes the plugin
        evolve_commit(agent, {"memo.md": MEMO.replace(BULLET, f"{BULLET}\n- {LATER}").encode()})
        git(agent.path, "push", "-q", url, "main")
        claude(claude_bin, "plugin", "marketplace", "update", AGENT, env=env, cwd=project)
        claude(claude_bin, "plugin", "update", f"{AGENT}@{AGENT}", env=env, cwd=project)
        assert LATER in memo_seen(claude_bin, fake_claude_api, env, project)[1]
    finally:
        server.stop()
    # and without evolve on PATH: one line, the session goes on
    bare = {
        **env,
        "PATH": os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not Path(p, "evolve").exists()),
    }
    assert memo_seen(claude_bin, fake_claude_api, bare, project)[0] == 0


CODEX_CONFIG = """model = "gpt-5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}"
wire_api = "responses"
env_key = "FAKE_CODEX_KEY"
"""


def codex_memo_seen(binary: Path, api: FakeCodexAPI, env: dict, project: Path) -> int:
    """One `codex exec` session, hooks trusted (as /hooks would): how often the bullet reached the model."""
    api.text("Done.")
    start = len(api.requests)
    flags = ["--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust"]
    proc = subprocess.run(
        [str(binary), "exec", "--skip-git-repo-check", *flags, "Add a dependency"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, f"codex exec exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    api.check_done()
    [turn] = [r for r in api.requests[start:] if r.is_turn()]
    return turn.text().count(BULLET)


def test_codex_installs_the_agent_from_its_marketplace_and_shows_the_memo_once(
    fake_codex_api, closed_port, evolve_home, tmp_path
):
    binary = installed(agent_clis.codex, agent_clis.CODEX)
    agent = learned()
    codex_home = Path(codex_rollouts.codex_home())
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=fake_codex_api.url))
    env = cli_env(closed_port, False, FAKE_CODEX_KEY="sk-fake-conformance")
    env["PATH"] = f"{EVOLVE_BIN}{os.pathsep}{env.get('PATH', '')}"
    project = tmp_path / "app"
    project.mkdir()
    for args in (["plugin", "marketplace", "add", str(agent.path)], ["plugin", "add", f"{AGENT}@{AGENT}"]):
        proc = subprocess.run(
            [str(binary), *args], env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S
        )
        assert proc.returncode == 0, proc.stderr
    assert codex_memo_seen(binary, fake_codex_api, env, project) == 1
    evolve_cli("install", "codex", "--agent", AGENT, "--project", str(project))
    assert codex_memo_seen(binary, fake_codex_api, env, project) == 1  # evolve's hooks and the plugin: once
    assert not (evolve_home / "logs" / "hooks.log").exists()


DENY = "This repository uses pnpm, never npm (lesson: pnpm)."
GUARDS = f"""[no-npm]
tool = "shell"
pattern = '\\bnpm (install|i|add)\\b'
action = "deny"
lesson = "pnpm"
message = "{DENY}"
"""


def test_a_teammate_without_evolves_home_is_refused_npm_by_the_plugins_guard(
    claude_bin, fake_claude_api, closed_port, evolve_home, tmp_path
):
    """The real CLI, the agent as a plugin, no evolve home: the deny guard's reason reaches the model."""
    agent = learned()
    (agent.path / "guards.toml").write_text(GUARDS)
    git(agent.path, "add", "guards.toml")
    git(agent.path, "commit", "-q", "-m", "my guard: pnpm only")
    project = tmp_path / "app"
    project.mkdir()
    git(project, "init", "-q")
    nobody = tmp_path / "no-home"
    env = session_env(fake_claude_api, closed_port, EVOLVE_HOME=str(nobody))
    api = fake_claude_api
    denied = api.tool("Bash", {"command": "touch ran.txt && npm install left-pad", "description": "Add it"})
    api.text("Done.")
    flags = ("--plugin-dir", str(agent.path), "--allowedTools", "Bash(touch:*)", "--")
    claude(claude_bin, "-p", "--output-format", "json", *flags, "Add left-pad", env=env, cwd=project)
    api.check_done()
    turns = [r for r in api.requests if r.is_turn()]
    results = [
        block
        for message in turns[-1].body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block.get("tool_use_id") == denied
    ]
    assert results and results[0].get("is_error") is True
    assert f"PreToolUse:Bash hook error: {DENY}" in str(results[0]["content"])
    assert not (project / "ran.txt").exists()  # the call never ran
    assert not nobody.exists()  # the teammate's machine holds nothing of evolve's
