"""kill -9 at every step of applying a reflection.

The repo stays valid and, after a restart, the reflection is applied exactly once
(issue 5 must-hold; reliability item 8).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from evolve.cli import main
from evolve.home import Home
from evolve.reflect.run import reflect
from tests.helpers import git, git_out, make_agent
from tests.reflect.scenarios import corrected_session

# step name -> (object to patch, attribute, when: "before" | "after")
STEPS = {
    "journal-written": ("evolve.store.journal", "write_journal", "after"),
    "files-written": ("evolve.store.commit", "commit_loop", "before"),
    "commit-object-made": ("evolve.store.commit", "swap", "before"),
    "index-staged": ("evolve.store.git:RefTransaction", "commit", "before"),  # the refs prepared
    "branch-moved": ("evolve.store.git:RefTransaction", "commit", "after"),
    "swap-done": ("evolve.store.commit", "commit_loop", "after"),
    "commit-done": ("evolve.reflect.apply", "apply_plan", "after"),
}

SCRIPT = textwrap.dedent("""
    import importlib, os, signal, sys
    target, attr, when = sys.argv[1], sys.argv[2], sys.argv[3]
    module_name, _, owner_name = target.partition(":")
    owner = importlib.import_module(module_name)
    if owner_name:
        owner = getattr(owner, owner_name)
    original = getattr(owner, attr)
    def die():
        os.kill(os.getpid(), signal.SIGKILL)
    def wrapper(*args, **kwargs):
        if when == "before":
            die()
        result = original(*args, **kwargs)
        die()
        return result
    setattr(owner, attr, wrapper)
    from evolve.cli import main
    sys.exit(main(["reflect", "demo"]))
""")


@pytest.mark.parametrize("step", list(STEPS))
def test_kill_at_each_step_then_restart(step: str, tmp_path) -> None:
    agent = make_agent()
    assert main(["observe", "demo", str(corrected_session(tmp_path))]) == 0
    target, attr, when = STEPS[step]
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, target, attr, when],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=60,
    )
    assert proc.returncode == -9, proc.stderr
    git(agent.path, "fsck", "--strict")
    assert agent.memo_text().count("uv run pytest") <= 1
    outcome = reflect(Home.resolve(), "demo")  # the restart
    assert outcome.status in ("committed", "nothing"), outcome.reason
    git(agent.path, "fsck", "--strict")
    reflections = git_out(agent.path, "log", "--format=%(trailers:key=Evolve-Reflection,valueonly)")
    assert len([line for line in reflections.splitlines() if line.strip()]) == 1
    assert agent.memo_text().count("uv run pytest") == 1
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert not (agent.path / ".git" / "index.lock").exists()
    assert not (agent.path / ".git" / "evolve-journal.json").exists()
    skills = agent.skills()
    assert all(s.valid for s in skills)
    log = git_out(agent.path, "log", "--format=%s")
    assert "edit(" not in log  # evolve's own writes were never taken for a person's edit
