"""No code from the working folder ever runs: every Python evolve starts uses -P, away from it.

Each long-running entry point is started from a folder that holds an `evolve/` package
whose every module would leave a mark. The watcher started by `watch --detach`, by the
printed systemd unit and by Claude Code's SessionStart hook, and the agent repository's
pre-commit hook, must run the installed evolve: no mark, and no process keeps the folder.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations.claude_code import hook_command
from evolve.watch import service
from tests.helpers import git, make_agent, skill_text

EVOLVE = str(Path(sys.executable).with_name("evolve"))  # the console script, as a person runs it


@pytest.fixture
def planted(tmp_path) -> tuple[Path, Path]:
    """(a folder with a hostile `evolve` package, the file it writes when imported)."""
    folder, mark = tmp_path / "checkout", tmp_path / "PWNED"
    package = folder / "evolve"
    package.mkdir(parents=True)
    code = f"open({str(mark)!r}, 'a').write(__name__ + '\\n')\n"
    for module in ("__init__", "__main__", "hookmain", "precommit", "cli"):
        (package / f"{module}.py").write_text(code)
    return folder, mark


@pytest.fixture
def home(evolve_home):
    make_agent("demo")
    yield Home.resolve()
    service.stop(Home.resolve())
    spawned = Home.resolve().run_dir / "watch.spawned"
    if spawned.exists():
        try:
            os.kill(int(spawned.read_text()), 15)
        except (ValueError, OSError):
            pass


def wait_for_watcher(home: Home, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = service.state(home)
        if current.running and current.pid:
            return current.pid
        time.sleep(0.05)
    raise AssertionError(f"no watcher started; {service.log_path(home)}")


def assert_clean(home: Home, pid: int, mark: Path, folder: Path) -> None:
    assert not mark.exists(), mark.read_text()
    assert str(Path(f"/proc/{pid}/cwd").readlink()) == "/"  # the folder is not kept busy
    service.stop(home)
    assert not mark.exists()


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc to read a process's cwd")
def test_watch_detach_from_a_hostile_folder(home, planted):
    folder, mark = planted
    assert Path(EVOLVE).exists()
    subprocess.run([EVOLVE, "watch", "--detach"], cwd=folder, check=True, capture_output=True, timeout=60)
    assert_clean(home, wait_for_watcher(home), mark, folder)


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc to read a process's cwd")
def test_the_printed_systemd_unit_from_a_hostile_folder(home, planted, monkeypatch):
    folder, mark = planted
    monkeypatch.setattr(sys, "platform", "linux")
    _, text = service.render_service(home)
    (line,) = [ln for ln in text.splitlines() if ln.startswith("ExecStart=")]
    assert "WorkingDirectory=/" in text
    proc = subprocess.Popen(
        shlex.split(line.removeprefix("ExecStart=")),
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        pid = wait_for_watcher(home)
        assert pid == proc.pid
        assert_clean(home, pid, mark, folder)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc to read a process's cwd")
def test_the_session_start_hook_and_its_watcher_from_a_hostile_project(home, planted):
    folder, mark = planted
    argv = shlex.split(hook_command(sys.executable, home, "demo", "session-start", linked=True))
    env = {k: v for k, v in os.environ.items() if k != "EVOLVE_NO_WATCHER"}
    proc = subprocess.run(
        argv, cwd=folder, input=b'{"session_id": "s1"}', capture_output=True, env=env, timeout=60
    )
    assert proc.returncode == 0 and not (home.logs_dir / "hooks.log").exists()
    assert_clean(home, wait_for_watcher(home), mark, folder)


def test_the_agent_repos_pre_commit_hook_ignores_an_evolve_folder_in_the_repo(home, planted):
    _, mark = planted
    repo = home.agent_dir("demo")
    package = repo / "evolve"
    package.mkdir()
    (package / "__init__.py").write_text(f"open({str(mark)!r}, 'a').write('imported')\n")
    (package / "precommit.py").write_text(f"open({str(mark)!r}, 'a').write('ran')\n")
    folder = repo / "skills" / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_text("other-name"))  # the real check refuses it
    git(repo, "add", "-A")
    proc = subprocess.run(["git", "commit", "-q", "-m", "mine"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 1 and "differs from its folder" in proc.stderr  # evolve's check ran
    assert not mark.exists()
