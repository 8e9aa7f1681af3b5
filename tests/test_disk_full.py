"""Disk full during a skill write, the commit and the cursor save (reliability item 9).

A real, small tmpfs holds the evolve home (root only: skipped with the reason otherwise).
A filler file eats the free space; every failure must be a clear error, leave no truncated
or empty file, and everything must work again once space returns.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evolve.cli import main
from evolve.home import Home
from evolve.store import ledger
from tests.helpers import git, git_out, make_agent
from tests.reflect.scenarios import Transcript, corrected_session


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    monkeypatch.setenv("EVOLVE_HOME", str(mount / "home"))
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(mount: Path) -> Path:
    """Use up the free space (leaving a few bytes), like a full disk."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 65536, 4096, 512, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    return filler


def assert_nothing_left(root: Path) -> None:
    """No temp file and no folder a failed write created and left empty."""
    for path in root.rglob("*"):
        if ".git" in path.relative_to(root).parts:
            continue
        assert not path.name.endswith(".evolve-tmp"), path
        assert not (path.is_dir() and not any(path.iterdir())), f"empty folder left: {path}"


def test_reflection_on_a_full_disk_fails_cleanly_then_recovers(small_disk, tmp_path, capsys) -> None:
    agent = make_agent()
    assert main(["observe", "demo", str(corrected_session(tmp_path))]) == 0
    memo_before = agent.memo_text()
    head_before = git_out(agent.path, "rev-parse", "HEAD")
    filler = fill(small_disk)
    code = main(["reflect", "demo"])
    err = capsys.readouterr().err
    assert code == 1 and "no space left" in err.lower(), err
    assert agent.memo_text() == memo_before  # not truncated, not half-written
    assert git_out(agent.path, "rev-parse", "HEAD") == head_before
    assert_nothing_left(agent.path)
    filler.unlink()
    assert main(["reflect", "demo"]) == 0, capsys.readouterr()
    assert "uv run pytest" in agent.memo_text(), capsys.readouterr().out
    git(agent.path, "fsck", "--strict")
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_cursor_save_on_a_full_disk_counts_nothing_twice(small_disk, tmp_path, capsys) -> None:
    make_agent()
    t = Transcript(tmp_path / "s.jsonl")
    t.user("first request")
    t.say("ok")
    assert main(["observe", "demo", str(t.path)]) == 0
    for n in range(40):  # enough new material that SQLite must grow
        t.user(f"request {n} " + "padding " * 400)
        t.tool("Bash", {"command": "x " * 300}, "boom " * 500, error=True)
    filler = fill(small_disk)
    code = main(["observe", "demo", str(t.path)])
    err = capsys.readouterr().err
    if code == 0:  # SQLite found room in its pages: nothing to prove on this run
        filler.unlink()
        pytest.skip("the observe fit in the remaining pages")
    assert code == 1 and "no space left" in err.lower(), err
    filler.unlink()
    assert main(["observe", "demo", str(t.path)]) == 0
    conn = ledger.connect(Home.resolve().state_db)
    rows = conn.execute("SELECT idx FROM runs WHERE agent = 'demo' ORDER BY idx").fetchall()
    assert [r["idx"] for r in rows] == list(range(41))


def test_atomic_write_never_leaves_a_truncated_file(small_disk) -> None:
    from evolve.store.files import atomic_write

    target = small_disk / "skill.md"
    target.write_text("the old, complete content\n")
    filler = fill(small_disk)
    with pytest.raises(OSError):
        atomic_write(target, b"x" * 200_000)
    assert target.read_text() == "the old, complete content\n"
    assert not [p for p in small_disk.iterdir() if p.name.endswith(".evolve-tmp")]
    filler.unlink()
    atomic_write(target, b"new\n")
    assert target.read_bytes() == b"new\n"


def test_a_new_skill_that_does_not_fit_leaves_no_folder_behind(small_disk) -> None:
    from tests.helpers import evolve_commit, skill_text

    agent = make_agent()
    head_before = git_out(agent.path, "rev-parse", "HEAD")
    filler = fill(small_disk)
    big = skill_text("too-big", body="- a long lesson\n" * 20_000).encode()
    with pytest.raises(OSError):
        evolve_commit(agent, {"skills/too-big/SKILL.md": big, "skills/too-big/references.md": b"x\n"})
    assert git_out(agent.path, "rev-parse", "HEAD") == head_before
    assert not (agent.path / "skills" / "too-big").exists()
    assert_nothing_left(agent.path)
    filler.unlink()
    git(agent.path, "fsck", "--strict")


def test_git_saying_out_of_diskspace_is_a_disk_full_error(small_disk, capsys) -> None:
    """B4: git words a full disk "... write error. Out of diskspace"; that was an internal error."""
    from evolve import cli
    from evolve.store.git import GitError
    from evolve.store.git import git as run_git

    agent = make_agent()
    fill(small_disk)
    index = agent.path / ".git" / "evolve-idx-test"  # what a commit's private index does first
    with pytest.raises(GitError, match="Out of diskspace") as info:
        run_git(agent.path, "read-tree", "HEAD", env={"GIT_INDEX_FILE": str(index)})
    assert cli._disk_full(info.value)
