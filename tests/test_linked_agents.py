"""A link under agents/ to another agent's folder is a second name for that agent, not an agent.

`ln -s alpha agents/beta` listed beta as an agent of its own (and `ln -s alpha "agents/My
Link"` was offered a rename that would have made one): status, sync and the cycle would
have worked on alpha's one repository under two names, two writers of one branch. Status
and doctor say it in one line, offer no rename, and no command takes the link's name.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from evolve.home import Home
from evolve.integrations import claude_code
from evolve.observe.records import drain_pending
from evolve.store import ledger
from evolve.workspace.folders import linked_folders, list_agents, lost_agents, misnamed_agents
from tests.helpers import commit_all, git, git_out, make_agent, run_cli
from tests.observe_helpers import Transcript


@pytest.fixture
def links(evolve_home):
    make_agent("alpha")
    agents = evolve_home / "agents"
    (agents / "beta").symlink_to("alpha")  # as `ln -s alpha beta` in agents/
    (agents / "My Link").symlink_to(agents / "alpha")
    return agents


def said(agents, link: str) -> str:
    return (
        f"{str(agents / link)!r} is a link to agent 'alpha', not an agent of its own: nothing is observed, "
        "reflected or synced through it; use 'alpha' (the link may be removed)"
    )


def test_status_says_each_link_in_one_line_and_offers_no_rename(links):
    out = run_cli("status")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line for line in lines if "is a link to agent" in line] == [
        said(links, "My Link"),
        said(links, "beta"),
    ]
    assert not [line for line in lines if "rename" in line or "is no agent" in line]
    data = json.loads(run_cli("status", "--json").stdout)
    assert [a["name"] for a in data["agents"]] == ["alpha"] and data["misnamed_folders"] == []
    assert data["linked_folders"] == [
        {"folder": str(links / name), "agent": "alpha", "problem": said(links, name)}
        for name in ("My Link", "beta")
    ]
    home = Home.resolve()
    assert list_agents(home) == list_agents(home, {"alpha", "beta"}) == ["alpha"]  # a ledger's name too
    assert misnamed_agents(home) == [] and lost_agents(home) == []


def test_doctor_says_it_once_and_no_command_takes_the_links_name(links):
    out = run_cli("doctor", "--json")
    found = [p for p in json.loads(out.stdout)["findings"] if "is a link to agent" in p["problem"]]
    assert [p["problem"] for p in found] == [said(links, "My Link"), said(links, "beta")]
    assert all(p["level"] == "warning" for p in found)
    for args in (
        ["reflect", "beta", "--force"],
        ["sync", "beta"],
        ["observe", "beta"],
        ["skills", "beta"],
        ["remote", "beta"],
    ):
        refused = run_cli(*args)
        assert refused.returncode == 1 and said(links, "beta") in refused.stderr, (args, refused.stderr)


def test_a_sync_commits_and_pushes_once_through_the_agents_own_name(links, tmp_path):
    server = tmp_path / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(server)], check=True)
    assert run_cli("remote", "alpha", str(server)).returncode == 0
    alpha = links / "alpha"
    (alpha / "memo.md").write_text((alpha / "memo.md").read_text() + "\n- a person's line\n")
    before = int(git_out(alpha, "rev-list", "--count", "HEAD"))
    out = run_cli("sync", "--json")
    assert out.returncode == 0, out.stderr
    assert [o["agent"] for o in json.loads(out.stdout)] == ["alpha"]
    assert int(git_out(alpha, "rev-list", "--count", "HEAD")) == before + 1  # the person's edit, once
    assert git_out(alpha, "rev-parse", "HEAD") == git(server, "rev-parse", "main").stdout.strip()
    assert run_cli("sync", "--json").returncode == 0
    assert int(git_out(alpha, "rev-list", "--count", "HEAD")) == before + 1


def test_a_link_to_a_folder_outside_the_home_is_still_that_agent(evolve_home, tmp_path):
    # a person who keeps the repository elsewhere and links it in: one name, one agent
    make_agent("kept")
    outside = tmp_path / "elsewhere"
    (evolve_home / "agents" / "kept").rename(outside)
    (evolve_home / "agents" / "kept").symlink_to(outside)
    (evolve_home / "agents" / "second").symlink_to(outside)
    home = Home.resolve()
    assert list_agents(home) == ["kept"]
    assert [(link.folder.name, link.agent) for link in linked_folders(home)] == [("second", "kept")]


def test_hooks_installed_under_a_name_that_became_a_link_count_for_its_agent(links, tmp_path):
    # beta's hooks predate the link (two agents merged, the old name kept as a link): their
    # sessions are alpha's, never a ledger of a name nothing observes or reflects
    memo = links / "alpha" / "memo.md"
    heading = "## Strategies for this user and domain\n"
    memo.write_text(memo.read_text().replace(heading, heading + "\n- Use pnpm, not npm.\n"))
    commit_all(links / "alpha", "a rule")
    session = Transcript()
    session.run("Run the tests please")
    transcript = session.write(tmp_path / "s1.jsonl")
    env = {**os.environ, "EVOLVE_NO_WATCHER": "1"}
    for event, payload in (
        ("session-start", {"session_id": "s1", "source": "startup"}),
        ("stop", {"session_id": "s1", "transcript_path": str(transcript)}),
    ):
        argv = shlex.split(claude_code.hook_command(sys.executable, Home.resolve(), "beta", event, True))
        proc = subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, env=env)
        assert proc.returncode == 0 and (event != "session-start" or b"Use pnpm" in proc.stdout), proc
    conn = ledger.connect(Home.resolve().state_db)
    try:
        counts = drain_pending(conn, Home.resolve())
        assert counts == {"impressions": 1, "observed": 1}, counts
        agents = {
            table: {row[0] for row in conn.execute(f"SELECT DISTINCT agent FROM {table}")}  # noqa: S608
            for table in ("runs", "session_starts", "memo_impressions")
        }
    finally:
        conn.close()
    assert agents == {"runs": {"alpha"}, "session_starts": {"alpha"}, "memo_impressions": {"alpha"}}, agents


def test_a_link_loop_or_a_link_to_a_moved_agent_is_one_line_and_stops_no_command(links, tmp_path):
    # scandir's is_dir() raised ELOOP: one looping link stopped status, doctor, sync and the cycle
    (links / "x").symlink_to("y")
    (links / "y").symlink_to("x")
    moved = tmp_path / "work-agent"
    make_agent("work")
    (links / "work").rename(moved)
    (links / "work").symlink_to(moved)
    moved.rename(tmp_path / "renamed")  # the person moved the repository again: the link leads nowhere
    (tmp_path / "dotfiles.toml").write_text("[sources]\n")
    (links / "alpha.local.toml").symlink_to(tmp_path / "dotfiles.toml")  # a file kept elsewhere: no alarm
    status = run_cli("status", "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert [a["name"] for a in data["agents"]] == ["alpha"]
    assert [(b["folder"], b["target"]) for b in data["broken_links"]] == [
        (str(links / "work"), str(moved)),
        (str(links / "x"), "y"),
        (str(links / "y"), "x"),
    ]
    said = run_cli("status").stdout
    assert f"{str(links / 'work')!r} is a link to {str(moved)!r}, which leads nowhere" in said, said
    for args in (["doctor"], ["sync"], ["cycle"]):
        out = run_cli(*args)
        assert "internal error" not in out.stderr and "Too many levels" not in out.stderr, (args, out.stderr)
    refused = run_cli("init", "work")
    assert refused.returncode == 1 and "which leads nowhere" in refused.stderr, refused.stderr
    assert (links / "work").is_symlink()  # nothing of the person's is touched


@pytest.mark.parametrize("kind", ["loop", "leads-nowhere", "fifo"])
def test_an_agents_folder_that_is_no_folder_is_one_line_in_every_command(evolve_home, tmp_path, kind):
    # agents/ kept in a person's dotfiles as a link, then the dotfiles moved (or a loop, or a
    # FIFO): status, doctor, sync and agents stopped with "internal error: OSError" (a loop),
    # or said "no agents" and "all good" while init failed with an internal FileExistsError
    evolve_home.mkdir()
    agents = evolve_home / "agents"
    if kind == "fifo":
        os.mkfifo(agents)
    else:
        agents.symlink_to("agents" if kind == "loop" else tmp_path / "dotfiles" / "agents")
    for args in (["status"], ["doctor"], ["sync"], ["agents"], ["init", "first"]):
        out = run_cli(*args)
        assert out.returncode == 1 and "internal error" not in out.stderr, (args, out.stderr)
        assert out.stderr.count("\n") == 1 and f"{str(agents)!r} is " in out.stderr, (args, out.stderr)
    assert os.path.lexists(agents) and not agents.is_dir()  # nothing of the person's is touched
