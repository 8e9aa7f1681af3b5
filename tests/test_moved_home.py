"""A home moved with `mv` (or copied with `cp -a`): its installed hooks and skill links.

After a move the Claude Code and Codex hook commands and the skill links name the old
place: the hooks must neither fail nor make a home there again, doctor must say so, and
`doctor --fix` (or the next command that checks the layout) points them at the home as
it is now. A copy whose original is still in use is not a move: nothing of it is taken.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from evolve import cli
from evolve.home import Home
from evolve.integrations import hookfile
from evolve.workspace.agent import Agent
from tests.helpers import evolve_commit, git, skill_text

PERSONS_GROUP = {"matcher": "startup", "hooks": [{"type": "command", "command": "~/bin/greet.sh"}]}


@pytest.fixture
def installed(tmp_path: Path, evolve_home: Path, monkeypatch) -> Path:
    """A project with the agent `demo` (one skill) installed for Claude Code and Codex."""
    project = tmp_path / "my project"
    project.mkdir()
    git(project, "init", "-q")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus", "hooks": {"SessionStart": [PERSONS_GROUP]}}, indent=4))
    assert cli.main(["init", "demo"]) == 0
    agent = Agent.open("demo", Home.resolve())
    evolve_commit(agent, {"skills/fix-tests/SKILL.md": skill_text("fix-tests").encode()})
    monkeypatch.chdir(project)
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    assert cli.main(["install", "codex", "--agent", "demo"]) == 0
    return project


def hook_files(project: Path) -> list[Path]:
    return [project / ".claude" / "settings.local.json", Path.home() / ".codex" / "hooks.json"]


def evolve_commands(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    return [h["command"] for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]


def homes_named(project: Path) -> set[str]:
    """Every `--home` the installed commands name."""
    return {
        (hookfile.owner(command) or ("not evolve's",))[0]
        for path in hook_files(project)
        for command in evolve_commands(path)
        if "evolve.hookmain" in command
    }


def move(evolve_home: Path, to: Path, monkeypatch) -> None:
    shutil.move(evolve_home, to)
    monkeypatch.setenv("EVOLVE_HOME", str(to))


def test_a_moved_homes_hooks_make_nothing_at_the_old_place_and_doctor_fix_follows_it(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    new_home = tmp_path / "new place"
    move(evolve_home, new_home, monkeypatch)
    payload = json.dumps({"session_id": "s1", "cwd": str(installed), "hook_event_name": "SessionStart"})
    for path in hook_files(installed):
        for command in evolve_commands(path):
            if "evolve.hookmain" not in command:
                continue
            done = subprocess.run(  # the installed command as the harness runs it
                ["sh", "-c", command],
                input=payload,
                capture_output=True,
                text=True,
                cwd=installed,
                timeout=30,
            )
            assert done.returncode == 0 and done.stdout == ""
            assert len(done.stderr.splitlines()) <= 1
    assert not evolve_home.exists()  # no stray logs/ where the home was

    assert cli.main(["doctor", "--fix"]) == 0
    capsys.readouterr()
    assert homes_named(installed) == {str(new_home)}
    doc = json.loads(hook_files(installed)[0].read_text())
    assert doc["model"] == "opus" and doc["hooks"]["SessionStart"][0] == PERSONS_GROUP
    link = installed / ".claude" / "skills" / "fix-tests"
    assert link.readlink() == new_home / "agents" / "demo" / "skills" / "fix-tests"
    codex_link = installed / ".agents" / "skills" / "fix-tests"
    assert codex_link.readlink() == new_home / "agents" / "demo" / "skills" / "fix-tests"
    assert not evolve_home.exists()


def test_a_copy_in_use_beside_its_original_takes_nothing_of_it(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    before = {p: p.read_bytes() for p in hook_files(installed)}
    link = installed / ".claude" / "skills" / "fix-tests"
    target = link.readlink()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(evolve_home), str(copy)], check=True)
    monkeypatch.setenv("EVOLVE_HOME", str(copy))
    cli.main(["doctor", "--fix"])
    out = capsys.readouterr()
    assert "where this home's agents are not" not in out.out + out.err
    assert {p: p.read_bytes() for p in hook_files(installed)} == before
    assert link.readlink() == target


def test_doctor_names_hooks_left_at_a_removed_original_and_fix_takes_them(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(evolve_home), str(copy)], check=True)
    monkeypatch.setenv("EVOLVE_HOME", str(copy))
    cli.main(["doctor", "--fix"])  # the copy in use: its layout recorded, the original's hooks kept
    shutil.rmtree(evolve_home)
    capsys.readouterr()
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    named = [line for line in out.splitlines() if "where this home's agents are not" in line]
    assert len(named) == 2, out  # one line for each hooks file
    assert any(f"Claude Code's hooks name {evolve_home}," in line for line in named)
    assert any(f"Codex's hooks name {evolve_home}," in line for line in named)
    assert homes_named(installed) == {str(evolve_home)}  # doctor alone changes nothing

    assert cli.main(["doctor", "--fix"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert homes_named(installed) == {str(copy)}
    assert (installed / ".claude" / "skills" / "fix-tests").readlink().is_relative_to(copy)


def test_a_second_home_takes_nothing_of_a_first_one_moved_elsewhere(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    """Codex's entries name no agent: the home left in place must not take the moved one's."""
    other = tmp_path / "other home"
    monkeypatch.setenv("EVOLVE_HOME", str(other))
    assert cli.main(["init", "beta"]) == 0
    assert cli.main(["install", "codex", "--agent", "beta"]) == 0
    codex_hooks = hook_files(installed)[1]
    moved = tmp_path / "moved"
    shutil.move(evolve_home, moved)
    cli.main(["doctor", "--fix"])  # the other home, still where it was
    assert {(hookfile.owner(c) or ("",))[0] for c in evolve_commands(codex_hooks)} == {
        str(evolve_home),
        str(other),
    }
    monkeypatch.setenv("EVOLVE_HOME", str(moved))
    assert cli.main(["doctor", "--fix"]) == 0, capsys.readouterr().out
    assert {(hookfile.owner(c) or ("",))[0] for c in evolve_commands(codex_hooks)} == {
        str(moved),
        str(other),
    }


def test_hooks_unreadable_at_the_first_command_after_a_move_are_taken_when_readable_again(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    settings = hook_files(installed)[0]
    good = settings.read_bytes()
    new_home = tmp_path / "new place"
    move(evolve_home, new_home, monkeypatch)
    settings.write_bytes(b"// the person's note\n" + good)  # not JSON today: left as it is
    cli.main(["doctor", "--fix"])  # the layout record now names the new place
    assert settings.read_bytes() == b"// the person's note\n" + good
    settings.write_bytes(good)
    assert cli.main(["doctor", "--fix"]) == 0, capsys.readouterr().out
    assert homes_named(installed) == {str(new_home)}


def test_a_new_home_made_at_the_old_path_keeps_nothing_of_the_moved_agents(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    """`evolve init` in a shell without EVOLVE_HOME after the move: a home again at the old path."""
    moved = tmp_path / "moved"
    shutil.move(evolve_home, moved)
    assert cli.main(["init", "other"]) == 0  # at the old path; it has no agent demo
    monkeypatch.setenv("EVOLVE_HOME", str(moved))
    assert cli.main(["doctor", "--fix"]) == 0, capsys.readouterr().out
    claude = evolve_commands(hook_files(installed)[0])
    assert {(hookfile.owner(c) or ("",))[0] for c in claude if "evolve.hookmain" in c} == {str(moved)}
    link = installed / ".claude" / "skills" / "fix-tests"
    assert link.readlink() == moved / "agents" / "demo" / "skills" / "fix-tests"


def test_a_copys_original_on_a_disk_not_mounted_is_not_taken_as_moved(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    """The original's path is gone because its disk is unplugged, not because it moved."""
    from evolve.home import DEVICE_MARK, PLACES_FILE, place_line

    before = {p: p.read_bytes() for p in hook_files(installed)}
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(evolve_home), str(copy)], check=True)
    places = copy / PLACES_FILE
    recorded = dict(place_line(line) for line in places.read_bytes().splitlines())
    assert recorded[bytes(evolve_home)] == evolve_home.stat().st_dev  # each place and its disk
    other_disk = str(evolve_home.parent.stat().st_dev + 1).encode()  # the original lived on a disk ...
    places.write_bytes(
        b"".join(p + (DEVICE_MARK + other_disk if p == bytes(evolve_home) else b"") + b"\n" for p in recorded)
    )
    shutil.move(evolve_home, tmp_path / "on the unplugged disk")  # ... no longer mounted there
    monkeypatch.setenv("EVOLVE_HOME", str(copy))
    assert cli.main(["pause", "demo"]) == 0  # a writing command in the copy checks the layout
    cli.main(["doctor", "--fix"])
    out = capsys.readouterr().out
    assert "where this home's agents are not" not in out and str(copy) not in "".join(
        line for line in out.splitlines() if "hooks name" in line
    )
    assert {p: p.read_bytes() for p in hook_files(installed)} == before  # the original's, untouched
    assert (installed / ".claude" / "skills" / "fix-tests").readlink().is_relative_to(evolve_home)


