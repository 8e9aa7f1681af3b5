"""What an older evolve installed is brought up to date by the next writing command or doctor.

Played as a person who installed evolve long ago: an agent repository with the first
pre-commit hook (no -P, no local core.hooksPath) and Claude Code settings holding hook
commands in an older form beside the person's own hook. No reinstall is asked of them.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from evolve import cli, launch
from evolve.home import Home
from evolve.integrations import claude_code, codex, hookfile, upgrade
from evolve.observe.records import drain_pending
from evolve.store import ledger
from evolve.workspace import links
from evolve.workspace.template import HOOK_MARKER, hook_path, hooks_folder, precommit_hook_text
from tests.helpers import git, git_out, make_agent, skill_text
from tests.test_install_codex import rollout

V1_HOOK = """#!/bin/sh
# evolve-managed-hook: pre-commit v1
EVOLVE_PYTHON='{python}'
export EVOLVE_HOME='{home}'
if [ -x "$EVOLVE_PYTHON" ]; then
    "$EVOLVE_PYTHON" -m evolve.precommit
    status=$?
    if [ "$status" -eq 0 ] || [ "$status" -eq 65 ]; then
        exit "$status"
    fi
fi
exit 0
"""


def as_older_evolve_recorded(home: Home) -> None:
    """Install records as an evolve before this one kept them: without the entries evolve wrote."""
    for harness in links.HARNESSES:
        installs = links.load_installs(home, harness)
        for record in installs:
            record.pop("entries", None)
        links.save_installs(home, harness, installs)


@pytest.fixture
def old_install(evolve_home, tmp_path):
    """An agent as evolve 0.1 left it, and a project with its Claude Code hooks installed."""
    agent = make_agent("demo")
    home = Home.resolve()
    hook_path(agent.path).write_text(V1_HOOK.format(python=sys.executable, home=home.root))
    git(agent.path, "config", "--local", "--unset", "core.hooksPath")
    (home.root / upgrade.VERSION_FILE).unlink(missing_ok=True)
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    mine = {"type": "command", "command": "echo mine"}
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [mine]}]}, "theme": "dark"}, indent=2) + "\n"
    )
    claude_code.install(home, "demo", project=str(project))
    settings = project / ".claude" / "settings.local.json"
    doc = json.loads(settings.read_text())
    for groups in doc["hooks"].values():  # the older command form: -P, not isolated
        for group in groups:
            for hook in group["hooks"]:
                hook["command"] = hook["command"].replace(" -I -c ", " -P -c ")
    settings.write_text(json.dumps(doc, indent=2) + "\n")
    (home.root / upgrade.VERSION_FILE).unlink(missing_ok=True)
    as_older_evolve_recorded(home)
    return home, agent, settings


def test_a_writing_command_brings_hooks_and_hook_commands_up_to_date(old_install, capsys):
    home, agent, settings = old_install
    assert cli.main(["pause", "demo"]) == 0
    err = capsys.readouterr().err
    assert "demo: git setup brought up to date" in err
    assert f"demo: Claude Code hook commands in {settings} brought up to date" in err
    assert hook_path(agent.path).read_text() == precommit_hook_text(home.root)
    assert f" -I -c '{launch.PRECOMMIT}'" in hook_path(agent.path).read_text()
    assert git_out(agent.path, "config", "--local", "core.hooksPath") == hooks_folder(agent.path)
    doc = json.loads(settings.read_text())
    commands = [h["command"] for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]
    assert "echo mine" in commands and doc["theme"] == "dark"
    ours = [c for c in commands if hookfile.MARK in c]
    assert len(ours) == len(claude_code.EVENTS) and all(" -I -c " in c for c in ours)
    assert upgrade.applied(home) == upgrade.LAYOUT
    assert cli.main(["resume", "demo"]) == 0
    assert capsys.readouterr().err == ""  # done once: the next command only reads the version


def test_a_person_who_removed_evolves_entries_is_not_overridden(old_install, capsys):
    home, _, settings = old_install
    settings.write_text(json.dumps({"theme": "dark"}) + "\n")
    assert cli.main(["pause", "demo"]) == 0
    assert "Claude Code" not in capsys.readouterr().err
    assert json.loads(settings.read_text()) == {"theme": "dark"}


def test_doctor_applies_it_and_says_what_it_fixed(old_install, capsys):
    home, agent, _ = old_install
    assert cli.main(["doctor", "--json"]) in (0, 1)
    findings = json.loads(capsys.readouterr().out)["findings"]
    fixed = [f for f in findings if f["problem"].startswith("fixed: git setup brought up to date")]
    assert [f["where"] for f in fixed] == ["demo"]
    assert not [f for f in findings if f["where"] == "demo: .git/hooks/pre-commit"]
    assert HOOK_MARKER in hook_path(agent.path).read_text()


def test_a_home_evolve_init_begins_is_current_and_an_older_one_still_gets_the_check(evolve_home, capsys):
    home = Home.resolve()
    assert cli.main(["init", "first"]) == 0
    assert upgrade.applied(home) == upgrade.LAYOUT  # nothing older here: no check on the next command
    (home.root / upgrade.VERSION_FILE).unlink()  # as an older evolve left it: agents, no layout recorded
    hook_path(home.agent_dir("first")).write_text(V1_HOOK.format(python=sys.executable, home=home.root))
    assert cli.main(["init", "second"]) == 0  # the command's own check brings "first" up to date …
    assert "first: git setup brought up to date" in capsys.readouterr().err
    assert hook_path(home.agent_dir("first")).read_text() == precommit_hook_text(home.root)
    assert upgrade.applied(home) == upgrade.LAYOUT  # … and records it, not the second init


def test_a_home_with_older_installs_but_no_agents_folder_still_gets_the_check(old_install, capsys):
    """A person starting over removed the agents folder; the projects' older hook commands remain."""
    home, agent, settings = old_install
    shutil.rmtree(home.agents_dir)
    assert cli.main(["init", "demo"]) == 0
    assert upgrade.applied(home) < upgrade.LAYOUT  # an older evolve's installs are here
    assert cli.main(["pause", "demo"]) == 0
    assert f"demo: Claude Code hook commands in {settings} brought up to date" in capsys.readouterr().err


