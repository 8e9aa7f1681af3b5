"""Scripted people against real reflections: the fixtures and moves the people tests share.

`agent` is agent `a` with the anthropic backend pointed at the local fake Messages API
(the real SDK over real HTTP); `ans(*operations)` answers `evolve reflect a --force` with
them, as a capable model would. Registered for every test module in tests/conftest.py.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from evolve.cli import main
from evolve.home import Home
from evolve.workspace.agent import Agent
from tests.helpers import git, make_agent

SELF = "What I do well and where I often stumble"
STRATEGIES = "Strategies for this user and domain"


@pytest.fixture
def agent(fake_messages_api, monkeypatch):
    agent = make_agent("a")
    home = Home.resolve()
    home.config_file.write_text(
        f'[model]\nbackend = "anthropic"\nbase_url = "{fake_messages_api.url}"\nmax_retries = 0\n'
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake-server-only")
    return agent


class Reflector:
    """`evolve reflect a --force` answered by the fake Messages API with `answer`."""

    def __init__(self, api, capsys) -> None:
        self.api, self.capsys = api, capsys

    def __call__(self, *operations: dict, summary: str = "lessons", args=("--force",)) -> tuple[int, str]:
        self.api.reply_tool({"summary": summary, "operations": list(operations)})
        code = main(["reflect", "a", *args])
        return code, self.capsys.readouterr().out

    def json(self, *operations: dict, summary: str = "lessons") -> dict:
        self.api.reply_tool({"summary": summary, "operations": list(operations)})
        main(["reflect", "a", "--force", "--json"])
        return json.loads(self.capsys.readouterr().out)


@pytest.fixture
def ans(agent, fake_messages_api, capsys):
    return Reflector(fake_messages_api, capsys)


def memo(section: str, content: str) -> dict:
    return {"op": "update_memo", "section": section, "content": content}


def skill(name: str, body: str, description: str = "Use when testing things.") -> dict:
    return {"op": "create_skill", "name": name, "description": description, "body": body}


def person(agent: Agent, *args: str) -> subprocess.CompletedProcess:
    """The person at their terminal, in the agent's repository."""
    return subprocess.run(["git", *args], cwd=agent.path, capture_output=True, text=True)


def write(agent: Agent, path: str, text: str) -> None:
    target = agent.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def fsck(agent: Agent) -> None:
    assert git(agent.path, "fsck", "--strict").returncode == 0
