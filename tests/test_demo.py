"""`make demo` shows the whole product: the offline memo rule, then a recorded model's skill.

Run as `make demo` runs it (`python -P -m evolve.demo`), from `/`, against the shipped files.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from evolve.home import Home
from evolve.store import ledger
from tests.helpers import git_out

pytestmark = pytest.mark.slow  # the whole product, in a process of its own


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "evolve.demo", *args],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=300,
    )


def test_the_demo_creates_lists_measures_patches_and_reverts_a_skill_in_evolve_home(evolve_home):
    """The demo made no skill, ignored EVOLVE_HOME and always deleted its home (ecosystem review)."""
    proc = demo()
    assert proc.returncode == 0, proc.stderr + proc.stdout[-3000:]
    out = proc.stdout
    assert "local fake Messages API" in out and "nothing leaves this machine" in out
    assert "landed: create_skill write-release-notes" in out
    assert "- write-release-notes: Use when writing release notes" in out  # the next session's index
    assert "landed: patch_skill write-release-notes" in out
    assert "Since the first reflection:" in out and "reverted HEAD as " in out
    assert f"its home is {evolve_home}" in out  # EVOLVE_HOME was honoured, and kept
    repo = evolve_home / "agents" / "demo"
    kinds = git_out(repo, "log", "--format=%(trailers:key=Evolve-Kind,valueonly)").split()
    assert kinds == ["revert", "reflection", "reflection", "reflection", "init"]
    skill = (repo / "skills" / "write-release-notes" / "SKILL.md").read_text()
    assert "- One line per change, in the imperative.\n" in skill  # the patch was reverted
    with ledger.opened(Home.resolve().state_db) as conn:
        used = conn.execute("SELECT skill FROM invocations WHERE agent = 'demo'").fetchall()
        shown = conn.execute("SELECT session FROM impressions WHERE agent = 'demo'").fetchall()
    assert [tuple(r) for r in used] == [("write-release-notes",)] and [tuple(r) for r in shown] == [
        ("demo-s4",)
    ]
    again = demo()  # a home that is not empty is refused, never mixed into
    assert again.returncode != 0 and "is not empty" in again.stderr


def test_keep_leaves_the_temporary_home(monkeypatch, tmp_path):
    monkeypatch.delenv("EVOLVE_HOME")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    proc = demo("--keep")
    assert proc.returncode == 0, proc.stderr
    [kept] = list(tmp_path.glob("evolve-demo-*"))
    assert f"its home is kept: {kept}/home" in proc.stdout
    assert (kept / "home" / "agents" / "demo" / "skills" / "write-release-notes" / "SKILL.md").exists()
