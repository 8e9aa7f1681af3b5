"""Where the pre-commit hook lives and what it runs, wherever a person puts the agent.

Its interpreter, odd home paths, linked worktrees, moved homes, folders a person made, and a
hook of the person's own kept aside.

Split from test_precommit.py (what the hook checks) to keep each module readable in one sitting.
"""

from __future__ import annotations

import shutil
import sys

import pytest

from evolve.home import Home
from evolve.workspace.agent import Agent
from evolve.workspace.template import install_precommit_hook
from tests.helpers import commit_all, git, head, make_agent, write_skill
from tests.test_precommit import BROKEN, hook_path


@pytest.fixture
def agent(evolve_home):
    return make_agent("demo")


def test_missing_interpreter_warns_and_lets_the_commit_pass(agent, tmp_path):
    hook = hook_path(agent)
    hook.write_text(hook.read_text().replace(sys.executable, str(tmp_path / "gone" / "python3")))
    write_skill(agent.path, "my-skill", text=BROKEN)
    proc = commit_all(agent.path, "evolve was uninstalled")
    assert proc.returncode == 0
    assert "evolve: not installed" in proc.stderr and "not checked" in proc.stderr


def test_an_interpreter_without_evolve_warns_and_lets_the_commit_pass(agent, tmp_path):
    fake = tmp_path / "python-without-evolve"
    fake.write_text("#!/bin/sh\necho 'No module named evolve' >&2\nexit 1\n")
    fake.chmod(0o755)
    hook = hook_path(agent)
    hook.write_text(hook.read_text().replace(sys.executable, str(fake)))
    write_skill(agent.path, "my-skill", text=BROKEN)
    proc = commit_all(agent.path, "evolve broken")
    assert proc.returncode == 0
    assert "skills were not checked" in proc.stderr


def test_the_hook_runs_evolve_by_absolute_interpreter_path(agent):
    text = hook_path(agent).read_text()
    assert sys.executable in text
    assert text.startswith("#!/bin/sh")


def test_a_home_path_with_quotes_and_spaces(tmp_path):
    home = tmp_path / "it's my home"
    agent = Agent.create("quoted", Home.resolve(home))
    write_skill(agent.path, "good-one")
    assert commit_all(agent.path, "ok").returncode == 0
    write_skill(agent.path, "bad-one", text=BROKEN)
    proc = commit_all(agent.path, "bad", check=False)
    assert proc.returncode != 0 and "differs from its folder" in proc.stderr


def test_a_commit_in_a_linked_worktree_is_checked_too(agent, tmp_path):
    """`git worktree add`: the hook runs there too (a relative core.hooksPath ran none)."""
    other = tmp_path / "second-checkout"
    git(agent.path, "worktree", "add", "-q", str(other), "-b", "side")
    before = head(other)
    write_skill(other, "my-skill", text=BROKEN)
    proc = commit_all(other, "broken", check=False)
    assert proc.returncode != 0 and "differs from its folder" in proc.stderr
    assert head(other) == before


def test_a_moved_home_gets_its_hooks_back_from_the_next_command(evolve_home, tmp_path, monkeypatch):
    """The hooks' folder is named whole (a linked worktree needs it): a moved home is set up again at once."""
    from evolve import cli

    assert cli.main(["init", "demo"]) == 0
    moved = tmp_path / "moved-home"
    evolve_home.rename(moved)
    monkeypatch.setenv("EVOLVE_HOME", str(moved))
    assert cli.main(["pause", "demo"]) == 0
    write_skill(moved / "agents" / "demo", "my-skill", text=BROKEN)
    proc = commit_all(moved / "agents" / "demo", "broken", check=False)
    assert proc.returncode != 0 and "differs from its folder" in proc.stderr


@pytest.mark.parametrize("reading", [["status"], ["skills", "demo"], ["log", "demo"]])
def test_a_moved_home_gets_its_pre_commit_hook_back_from_a_reading_command(
    evolve_home, tmp_path, monkeypatch, reading
):
    """After `mv`, a person who only looks (status, skills, log) before committing by hand is checked too.

    A reading command sets up the agents' git again (their own .git only): the hook
    commands in the harnesses' files and the layout record wait for the next writing command.
    """
    from evolve import cli
    from evolve.integrations import upgrade

    assert cli.main(["init", "demo"]) == 0
    moved = tmp_path / "moved-home"
    evolve_home.rename(moved)
    monkeypatch.setenv("EVOLVE_HOME", str(moved))
    assert cli.main(reading) == 0
    assert upgrade.applied(Home.resolve()) == 0  # the rest is the next writing command's
    write_skill(moved / "agents" / "demo", "my-skill", text=BROKEN)
    proc = commit_all(moved / "agents" / "demo", "broken", check=False)
    assert proc.returncode != 0 and "differs from its folder" in proc.stderr


@pytest.mark.parametrize("how", ["renamed", "cloned by hand", "cloned again under its name"])
def test_an_agent_folder_a_person_made_gets_its_hook_from_the_next_command(evolve_home, tmp_path, how):
    """A folder renamed, or a repository cloned into agents/ by hand, gets its hook from a writing command.

    Its hooks folder is not the one core.hooksPath names (or none is named): git ran no hook
    there until `doctor --fix`.
    """
    from evolve import cli

    assert cli.main(["init", "demo"]) == 0
    agents = evolve_home / "agents"
    if how == "renamed":
        (agents / "demo").rename(agents / "other")
        name = "other"
    elif how == "cloned by hand":
        git(agents, "clone", "-q", str(agents / "demo"), "other")
        name = "other"
    else:
        git(tmp_path, "clone", "-q", str(agents / "demo"), "copy")
        shutil.rmtree(agents / "demo")
        git(tmp_path, "clone", "-q", str(tmp_path / "copy"), str(agents / "demo"))
        name = "demo"
    assert cli.main(["pause", name]) == 0
    write_skill(agents / name, "my-skill", text=BROKEN)
    proc = commit_all(agents / name, "broken", check=False)
    assert proc.returncode != 0 and "differs from its folder" in proc.stderr


def test_installing_keeps_a_foreign_hook_aside(agent, evolve_home):
    hook = hook_path(agent)
    hook.write_text("#!/bin/sh\necho mine\n")
    install_precommit_hook(agent.path, evolve_home)
    assert (hook.parent / "pre-commit.before-evolve").read_text() == "#!/bin/sh\necho mine\n"
    # reinstalling over our own hook does not clobber the saved one
    install_precommit_hook(agent.path, evolve_home)
    assert (hook.parent / "pre-commit.before-evolve").read_text() == "#!/bin/sh\necho mine\n"
