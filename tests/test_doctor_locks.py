"""`evolve doctor` and the git locks a killed git leaves.

Reported and removed with `--fix`; never one a live git holds, nor one outside the home reached
through a link.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from evolve import cli
from tests.helpers import git, make_agent, write_skill
from tests.test_doctor import doctor


def test_a_ref_lock_a_killed_git_left_is_reported_and_fixed_and_commits_move_again(capsys, evolve_home):
    # a whole process group killed while git held the branch's and HEAD's locks: every move
    # of main stops (evolve's RefRefused, the person's "Unable to create … main.lock")
    agent = make_agent("a")
    git_dir = agent.path / ".git"
    tip = agent.repo.tip()
    hour_ago = time.time() - 7200
    left = [git_dir / "refs" / "heads" / "main.lock", git_dir / "HEAD.lock"]
    left[0].write_text(tip + "\n")
    left[1].write_text("")
    for path in left:
        os.utime(path, (hour_ago, hour_ago))
    fresh = git_dir / "refs" / "heads" / "feature.lock"  # a git at work right now: not a leftover
    fresh.write_text(tip + "\n")
    person = git(agent.path, "commit", "--allow-empty", "-qm", "mine", check=False)
    assert person.returncode != 0 and ".lock" in person.stderr
    code, findings = doctor(capsys)
    locks = {f["where"]: f["problem"] for f in findings if "git lock" in f["problem"]}
    assert set(locks) == {"agents/a/.git/refs/heads/main.lock", "agents/a/.git/HEAD.lock"} and code == 1
    assert all("evolve doctor --fix" in problem for problem in locks.values())
    code, findings = doctor(capsys, "--fix")
    assert not any(path.exists() for path in left) and fresh.exists()
    assert git(agent.path, "commit", "--allow-empty", "-qm", "mine").returncode == 0
    fresh.unlink()
    write_skill(agent.path, "after")
    assert agent.commit_human_edits()


def _old_lock(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    os.utime(path, (time.time() - 7200, time.time() - 7200))
    return path


def test_fix_deletes_no_lock_outside_the_home_through_a_symlinked_refs_git_or_agent_folder(
    capsys, evolve_home, tmp_path
):
    agent = make_agent("a")
    git_dir = agent.path / ".git"
    outside = tmp_path / "outside"  # not in the home evolve was given
    victims = [_old_lock(outside / "refs" / "heads" / "x.lock"), _old_lock(outside / "git" / "HEAD.lock")]
    (git_dir / "refs").rename(git_dir / "refs.real")
    (git_dir / "refs").symlink_to(outside / "refs")
    doctor(capsys, "--fix")
    (git_dir / "refs").unlink()
    (git_dir / "refs.real").rename(git_dir / "refs")
    shutil.copytree(git_dir, outside / "git", dirs_exist_ok=True, symlinks=True)
    git_dir.rename(agent.path / "git.real")
    git_dir.symlink_to(outside / "git")
    doctor(capsys, "--fix")
    git_dir.unlink()
    (agent.path / "git.real").rename(git_dir)
    victims.append(_old_lock(outside / "agent" / ".git" / "HEAD.lock"))
    shutil.copytree(agent.path, outside / "agent", dirs_exist_ok=True, symlinks=True)
    agent.path.rename(evolve_home / "a.real")
    agent.path.symlink_to(outside / "agent")
    doctor(capsys, "--fix")
    assert all(path.exists() for path in victims)


def test_an_hour_old_lock_a_live_git_holds_is_neither_reported_nor_deleted(capsys, evolve_home):
    # a lock's mtime is when git made it: a person's `git update-ref --stdin` left prepared (or a
    # reference-transaction hook that waits) holds it past the hour and still means to commit it
    agent = make_agent("a")
    person = subprocess.Popen(
        ["git", "update-ref", "--stdin"],
        cwd=agent.path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert person.stdin and person.stdout
    person.stdin.write(f"start\nupdate refs/heads/main {agent.repo.tip()}\nprepare\n")
    person.stdin.flush()
    assert person.stdout.readline() == "start: ok\n" and person.stdout.readline() == "prepare: ok\n"
    held = agent.path / ".git" / "refs" / "heads" / "main.lock"
    os.utime(held, (time.time() - 7200, time.time() - 7200))
    try:
        code, findings = doctor(capsys, "--fix")
        assert held.exists() and not [f for f in findings if "lock" in f["where"]]
    finally:
        person.communicate("abort\n", timeout=30)
    assert not held.exists()


def test_a_lock_named_with_a_newline_or_undecodable_bytes_is_one_line_of_valid_utf8(capsys, evolve_home):
    agent = make_agent("a")
    heads = os.fsencode(agent.path / ".git" / "refs" / "heads")
    for name in (b"odd\nname.lock", b"x\xff.lock"):
        _old_lock(Path(os.fsdecode(heads + b"/" + name)))
    cli.main(["doctor", "--json"])
    out = capsys.readouterr().out
    found = {f["where"] for f in json.loads(out.encode("utf-8"))["findings"] if "git lock" in f["problem"]}
    assert found == {"agents/a/.git/refs/heads/odd\\nname.lock", "agents/a/.git/refs/heads/x\\xff.lock"}
    cli.main(["doctor", "--fix"])
    out = capsys.readouterr().out.encode("utf-8").decode()
    fixed = [line for line in out.splitlines() if "killed git" in line]
    assert len(fixed) == 2 and all(line.startswith("hint: ") for line in fixed)
    assert [entry.name for entry in Path(os.fsdecode(heads)).iterdir()] == ["main"]