def test_a_layout_record_that_cannot_be_written_fails_no_command(evolve_home):
    home = Home.resolve()
    (home.root / upgrade.VERSION_FILE).mkdir(parents=True)  # garbage where the record goes
    assert cli.main(["init", "first"]) == 0
    assert cli.main(["pause", "first"]) == 0
    assert upgrade.applied(home) == 0


def test_a_hook_that_cannot_be_written_is_one_line_and_every_command_still_runs(evolve_home, capsys):
    """A hook evolve cannot write stopped every writing command, and doctor, with an internal error.

    A hooks folder a person made read-only; here a folder where the hook goes (it fails as root too).
    """
    agent = make_agent("demo")
    other = make_agent("other")
    home = Home.resolve()
    hook_path(agent.path).unlink()
    hook_path(agent.path).mkdir()
    hook_path(other.path).write_text(V1_HOOK.format(python=sys.executable, home=home.root))
    (home.root / upgrade.VERSION_FILE).unlink(missing_ok=True)
    capsys.readouterr()
    assert cli.main(["pause", "demo"]) == 0
    err = capsys.readouterr().err
    assert "demo: git setup not brought up to date (evolve's pre-commit hook is missing): " in err
    assert "other: git setup brought up to date" in err  # the next agent is still set up
    assert upgrade.applied(home) < upgrade.LAYOUT  # the next command tries again
    assert cli.main(["doctor"]) in (0, 1)
    said = capsys.readouterr().out
    assert "demo: .git/hooks/pre-commit: evolve's pre-commit hook is missing" in said
    assert "warning: demo: git setup not brought up to date" in said  # not "fixed: … not brought up"


