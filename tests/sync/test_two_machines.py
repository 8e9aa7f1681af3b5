"""Two machines, one server: lessons and a person's commits travel, and nothing is lost.

Each machine is its own evolve home; the server is a real `git daemon` or `git http-backend`
on 127.0.0.1. Reflections go through the real SDK to the fake Messages API; the people use
plain git. What is asserted is what a person sees: files, `git log`, branches, `git fsck`.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from evolve.workspace.template import hooks_folder
from tests.sync_helpers import a_line_on_both, create_op, memo_op, server_fsck


def joined(machines, server):
    """A on the server first, B joined from it."""
    a, b = machines
    a.create(server.url())
    b.join(server.url())
    return a, b, server


@pytest.fixture
def both(machines, git_server):
    """Over both transports (git daemon, smart HTTP): what crosses the wire is theirs to carry."""
    return joined(machines, git_server)


@pytest.fixture
def pair(machines, git_daemon):
    """Over git daemon: how two histories meet is the same whichever transport brought them."""
    return joined(machines, git_daemon)


def test_a_reflection_on_one_machine_reaches_the_other(both):
    a, b, server = both
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


def test_a_persons_conflicting_commit_is_kept_on_a_branch_named_after_the_machine(both):
    a, b, server = both
    a_line_on_both(a, b, "- Release when ready.")
    for machine, text in ((a, "- Alice: release on Fridays."), (b, "- Bob: never release on Fridays.")):
        machine.reword("- Release when ready.", text, f"{machine.person_name}'s rule")
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    machine_name = b.home.machine()
    branch = f"machine/{machine_name}"
    assert f"{branch}: kept this machine's commit" in out
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
    assert b.out("config", "core.hooksPath") == hooks_folder(b.path)
    assert "evolve-managed-hook" in (b.path / ".git" / "hooks" / "pre-commit").read_text()
    b.fsck()


DEPLOYS = (
    "# Deploys\n\n"
    "- Before a deploy, run `make check` and read its summary line.\n"
    "- When a deploy fails, read the last 50 lines of its log before retrying.\n"
    "- Roll back with `make rollback`, never by hand.\n"
)


def patch_op(name: str, old: str, new: str) -> dict:
    return {"op": "patch_skill", "name": name, "old": old, "new": new}


def test_two_capable_reflections_at_once_keep_every_lesson_on_main_or_for_review(pair):
    """Two machines reflect at once, each as a good reflector answers; nothing is lost.

    Each answer has several operations, repeated patches of one skill and both memo
    sections rewritten whole; both patch the same line of the shared skill.
    """
    a, b, server = pair
    a.reflect(create_op("deploys", DEPLOYS, "Use when deploying or rolling back a service."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    a.reflect(
        patch_op(
            "deploys",
            "read the last 50 lines of its log before retrying.",
            "read its log and the health check's output before retrying.",
        ),
        patch_op("deploys", "never by hand.", "never by hand; say in the channel that you did."),
        create_op(
            "migrations",
            "# Migrations\n\n- Run `alembic upgrade head --sql` first and read the SQL it prints.\n",
            "Use when changing the database schema.",
        ),
        memo_op("self", "- I retried a failing deploy twice before reading its log; read first."),
        memo_op("strategies", "- This user wants the health check quoted in every deploy report."),
        summary="deploy reports quote the health check; migrations read as SQL first",
    )
    b.reflect(
        patch_op(
            "deploys",
            "read the last 50 lines of its log",
            "read the last 200 lines of its log",
        ),
        patch_op("deploys", "and read its summary line.", "and read its summary line; stop on a warning."),
        create_op(
            "caching",
            "# Caching\n\n- Key CI caches on the lock file's hash, never on the branch name.\n",
            "Use when setting up CI caches.",
        ),
        memo_op("self", "- I guessed the cache key instead of reading the CI config."),
        memo_op("strategies", "- This user's CI runs on self-hosted runners: no network at test time."),
        summary="longer deploy logs; CI caches keyed on lock files",
    )
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    assert a.sync()[0] == 0
    assert a.head() == b.head() == server.git("agent", "rev-parse", "main")

    on_server = [
        ref.removeprefix("refs/heads/")
        for ref in server.git("agent", "for-each-ref", "--format=%(refname)", "refs/heads/").splitlines()
    ]
    everywhere = "\n".join(
        server.git("agent", "show", f"{ref}:{path}")
        for ref in on_server
        if ref == "main" or ref.startswith("proposals/")
        for path in ("memo.md", "skills/deploys/SKILL.md")
    )
    main_files = {p: b.read(p) for p in ("memo.md", "skills/deploys/SKILL.md")}
    lessons = [
        "the health check's output",
        "say in the channel that you did",
        "read the last 200 lines of its log",
        "stop on a warning",
        "I retried a failing deploy twice",
        "health check quoted in every deploy report",
        "I guessed the cache key",
        "self-hosted runners",
    ]
    missing = [lesson for lesson in lessons if lesson not in everywhere]
    assert not missing, (missing, on_server, main_files)
    for skill in ("migrations", "caching"):
        assert (b.path / "skills" / skill / "SKILL.md").exists() and (a.path / "skills" / skill).exists()
    deploys = main_files["skills/deploys/SKILL.md"]
    assert "stop on a warning" in deploys and "say in the channel" in deploys  # no conflict: both land
    for lesson in lessons[4:]:  # memo lines: merged on main, never parked
        assert lesson in main_files["memo.md"], (lesson, main_files["memo.md"])
    waiting = [ref for ref in on_server if ref.startswith("proposals/")]
    assert len(waiting) == 1, on_server  # the desktop's patch of a line the laptop rewrote
    assert "read the last 200 lines" in server.git("agent", "show", f"{waiting[0]}:skills/deploys/SKILL.md")
    assert waiting[0].removeprefix("proposals/") in a.ok("proposals", "a")
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_a_reflection_planned_again_on_the_servers_main_keeps_its_eval_case(pair):
    a, b, _server = pair
    case = {
        "lesson": "cache the wheels",
        "prompt": "build the wheels",
        "graders": [{"type": "tool_used", "name": "cache", "tool": "Bash", "input_match": "--cache-dir"}],
    }
    a.reflect(memo_op("strategies", "- Lesson from the laptop: pin the toolchain."))
    b.reflect({**memo_op("strategies", "- Lesson from the desktop: cache the wheels."), "eval": case})
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    assert "Evolve-Replayed: planned again" in b.out("log", "-1", "--format=%B")
    assert a.sync()[0] == 0
    (folder,) = [p for p in (a.path / "evals").iterdir()]
    assert "--cache-dir" in (folder / "graders" / "cache.md").read_text()
    assert "pin the toolchain" in a.read("memo.md") and "cache the wheels" in a.read("memo.md")


def test_a_joined_machines_status_names_the_last_reflection_the_history_holds(pair):
    # newcomer 15: on a machine that joined with --from, LAST REFLECTION read "never"
    a, b, _server = pair
    a.reflect(memo_op("strategies", "- Run the linter before every commit."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    (mine,) = json.loads(a.ok("status", "--json"))["agents"]
    (theirs,) = json.loads(b.ok("status", "--json"))["agents"]
    assert theirs["last_reflection_at"] is not None
    # the commit's time there, the reflection's here: the same reflection, seconds apart
    at = [datetime.fromisoformat(t["last_reflection_at"].replace("Z", "+00:00")) for t in (mine, theirs)]
    assert abs((at[0] - at[1]).total_seconds()) < 60
