"""The plugin's hook: the memo at session start, the guards before a tool call.

The hook is run as a harness runs it: `sh <plugin>/hooks/evolve-hook session-start` (or
`pre-tool-use`) with one JSON value on stdin, `evolve` found on PATH (this test's own, from
.venv/bin) or not at all. It steps aside where `evolve install` serves the folder and never
runs a program from the session's folder. The plugin's files and their upgrade are in
tests/test_plugin.py; the real CLIs load the plugin in tests/test_conformance_plugin.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations import claude_code, codex
from evolve.workspace.agent import Agent
from tests.helpers import git, git_out, make_agent
from tests.plugin_helpers import BULLET, learned

EVOLVE_BIN = Path(sys.executable).parent  # where this test's `evolve` script is
TOOLS = ("dirname",)  # what the launcher runs besides sh's builtins


def bare_path(tmp_path: Path, *, evolve: bool) -> str:
    """A PATH of the launcher's tools only, with (`evolve`) or without this test's evolve."""
    folder = tmp_path / ("bin-evolve" if evolve else "bin-bare")
    folder.mkdir(exist_ok=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        if not (folder / tool).exists():
            (folder / tool).symlink_to(found)
    if evolve and not (folder / "evolve").exists():
        (folder / "evolve").symlink_to(EVOLVE_BIN / "evolve")
    return str(folder)


def launch(
    root: Path,
    payload: dict,
    *,
    path: str,
    cwd: Path,
    env: dict | None = None,
    args: tuple[str, ...] = ("session-start",),
) -> subprocess.CompletedProcess:
    """`sh <root>/hooks/evolve-hook ARGS` as a harness runs it (EVOLVE_HOME: the test's)."""
    sh = shutil.which("sh")
    assert sh
    return subprocess.run(
        [sh, str(root / "hooks" / "evolve-hook"), *args],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        timeout=30,
        env={**os.environ, "PATH": path, "EVOLVE_NO_WATCHER": "1", **(env or {})},
    )


def spooled(home: Path) -> list[dict]:
    path = home / "spool" / "hooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- the hook ----------------------------------------------------------------------------------
@pytest.fixture
def shared(evolve_home, tmp_path):
    """A teammate's copy of the agent `demo` (a clone of its repository), and a project folder."""
    agent = learned()
    copy = tmp_path / "teammate" / "demo"
    copy.parent.mkdir()
    git(copy.parent, "clone", "-q", str(agent.path), str(copy))
    project = tmp_path / "project"
    project.mkdir()
    return agent, copy, project


def test_a_teammate_without_evolves_home_gets_the_memo_from_the_plugin(shared, tmp_path, monkeypatch):
    _agent, copy, project = shared
    nobody = tmp_path / "no-home"
    proc = launch(
        copy,
        {"session_id": "s1", "cwd": str(project)},
        path=bare_path(tmp_path, evolve=True),
        cwd=project,
        env={"EVOLVE_HOME": str(nobody)},
    )
    assert proc.returncode == 0 and proc.stderr == b""
    out = proc.stdout.decode()
    assert out.count(BULLET) == 1 and "fix-tests" not in out  # the harness lists the skills itself
    assert not nobody.exists()  # nothing written: no home, no log, no spool


def test_where_the_home_knows_the_agent_the_impressions_are_spooled(shared, evolve_home, tmp_path):
    agent, copy, project = shared
    proc = launch(
        copy, {"session_id": "s2", "cwd": str(project)}, path=bare_path(tmp_path, evolve=True), cwd=project
    )
    assert proc.returncode == 0 and proc.stdout.decode().count(BULLET) == 1
    [record] = spooled(evolve_home)
    assert record["event"] == "impressions" and record["agent"] == "demo" and record["session"] == "s2"
    assert record["skills"] == ["fix-tests"] and len(record["memo"]["strategies"]) == 1
    assert record["tip"] == git_out(copy, "rev-parse", "HEAD")  # the commit the plugin showed
    assert not (evolve_home / "logs" / "hooks.log").exists()


def test_the_plugin_steps_aside_where_evolve_install_serves_the_agent(shared, evolve_home, tmp_path):
    agent, copy, project = shared
    git(project, "init", "-q")
    claude_code.install(Home.resolve(), "demo", project=str(project))
    path = bare_path(tmp_path, evolve=True)
    sub = project / "src"
    sub.mkdir()
    for where in (project, sub):  # Claude Code reads the settings of the git work tree's top
        proc = launch(copy, {"session_id": "s3", "cwd": str(where)}, path=path, cwd=where)
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = launch(copy, {"session_id": "s4", "cwd": str(elsewhere)}, path=path, cwd=elsewhere)
    assert proc.stdout.decode().count(BULLET) == 1
    # a person who took evolve's entries out of the settings gets the plugin's memo again
    settings = project / ".claude" / "settings.local.json"
    settings.write_text(json.dumps({"hooks": {}}))
    proc = launch(copy, {"session_id": "s5", "cwd": str(project)}, path=path, cwd=project)
    assert proc.stdout.decode().count(BULLET) == 1


def test_under_codex_the_memo_is_additional_context_and_codex_installs_win(shared, evolve_home, tmp_path):
    agent, copy, project = shared
    path = bare_path(tmp_path, evolve=True)
    env = {"PLUGIN_ROOT": str(copy)}  # what Codex sets for a plugin's hook
    proc = launch(copy, {"session_id": "s6", "cwd": str(project)}, path=path, cwd=project, env=env)
    context = json.loads(proc.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart" and context["additionalContext"].count(BULLET) == 1
    codex.install(Home.resolve(), "demo", project=str(project))
    proc = launch(copy, {"session_id": "s7", "cwd": str(project)}, path=path, cwd=project, env=env)
    assert proc.returncode == 0 and proc.stdout == b""


def test_a_plugin_root_of_something_else_is_not_codex_and_the_memo_is_not_shown_twice(
    shared, evolve_home, tmp_path
):
    """A stray PLUGIN_ROOT in Claude Code's environment: evolve install serves the folder, so nothing."""
    _agent, copy, project = shared
    claude_code.install(Home.resolve(), "demo", project=str(project))
    elsewhere = tmp_path / "other-plugin"
    elsewhere.mkdir()
    payload = {"session_id": "s12", "cwd": str(project)}
    for stray in (str(elsewhere), "/nonexistent"):
        proc = launch(
            copy, payload, path=bare_path(tmp_path, evolve=True), cwd=project, env={"PLUGIN_ROOT": stray}
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    link = tmp_path / "link-to-copy"  # Codex's own PLUGIN_ROOT, however it spells the folder
    link.symlink_to(copy)
    proc = launch(
        copy, payload, path=bare_path(tmp_path, evolve=True), cwd=elsewhere, env={"PLUGIN_ROOT": str(link)}
    )
    assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_without_evolve_the_launcher_says_so_in_one_line_and_exits_0(shared, tmp_path):
    _agent, copy, project = shared
    proc = launch(
        copy, {"session_id": "s8", "cwd": str(project)}, path=bare_path(tmp_path, evolve=False), cwd=project
    )
    assert proc.returncode == 0 and proc.stdout == b""
    [line] = proc.stderr.decode().splitlines()
    assert "plugin demo" in line and "pipx install evolve-skills" in line


def test_an_evolve_in_the_sessions_folder_never_runs(shared, tmp_path):
    _agent, copy, project = shared
    planted = project / "bin"
    planted.mkdir()
    marker = tmp_path / "ran"
    (planted / "python").write_text(f"#!/bin/sh\n: > {marker}\n")  # a builtin: PATH has no touch
    (planted / "evolve").write_text(f"#!{planted / 'python'}\n")
    for script in planted.iterdir():
        script.chmod(0o755)
    path = f"{planted}:{bare_path(tmp_path, evolve=False)}"
    proc = launch(copy, {"session_id": "s9", "cwd": str(project)}, path=path, cwd=project)
    assert proc.returncode == 0 and proc.stdout == b"" and not marker.exists()
    assert len(proc.stderr.decode().splitlines()) == 1


@pytest.mark.parametrize("spelling", ["//{project}/bin", "{tmp}/elsewhere/../project/bin", "{tmp}/link/bin"])
def test_the_sessions_python_never_runs_however_path_spells_its_folder(shared, tmp_path, spelling):
    """`//p/bin`, `x/../p/bin`, a link to the project: each is the session's folder, so never run."""
    _agent, copy, project = shared
    planted = project / "bin"
    planted.mkdir()
    marker = tmp_path / "ran"
    (planted / "python3").write_text(f"#!/bin/sh\n: > {marker}\n")
    (planted / "python3").chmod(0o755)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(project)
    entry = spelling.format(project=str(project).lstrip("/"), tmp=tmp_path)
    path = f"{entry}:{bare_path(tmp_path, evolve=False)}"
    proc = launch(copy, {"session_id": "s10", "cwd": str(project)}, path=path, cwd=project)
    assert proc.returncode == 0 and proc.stdout == b"" and not marker.exists()


def test_an_evolve_outside_whose_interpreter_is_in_the_sessions_folder_never_runs_it(shared, tmp_path):
    _agent, copy, project = shared
    planted = project / ".venv" / "bin"
    planted.mkdir(parents=True)
    marker = tmp_path / "ran"
    (planted / "python").write_text(f"#!/bin/sh\n: > {marker}\n")
    (planted / "python").chmod(0o755)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evolve").write_text(f"#!{planted / 'python'}\n")
    (outside / "evolve").chmod(0o755)
    path = f"{outside}:{bare_path(tmp_path, evolve=False)}"
    proc = launch(copy, {"session_id": "s11", "cwd": str(project)}, path=path, cwd=project)
    assert proc.returncode == 0 and proc.stdout == b"" and not marker.exists()
    assert "could not start evolve" in proc.stderr.decode()


@pytest.mark.parametrize(
    "argv, why",
    [
        (["claude-code", "session-start", "--plugin", "relative/path"], "is not a plugin's folder"),
        (["claude-code", "stop", "--plugin", "{root}"], "unknown event 'stop' of a claude-code plugin"),
        (["claude-code", "session-start", "--plugin", "{root}", "--agent", "x"], "no --agent"),
        (["claude-code", "session-start", "--plugin", "{empty}"], "holds no plugin manifest"),
    ],
)
def test_a_bad_plugin_call_exits_0_quietly_and_is_logged(shared, evolve_home, tmp_path, argv, why):
    _agent, copy, project = shared
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [a.format(root=copy, empty=empty) for a in argv]
    proc = subprocess.run(
        [sys.executable, "-I", "-c", "import evolve.hookmain as h; h.run()", *argv],
        input=b'{"session_id": "s"}',
        capture_output=True,
        timeout=30,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    assert why in (evolve_home / "logs" / "hooks.log").read_text()


def test_the_launcher_is_posix_sh(evolve_home):
    """Debian's sh (dash) and bash in POSIX mode both parse it: no bashism."""
    launcher = make_agent("shop").path / "hooks" / "evolve-hook"
    for shell in ("dash", "bash"):
        found = shutil.which(shell)
        if found is None:
            continue
        flags = ["--posix", "-n"] if shell == "bash" else ["-n"]
        assert (
            subprocess.run([found, *flags, str(launcher)], capture_output=True, check=False).returncode == 0
        )


# -- what a session through the plugin reports ---------------------------------------------------
def test_a_skill_the_agents_plugin_names_is_the_agents_own(evolve_home, tmp_path):
    """Claude Code and Codex name a plugin's skill `<plugin>:<skill>`: for the agent, it is `<skill>`."""
    from evolve.metrics import usage
    from evolve.store import ledger
    from tests.observe_helpers import Transcript, invocations, observe_paths, stored

    home = Home.resolve()
    learned()
    transcript = Transcript()
    transcript.user("Fix the tests")
    ours = transcript.skill("demo:fix-tests")  # loaded through the plugin
    theirs = transcript.skill("superpowers:brainstorming")  # another plugin's
    transcript.text("Done.")
    with ledger.opened(home.state_db) as conn:
        observe_paths(conn, transcript.write(tmp_path / "s.jsonl"))
        assert [(s, t) for s, _, _, t, _ in invocations(conn)] == [
            ("fix-tests", ours),
            ("superpowers:brainstorming", theirs),
        ]
        assert [s["name"] for s in stored(conn)[0]["skills"]] == ["fix-tests", "superpowers:brainstorming"]
        record = {"event": "invocation", "agent": "demo", "skill": "demo:fix-tests", "session_id": "s2"}
        assert usage.handle_invocation(conn, home, {**record, "tool_use_id": "t2"}) == "invocation"
        assert ("fix-tests", "t2") in [(s, t) for s, _, _, t, _ in invocations(conn)]


# -- guards through the plugin -------------------------------------------------------------------
GUARDS = (
    '[no-npm]\ntool = "shell"\npattern = \'\\bnpm (install|i|add)\\b\'\naction = "deny"\n'
    'lesson = "pnpm"\nmessage = "This repository uses pnpm, never npm."\n'
)
NPM_CALL = {"tool_name": "Bash", "tool_input": {"command": "npm install lodash"}}


def guarded(shared) -> tuple[Agent, Path, Path]:
    """The shared agent with a person's deny guard, as the teammate's clone holds it."""
    agent, copy, project = shared
    (agent.path / "guards.toml").write_text(GUARDS)
    git(agent.path, "add", "guards.toml")
    git(agent.path, "commit", "-q", "-m", "my guard")
    git(copy, "pull", "-q")
    return agent, copy, project


def test_a_teammate_without_evolves_home_is_held_by_the_plugins_guards(shared, tmp_path):
    _agent, copy, project = guarded(shared)
    nobody = tmp_path / "no-home"
    path = bare_path(tmp_path, evolve=True)
    payload = {"session_id": "g1", "cwd": str(project), **NPM_CALL}
    proc = launch(
        copy, payload, path=path, cwd=project, env={"EVOLVE_HOME": str(nobody)}, args=("pre-tool-use",)
    )
    assert proc.returncode == 0 and proc.stderr == b""
    decision = json.loads(proc.stdout)["hookSpecificOutput"]
    assert decision == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "This repository uses pnpm, never npm.",
    }
    pnpm = {**payload, "tool_input": {"command": "pnpm install lodash"}}
    proc = launch(
        copy, pnpm, path=path, cwd=project, env={"EVOLVE_HOME": str(nobody)}, args=("pre-tool-use",)
    )
    assert proc.returncode == 0 and proc.stdout == b""
    assert not nobody.exists()  # nothing written: no cache, no spool, no log


def test_where_the_home_knows_the_agent_a_plugins_guard_is_cached_and_spooled(shared, evolve_home, tmp_path):
    _agent, copy, project = guarded(shared)
    payload = {"session_id": "g2", "cwd": str(project), "tool_use_id": "t1", **NPM_CALL}
    proc = launch(copy, payload, path=bare_path(tmp_path, evolve=True), cwd=project, args=("pre-tool-use",))
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    [record] = spooled(evolve_home)
    assert (record["event"], record["agent"], record["guards"], record["action"]) == (
        "guard",
        "demo",
        ["no-npm"],
        "deny",
    )
    assert (evolve_home / "cache" / "demo" / "plugin-guards.marshal").is_file()


@pytest.mark.parametrize("blank", ["  ", "\t"])
def test_a_guard_table_after_blanks_holds_through_the_plugin_too(shared, tmp_path, blank):
    """TOML allows blanks before `[no-npm]`; the installed hook saw it, the plugin's launcher did not."""
    _agent, copy, project = shared
    (copy / "guards.toml").write_text(blank + GUARDS)
    payload = {"session_id": "g5", "cwd": str(project), **NPM_CALL}
    proc = launch(copy, payload, path=bare_path(tmp_path, evolve=True), cwd=project, args=("pre-tool-use",))
    assert proc.returncode == 0 and proc.stderr == b""
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_without_a_guard_the_plugins_pre_tool_use_starts_no_python(shared, tmp_path):
    """Every tool call runs the launcher: with no guards.toml table it exits before Python."""
    _agent, copy, project = shared
    folder = tmp_path / "bin-marker"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "python3").write_text(f"#!/bin/sh\n: > {marker}\n")  # the Python it would start
    (folder / "python3").chmod(0o755)
    path = os.pathsep.join([bare_path(tmp_path, evolve=False), str(folder)])
    (copy / "guards.toml").write_text("# no guard yet: a comment only\n")
    payload = {"session_id": "g3", "cwd": str(project), **NPM_CALL}
    proc = launch(copy, payload, path=path, cwd=project, args=("pre-tool-use",))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"") and not marker.exists()
    (copy / "guards.toml").write_text(GUARDS)  # a guard, and no evolve that can run it: quiet, exit 0
    proc = launch(copy, payload, path=path, cwd=project, args=("pre-tool-use",))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"") and marker.exists()


def test_the_plugins_guards_step_aside_where_evolve_install_checks_them(shared, evolve_home, tmp_path):
    _agent, copy, project = guarded(shared)
    claude_code.install(Home.resolve(), "demo", project=str(project))
    payload = {"session_id": "g4", "cwd": str(project), **NPM_CALL}
    proc = launch(copy, payload, path=bare_path(tmp_path, evolve=True), cwd=project, args=("pre-tool-use",))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
