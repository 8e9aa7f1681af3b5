"""Two machines, one server: lessons and a person's commits travel, and nothing is lost.

Each machine is its own evolve home; the server is a real `git daemon` or `git http-backend`
on 127.0.0.1. Reflections go through the real SDK to the fake Messages API; the people use
plain git. What is asserted is what a person sees: files, `git log`, branches, `git fsck`.
"""

from __future__ import annotations

import json

import pytest

from tests.sync_helpers import create_op, memo_op, server_fsck


@pytest.fixture
def pair(machines, git_server):
    """A on the server first, B joined from it."""
    a, b = machines
    a.create(git_server.url())
    b.join(git_server.url())
    return a, b, git_server


def test_a_reflection_on_one_machine_reaches_the_other(pair):
    a, b, server = pair
    a.reflect(
        memo_op("strategies", "- Run the linter before every commit."),
        create_op("flaky-tests", "- When a test is flaky, rerun it alone first.\n"),
    )
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0 and "synced (1 in)" in out
    assert "- Run the linter before every commit." in b.read("memo.md")
    assert "rerun it alone first" in b.read("skills/flaky-tests/SKILL.md")
    assert b.head() == a.head() == server.git("agent", "rev-parse", "main")
    skills_a, skills_b = (json.loads(m.ok("skills", "a", "--json")) for m in (a, b))
    keys = ("name", "created_at", "updated_at", "patch_count")
    assert [{k: s[k] for k in keys} for s in skills_a] == [{k: s[k] for k in keys} for s in skills_b]
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_a_persons_commit_on_one_machine_reaches_the_other_and_stays_theirs(pair):
    a, b, server = pair
    b.add_to_memo("- Bob's own rule: ask before deploying.")
    b.commit("my rule")
    assert b.sync()[0] == 0
    assert a.sync()[0] == 0
    assert "- Bob's own rule: ask before deploying." in a.read("memo.md")
    assert a.out("log", "-1", "--format=%an %s") == "Bob my rule"
    result = a.reflect(memo_op("strategies", "- A new strategy from the model."))  # rewrites the section
    assert result["status"] == "committed"
    memo = a.read("memo.md")
    assert "Bob's own rule" in memo and "A new strategy from the model." in memo  # the person's line stays
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_both_reflect_on_the_same_memo_section_and_neither_lesson_is_lost(pair):
    a, b, server = pair
    a.reflect(memo_op("strategies", "- Lesson from the laptop: pin the toolchain."))
    b.reflect(memo_op("strategies", "- Lesson from the desktop: cache the wheels."))
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    for machine in (b, a):
        if machine is a:
            assert a.sync()[0] == 0
        memo = machine.read("memo.md")
        assert "pin the toolchain" in memo and "cache the wheels" in memo, memo
    assert a.head() == b.head() == server.git("agent", "rev-parse", "main")
    replayed = b.out("log", "-1", "--format=%B")
    assert "Evolve-Kind: reflection" in replayed and "Evolve-Replayed: planned again" in replayed
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_a_persons_conflicting_commit_is_kept_on_a_branch_named_after_the_machine(pair):
    a, b, server = pair
    for machine, text in ((a, "- Alice: release on Fridays."), (b, "- Bob: never release on Fridays.")):
        machine.add_to_memo(text)
        machine.commit(f"{machine.person_name}'s rule")
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    machine_name = b.home.machine()
    branch = f"machine/{machine_name}"
    assert f"{branch}: kept a person's commit" in out
    assert "Alice: release on Fridays." in b.read("memo.md") and "Bob:" not in b.read("memo.md")
    assert "Bob: never release on Fridays." in b.out("show", f"{branch}:memo.md")
    assert b.out("log", "-1", "--format=%an %s", branch) == "Bob Bob's rule"
    assert server.git("agent", "rev-parse", branch) == b.out("rev-parse", branch)  # kept on the server too
    code, status, _err = b.evolve("status")
    assert f"kept on {branch}" in status
    assert b.head() == server.git("agent", "rev-parse", "main")
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_joining_keeps_the_history_blocks_and_trailers(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    rule = "- When the suite is flaky, always rerun it with `pytest -p no:randomly` first."
    sha = a.reflect(create_op("flaky-tests", f"# Flaky tests\n\n{rule}\n"))["commit"]
    a.git("revert", "--no-commit", sha)
    a.git("commit", "-q", "-m", "we fix flaky tests at their cause")  # a person's own revert message
    a.reflect(create_op("deploy", "- Deploy with `make release`.\n"))
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    log_a, log_b = (json.loads(m.ok("log", "a", "--json")) for m in (a, b))
    assert [c["trailers"] for c in log_a] == [c["trailers"] for c in log_b]
    blocks = [blk["line"] for c in log_b for blk in c["blocks"]]
    assert blocks == [rule]
    skills_a, skills_b = (json.loads(m.ok("skills", "a", "--json")) for m in (a, b))
    assert [(s["name"], s["created_at"], s["patch_count"]) for s in skills_a] == [
        (s["name"], s["created_at"], s["patch_count"]) for s in skills_b
    ]
    assert b.out("config", "core.hooksPath") == ".git/hooks"
    assert "evolve-managed-hook" in (b.path / ".git" / "hooks" / "pre-commit").read_text()
    b.fsck()
