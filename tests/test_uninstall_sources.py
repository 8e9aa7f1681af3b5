"""`evolve uninstall` stops the reading that `evolve install` started (newcomer finding 3).

Install adds the project's transcripts to the agent's `[sources]`; uninstall takes exactly
that entry away again, as evolve's own commit that says so — or, for an agent that syncs,
from this machine's own file. An entry the person had before the install stays, and
uninstall says the agent still reads it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from evolve import cli
from evolve.home import Home
from evolve.integrations import claude_code, codex
from evolve.workspace.agent import Agent
from tests.helpers import git, git_out, make_agent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "parser app"
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


def sources(agent: Agent) -> dict:
    return Agent(agent.home, agent.name).config.sources.__dict__


@pytest.mark.parametrize("harness, key", [("claude-code", "claude_code"), ("codex", "codex")])
def test_uninstall_stops_reading_the_projects_transcripts(harness, key, project, evolve_home, capsys):
    agent = make_agent("helper")
    before = (agent.path / "agent.toml").read_bytes()
    assert cli.main(["install", harness, "--agent", "helper", "--project", str(project)]) == 0
    assert sources(agent)[key], "install makes the agent read the project"
    capsys.readouterr()

    assert cli.main(["uninstall", harness, "--agent", "helper", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert sources(agent)[key] == []  # the watcher, score and reflect no longer read the project
    assert (agent.path / "agent.toml").read_bytes() == before  # exactly what install added, gone
    last = agent.log(limit=1)[0]
    what = "Claude Code transcripts" if key == "claude_code" else "Codex rollouts"
    assert last.subject == f"uninstall(helper): stop reading {what}" and last.kind == "uninstall"
    assert (last.author, last.email) == ("evolve", "evolve@localhost")
    assert "agent helper no longer reads" in out and f"commit {last.sha[:12]}" in out
    assert "repository is unchanged" not in out
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_an_entry_the_person_had_before_the_install_stays(project, evolve_home, capsys):
    agent = make_agent("helper")
    pattern = claude_code.install(Home.resolve(), "helper", "project", str(project))["sources"]
    claude_code.uninstall(Home.resolve(), "helper", "project", str(project))
    toml = agent.path / "agent.toml"
    toml.write_text(toml.read_text().replace("claude_code = []", f'claude_code = ["{pattern}"]'))
    git(agent.path, "commit", "-qam", "I want this project read")  # the person's own entry
    mine = git_out(agent.path, "rev-parse", "HEAD")

    assert cli.main(["install", "claude-code", "--agent", "helper", "--project", str(project)]) == 0
    assert git_out(agent.path, "rev-parse", "HEAD") == mine  # nothing to add: it was there
    capsys.readouterr()
    assert cli.main(["uninstall", "claude-code", "--agent", "helper", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert sources(agent)["claude_code"] == [pattern] and git_out(agent.path, "rev-parse", "HEAD") == mine
    assert f"agent helper still reads {pattern}" in out and str(toml) in out


def test_a_synced_agent_loses_the_entry_from_this_machines_own_file(project, evolve_home, capsys):
    agent = make_agent("helper")
    local = agent.local_config_path
    local.write_text("# this machine's own settings\n[sources]\ngeneric = []\n")  # a synced agent's
    claude_code.install(Home.resolve(), "helper", "project", str(project))
    assert tomllib.loads(local.read_text())["sources"]["claude_code"]
    head = git_out(agent.path, "rev-parse", "HEAD")

    args = ["uninstall", "claude-code", "--agent", "helper", "--project", str(project), "--json"]
    assert cli.main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["sources_removed"] == str(local) and result["sources_kept"] is None
    assert local.read_text() == "# this machine's own settings\n[sources]\ngeneric = []\n"
    assert git_out(agent.path, "rev-parse", "HEAD") == head  # never committed: it is this machine's


def test_two_codex_homes_reading_one_folder_keep_it_until_the_last_uninstall(
    project, evolve_home, tmp_path, monkeypatch
):
    agent = make_agent("helper")
    home = Home.resolve()
    codex.install(home, "helper", "project", str(project))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "second-codex"))
    codex.install(home, "helper", "project", str(project))
    monkeypatch.setenv("CODEX_HOME", str(Path.home() / ".codex"))
    first = codex.uninstall(home, "helper", "project", str(project))
    assert first["sources_removed"] is None and sources(agent)["codex"] == [str(project.resolve())]
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "second-codex"))
    last = codex.uninstall(home, "helper", "project", str(project))
    assert last["sources_removed"] and sources(agent)["codex"] == []


def test_removing_an_agent_leaves_its_repository_as_it_was(project, evolve_home, capsys):
    agent = make_agent("helper")
    claude_code.install(Home.resolve(), "helper", "project", str(project))
    head = git_out(agent.path, "rev-parse", "HEAD")
    assert cli.main(["remove", "helper"]) == 0
    archived = next((evolve_home / "archive").iterdir())
    assert git_out(archived, "rev-parse", "HEAD") == head  # no uninstall commit in the archive
