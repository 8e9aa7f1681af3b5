"""Review on the server: proposals travel, a merge there is an accept, a deletion a reject.

With a remote, eviction and prune wait for review too.

The team's side is a plain clone of the server where a reviewer merges, squashes,
rebases or deletes, then pushes — as a pull request's buttons would.
"""

from __future__ import annotations

import json

import pytest

from tests.sync_helpers import Clone, Machine, create_op, memo_op, review_on, server_fsck

RULE = "- When a deploy fails, read the last 50 lines of its log before retrying."


def proposal_of(machine: Machine) -> str:
    (branch,) = machine.agent.repo.branches("proposals/")
    return branch


@pytest.mark.parametrize("style", ["merge", "squash", "rebase", "fast-forward"])
def test_a_proposal_merged_on_the_server_in_any_style_is_accepted(machines, git_daemon, tmp_path, style):
    git_server = git_daemon
    a, b = machines
    review_on(a, git_server.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"), memo_op("self", "- I retry deploys blindly."))
    branch = proposal_of(a)
    assert a.sync()[0] == 0
    assert git_server.git("agent", "rev-parse", branch) == a.out("rev-parse", branch)  # pushed for review
    b.join(git_server.url())
    listed = json.loads(b.ok("proposals", "a", "--json"))
    assert [(p["id"], p["where"]) for p in listed] == [(branch.removeprefix("proposals/"), "on the server")]
    Clone(tmp_path / "team", git_server.url()).merge(branch, style)
    code, out = a.sync()
    assert code == 0 and f"{branch}: merged on the server: accepted" in out, out
    assert RULE in a.read("skills/deploys/SKILL.md") and a.agent.repo.branches("proposals/") == {}
    assert not git_server.git("agent", "branch", "--list", "proposals/*"), out  # decided: gone there too
    accept = a.out("log", "-1", "--format=%B")
    assert "Evolve-Kind: accept" in accept and f"Evolve-Accepted: {branch[len('proposals/') :]}" in accept
    assert b.sync()[0] == 0  # the other machine learns the decision; no second accept commit
    assert b.agent.repo.branches("proposals/") == {} and b.head() == a.head()
    assert sum("Evolve-Kind: accept" in body for body in b.out("log", "--format=%B%x00").split("\0")) == 1
    a.git("rm", "-rq", "skills/deploys")  # a person undoes the accepted lesson: it is blocked like any
    a.git("commit", "-qm", "we do not want this after all")
    blocks = [blk["line"] for c in json.loads(a.ok("log", "a", "--json")) for blk in c["blocks"]]
    assert RULE in blocks
    for machine in (a, b):
        machine.fsck()
    server_fsck(git_server)


def test_a_proposal_deleted_on_the_server_is_rejected_everywhere(machines, git_daemon, tmp_path):
    a, b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = proposal_of(a)
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    Clone(tmp_path / "team", git_daemon.url()).delete(branch)
    code, out = b.sync()
    assert code == 0 and f"{branch}: deleted on the server" in out and "rejected" in out, out
    reject = b.out("log", "-1", "--format=%B")
    assert "Evolve-Kind: reject" in reject and "Evolve-Blocks:" in reject
    assert "read the last 50 lines" in reject
    assert a.sync()[0] == 0 and a.head() == b.head() and a.agent.repo.branches("proposals/") == {}
    again = a.reflect(create_op("deploys-again", f"# Deploys\n\n{RULE}\n"))  # not proposed again
    assert [o["status"] for o in again["operations"]] == ["rejected"]
    assert "a person undid this lesson" in again["operations"][0]["reason"]
    for machine in (a, b):
        machine.fsck()
    server_fsck(git_daemon)


def test_a_proposal_accepted_here_leaves_the_server_too(machines, git_daemon):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(memo_op("strategies", "- Keep deploys small."))
    branch = proposal_of(a)
    assert a.sync()[0] == 0
    a.ok("accept", "a", branch.removeprefix("proposals/"))
    assert a.sync()[0] == 0
    assert git_daemon.git("agent", "branch", "--list", "proposals/*") == ""
    assert "- Keep deploys small." in git_daemon.git("agent", "show", "main:memo.md")


def test_with_a_remote_eviction_and_prune_wait_for_review(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    a.write("agent.toml", a.read("agent.toml") + "\n[limits]\nmax_skills = 2\n")
    a.commit("two skills at most")
    for name in ("one", "two"):
        a.reflect(create_op(name, f"- Do {name} things carefully every time.\n"))
    result = a.reflect(create_op("three", "- Do three things carefully every time.\n"))
    assert result["evicted"] == [] and len(result["evictions_waiting"]) == 1
    assert sorted(p.name for p in (a.path / "skills").iterdir() if p.is_dir()) == ["one", "three", "two"]
    evicted = result["evictions_waiting"][0]
    proposal = result["proposal"]
    assert a.out("ls-tree", "--name-only", proposal, f"skills/{evicted}") == ""  # the eviction waits there
    prune = json.loads(a.ok("prune", "a", "--json"))
    assert prune["proposal"] and prune["evicted"]
    assert all((a.path / "skills" / name).exists() for name in prune["evicted"])  # nothing left main
    assert a.sync()[0] == 0
    assert git_daemon.git("agent", "rev-parse", prune["proposal"]) == a.out("rev-parse", prune["proposal"])
    a.fsck()
