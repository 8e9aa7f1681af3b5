"""`evolve install/uninstall codex`: the person's hooks.json, skill links, sources, trust.

Reversibility is checked on bytes (hooks.json, the skills folders, `.git/info/exclude`);
the hook command must be one frozen string for every project and agent of a home.
"""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from evolve import cli, launch
from evolve.commands.doctor import diagnose
from evolve.home import Home
from evolve.integrations import claude_code, codex
from evolve.observe.records import apply_hook_records, drain_pending
from evolve.store import codex_rollouts, ledger, spool
from evolve.workspace import links
from tests.helpers import evolve_commit, git, git_out, make_agent, skill_text
from tests.test_install import snapshot

PERSON_HOOKS = """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}
    ]
  },
  "note": "mine"
}"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop app"  # a space: quoting must hold
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


@pytest.fixture
def agent(evolve_home):
    agent = make_agent("shop")
    evolve_commit(
        agent, {f"skills/{n}/SKILL.md": skill_text(n).encode() for n in ("release-cut", "fix-tests")}
    )
    return agent


def entries(event: str) -> list[str]:
    doc = json.loads(codex.hooks_file().read_text())
    return [h["command"] for group in doc["hooks"].get(event, []) for h in group["hooks"]]


def test_install_twice_then_uninstall_leaves_the_persons_files_byte_identical(agent, project):
    home = Home.resolve()
    hooks = codex.hooks_file()
    hooks.parent.mkdir(parents=True)
    hooks.write_text(PERSON_HOOKS)
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text(exclude.read_text() + "*.log")  # no newline at the end
    before = snapshot([hooks, project / ".agents", exclude])

    first = codex.install(home, "shop", "project", str(project))
    assert first["settings"] == str(hooks) and first["settings_changed"] and not first["trusted"]
    doc = json.loads(hooks.read_text())
    assert (
        doc["note"] == "mine"
        and doc["hooks"]["PreToolUse"][:-1] == json.loads(PERSON_HOOKS)["hooks"]["PreToolUse"]
    )
    [start], [stop], guard = entries("SessionStart"), entries("Stop"), entries("PreToolUse")[-1]
    assert f"exec {shlex.join(shlex.split(start)[:4])} codex pre-tool-use --home" in guard
    argv = shlex.split(start)
    assert argv[1:4] == ["-I", "-c", launch.HOOK] and argv[4:] == [
        "codex",
        "session-start",
        "--home",
        str(home.root),
    ]
    assert "shop" not in start and str(project) not in start  # no agent, no project in it
    assert shlex.split(stop)[4:6] == ["codex", "stop"]
    for name in ("release-cut", "fix-tests"):
        assert (project / ".agents" / "skills" / name).readlink() == agent.skills_dir / name
    block = exclude.read_text()
    assert "*.log\n# >>> evolve: Codex files of agent shop in . " in block
    assert "/.agents/skills/release-cut\n" in block and "settings" not in block
    assert git_out(project, "status", "--porcelain") == ""  # nothing for anyone to commit
    assert not (project / "AGENTS.md").exists() and not (project / ".codex").exists()
    agent_toml = tomllib.loads((agent.path / "agent.toml").read_text())
    assert agent_toml["sources"]["codex"] == [str(project.resolve())]

    second = codex.install(home, "shop", "project", str(project))
    assert not second["settings_changed"] and entries("SessionStart") == [start]  # idempotent

    codex.uninstall(home, "shop", "project", str(project))
    assert snapshot([hooks, project / ".agents", exclude]) == before
    assert links.load_installs(home, "codex") == []


def test_one_frozen_command_for_every_project_and_agent(agent, project, tmp_path):
    home = Home.resolve()
    codex.install(home, "shop", "project", str(project))
    first = codex.hooks_file().read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    make_agent("docs")
    assert not codex.install(home, "docs", "project", str(other))["settings_changed"]
    assert codex.hooks_file().read_bytes() == first  # Codex's trust of the hooks still holds
    codex.uninstall(home, "shop", "project", str(project))
    assert entries("Stop")  # the other install still needs them
    assert not (project / ".agents").exists()
    codex.uninstall(home, "docs", "project", str(other))
    assert not codex.hooks_file().exists()  # evolve created it: gone with the last install


def test_user_scope_links_into_the_home_and_reads_every_rollout(agent):
    home = Home.resolve()
    result = codex.install(home, "shop", "user")
    assert result["sources"] == "*"
    assert (Path.home() / ".agents" / "skills" / "fix-tests").is_symlink()
    assert tomllib.loads((agent.path / "agent.toml").read_text())["sources"]["codex"] == ["*"]
    codex.uninstall(home, "shop", "user")
    assert not (Path.home() / ".agents").exists()


def test_an_agent_installed_for_claude_code_and_codex_at_once(agent, project):
    home = Home.resolve()
    claude_code.install(home, "shop", "project", str(project))
    codex.install(home, "shop", "project", str(project))
    evolve_commit(agent, {"skills/new-one/SKILL.md": skill_text("new-one").encode()})
    assert links.sync_links(home, "shop")["added"] == ["new-one", "new-one"]  # both harnesses
    assert (project / ".claude" / "skills" / "new-one").is_symlink()
    assert (project / ".agents" / "skills" / "new-one").is_symlink()
    sources = tomllib.loads((agent.path / "agent.toml").read_text())["sources"]
    assert sources["claude_code"] and sources["codex"] == [str(project.resolve())]
    codex.uninstall(home, "shop", "project", str(project))
    assert (project / ".claude" / "skills" / "new-one").is_symlink() and not (project / ".agents").exists()
    assert "Claude Code files of agent shop" in (project / ".git" / "info" / "exclude").read_text()


def test_the_cli_installs_says_the_hooks_wait_for_trust_and_uninstalls(agent, project, capsys):
    assert cli.main(["install", "codex", "--agent", "shop", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert "wait for your trust" in out and "/hooks" in out and str(codex.hooks_file()) in out
    # newcomer 15, 17: the file is new ("created:"), and what /hooks shows is said word for word
    assert out.startswith("created: evolve's Codex hooks (one command for every project) in ")
    hooks = json.loads(codex.hooks_file().read_text())["hooks"]
    shown = {entry["command"] for groups in hooks.values() for group in groups for entry in group["hooks"]}
    assert shown and all(f": {command}\n" in out for command in shown), out
    assert cli.main(["install", "codex", "--agent", "shop", "--project", str(project)]) == 0
    assert capsys.readouterr().out.startswith("already in place: ")
    assert cli.main(["uninstall", "codex", "--agent", "shop", "--project", str(project), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries_removed"] is True


def test_codex_home_is_honoured(agent, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    codex.install(Home.resolve(), "shop", "project", str(project))
    assert (tmp_path / "elsewhere" / "hooks.json").is_file()
    assert not (Path.home() / ".codex").exists()


def rollout(cwd: Path, name: str = "rollout-2026-12-01T10-00-00-01a2.jsonl", day: str = "2026/12/01") -> Path:
    path = Path(codex_rollouts.sessions_dir()) / day / name
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "timestamp": "2026-12-01T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "s1", "cwd": str(cwd)},
    }
    ask = {
        "timestamp": "2026-12-01T10:00:01.000Z",
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "hi"},
    }
    path.write_text(json.dumps(meta) + "\n" + json.dumps(ask) + "\n")
    return path


def state_of(home: Home) -> str:
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)
    [state] = codex.install_states(home)
    return state["state"]


def test_doctor_and_status_tell_waiting_for_trust_from_working(agent, project, capsys):
    home = Home.resolve()
    codex.install(home, "shop", "project", str(project))
    assert state_of(home) == codex.IDLE
    rollout(project / "src")  # a session ran in the project, and no hook said a word: untrusted
    assert state_of(home) == codex.WAITING
    [finding] = [f for f in diagnose(home) if f["where"].startswith("codex install")]
    assert (
        finding["level"] == "warning"
        and "waiting for trust" in finding["problem"]
        and "/hooks" in finding["problem"]
    )
    spool.append(
        home.spool_dir, {"event": "codex_hook", "agent": "shop", "harness": "codex", "cwd": str(project)}
    )
    assert cli.main(["status", "--json"]) == 0
    [install] = json.loads(capsys.readouterr().out)["codex"]
    assert install["state"] == codex.WORKING
    assert [f["level"] for f in diagnose(home) if f["where"].startswith("codex install")] == ["ok"]
    # changed hooks (another interpreter) wait for trust again
    codex.install(home, "shop", "project", str(project), python=sys.executable + "-other")
    assert state_of(home) != codex.WORKING


def test_a_record_from_another_folder_or_before_the_change_proves_nothing(agent, project, tmp_path):
    home = Home.resolve()
    codex.install(home, "shop", "project", str(project))
    [record] = links.load_installs(home, "codex")
    with ledger.opened(home.state_db) as conn:
        apply_hook_records(
            conn,
            home,
            [
                {
                    "event": "codex_hook",
                    "agent": "shop",
                    "harness": "codex",
                    "cwd": str(tmp_path),
                    "at": 1e12,
                },
                {"event": "codex_hook", "agent": "shop", "harness": "codex", "cwd": str(project), "at": 1.0},
                {"event": "codex_hook", "agent": "docs", "harness": "codex", "cwd": str(project), "at": 1e12},
            ],
        )
    assert links.load_installs(home, "codex")[0]["hook_seen_at"] is None


def test_rollouts_are_the_agents_by_their_first_line(agent, project, tmp_path):
    from evolve.observe.ingest import source_files
    from evolve.watch.sources import AgentWatch

    home = Home.resolve()
    codex.install(home, "shop", "project", str(project))
    inside = rollout(project / "sub", "rollout-2026-12-01T10-00-00-aaaa.jsonl")
    outside = rollout(tmp_path, "rollout-2026-12-01T11-00-00-bbbb.jsonl", "2026/12/02")
    writing = Path(codex_rollouts.sessions_dir()) / "2026/12/02/rollout-2026-12-01T12-00-00-cccc.jsonl"
    writing.write_bytes(b'{"timestamp": "2026-12-01T12:00:00Z", "type": "session_')  # first line unfinished
    config = agent.config
    assert source_files(config.sources) == [(str(inside), "codex")]
    watch = AgentWatch("shop", agent.path, config.sources, ())
    [(fmt, pattern)] = watch.patterns
    assert fmt == "codex" and pattern.startswith(codex_rollouts.sessions_dir())
    assert (watch.owns(fmt, str(inside)), watch.owns(fmt, str(outside)), watch.owns(fmt, str(writing))) == (
        True,
        False,
        None,
    )
    (tmp_path / "alias").symlink_to(project)
    aliased = rollout(tmp_path / "alias", "rollout-2026-12-01T13-00-00-dddd.jsonl", "2026/12/03")
    assert watch.owns(fmt, str(aliased)) is True  # resolved, as the install resolved the project


def test_evolve_observe_knows_a_rollout_by_its_first_line(agent, project, capsys):
    path = rollout(project)
    assert cli.main(["observe", "shop", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 1
    with ledger.opened(Home.resolve().state_db) as conn:
        assert ledger.cursor_adapters(conn, "shop") == {str(path): "codex"}
    assert cli.main(["observe", "shop", str(path), "--format", "codex"]) == 0