def test_a_home_whose_path_holds_a_carriage_return_is_followed_when_moved(
    tmp_path, evolve_home, monkeypatch, capsys
):
    """The records' lines split at the carriage return too: the old place was never found again."""
    from evolve.home import PLACES_FILE

    odd = tmp_path / "my\rhome"
    monkeypatch.setenv("EVOLVE_HOME", str(odd))
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q")
    assert cli.main(["init", "demo"]) == 0
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    settings = tmp_path / ".claude" / "settings.local.json"
    moved = tmp_path / "moved"
    move(odd, moved, monkeypatch)
    assert cli.main(["pause", "demo"]) == 0
    assert {(hookfile.owner(c) or ("",))[0] for c in evolve_commands(settings)} == {str(moved)}
    assert len((moved / PLACES_FILE).read_bytes().splitlines()) == 2  # the old place and the new


def test_a_copys_doctor_and_install_do_not_call_the_originals_entries_removed_by_hand(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    """The copy's install records hold what evolve wrote for the original: not the copy's to judge.

    Its doctor said each of evolve's hooks was "removed by hand" and that `--force` put it back
    (ten lines), and installing from the copy said so too, adding none of the copy's entries.
    """
    before = {p: p.read_bytes() for p in hook_files(installed)}
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(evolve_home), str(copy)], check=True)
    monkeypatch.setenv("EVOLVE_HOME", str(copy))
    assert cli.main(["pause", "demo"]) == 0  # a writing command in the copy checks the layout
    cli.main(["doctor", "--fix"])
    capsys.readouterr()
    cli.main(["doctor"])
    assert "by hand" not in capsys.readouterr().out
    assert {p: p.read_bytes() for p in hook_files(installed)} == before  # the original's, untouched
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    assert "by hand" not in capsys.readouterr().out
    commands = [c for c in evolve_commands(hook_files(installed)[0]) if "evolve.hookmain" in c]
    assert {hookfile.owner(c)[0] for c in commands} == {str(evolve_home), str(copy)}  # asked for: both


