"""A branch file that names no commit as git reads it: a broken branch, named with its repair.

A crash empties or overwrites `refs/heads/main`, a sync tool deletes it, a hand edit leaves a
symref going nowhere or a tree's id where the commit belongs. git reads each as a branch with
no commits (or ignores it quietly), so evolve read "no history yet", stayed busy for good, or
blamed the server. Every command now names the broken branch and its repair, and what git
itself reads as the commit is never called broken.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import git, make_agent, run_cli, write_skill


@pytest.mark.parametrize(
    "content",
    [
        "",
        "garbage\n",
        None,
        "ref: refs/heads/main\n",
        "ref: refs/heads/gone\n",
        "its tree",
        " {sha}\n",  # a space before the id: git reads no id
        "{sha}{sha}\n"[:65] + "\n",  # 64 digits in a SHA-1 repository
        "five hops",  # git follows four
        "a symref to a tree",  # by hand: `ref: refs/heads/side`, side naming a tree
    ],
)
def test_a_branch_file_naming_no_commit_is_damage_not_busy(evolve_home, content):
    # emptied by a crash, or overwritten: "busy, run the command again once that git is done"
    # never ended, and status took the agent for one whose branch has no commit yet; deleted
    # (None), its reflog left: status and doctor advised `git commit` of what is staged, which
    # starts a history of its own that sync then refuses
    agent = make_agent("demo")
    write_skill(agent.path, "run-tests")
    ref = agent.path / ".git" / "refs" / "heads" / "main"
    commands = ["pin", "log", "lessons"]
    sha = git(agent.path, "rev-parse", "HEAD").stdout.strip()
    if content == "five hops":
        git(agent.path, "update-ref", "refs/heads/h5", sha)
        for hop in range(4, 0, -1):
            git(agent.path, "symbolic-ref", f"refs/heads/h{hop}", f"refs/heads/h{hop + 1}")
        content = "ref: refs/heads/h1\n"
    if content is not None and "{sha}" in content:
        content = content.replace("{sha}", sha)
    if content == "a symref to a tree":
        (agent.path / ".git" / "refs" / "heads" / "side").write_text(
            git(agent.path, "rev-parse", "HEAD^{tree}").stdout
        )
        content = "ref: refs/heads/side\n"
        commands.remove("lessons")  # read from that tree, as below
    if content == "its tree":  # a commit's tree where the commit belongs: `git log` shows nothing
        content = git(agent.path, "rev-parse", "HEAD^{tree}").stdout
        commands.remove("lessons")  # read from that tree: the files as they are, no commit to name
    ref.unlink() if content is None else ref.write_text(content)
    for command in commands:  # the reading ones printed no history, exit 0
        out = run_cli(command, "demo", *(["run-tests"] if command == "pin" else []))
        assert out.returncode == 1, (command, out.stdout, out.stderr)
        assert out.stderr.splitlines()[-1].startswith(
            f"evolve: error: {agent.path}: refs/heads/main names no commit"
        )
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert row["repository_problem"].startswith("refs/heads/main names no commit") and row["held"] is None
    last = (agent.path / ".git" / "logs" / "refs" / "heads" / "main").read_text().splitlines()[-1].split()[1]
    ref.unlink(missing_ok=True)  # the remedy it names (`rm -f`)
    git(agent.path, "update-ref", "refs/heads/main", last)
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert row["repository_problem"] is None


def test_doctor_names_a_broken_branch_and_diagnoses_every_other_agent(evolve_home):
    # doctor stopped at the agent whose branch file names no commit: one error line, exit 1,
    # and nothing said of any other agent
    make_agent("sound")
    broken = make_agent("broken")
    (broken.path / ".git" / "refs" / "heads" / "main").write_text("")
    (make_agent("stale").path / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    out = run_cli("doctor", "--json")
    assert out.stdout, out.stderr
    findings = json.loads(out.stdout)["findings"]
    where = {f["where"]: f["problem"] for f in findings}
    assert where["broken: .git"].startswith("refs/heads/main names no commit")
    assert any(w.startswith("stale: .git/hooks/pre-commit") for w in where)
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_sync_names_a_broken_branch_not_the_server(evolve_home, tmp_path):
    # the fetch failed on the local branch and sync said "could not fetch (bad object
    # refs/heads/main …)", blaming the server and naming no repair
    agent = make_agent("demo")
    server = tmp_path / "server.git"
    git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(server))
    assert run_cli("remote", "demo", server.as_uri()).returncode == 0
    (agent.path / ".git" / "refs" / "heads" / "main").write_text("garbage\n")
    out = run_cli("sync", "demo", "--json")
    [row] = json.loads(out.stdout) if out.stdout else [None]
    assert row is not None, out.stderr
    assert row["state"] == "failed" and "refs/heads/main names no commit" in row["detail"], row
    assert "fetch" not in row["detail"]


@pytest.mark.parametrize("content", ["{SHA}\n", "{sha}   \n", "ref:refs/heads/h1\n", "four hops"])
def test_a_branch_file_git_reads_is_no_damage(evolve_home, content):
    # what git takes for the commit (upper-case digits, no space after `ref:`, four symref
    # hops) must not read as a broken branch
    agent = make_agent("demo")
    sha = git(agent.path, "rev-parse", "HEAD").stdout.strip()
    git(agent.path, "update-ref", "refs/heads/h4", sha)
    for hop in range(3, 0, -1):
        git(agent.path, "symbolic-ref", f"refs/heads/h{hop}", f"refs/heads/h{hop + 1}")
    content = "ref: refs/heads/h1\n" if content == "four hops" else content
    (agent.path / ".git" / "refs" / "heads" / "main").write_text(content.format(sha=sha, SHA=sha.upper()))
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert row["repository_problem"] is None, row
    out = run_cli("log", "demo")
    assert out.returncode == 0 and out.stdout.strip(), out.stderr


def test_a_branch_file_naming_a_tag_is_named_where_a_commit_is_refused(evolve_home):
    # an annotated tag's id in refs/heads/main: git reads through it (log, lessons show the
    # history) but commits on none, and pin said "git fails in this repository: run fsck,
    # or restore .git from a backup", which would lose what the sound repository holds
    agent = make_agent("demo")
    write_skill(agent.path, "run-tests")
    git(agent.path, "tag", "-a", "v1", "-m", "a tag")
    tag = git(agent.path, "rev-parse", "v1").stdout.strip()
    (agent.path / ".git" / "refs" / "heads" / "main").write_text(tag + "\n")
    assert "init(demo)" in run_cli("log", "demo").stdout  # read through the tag, as git does
    for args in (["pin", "demo", "run-tests"], ["unpin", "demo", "run-tests"]):
        out = run_cli(*args)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        assert out.stderr.splitlines()[-1].startswith(
            f"evolve: error: {agent.path}: refs/heads/main names no commit"
        )
    doctor = run_cli("doctor")
    assert (
        doctor.returncode == 1
        and "demo: .git: refs/heads/main names no commit" in doctor.stdout + doctor.stderr
    )
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]  # it said nothing was wrong
    assert row["repository_problem"].startswith("refs/heads/main names no commit"), row
    assert git(agent.path, "cat-file", "-t", "refs/heads/main").stdout.strip() == "tag"  # nothing moved it


@pytest.mark.parametrize("how", ["its id", "a symref to it"])
def test_sync_names_a_branch_file_naming_a_tag_not_the_server(evolve_home, tmp_path, how):
    # the push of a tag to the server's branch was refused: sync said "the server refused the
    # push (main: [remote rejected] (atomic transaction failed))", naming neither file nor repair
    agent = make_agent("demo")
    server = tmp_path / "server.git"
    git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(server))
    assert run_cli("remote", "demo", server.as_uri()).returncode == 0
    git(agent.path, "tag", "-a", "v1", "-m", "a tag")
    tag = git(agent.path, "rev-parse", "v1").stdout.strip()
    ref = agent.path / ".git" / "refs" / "heads" / "main"
    ref.write_text(tag + "\n" if how == "its id" else "ref: refs/tags/v1\n")
    out = run_cli("sync", "demo", "--json")
    [row] = json.loads(out.stdout) if out.stdout else [None]
    assert row is not None, out.stderr
    assert row["state"] == "failed" and "refs/heads/main names no commit" in row["detail"], row
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_a_branch_file_that_is_a_symref_to_a_tag_is_named_not_busy(evolve_home):
    # `ref: refs/tags/v1`: git reads the history through the tag and moves the branch from
    # none: pin said "busy: git would not move main … run the command again", exit 75, for good
    agent = make_agent("demo")
    write_skill(agent.path, "run-tests")
    git(agent.path, "tag", "-a", "v1", "-m", "a tag")
    (agent.path / ".git" / "refs" / "heads" / "main").write_text("ref: refs/tags/v1\n")
    out = run_cli("pin", "demo", "run-tests")
    assert out.returncode == 1, (out.stdout, out.stderr)
    said = f"evolve: error: {agent.path}: refs/heads/main names no commit"
    assert out.stderr.splitlines()[-1].startswith(said)
