"""An agent whose repository git cannot read: `status` shows every agent, a command on it says so.

A command on that agent is one line (exit 1), never "internal error" (exit 3).

A person's disk fills, a sync tool drops `.git/objects`, an index is cut short: the repository
is theirs to repair. Before, one damaged agent made `evolve status` exit 3 with a traceback in
crash.log and show no agent at all, and `skills`, `lessons`, `log`, `report` and `reflect` did
the same; a `.git` emptied inside a person's own repository (a dotfiles home) was read through:
`status` answered for the person's repository.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest

from evolve.commands import lifecycle
from evolve.store.git import GitError
from tests.helpers import damage, git, make_agent, run_cli, write_skill
from tests.watch_helpers import commits, new_watcher, pump


@pytest.mark.parametrize("how", ["objects", "index", "emptied"])
def test_status_shows_every_agent_and_names_the_damaged_one(evolve_home, how):
    sound, broken = make_agent("sound"), make_agent("broken")
    damage(broken.path, how)
    text = run_cli("status")
    assert text.returncode == 0, text.stderr
    assert "crash.log" not in text.stderr
    lines = text.stdout.splitlines()
    rows = {line.split()[0]: line for line in lines if line.startswith(("sound ", "broken "))}
    assert rows["broken"].rstrip().endswith("repository broken")
    assert rows["sound"].rstrip().endswith("-")
    [note] = [line for line in text.stdout.splitlines() if line.startswith("broken: .git: ")]
    expected = "is not a git repository" if how == "emptied" else "git fails in this repository (fatal: "
    assert expected in note and "nothing is committed, observed or synced" in note
    as_json = run_cli("status", "--json")
    assert as_json.returncode == 0, as_json.stderr
    problems = {a["name"]: a["repository_problem"] for a in json.loads(as_json.stdout)["agents"]}
    assert problems["sound"] is None and expected in problems["broken"]
    assert not (evolve_home / "logs" / "crash.log").exists()
    assert sound.memo_text()  # the sound agent is read as before


def test_status_does_not_read_the_persons_repository_around_an_emptied_git(evolve_home):
    # the home kept inside the person's dotfiles repository: git asked in the agent's folder
    # would answer for theirs (its branch, its files) and status showed that as the agent
    make_agent("a")
    git(evolve_home, "init", "-q")
    git(evolve_home, "commit", "-q", "--allow-empty", "-m", "the person's")
    assert run_cli("status").returncode == 0  # its state.db made before the person's view is taken
    before = git(evolve_home, "status", "--porcelain", "--ignored").stdout
    damage(evolve_home / "agents" / "a", "emptied")
    out = run_cli("status", "--json")
    assert out.returncode == 0, out.stderr
    [agent] = json.loads(out.stdout)["agents"]
    assert "is not a git repository" in agent["repository_problem"]
    assert git(evolve_home, "log", "--format=%s").stdout == "the person's\n"
    assert git(evolve_home, "status", "--porcelain", "--ignored").stdout == before
    for command in ("log", "skills", "lessons", "report"):  # what reads the agent's history
        out = run_cli(command, "a")
        assert "the person's" not in out.stdout and "the person's" not in out.stderr, command
    assert git(evolve_home, "log", "--format=%s").stdout == "the person's\n"


@pytest.mark.parametrize(
    ("how", "command"),
    [("objects", c) for c in ("skills", "lessons", "log", "report", "reflect", "review")]
    + [("index", "reflect")],
)
def test_a_command_on_a_damaged_agent_is_one_line_and_exit_1(evolve_home, how, command):
    # (an index cut short stops only what reads the index: the reading commands still answer)
    make_agent("sound")
    broken = make_agent("broken")
    damage(broken.path, how)
    out = run_cli(command, "broken")
    assert out.returncode == 1, (out.returncode, out.stderr)
    *upgrade, line = out.stderr.splitlines()  # the layout upgrade before every command notes its own failure
    assert all(note.startswith("evolve: broken: ") for note in upgrade)
    assert line.startswith(f"evolve: error: {broken.path}: git fails in this repository (")
    assert line.endswith("or restore its .git from a backup") and f"git -C {broken.path} fsck" in line
    assert not (evolve_home / "logs" / "crash.log").exists()
    as_json = run_cli(command, "broken", "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stderr.splitlines()[-1])["exit_code"] == 1
    assert run_cli("skills", "sound").returncode == 0  # the other agent is not held up


def test_a_git_failure_in_a_sound_repository_is_still_a_bug(evolve_home, monkeypatch):
    # git's own check passes there: the failure is evolve's (exit 3, traceback in crash.log),
    # never blamed on the person's repository
    agent = make_agent("demo")

    def fails(*args, **kwargs):
        raise GitError(["rev-parse", "nowhere"], 128, "fatal: ambiguous argument 'nowhere'", cwd=agent.path)

    monkeypatch.setattr(lifecycle, "_agent_status", fails)
    out = run_cli("status")
    assert out.returncode == 3 and "crash.log" in out.stderr
    assert (evolve_home / "logs" / "crash.log").exists()


@pytest.mark.parametrize("cause", ["settings", "owner"])
def test_a_sound_repository_git_refuses_is_not_called_damaged(evolve_home, cause):
    # a ~/.gitconfig that does not parse, or a folder another user owns: git fails in every
    # repository, which is sound; "restore its .git from a backup" would lose what it holds
    agent = make_agent("demo")
    if cause == "settings":
        with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as config:
            config.write("[broken\n")
        expected = "git fails with your git settings (fatal: bad config line"
    else:
        if os.geteuid() != 0:
            pytest.skip("giving the folder to another user needs root")
        for path in [agent.path, *agent.path.rglob("*")]:
            os.lchown(path, 65534, 65534)
        expected = "git refuses this repository: it is owned by another user"
    out = run_cli("skills", "demo")
    assert out.returncode == 1, out.stderr
    line = out.stderr.splitlines()[-1]
    assert line.startswith(f"evolve: error: {agent.path}: {expected}") and "backup" not in line
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert row["repository_problem"].startswith(expected)


def test_the_watcher_commits_the_other_agents_edits_past_a_damaged_one(evolve_home, caplog):
    # edits are due together when the watcher starts: the damaged agent's failure used to end
    # the step, and the agents after it had their edits forgotten until they were edited again
    broken, sound = make_agent("broken"), make_agent("sound")
    for agent in (broken, sound):
        agent.memo_path.write_text(agent.memo_text() + "\n- a person's line\n")
    damage(broken.path, "index")
    before = commits(sound)
    watcher = new_watcher()
    try:
        with caplog.at_level(logging.WARNING, logger="evolve"):
            pump(watcher, lambda: commits(sound) == before + 1)
    finally:
        watcher.close()
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("broken: ")]
    assert "human edits are not committed: git fails in this repository (fatal: " in line


@pytest.mark.parametrize("how", ["removed", "a gitdir file"])
def test_an_agent_whose_git_folder_is_lost_is_named_not_hidden(evolve_home, how):
    # no other command takes the folder for an agent, and `evolve init` refuses its name: status
    # used to list only the others, and a command said "no agent …; create it with evolve init"
    make_agent("sound")
    broken = make_agent("broken")
    dot = broken.path / ".git"
    if how == "removed":
        shutil.rmtree(dot)
    else:
        dot.rename(broken.path.parent / ".broken.git")
        dot.write_text(f"gitdir: {broken.path.parent / '.broken.git'}\n")
    said = "is not a git repository" if how == "removed" else "is a file naming a repository kept elsewhere"
    out = run_cli("status", "--json")
    assert out.returncode == 0, out.stderr
    problems = {a["name"]: a["repository_problem"] for a in json.loads(out.stdout)["agents"]}
    assert problems["sound"] is None and problems["broken"].startswith(said)
    command = run_cli("skills", "broken")
    assert command.returncode == 1
    assert command.stderr.startswith(f"evolve: error: agent 'broken' at {broken.path}: .git {said}")
    assert "evolve init" not in command.stderr and run_cli("init", "broken").returncode == 1
    doctor = run_cli("doctor")
    assert doctor.returncode == 1 and f"error: broken: .git: {said}" in doctor.stdout


def test_a_command_on_an_emptied_git_is_not_sent_to_fsck(evolve_home):
    # git's fsck has no repository there to check: the remedy is the one status gives
    broken = make_agent("broken")
    damage(broken.path, "emptied")
    out = run_cli("reflect", "broken")
    assert out.returncode == 1, out.stderr
    line = out.stderr.splitlines()[-1]
    assert line.startswith(f"evolve: error: {broken.path}: is not a git repository (fatal: not a git")
    assert "fsck" not in line and line.endswith("into a new folder and move its files there")


def test_an_agent_whose_git_folder_is_lost_can_be_removed(evolve_home):
    # status names it "repository broken"; `evolve remove` said "no agent" and kept it there
    make_agent("sound")
    broken = make_agent("broken")
    shutil.rmtree(broken.path / ".git")
    out = run_cli("remove", "broken", "--json")
    assert out.returncode == 0, out.stderr
    archived = Path(json.loads(out.stdout)["archived_to"])
    assert (archived / "memo.md").is_file() and not broken.path.exists()
    assert [a["name"] for a in json.loads(run_cli("status", "--json").stdout)["agents"]] == ["sound"]


def test_removing_an_agent_whose_git_is_a_link_to_another_agents_writes_nothing_there(evolve_home):
    # its machine-local settings went into the linked `.git`: the other agent's repository
    from evolve.home import Home

    other = make_agent("other")
    linked = make_agent("linked")
    shutil.rmtree(linked.path / ".git")
    (linked.path / ".git").symlink_to(other.path / ".git")
    local = Home.resolve().local_config("linked")
    local.write_text("[sync]\n")
    before = sorted(p.name for p in (other.path / ".git").iterdir())
    out = run_cli("remove", "linked", "--json")
    assert out.returncode == 0, out.stderr
    archived = Path(json.loads(out.stdout)["archived_to"])
    # the repository's own lock, taken while the folder moved, is all that may be new there
    assert set(p.name for p in (other.path / ".git").iterdir()) - set(before) <= {"evolve.lock"}
    assert (archived / local.name).read_text() == "[sync]\n" and not local.exists()


def test_removing_a_lost_agent_keeps_its_own_file_named_like_the_local_settings(evolve_home):
    # the machine's settings were moved over a file of the agent's folder with the same name
    from evolve.home import Home

    lost = make_agent("lost")
    shutil.rmtree(lost.path / ".git")
    local = Home.resolve().local_config("lost")
    (lost.path / local.name).write_text("the person's own\n")
    local.write_text("[sync]\n")
    out = run_cli("remove", "lost", "--json")
    assert out.returncode == 0, out.stderr
    archived = Path(json.loads(out.stdout)["archived_to"])
    assert (archived / local.name).read_text() == "the person's own\n"
    kept = [p for p in archived.iterdir() if p.is_file() and p.read_bytes() == b"[sync]\n"]
    assert len(kept) == 1 and not local.exists()


@pytest.mark.parametrize("how", ["cut", "garbage"])
def test_a_damaged_packed_refs_is_damage_not_an_agent_without_history(evolve_home, how):
    # with main only in packed-refs, a file cut short (a full disk) or overwritten read as
    # "no history yet": `log` printed nothing and exited 0, `lessons` listed the memo as unlanded
    agent = make_agent("demo")
    git(agent.path, "pack-refs", "--all")
    packed = agent.path / ".git" / "packed-refs"
    assert not (agent.path / ".git" / "refs" / "heads" / "main").exists()
    assert "refs/heads/main" in packed.read_text()
    sound = run_cli("log", "demo")
    assert sound.returncode == 0 and "init(demo)" in sound.stdout  # a sound packed-refs is read as before
    text = packed.read_text()
    cut = text[: text.index("refs/heads/main") - 20]
    packed.write_text(cut if how == "cut" else text + "not a ref line\n")
    for command in ("log", "lessons"):
        out = run_cli(command, "demo")
        assert out.returncode == 1, (command, out.returncode, out.stdout, out.stderr)
        last = out.stderr.splitlines()[-1]
        assert last.startswith(f"evolve: error: {agent.path}: git fails in this repository (")
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert "packed-refs" in row["repository_problem"]
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_a_repository_too_big_to_check_in_time_is_named_not_a_crash(evolve_home, monkeypatch):
    # git's check did not finish in time: the failure was taken for evolve's own (exit 3, a
    # traceback in crash.log) and `status` showed no agent at all
    from evolve.store import diagnosis

    make_agent("sound")
    broken = make_agent("broken")
    damage(broken.path, "objects")
    monkeypatch.setattr(diagnosis, "FSCK_TIMEOUT_S", 0.001)  # a command on the agent
    monkeypatch.setattr(diagnosis, "QUICK_CHECK_S", 0.001)  # status, over every agent
    out = run_cli("status", "--json")
    assert out.returncode == 0, out.stderr
    problems = {a["name"]: a["repository_problem"] for a in json.loads(out.stdout)["agents"]}
    assert problems["sound"] is None
    assert "git's own check did not finish in 0.001 s" in problems["broken"]
    assert f"run `git -C {broken.path} fsck`" in problems["broken"]
    log = run_cli("log", "broken")
    assert log.returncode == 1 and "did not finish" in log.stderr.splitlines()[-1]
    assert not (evolve_home / "logs" / "crash.log").exists()


@pytest.mark.parametrize("how", ["a byte lost", "a folder"])
def test_a_packed_refs_git_quietly_skips_is_damage_not_no_history(evolve_home, how):
    # git answers "no such branch" (exit 1, no word) when main's line is unreadable: read as an
    # agent with no history, status advised a `git commit` that would orphan the history
    agent = make_agent("demo")
    git(agent.path, "pack-refs", "--all")
    packed = agent.path / ".git" / "packed-refs"
    text = packed.read_text()
    if how == "a folder":
        packed.unlink()
        packed.mkdir()
    else:
        at = text.index(" refs/heads/main") - 30
        packed.write_text(text[:at] + text[at + 1 :])
    out = run_cli("log", "demo")
    assert out.returncode == 1, (out.stdout, out.stderr)
    last = out.stderr.splitlines()[-1]
    assert last.startswith(f"evolve: error: {agent.path}: git fails in this repository (")
    assert "packed-refs" in last
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_an_agent_folder_that_is_a_linked_worktree_is_named_as_one(evolve_home, tmp_path):
    # its `.git` is a file naming a repository kept elsewhere: every command said the repository
    # was "missing, empty or damaged" and to restore its .git from a backup
    agent = make_agent("demo")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(agent.path, elsewhere)
    git(elsewhere, "worktree", "add", "-q", "-b", "side", str(agent.path))
    said = "is a file naming a repository kept elsewhere (`gitdir: "
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert row["repository_problem"].startswith(said), row
    assert f"`git clone <that repository> {agent.path}`" in row["repository_problem"]
    out = run_cli("log", "demo")
    assert out.returncode == 1 and said in out.stderr.splitlines()[-1]
    assert said in run_cli("doctor").stdout + run_cli("doctor").stderr
    assert not (evolve_home / "logs" / "crash.log").exists()


@pytest.mark.parametrize("command", ["log", "lessons"])
def test_a_read_whose_git_is_killed_by_a_signal_is_named_not_a_crash(
    evolve_home, monkeypatch, tmp_path, command
):
    # git killed by the out-of-memory killer (or a hang-up) mid-read: its repository is sound,
    # so git's check found nothing and the failure was taken for evolve's bug (exit 3, crash.log)
    import shutil

    agent = make_agent("demo")
    write_skill(agent.path, "run-tests")
    assert run_cli("pin", "demo", "run-tests").returncode == 0
    real = shutil.which("git")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = log ] && kill -9 $$; done\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    out = run_cli(command, "demo")
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert "git was stopped by signal 9" in out.stderr.splitlines()[-1]
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_a_worktree_of_an_agent_made_beside_it_is_no_lost_agent(evolve_home):
    # `git worktree add ../review proposals/…` run in agents/demo puts the worktree in agents/:
    # status listed "review" as an agent whose repository is broken, and doctor's error said to
    # clone the repository in its place (a second agent of demo's history)
    agent = make_agent("demo")
    git(agent.path, "worktree", "add", "-q", "-b", "side", "../review")
    out = run_cli("status", "--json")
    assert [a["name"] for a in json.loads(out.stdout)["agents"]] == ["demo"], out.stdout
    doctor = run_cli("doctor")
    assert "review" not in doctor.stdout + doctor.stderr, doctor.stdout
    assert run_cli("init", "review").returncode == 1  # the person's folder stays theirs


def test_a_fifo_for_an_agents_git_is_named_not_waited_on(evolve_home):
    import subprocess
    import sys

    folder = evolve_home / "agents" / "lost"
    folder.mkdir(parents=True)
    (folder / "agent.toml").write_text("")
    os.mkfifo(folder / ".git")
    for command in ("status", "doctor"):
        ran = subprocess.run(
            [sys.executable, "-m", "evolve", command], capture_output=True, text=True, timeout=30
        )
        assert "lost" in ran.stdout and "is not a git repository" in ran.stdout, (command, ran.stdout)
