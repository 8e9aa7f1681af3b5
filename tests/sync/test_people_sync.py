"""Scripted people on two machines: a person's text, commits and undo win over a model's.

Whichever machine each was made on; and a person typing while a sync runs loses nothing.
"""

from __future__ import annotations

import json

import pytest

from evolve.errors import EXIT_BUSY
from evolve.store.repo import Repo
from tests.sync_helpers import SELF, create_op, memo_op, server_fsck

RULE = "- When the suite is flaky, always rerun it with `pytest -p no:randomly` first."


@pytest.fixture
def pair(machines, git_daemon):
    """A on the server first, B joined from it (git daemon only: what is tested is the people)."""
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    return a, b, git_daemon


def test_a_persons_edit_beats_the_servers_reflection_and_the_lesson_waits(pair):
    a, b, server = pair
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    b.reflect(memo_op("strategies", "- Use pytest -x --ff for quick checks."))
    assert b.sync()[0] == 0
    mine = a.read("memo.md").replace("- Use pytest -x for quick checks.", "- Use pytest -x, never -k.")
    a.write("memo.md", mine)
    a.commit("my wording")
    code, out = a.sync()
    assert code == 0 and "waits for review" in out, out
    memo = a.read("memo.md")
    assert "- Use pytest -x, never -k." in memo and "--ff" not in memo  # the person's text on main
    ((branch, sha),) = a.agent.repo.branches("proposals/").items()
    assert "--ff" in a.out("show", f"{sha}:memo.md")  # the lesson waits, on the server too
    assert server.git("agent", "rev-parse", branch) == sha
    assert b.sync()[0] == 0 and "- Use pytest -x, never -k." in b.read("memo.md")
    assert branch.removeprefix("proposals/") in b.ok("proposals", "a")
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_a_reflection_patching_a_line_a_person_changed_on_the_server_waits(pair):
    a, b, server = pair
    a.reflect(create_op("releases", "# Releases\n\n- Tag releases as vX.Y.\n- Write the notes.\n"))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    path = "skills/releases/SKILL.md"
    b.write(path, b.read(path).replace("- Tag releases as vX.Y.", "- Always tag releases as vX.Y.Z."))
    b.commit("our tagging rule")
    assert b.sync()[0] == 0
    a.reflect(
        {"op": "patch_skill", "name": "releases", "old": "- Tag releases as vX.Y.", "new": "- Tag anyhow."}
    )
    code, out = a.sync()
    assert code == 0 and "waits for review" in out, out
    assert "- Always tag releases as vX.Y.Z." in a.read(path) and "Tag anyhow" not in a.read(path)
    (sha,) = a.agent.repo.branches("proposals/").values()
    assert "Tag anyhow" in a.out("show", f"{sha}:{path}")
    replayed = a.out("log", "-1", "--format=%B", "main")
    assert "Evolve-Replayed: planned again" in replayed
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_a_lesson_a_person_undid_on_one_machine_is_not_brought_back_by_the_other(pair):
    a, b, server = pair
    sha = a.reflect(create_op("flaky-tests", f"# Flaky tests\n\n{RULE}\n"))["commit"]
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    a.git("revert", "--no-commit", sha)
    a.git("commit", "-qm", "we fix flaky tests at their cause")  # a person's own message
    assert a.sync()[0] == 0
    b.reflect(memo_op("self", f"{RULE}\n- I keep notes short."))  # the desktop learned it again meanwhile
    code, out = b.sync()
    assert code == 0, out
    memo = b.read("memo.md")
    assert "pytest -p no:randomly" not in memo and "- I keep notes short." in memo
    assert not (b.path / "skills" / "flaky-tests").exists()
    assert "left out 1 line(s) a person undid" in b.out("log", "-1", "--format=%B")
    blocks = [blk["line"] for c in json.loads(b.ok("log", "a", "--json")) for blk in c["blocks"]]
    assert blocks == [RULE]
    for machine in (a, b):
        machine.fsck()
    server_fsck(server)


def test_a_person_typing_while_the_sync_runs_loses_nothing(pair, monkeypatch):
    a, b, server = pair
    b.person_rule("- Bob's note.", SELF)
    assert b.sync()[0] == 0
    real_move = Repo.move_branch

    def person_types_first(self, *args, **kwargs):  # the person saves memo.md as the sync writes
        a.add_to_memo("- typed mid-sync")
        monkeypatch.setattr(Repo, "move_branch", real_move)
        return real_move(self, *args, **kwargs)

    monkeypatch.setattr(Repo, "move_branch", person_types_first)
    code, out = a.sync()
    assert code == 1 and "changed while evolve was bringing the branch up to date" in out, out
    assert "- typed mid-sync" in a.read("memo.md")  # untouched
    code, out = a.sync()  # committed as theirs first, then synced
    assert code == 0, out
    memo = a.read("memo.md")
    assert "- typed mid-sync" in memo and "- Bob's note." in memo
    assert a.head() == server.git("agent", "rev-parse", "main")
    a.fsck()


def test_a_main_moved_without_its_files_is_never_synced_as_the_persons_edit(pair, tmp_path):
    # red-team 3 A1: `git update-ref` to a laptop clone's commit left memo.md as it was before
    # it; a sync that brought the server's change of memo.md committed that older memo as the
    # person's edit, undoing the laptop's line here and on the server
    a, b, server = pair
    a.reflect(memo_op("strategies", "- Use pnpm in this repository."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    laptop = tmp_path / "laptop-clone"
    a.git("clone", "-q", str(a.path), str(laptop))
    (laptop / "memo.md").write_text((laptop / "memo.md").read_text() + "- person line from my laptop\n")
    a.git("-C", str(laptop), "commit", "-qam", "my edit")
    old = a.head()
    a.git("fetch", "-q", str(laptop), "main")
    a.git("update-ref", "refs/heads/main", "FETCH_HEAD")
    mine = a.head()
    b.reflect(memo_op("self", "- I forget the linter."))
    assert b.sync()[0] == 0
    code, out = a.sync()
    assert (
        code == EXIT_BUSY
        and "behind main" in out
        and f"git update-index -q --refresh && git read-tree -m -u {old[:12]} main" in out
    ), out
    assert a.head() == mine and "laptop" not in server.git("agent", "show", "main:memo.md")
    a.git("update-index", "-q", "--refresh")
    a.git("read-tree", "-m", "-u", old, "main")
    assert a.sync()[0] == 0
    memo = server.git("agent", "show", "main:memo.md")
    assert "- person line from my laptop" in memo and "- I forget the linter." in memo
    a.fsck()