def test_a_persons_own_hooks_path_is_kept_by_an_upgrade_and_taken_only_by_doctor_fix(evolve_home, capsys):
    """husky: `git config core.hooksPath .husky` in the agent repository stays theirs.

    An upgrade pointed it back at evolve's folder, and their hooks stopped running unasked.
    """
    agent = make_agent("demo")
    home = Home.resolve()
    husky = agent.path / ".husky"
    husky.mkdir()
    (husky / "pre-commit").write_text("#!/bin/sh\necho husky ran >&2\n")
    (husky / "pre-commit").chmod(0o755)
    git(agent.path, "config", "core.hooksPath", ".husky")
    hook_path(agent.path).write_text(
        V1_HOOK.format(python=sys.executable, home=home.root)
    )  # an older evolve's
    (home.root / upgrade.VERSION_FILE).write_text(f"{upgrade.LAYOUT - 1}\n")
    capsys.readouterr()
    assert cli.main(["pause", "demo"]) == 0
    err = capsys.readouterr().err
    assert git_out(agent.path, "config", "--local", "core.hooksPath") == ".husky"  # theirs
    assert hook_path(agent.path).read_text() == precommit_hook_text(home.root)  # evolve's own: current
    assert "demo: core.hooksPath .husky is yours: kept, so evolve's pre-commit check does not run" in err
    assert upgrade.applied(home) == upgrade.LAYOUT  # said once, not at every command
    (home.root / upgrade.VERSION_FILE).write_text(f"{upgrade.LAYOUT - 1}\n")  # due again
    assert cli.main(["doctor"]) in (0, 1)
    assert "warning: demo: core.hooksPath .husky is yours: kept" in capsys.readouterr().out  # no "fixed:"
    assert cli.main(["doctor", "--fix"]) in (0, 1)
    assert "core.hooksPath is .husky, not " in capsys.readouterr().out  # what --fix replaced, named
    assert git_out(agent.path, "config", "--local", "core.hooksPath") == hooks_folder(agent.path)


@pytest.mark.parametrize("where", ["hooks/pre-commit", "info/attributes"])
def test_a_fifo_where_the_hook_or_attributes_go_holds_no_command(evolve_home, where):
    # the upgrade read them with a plain open, which waits for a writer forever: `evolve pause`
    # and `evolve doctor` never came back
    import os

    agent = make_agent("demo")
    home = Home.resolve()
    (agent.path / ".git" / where).unlink()
    os.mkfifo(agent.path / ".git" / where)
    (home.root / upgrade.VERSION_FILE).unlink()
    for command in (["pause", "demo"], ["doctor"]):
        ran = subprocess.run([sys.executable, "-m", "evolve", *command], capture_output=True, timeout=30)
        assert ran.returncode in (0, 1), ran.stderr
        said = (ran.stdout + ran.stderr).decode()
        assert "demo: git setup not brought up to date" in said or "demo: .git/hooks/pre-commit" in said


def test_a_fifo_where_the_layout_record_goes_holds_no_command(evolve_home):
    # every writing command reads the record first: a plain read of a FIFO waited forever
    import os

    make_agent("first")
    home = Home.resolve()
    (home.root / upgrade.VERSION_FILE).unlink()
    os.mkfifo(home.root / upgrade.VERSION_FILE)
    ran = subprocess.run([sys.executable, "-m", "evolve", "pause", "first"], capture_output=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    assert upgrade.applied(home) == upgrade.LAYOUT  # the record written in its place


def test_a_global_hooks_path_cannot_switch_the_agent_repos_checks_off(evolve_home, tmp_path, monkeypatch):
    elsewhere = tmp_path / "global-hooks"
    elsewhere.mkdir()
    gitconfig = tmp_path / "gitconfig-with-hookspath"
    gitconfig.write_text(
        "[user]\n\tname = P\n\temail = p@example.test\n[init]\n\tdefaultBranch = main\n"
        f"[core]\n\thooksPath = {elsewhere}\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    agent = make_agent("demo")
    folder = agent.path / "skills" / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_text("not-broken"))
    git(agent.path, "add", "-A")
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", "mine"], cwd=agent.path, capture_output=True, text=True
    )
    assert proc.returncode == 1 and "differs from its folder" in proc.stderr


