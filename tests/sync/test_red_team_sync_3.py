"""Red team of the sync fixes (issue 17, third pass): each test is a reproduction that fails today.

Two machines and a real git server on 127.0.0.1 (git daemon); a reviewer or an attacker is a
plain clone of the server. Assertions are on what a person sees. What this pass
attacked and found working is pinned in test_sync_held_up.py.
"""

from __future__ import annotations

from tests.sync_helpers import (
    SELF,
    Clone,
    Machine,
    a_line_on_both,
    create_op,
    memo_op,
    only_proposal,
    review_on,
)

RULE = "- When a deploy fails, read the last 50 lines of its log before retrying."


# -- 1. a reflection's trailers on a person's words --------------------------------
def _amended_reflection_on_server(a: Machine, git_daemon, tmp_path) -> Clone:
    a.create(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())
    # Bob rewords the model's lesson on his clone: a commit of his, but he copies evolve's message
    # (git commit -C HEAD keeps the message with its trailers and evolve as the author)
    memo = team.path / "memo.md"
    memo.write_text(memo.read_text().replace("- Use pytest -x for", "- Use pytest -x -q (Bob) for"))
    team.git("commit", "-qa", "-C", "HEAD")
    team.git("push", "-q", "origin", "main")
    return team


def test_a_persons_edit_against_a_reflection_message_reused_by_a_team_member_is_kept_off_main(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    team = _amended_reflection_on_server(a, git_daemon, tmp_path)
    head = team.git("log", "-1", "--format=%an <%ae> / %cn <%ce>%n%B")
    assert "Evolve-Kind: reflection" in head and "Team" in head, head
    # Alice, offline, rewords the same line
    a.write("memo.md", a.read("memo.md").replace("- Use pytest -x for", "- Use pytest -x --lf (Alice) for"))
    a.commit("my wording")
    code, out = a.sync()
    assert code == 0, out
    server_memo = git_daemon.git("agent", "show", "main:memo.md")
    # Bob's line is a person's (committer Team ≠ author evolve: made_by_evolve says not the model's),
    # so Alice's conflicting edit is a person-vs-person conflict: kept on machine/…, main has Bob's
    assert "(Bob)" in server_memo, (
        f"a team member's words were displaced as if they were the model's lesson; sync said: {out}\n"
        f"{server_memo}"
    )


def test_a_persons_amend_of_an_unpushed_reflection_beats_a_reflection_on_the_server(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    a.write("memo.md", a.read("memo.md").replace("- Use pytest -x for", "- Use pytest -x --lf (Alice) for"))
    a.git("commit", "-q", "-a", "--amend", "--no-edit")  # her words now, in evolve's commit
    b.reflect(memo_op("strategies", "- Run ruff before each commit."))  # the model, same section, server
    assert b.sync()[0] == 0
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    # "a person beats a reflection on either side": her wording is on main, the model's may wait
    assert "--lf (Alice)" in memo, f"the person's amended words left main; sync said: {out}\n{memo}"
    assert "Run ruff" in memo + a.ok("proposals", "a"), f"the server reflection's lesson was lost: {memo}"
    sha = git_daemon.git("agent", "log", "-1", "--format=%H", "-S(Alice)", "main", "--", "memo.md")
    who = git_daemon.git("agent", "log", "-1", "--format=%an <%ae>%n%B", sha)
    assert who.startswith("Alice") and "Evolve-Kind: reflection" not in who, who


# -- 2. a server that refuses machine/ branches ------------------------------------------------------
def test_a_server_refusing_machine_branches_does_not_block_main_forever(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    hook = git_daemon.bare() / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nwhile read old new ref; do case $ref in refs/heads/machine/*) "
        "echo 'machine branches are not allowed here' >&2; exit 1;; esac; done\nexit 0\n"
    )
    hook.chmod(0o755)
    a_line_on_both(a, b, "- Tag releases.")
    b.reword("- Tag releases.", "- Bob: tag every release.")
    assert b.sync()[0] == 0
    a.reword("- Tag releases.", "- Alice: tag only on Fridays.")  # the same line: kept on machine/laptop
    a.person_rule("- Alice keeps notes short.", SELF)  # this one lands on main without a conflict
    code, out = a.sync()
    code2, out2 = a.sync()
    assert "Alice keeps notes short" in git_daemon.git("agent", "show", "main:memo.md"), (
        f"main never reaches the server while a machine branch is refused: {code} {out!r} / {code2} {out2!r}"
    )
    # the refused branch stays here, and every sync says so (exit 1: not all synced, README)
    for c, o in ((code, out), (code2, out2)):
        assert c == 1 and "main synced" in o and "kept on this machine only" in o and "machine/" in o, o


# -- 3. a reflection amended here loses its stored operations ----------------------------
def test_a_parked_reflection_without_stored_operations_has_one_subject_prefix(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    # no stored operations (an older evolve, a pruned note): an amend no longer loses them, since
    # they are found by the reflection's id, so the note is removed outright
    a.git("notes", "--ref", "refs/notes/evolve", "remove", "HEAD")
    b.reflect(memo_op("strategies", "- Run ruff before each commit."))
    assert b.sync()[0] == 0
    code, out = a.sync()
    assert code == 0, out
    listed = a.ok("proposals", "a")
    assert "reflect(a):" in listed, f"nothing waits for review; sync said: {out}\n{listed}"
    assert "reflect(a): reflect(a):" not in listed, listed


def test_a_reflection_amended_without_a_change_is_still_merged_with_the_servers_reflection(
    machines, git_daemon
):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    a.git("commit", "-q", "--amend", "--no-edit", "--date=now")  # e.g. a `git rebase -i` here
    b.reflect(memo_op("strategies", "- Run ruff before each commit."))
    assert b.sync()[0] == 0
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    # "two reflections' memo lessons are merged" (replay's doc): both on main, nothing for review
    assert "pytest -x" in memo and "Run ruff" in memo, f"sync said: {out}\n{memo}"


# -- 4. a reviewer's rewording of a person's line, accepted ---------------------------------------
def test_a_reviewers_rewording_of_a_persons_line_is_not_the_models_after_accept(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.person_rule("- Alice: deploy after noon.")
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    pid = branch.removeprefix("proposals/")
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())
    team.git("checkout", "-q", branch)
    memo = team.path / "memo.md"
    memo.write_text(
        memo.read_text().replace(
            "- Alice: deploy after noon.", "- Alice: deploy after noon, never Fridays (Bob)."
        )
    )
    team.git("commit", "-qam", "review: one more rule")
    team.git("push", "-q", "origin", branch)
    assert a.sync()[0] == 0
    a.ok("accept", "a", pid)
    assert "(Bob)" in a.read("memo.md")
    a.write("agent.toml", a.read("agent.toml").replace("review = true", "review = false"))
    a.commit("no more review")
    # the model rewrites the section: a person's lines must stay (or the change must wait)
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert "(Bob)" in a.read("memo.md"), (
        "the reviewer's words (a person's) were rewritten by the next reflection: the accept filed them as "
        f"the model's\n{a.read('memo.md')}"
    )


# -- 5. a .gitignore from the server -------------------------------------------------------------
def test_a_gitignore_pushed_to_the_server_does_not_hide_a_persons_new_skill(machines, git_daemon, tmp_path):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    attacker = Clone(tmp_path / "attacker", git_daemon.url())
    (attacker.path / ".gitignore").write_text("skills/*\n")
    attacker.git("add", ".gitignore")
    attacker.git("commit", "-qm", "ignore build output")
    attacker.git("push", "-q", "origin", "main")
    assert a.sync()[0] == 0
    a.write_skill("mine", "# Mine\n\n- my own words\n")  # the person writes a skill by hand
    code, out = a.sync()
    assert code == 0, out
    status = a.evolve("status")[1]
    listed = git_daemon.git("agent", "ls-tree", "-r", "--name-only", "main")
    assert "skills/mine/SKILL.md" in listed, (
        f"the person's new skill never leaves this machine; sync said: {out!r}; status said: {status}"
    )
