"""`--home` means everything: with it, no command writes anything under $HOME.

Every command runs as a person runs it (the console script, a fresh process) with
`--home` and an empty $HOME, EVOLVE_HOME unset. Afterwards $HOME is still empty. The only
writes elsewhere are the ones the person named: a project folder, `install --scope user`
(CLAUDE_CONFIG_DIR pointed outside $HOME), `report --html FILE`. A crash's log goes under
the given home too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EVOLVE = str(Path(sys.executable).with_name("evolve"))
EXAMPLES = sorted(
    str(p) for p in (Path(__file__).resolve().parents[1] / "evolve" / "examples").glob("*.jsonl")
)


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def person(tmp_path, monkeypatch):
    """A fresh $HOME with nothing in it, and evolve's home, a project and Claude's dir elsewhere."""
    home = tmp_path / "person-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "EVOLVE_HOME"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"), EVOLVE_NO_WATCHER="1")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, env=env)
    return home, tmp_path / "evolve-home", project, env


def evolve(
    env: dict, evolve_home: Path, *argv: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [EVOLVE, "--home", str(evolve_home), *argv], env=env, input=stdin, capture_output=True, timeout=120
    )


@pytest.mark.slow
def test_no_command_writes_under_home_when_given_home(person, tmp_path):
    home, evolve_home, project, env = person
    run = lambda *argv, **kw: evolve(env, evolve_home, *argv, **kw)  # noqa: E731
    assert run("init", "demo").returncode == 0
    steps = [
        ("agents",),
        ("agents", "--json"),
        ("observe", "demo", *EXAMPLES),
        ("score", "demo", "--json"),
        ("reflect", "demo", "--dry-run"),
        ("reflect", "demo", "--force"),
        ("log", "demo"),
        ("review", "demo"),
        ("skills", "demo", "--json"),
        ("prompt", "demo"),
        ("status",),
        ("cycle", "--now"),
        ("cycle", "--dry-run"),
        ("proposals", "demo"),
        ("doctor",),
        ("report", "demo"),
        ("report", "demo", "--html", str(tmp_path / "report.html")),
        ("install", "claude-code", "--agent", "demo", "--project", str(project)),
        ("install", "claude-code", "--agent", "demo", "--scope", "user"),
        ("uninstall", "claude-code", "--agent", "demo", "--scope", "user"),
        ("uninstall", "claude-code", "--agent", "demo", "--project", str(project)),
        ("watch", "--status"),
        ("watch", "--print-service"),
        ("pause", "demo"),
        ("resume", "demo"),
        ("revert", "demo", "HEAD"),
        ("prune", "demo", "--dry-run"),
        ("doctor", "--fix"),
    ]
    for argv in steps:
        proc = run(*argv)
        assert proc.returncode == 0, (argv, proc.stderr.decode())
        assert files_under(home) == [], (argv, files_under(home))
    hook = run(
        "hook",
        "claude-code",
        "session-start",
        "--agent",
        "demo",
        "--linked",
        stdin=json.dumps({"session_id": "s1"}).encode(),
    )
    assert hook.returncode == 0 and files_under(home) == []
    assert run("init", "other").returncode == 0 and run("remove", "other").returncode == 0
    assert files_under(home) == []
    (evolve_home / "state.db").write_bytes(b"this is not a database")  # an internal error: crash.log
    crashed = run("score", "demo")
    assert crashed.returncode in (1, 3) and files_under(home) == []
    if crashed.returncode == 3:
        assert str(evolve_home / "logs" / "crash.log") in crashed.stderr.decode()
    assert (tmp_path / "report.html").exists()
