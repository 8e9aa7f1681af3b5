"""One person (the same git identity) on two machines, one server: evolve's advice never loses a line.

Pat adds a memo line on each machine at the same place: both stay, in one deterministic
order (the server's first), with no branch and no advice at all. Pat changes the same line
two ways: the second sync keeps this machine's commit on `machine/<name>` as Pat made it,
and the advice it prints, followed word for word, shows both versions in a real conflict.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.sync_helpers import Machine, server_fsck


@pytest.fixture
def pat(tmp_path, fake_messages_api, capsys, monkeypatch, git_daemon):
    """Pat's laptop (on the server first) and desktop (joined from it)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake-server-only")
    laptop = Machine(tmp_path / "laptop", fake_messages_api, capsys, person="Pat")
    desktop = Machine(tmp_path / "desktop", fake_messages_api, capsys, person="Pat")
    laptop.create(git_daemon.url())
    desktop.join(git_daemon.url())
    return laptop, desktop, git_daemon


def _memo_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- line from")]


def test_a_line_added_at_the_same_place_on_each_machine_stays_on_both(pat):
    laptop, desktop, server = pat
    desktop.add_to_memo("- line from machine 2")
    assert desktop.sync()[0] == 0
    laptop.add_to_memo("- line from machine 1")
    code, out = laptop.sync()
    assert code == 0, out
    assert "machine/" not in out and not laptop.agent.repo.branches("machine/"), out
    assert desktop.sync()[0] == 0
    expected = ["- line from machine 2", "- line from machine 1"]  # the server's first, then this machine's
    assert _memo_lines(server.git("agent", "show", "main:memo.md")) == expected
    for machine in (laptop, desktop):
        assert _memo_lines(machine.read("memo.md")) == expected, machine.read("memo.md")
        assert machine.head() == server.git("agent", "rev-parse", "main")
        machine.fsck()
    assert "Pat" in laptop.out("log", "-1", "--format=%an", "--", "memo.md")
    server_fsck(server)


def test_following_the_advice_after_a_real_conflict_keeps_both_machines_lines(pat):
    laptop, desktop, server = pat
    laptop.add_to_memo("- Deploy at noon.")
    assert laptop.sync()[0] == 0 and desktop.sync()[0] == 0
    for machine, when in ((desktop, "10:00"), (laptop, "14:00")):  # the same line, changed two ways
        machine.write("memo.md", machine.read("memo.md").replace("- Deploy at noon.", f"- Deploy at {when}."))
    assert desktop.sync()[0] == 0
    code, out = laptop.sync()
    assert code == 0, out
    branch = f"machine/{laptop.home.machine()}"
    assert f"{branch}:" in out and f"git merge {branch}" in out, out
    assert "another person" not in out  # one person on two machines is still one person
    _code, status, _err = laptop.evolve("status")
    assert f"git merge {branch}" in status and "another person" not in status, status
    assert "- Deploy at 10:00." in laptop.read("memo.md")  # main has the server's for now
    assert server.git("agent", "rev-parse", branch) == laptop.out("rev-parse", branch)

    # the advice, word for word: a real conflict showing both versions, never a fast-forward
    merge = laptop.git("merge", branch, check=False)
    assert merge.returncode == 1 and "CONFLICT" in merge.stdout, merge.stdout + merge.stderr
    conflicted = laptop.read("memo.md")
    assert (
        "<<<<<<<" in conflicted and "- Deploy at 10:00." in conflicted and "- Deploy at 14:00." in conflicted
    )
    # Pat keeps what they want (here both), commits the merge, deletes the branch as told, syncs
    kept = conflicted.replace("- Deploy at 10:00.", "- Deploy at 10:00 (machine 2).")
    lines = [
        line
        for line in kept.splitlines(keepends=True)
        if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))
    ]
    laptop.write("memo.md", "".join(lines))
    laptop.git("commit", "-q", "-a", "--no-edit")
    laptop.git("branch", "-d", branch)
    assert laptop.sync()[0] == 0 and desktop.sync()[0] == 0
    for text in (
        server.git("agent", "show", "main:memo.md"),
        laptop.read("memo.md"),
        desktop.read("memo.md"),
    ):
        assert "- Deploy at 10:00 (machine 2)." in text and "- Deploy at 14:00." in text, text
    for machine in (laptop, desktop):
        machine.fsck()
    server_fsck(server)


def test_merging_the_kept_branch_without_deleting_it_first_loses_nothing_either(pat):
    laptop, desktop, server = pat
    laptop.add_to_memo("- Deploy at noon.")
    assert laptop.sync()[0] == 0 and desktop.sync()[0] == 0
    for machine, when in ((desktop, "10:00"), (laptop, "14:00")):
        machine.write("memo.md", machine.read("memo.md").replace("- Deploy at noon.", f"- Deploy at {when}."))
    assert desktop.sync()[0] == 0
    machine_2 = desktop.head()
    assert laptop.sync()[0] == 0
    branch = f"machine/{laptop.home.machine()}"
    merge = subprocess.run(
        ["git", "merge", "-X", "theirs", branch], cwd=laptop.path, capture_output=True, text=True
    )  # Pat takes this machine's side of the conflict: their choice, and the branch goes at the sync
    assert merge.returncode == 0 and "Fast-forward" not in merge.stdout, merge.stdout
    code, out = laptop.sync()
    assert code == 0 and f"{branch}: its commits are on main now" in out, out
    assert not laptop.agent.repo.branches("machine/")
    assert desktop.sync()[0] == 0
    assert "- Deploy at 14:00." in desktop.read("memo.md")
    # machine 2's commit stays in the history, never rewritten
    assert desktop.git("merge-base", "--is-ancestor", machine_2, "main", check=False).returncode == 0
