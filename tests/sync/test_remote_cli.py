"""`evolve remote` and `evolve sync` as a person uses them: lines, JSON and exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from evolve.errors import EXIT_BUSY
from evolve.store.git import RepositoryDamaged
from evolve.workspace.agent import Agent
from tests.helpers import git, git_out, make_agent, run_cli
from tests.sync_helpers import memo_op


def test_remote_shows_sets_and_removes(machines, git_daemon):
    a, _b = machines
    a.create()
    assert "no remote; set one with `evolve remote a URL`" in a.ok("remote", "a")
    assert a.evolve("sync") == (0, "no agent has a remote; set one with `evolve remote NAME URL`\n", "")
    out = a.ok("remote", "a", git_daemon.url())
    assert out.splitlines() == [f"a: remote {git_daemon.url()}", "a: synced (2 out)"]
    shown = json.loads(a.ok("remote", "a", "--json"))
    assert shown["url"] == git_daemon.url() and shown["machine"] == a.home.machine()
    assert shown["sync"] == "auto" and shown["last_sync"]["state"] == "synced"
    assert json.loads(a.ok("sync", "--json")) == [
        {"agent": "a", "state": "up to date", "ok": True, "detail": "", "received": 0, "sent": 0, "notes": []}
    ]
    out = a.ok("remote", "a", "--remove")
    assert "no remote any more" in out and "stay this machine's own" in out
    assert a.out("for-each-ref", "refs/evolve/") == "" and a.agent.repo.remote_url() is None
    assert a.evolve("sync", "a")[0] == 1
    code, _out, err = a.evolve("remote", "a", git_daemon.url(), "--remove")
    assert code == 1 and "not both" in err


def test_a_server_holding_another_agent_is_refused_and_the_remote_left_unset(machines, git_daemon):
    a, b = machines
    with (a.root / "config.toml").open("a") as config:  # two agents made in the same second differ
        config.write('\n[git]\nauthor_name = "evolve on the laptop"\n')
    a.create()
    b.ok("init", "a")
    b.write("memo.md", b.read("memo.md") + "\n- another agent entirely\n")
    b.commit("another agent")
    b.ok("remote", "a", git_daemon.url())  # another agent's history on the server
    code, out, _err = a.evolve("remote", "a", git_daemon.url())
    assert code == 1 and "shares no history" in out and "evolve init NAME --from URL" in out
    assert a.agent.repo.remote_url() is None
    assert git_daemon.git("agent", "rev-parse", "main") == b.head()


def test_sync_is_busy_while_a_persons_revert_is_unfinished(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    first = a.reflect(memo_op("strategies", "- s1"))["commit"]
    a.reflect(memo_op("strategies", "- s1 changed\n- s2"))
    assert a.git("revert", "--no-edit", first, check=False).returncode != 0  # stopped on a conflict
    head = a.head()
    code, out = a.sync()
    assert code == EXIT_BUSY and "busy: a git operation is in progress" in out and "git revert --abort" in out
    assert a.head() == head and "<<<<<<<" not in git_daemon.git("agent", "show", "main:memo.md")
    a.git("revert", "--abort")
    assert a.sync()[0] == 0
    code, out = a.sync("--accept-rewrite")
    assert code == 1 and "exactly one agent" in out


def test_a_persons_uncommitted_edit_is_committed_as_theirs_first(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.add_to_memo("- typed, never committed")
    assert a.sync()[0] == 0
    log = a.out("log", "-1", "--format=%an|%s|%(trailers:key=Evolve-Source,valueonly)")
    assert log == "Alice|edit(a): memo.md|human"
    assert b.sync()[0] == 0 and "- typed, never committed" in b.read("memo.md")


def test_the_sync_command_as_its_own_process(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evolve", "--home", str(a.root), "sync", "a"],
        capture_output=True,
        text=True,
        cwd=a.root,
    )
    assert proc.returncode == 0 and proc.stdout == "a: up to date\n", proc.stderr


def test_doctor_names_a_password_set_by_hand_without_printing_it(machines):
    a, _b = machines
    a.create()
    a.git("remote", "add", "origin", "https://alice:hunter2hunter2@example.test/agent.git")
    code, out, _err = a.evolve("doctor")
    assert "a: remote" in out and "carries a password or token" in out and "hunter2" not in out


def test_a_git_setting_that_does_not_parse_is_no_agent_without_a_remote(evolve_home, tmp_path):
    # a ~/.gitconfig git cannot parse hides every remote: `evolve sync` said "no agent has a
    # remote" (exit 0) and `evolve sync NAME` "no remote: set one"; each agent is named instead
    agent = make_agent("a")
    git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / "a.git"))
    assert run_cli("remote", "a", (tmp_path / "a.git").as_uri()).returncode == 0
    with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as config:
        config.write("[broken\n")
    for args in (("sync",), ("sync", "a")):
        out = run_cli(*args)
        assert out.returncode == 1, (out.stdout, out.stderr)
        assert out.stdout.startswith(f"a: failed: {agent.path}: git fails with your git settings"), out.stdout
    [row] = json.loads(run_cli("sync", "--json").stdout)
    assert row["state"] == "failed" and not row["ok"]


def test_an_agent_whose_git_is_a_link_to_another_agents_is_refused(evolve_home, tmp_path):
    # `ln -s ../a/.git b/.git`: two work trees on one index. `evolve sync` committed b's memo,
    # name and plugin files into a's history as a person's edit and pushed them to a's server
    for name in ("a", "b"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
    a, b = evolve_home / "agents" / "a", evolve_home / "agents" / "b"
    (b / "memo.md").write_text((b / "memo.md").read_text() + "\n- b's own line\n")
    shutil.rmtree(b / ".git")
    (b / ".git").symlink_to("../a/.git")
    server_before = git_out(tmp_path / "a.git", "rev-parse", "main")
    out = run_cli("sync", "--json")
    assert out.returncode == 1, out.stderr
    rows = {row["agent"]: row for row in json.loads(out.stdout)}
    assert rows["a"]["ok"] and rows["b"]["state"] == "failed", rows
    assert f"is a link to {a / '.git'}" in rows["b"]["detail"], rows["b"]
    assert git_out(tmp_path / "a.git", "rev-parse", "main") == server_before
    assert git_out(a, "status", "--porcelain") == ""  # a's files are its commit's still
    with pytest.raises(RepositoryDamaged), Agent.open("b").repo.locked():  # every writer's door
        pass
    assert "repository broken" in run_cli("status").stdout
    doctor = run_cli("doctor")
    assert doctor.returncode == 1 and f"b: .git: is a link to {a / '.git'}" in doctor.stdout + doctor.stderr


def test_an_agent_whose_remote_was_lost_with_its_config_is_named_until_removed(evolve_home, tmp_path):
    # .git/config replaced (a restore, a sync tool): the remote is gone and `evolve sync` left
    # the agent out, exit 0, though it had synced; `evolve remote NAME --remove` says it is done
    for name in ("a", "b"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
    git(evolve_home / "agents" / "a", "remote", "remove", "origin")  # as a lost config leaves it
    out = run_cli("sync")
    assert out.returncode == 1, (out.stdout, out.stderr)
    first, second = out.stdout.splitlines()
    assert first.startswith("a: failed: no remote any more, though it synced (last "), first
    assert "`evolve remote a URL`, or `evolve remote a --remove`" in first
    assert second == "b: up to date"
    assert run_cli("remote", "a", "--remove").returncode == 0
    out = run_cli("sync", "--json")
    assert out.returncode == 0 and [row["agent"] for row in json.loads(out.stdout)] == ["b"], out.stdout
    make_agent("c")  # one that never had a remote is no agent to sync, as ever
    assert [row["agent"] for row in json.loads(run_cli("sync", "--json").stdout)] == ["b"]