def test_a_home_moved_off_a_disk_unplugged_since_is_named_by_doctor_and_followed_once_it_is_back(
    installed, evolve_home, tmp_path, monkeypatch, capsys
):
    """Moved off a disk, which was unplugged before any command: its hooks name the gone place.

    Not taken (a copy's original there keeps its own), yet the hooks' line sent the person to
    `evolve doctor`, which said nothing of them. It names the place and the way back.
    """
    from evolve.home import DEVICE_MARK, PLACES_FILE, place_line

    places = evolve_home / PLACES_FILE
    recorded = dict(place_line(line) for line in places.read_bytes().splitlines())
    real_disk = str(recorded[bytes(evolve_home)]).encode()
    other_disk = str(evolve_home.parent.stat().st_dev + 1).encode()  # the home lived on a disk ...

    def record_disk(home: Path, disk: bytes) -> None:
        path = home / PLACES_FILE
        lines = [place_line(line) for line in path.read_bytes().splitlines()]
        disks = {p: disk if p == bytes(evolve_home) else str(d).encode() for p, d in lines}
        path.write_bytes(b"".join(p + DEVICE_MARK + d + b"\n" for p, d in disks.items()))

    record_disk(evolve_home, other_disk)
    new_home = tmp_path / "internal"
    move(evolve_home, new_home, monkeypatch)  # ... now unplugged
    cli.main(["doctor", "--fix"])
    capsys.readouterr()
    cli.main(["doctor"])
    said = capsys.readouterr().out
    assert homes_named(installed) == {str(evolve_home)}
    assert "was removed by hand" not in said
    assert f"Claude Code's hooks name {evolve_home}, where this home was, on a disk not mounted now" in said
    record_disk(new_home, real_disk)  # the disk is back: the place is gone from it
    cli.main(["doctor", "--fix"])
    assert homes_named(installed) == {str(new_home)}


@pytest.fixture
def other_disk(tmp_path: Path):
    """A folder on another file system than the test's (a tmpfs), removed after the test."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system to move a home across")
    folder = Path(tempfile.mkdtemp(dir=shm, prefix="evolve-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_home_named_by_a_link_into_another_disk_is_followed_when_moved_off_it(
    tmp_path, other_disk, monkeypatch, capsys
):
    """A home named by a link, moved off the disk the link led to, the link removed.

    The link's place was recorded with its target's disk: once gone, the folder holding it
    (on another disk) looked like a disk unplugged, and the move was never taken.
    """
    (other_disk / "evolve").mkdir()
    link = tmp_path / "evolve"
    link.symlink_to(other_disk / "evolve")
    monkeypatch.setenv("EVOLVE_HOME", str(link))
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    monkeypatch.chdir(project)
    assert cli.main(["init", "demo"]) == 0
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    moved = tmp_path / "moved"
    shutil.move(other_disk / "evolve", moved)  # across file systems: copied, then removed
    link.unlink()
    monkeypatch.setenv("EVOLVE_HOME", str(moved))
    assert cli.main(["pause", "demo"]) == 0
    commands = evolve_commands(project / ".claude" / "settings.local.json")
    assert {hookfile.owner(c)[0] for c in commands} == {str(moved)}