def test_a_repository_a_global_autocrlf_converted_gets_git_bytes_back_and_keeps_its_authors(
    fake_messages_api, monkeypatch, capsys
):
    """Red-team 2, finding 3: one checkout under core.autocrlf=true made evolve claim every line."""
    import os

    from tests.people import STRATEGIES, memo

    agent = make_agent("a")
    home = Home.resolve()
    for key in ("core.autocrlf",):  # an agent from before layout 3: no byte-exact settings
        git(agent.path, "config", "--local", "--unset", key)
    (agent.path / ".git" / "info" / "attributes").unlink()
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as handle:
        handle.write("[core]\n\tautocrlf = true\n")
    path = agent.path / "memo.md"
    path.write_text(path.read_text().replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n- MY OWN LINE\n"))
    git(agent.path, "commit", "-qam", "mine")
    path.unlink()
    git(agent.path, "checkout", "--", "memo.md")
    assert b"\r\n" in path.read_bytes()  # what the checkout did
    (home.root / upgrade.VERSION_FILE).unlink(missing_ok=True)
    home.config_file.write_text(
        f'[model]\nbackend = "anthropic"\nbase_url = "{fake_messages_api.url}"\nmax_retries = 0\n'
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake-server-only")
    fake_messages_api.reply_tool({"summary": "s", "operations": [memo("strategies", "- A model strategy.")]})
    assert cli.main(["reflect", "a", "--force"]) == 0
    assert "a: git setup brought up to date" in capsys.readouterr().err
    assert b"\r\n" not in path.read_bytes() and "- MY OWN LINE" in path.read_text()
    stat = git_out(agent.path, "show", "--numstat", "--format=", "HEAD")
    assert stat.split()[:2] == ["1", "0"], stat  # one line in: not a whole-file rewrite
    assert git_out(agent.path, "status", "--porcelain") == ""


# -- layout 4: every command isolated (red-team 3, A4) -------------------------------------------
V2_HOOK = """#!/bin/sh
# evolve-managed-hook: pre-commit v2
# Installed by evolve: checks skills and the memo before a commit of your own.
# Refused commits can be forced with `git commit --no-verify`.
EVOLVE_PYTHON='{python}'
export EVOLVE_HOME='{home}'
if [ -x "$EVOLVE_PYTHON" ]; then
    # -P: nothing in this repository (an `evolve` folder, say) is ever imported instead
    "$EVOLVE_PYTHON" -P -m evolve.precommit
    status=$?
    # 65: evolve refused the commit; any other failure means evolve is broken or gone.
    if [ "$status" -eq 0 ] || [ "$status" -eq 65 ]; then
        exit "$status"
    fi
fi
echo "evolve: not installed at $EVOLVE_PYTHON any more; skills were not checked" >&2
exit 0
"""


def as_layout_3(path) -> None:
    """Hook commands as evolve wrote them up to layout 3: `-P`, not isolated."""
    path.write_text(path.read_text().replace(" -I -c ", " -P -c "))


@pytest.fixture
def layout_3(evolve_home, tmp_path):
    """A home evolve brought to layout 3: Claude Code and (trusted, working) Codex hooks of then."""
    agent = make_agent("demo")
    home = Home.resolve()
    hook_path(agent.path).write_text(V2_HOOK.format(python=sys.executable, home=home.root))
    project = tmp_path / "project"
    project.mkdir()
    claude_code.install(home, "demo", project=str(project))
    codex_hooks = codex.hooks_file()
    codex_hooks.parent.mkdir(parents=True)
    mine = {"type": "command", "command": "~/bin/guard.sh", "timeout": 5}
    codex_hooks.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [mine]}]}}, indent=2) + "\n")
    codex.install(home, "demo", project=str(project))
    settings = project / ".claude" / "settings.local.json"
    for path in (settings, codex_hooks):
        as_layout_3(path)
    with links.registry_lock(home, codex.HARNESS):
        installs = links.load_installs(home, codex.HARNESS)
        installs[0]["hook_seen_at"] = time.time()  # the person trusted them; they ran
        links.save_installs(home, codex.HARNESS, installs)
    (home.root / upgrade.VERSION_FILE).write_text("3\n")
    as_older_evolve_recorded(home)
    return home, agent, project, settings, codex_hooks


def python_argv(command: str) -> list[str]:
    """The interpreter's argv in one of evolve's commands (after `exec` in the guard launcher)."""
    argv = shlex.split(command)
    return argv[argv.index("exec") + 1 :] if "exec" in argv else argv


def commands_of(path) -> list[str]:
    doc = json.loads(path.read_text())
    return [h["command"] for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]


