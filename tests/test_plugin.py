"""The agent repository as a plugin: its files, and the upgrade that adds or refreshes them.

The upgrade adds the plugin files to an older agent in one commit of evolve's, brings
evolve's older launcher and hooks file up to date, and leaves a person's own as they are.
The launcher run as a harness runs it is in tests/test_plugin_hook.py; the real CLIs load
the plugin in tests/test_conformance_plugin.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from evolve.integrations import plugin, upgrade
from evolve.store.locks import FileLock
from evolve.store.repo import LOCK
from evolve.workspace.agent import Agent
from tests.helpers import evolve_commit, git, git_out, make_agent, parsed_trailers
from tests.plugin_helpers import learned


def manifest(root: Path, name: str = ".claude-plugin/plugin.json") -> dict:
    return json.loads((root / name).read_text())


# -- the files ---------------------------------------------------------------------------------
def test_a_new_agent_is_a_claude_code_and_codex_plugin_with_a_marketplace_of_itself(evolve_home):
    agent = make_agent("shop")
    for path in plugin.FILES:
        assert (agent.path / path).is_file(), path
    assert git_out(agent.path, "status", "--porcelain") == ""  # all in the init commit
    claude, codex_manifest = manifest(agent.path), manifest(agent.path, ".codex-plugin/plugin.json")
    assert claude["name"] == codex_manifest["name"] == "shop"
    assert "version" not in claude and "version" not in codex_manifest  # the commit is the version
    assert claude["description"] and claude["author"]["name"]
    assert codex_manifest["skills"] == "./skills/" and codex_manifest["hooks"] == "./hooks/hooks.json"
    market = manifest(agent.path, ".claude-plugin/marketplace.json")
    assert market["name"] == "shop" and market["plugins"] == [
        {"name": "shop", "source": "./", "description": market["plugins"][0]["description"]}
    ]
    [group] = manifest(agent.path, "hooks/hooks.json")["hooks"]["SessionStart"]
    [hook] = group["hooks"]
    assert hook["command"] == 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/evolve-hook" session-start'
    assert "{{name}}" not in (agent.path / "hooks" / "evolve-hook").read_text()


def older_agent(name: str = "demo") -> Agent:
    """An agent as evolve made it before plugins (layout 4): no plugin files, the layout recorded."""
    agent = learned() if name == "demo" else make_agent(name)
    git(agent.path, "rm", "-r", "-q", ".claude-plugin", ".codex-plugin", "hooks")
    git(agent.path, "commit", "-q", "-m", "an agent from before plugins")
    (agent.home.root / upgrade.VERSION_FILE).write_text(f"{upgrade.LAYOUT - 1}\n")
    return agent


def test_the_upgrade_makes_an_older_agent_a_plugin_in_one_commit_of_evolves(evolve_home):
    agent = older_agent()
    before = git_out(agent.path, "rev-parse", "HEAD")
    notes = upgrade.ensure_current(agent.home)
    assert [n for n in notes if "plugin" in n] == [notes[0]] and notes[0].startswith(
        "demo: shared as a plugin"
    )
    assert git_out(agent.path, "rev-list", "--count", f"{before}..HEAD") == "1"
    assert git_out(agent.path, "log", "-1", "--format=%ae %ce") == "evolve@localhost evolve@localhost"
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Kind"] == "upgrade"
    assert sorted(trailers["Evolve-Files"].split(", ")) == sorted(plugin.FILES)
    changed = git_out(agent.path, "diff", "--name-only", before, "HEAD").splitlines()
    assert sorted(changed) == sorted(plugin.FILES)
    for path, data in plugin.plugin_files("demo").items():
        assert (agent.path / path).read_bytes() == data
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert upgrade.applied(agent.home) == upgrade.LAYOUT
    # idempotent: checked again, nothing to do
    tip = git_out(agent.path, "rev-parse", "HEAD")
    assert upgrade.ensure_current(agent.home, force=True) == []
    assert git_out(agent.path, "rev-parse", "HEAD") == tip


def test_a_persons_own_manifest_and_hooks_are_left_as_they_are(evolve_home):
    agent = older_agent()
    mine = b'{"name": "demo", "version": "2.0.0", "description": "mine"}\n'
    (agent.path / ".claude-plugin").mkdir()
    (agent.path / ".claude-plugin" / "plugin.json").write_bytes(mine)
    git(agent.path, "add", ".claude-plugin/plugin.json")
    git(agent.path, "commit", "-q", "-m", "my own manifest")
    (agent.path / "hooks").mkdir()
    my_hooks = b'{"hooks": {}}\n'
    (agent.path / "hooks" / "hooks.json").write_bytes(my_hooks)  # not even committed
    notes = upgrade.ensure_current(agent.home)
    assert (agent.path / ".claude-plugin" / "plugin.json").read_bytes() == mine
    assert (agent.path / "hooks" / "hooks.json").read_bytes() == my_hooks
    assert "demo: your own .claude-plugin/plugin.json, hooks/hooks.json left as they are" in " ".join(notes)
    added = git_out(agent.path, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert sorted(added) == [
        ".claude-plugin/marketplace.json",
        ".codex-plugin/plugin.json",
        "hooks/evolve-hook",
    ]
    assert git_out(agent.path, "status", "--porcelain") == "?? hooks/hooks.json"


def test_the_upgrade_does_not_wait_on_a_reflection_and_tries_again_later(evolve_home):
    agent = older_agent()
    before = git_out(agent.path, "rev-parse", "HEAD")
    with FileLock(agent.path / ".git" / LOCK):  # a reflection writing, for minutes
        started = time.monotonic()
        notes = upgrade.ensure_current(agent.home)
        waited = time.monotonic() - started
    assert plugin.LOCK_WAIT_S <= waited < plugin.LOCK_WAIT_S + 3
    assert notes == [] and git_out(agent.path, "rev-parse", "HEAD") == before
    assert upgrade.applied(agent.home) == upgrade.LAYOUT - 1  # not done: the next command tries again
    assert upgrade.ensure_current(agent.home)[0].startswith("demo: shared as a plugin")
    assert upgrade.applied(agent.home) == upgrade.LAYOUT


def test_a_staged_plugin_file_is_the_persons_coming_commit(evolve_home):
    agent = older_agent()
    (agent.path / "hooks").mkdir()
    (agent.path / "hooks" / "evolve-hook").write_text("echo mine\n")
    git(agent.path, "add", "hooks/evolve-hook")
    notes = upgrade.ensure_current(agent.home)
    assert (agent.path / "hooks" / "evolve-hook").read_text() == "echo mine\n"
    assert "hooks/evolve-hook" in " ".join(notes) and "left as they are" in " ".join(notes)
    assert "hooks/evolve-hook" not in git_out(agent.path, "show", "--name-only", "--format=", "HEAD")


def test_layout_7_brings_evolves_older_launcher_up_to_date(evolve_home):
    agent = learned()
    launcher = agent.path / "hooks/evolve-hook"
    older = launcher.read_text().replace("while read -r line", "while IFS= read -r line")
    assert older != launcher.read_text()
    evolve_commit(agent, {"hooks/evolve-hook": older.encode()})
    (agent.home.root / upgrade.VERSION_FILE).write_text("6\n")
    notes = upgrade.ensure_current(agent.home)
    assert any(n.startswith("demo: plugin files brought up to date (hooks/evolve-hook") for n in notes)
    assert launcher.read_bytes() == plugin.plugin_files("demo")["hooks/evolve-hook"]


def test_the_upgrade_brings_evolves_older_hooks_file_up_to_date_and_leaves_a_persons(evolve_home):
    """Layout 6: evolve's layout-5 hooks.json gains PreToolUse in one commit; a person's stays."""
    agent = learned()
    older = {
        "hooks": {
            "SessionStart": json.loads((agent.path / "hooks/hooks.json").read_text())["hooks"]["SessionStart"]
        }
    }
    evolve_commit(agent, {"hooks/hooks.json": (json.dumps(older, indent=2) + "\n").encode()})
    (agent.home.root / upgrade.VERSION_FILE).write_text("5\n")
    before = git_out(agent.path, "rev-parse", "HEAD")
    notes = upgrade.ensure_current(agent.home)
    assert any(n.startswith("demo: plugin files brought up to date (hooks/hooks.json") for n in notes)
    assert git_out(agent.path, "rev-list", "--count", f"{before}..HEAD") == "1"
    assert git_out(agent.path, "diff", "--name-only", before, "HEAD") == "hooks/hooks.json"
    assert "PreToolUse" in json.loads((agent.path / "hooks/hooks.json").read_text())["hooks"]
    # a person's own change to it is theirs: the next upgrade leaves it
    mine = {"hooks": {"SessionStart": older["hooks"]["SessionStart"]}, "description": "mine"}
    (agent.path / "hooks/hooks.json").write_text(json.dumps(mine))
    git(agent.path, "commit", "-q", "-am", "my hooks")
    tip = git_out(agent.path, "rev-parse", "HEAD")
    notes = upgrade.ensure_current(agent.home, force=True)
    assert git_out(agent.path, "rev-parse", "HEAD") == tip
    assert any("your own hooks/hooks.json left as it" in n or "hooks/hooks.json" in n for n in notes)


def test_the_plugins_pre_tool_use_matcher_is_the_guards_tools() -> None:
    from evolve.workspace import guards

    hooks = json.loads(plugin.plugin_files("demo")["hooks/hooks.json"])["hooks"]
    [entry] = hooks["PreToolUse"]
    assert entry["matcher"] == guards.MATCHER
    assert entry["hooks"][0]["command"] == 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/evolve-hook" pre-tool-use'