def test_layout_4_isolates_every_command_and_says_codex_waits_for_trust_again(layout_3, capsys):
    home, agent, project, settings, codex_hooks = layout_3
    [state] = codex.install_states(home)
    assert state["state"] == codex.WORKING
    assert cli.main(["pause", "demo"]) == 0
    err = capsys.readouterr().err
    assert "demo: git setup brought up to date" in err
    assert f"demo: Claude Code hook commands in {settings} brought up to date" in err
    assert f"codex: hook commands in {codex_hooks} brought up to date; {codex.TRUST_HINT}" in err
    assert hook_path(agent.path).read_text() == precommit_hook_text(home.root)
    assert f" -I -c '{launch.PRECOMMIT}'" in hook_path(agent.path).read_text()
    for path in (settings, codex_hooks):
        ours = [c for c in commands_of(path) if hookfile.MARK in c]
        assert ours and all(python_argv(c)[1:4] == ["-I", "-c", launch.HOOK] for c in ours)
    assert "~/bin/guard.sh" in commands_of(codex_hooks)  # the person's own hook stays
    events = ("session-start", "stop", "pre-tool-use")
    assert sorted(commands_of(codex_hooks)) == sorted(
        ["~/bin/guard.sh", *(codex.hook_command(sys.executable, home, e) for e in events)]
    )
    [record] = links.load_installs(home, codex.HARNESS)
    assert record["hook_seen_at"] is None and record["hooks_changed_at"] > 0
    rollout(project)  # a Codex session in the project, and the changed hooks did not run
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)
    [state] = codex.install_states(home)
    assert state["state"] == codex.WAITING
    assert upgrade.applied(home) == upgrade.LAYOUT
    assert cli.main(["resume", "demo"]) == 0
    assert capsys.readouterr().err == ""  # once


def test_layout_4_leaves_codex_hooks_a_person_removed_removed(layout_3, capsys):
    home, _, _, _, codex_hooks = layout_3
    codex_hooks.write_text('{"hooks": {}}\n')
    assert cli.main(["pause", "demo"]) == 0
    assert "codex:" not in capsys.readouterr().err
    assert codex_hooks.read_text() == '{"hooks": {}}\n'
    assert links.load_installs(home, codex.HARNESS)[0]["hook_seen_at"] is not None


def test_layout_6_adds_the_guard_hook_to_installs_made_before_it(evolve_home, tmp_path, capsys):
    """An install of layout 4 (no PreToolUse entry) gains it at the next command; nothing else moves."""
    agent = make_agent("demo")
    home = Home.resolve()
    project = tmp_path / "project"
    project.mkdir()
    claude_code.install(home, "demo", project=str(project))
    codex.install(home, "demo", project=str(project))
    settings, codex_hooks = project / ".claude" / "settings.local.json", codex.hooks_file()
    current = {path: path.read_text() for path in (settings, codex_hooks)}
    for path in current:  # as layout 4 wrote them: no PreToolUse
        doc = json.loads(path.read_text())
        del doc["hooks"]["PreToolUse"]
        path.write_text(json.dumps(doc, indent=2) + "\n")
    (home.root / upgrade.VERSION_FILE).write_text("4\n")
    as_older_evolve_recorded(home)
    assert cli.main(["pause", "demo"]) == 0
    err = capsys.readouterr().err
    assert f"demo: Claude Code hook commands in {settings} brought up to date" in err
    assert f"codex: hook commands in {codex_hooks} brought up to date; {codex.TRUST_HINT}" in err
    for path, text in current.items():
        assert json.loads(path.read_text()) == json.loads(text)  # as a fresh install writes them
    [guard] = [c for c in commands_of(settings) if "pre-tool-use" in c]
    assert str(agent.path / "guards.toml") in guard
    assert upgrade.applied(home) == upgrade.LAYOUT


def test_a_home_path_holding_a_line_break_is_checked_once_not_by_every_command(
    evolve_home, monkeypatch, capsys
):
    """The layout record split at the line break: the home never matched it, each command checked all."""
    odd = evolve_home.parent / "my\nhome"
    monkeypatch.setenv("EVOLVE_HOME", str(odd))
    assert cli.main(["init", "demo"]) == 0
    home = Home.resolve()
    assert upgrade.applied(home) == upgrade.LAYOUT
    assert cli.main(["pause", "demo"]) == 0
    assert upgrade.applied(home) == upgrade.LAYOUT
    assert upgrade.ensure_current(home) == []  # nothing due: one read
    moved = evolve_home.parent / "moved\nagain"
    shutil.move(odd, moved)
    monkeypatch.setenv("EVOLVE_HOME", str(moved))
    assert upgrade.applied(Home.resolve()) == 0  # a move is still seen
    assert cli.main(["resume", "demo"]) == 0
    assert upgrade.applied(Home.resolve()) == upgrade.LAYOUT
