"""Red team of the sync feature (issue 17): each test is a reproduction that fails today.

Two machines and a real git server on 127.0.0.1 (git daemon); a reviewer or an attacker
is a plain clone of the server. Assertions are on what a person sees.
"""

from __future__ import annotations

import pytest

from evolve.sync.remote import check_url
from tests.sync_helpers import Clone, Machine, a_line_on_both, create_op, memo_op, only_proposal, review_on

RULE = "- When a deploy fails, read the last 50 lines of its log before retrying."


def person_edits_proposal(machine: Machine, branch: str, old: str, new: str, path: str) -> str:
    """The person checks the proposal out, rewords it, commits, and goes back to main (plain git)."""
    machine.git("checkout", "-q", branch)
    machine.write(path, machine.read(path).replace(old, new))
    machine.git("commit", "-qam", "my wording of the lesson")
    sha = machine.head()
    machine.git("checkout", "-q", "main")
    return sha


# -- 1. a person's commit on a proposal branch ------------------------------------------------
def test_a_persons_commit_on_a_proposal_survives_a_reviewer_pushing_to_it(machines, git_daemon, tmp_path):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    assert a.sync()[0] == 0
    mine = person_edits_proposal(a, branch, "last 50 lines", "last 200 lines", "skills/deploys/SKILL.md")
    team = Clone(tmp_path / "team", git_daemon.url())  # a reviewer pushes their own fix to the PR
    team.git("checkout", "-q", branch)
    (team.path / "skills/deploys/NOTES.md").write_text("- reviewed by the team\n")
    team.git("add", "-A")
    team.git("commit", "-qm", "review: a note")
    team.git("push", "-q", "origin", branch)
    code, out = a.sync()
    assert code == 0, out
    reachable = a.out("branch", "-a", "--contains", mine)  # the person's commit is on some branch
    assert reachable, f"the person's commit {mine[:12]} is on no branch any more; sync said: {out}"


def test_a_persons_commit_on_a_proposal_survives_its_deletion_on_the_server(machines, git_daemon, tmp_path):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    assert a.sync()[0] == 0
    mine = person_edits_proposal(a, branch, "last 50 lines", "last 200 lines", "skills/deploys/SKILL.md")
    Clone(tmp_path / "team", git_daemon.url()).git("push", "-q", "origin", f":{branch}")  # a reject there
    code, out = a.sync()
    assert code == 0, out
    reachable = a.out("branch", "-a", "--contains", mine)
    assert reachable, f"the person's commit {mine[:12]} is on no branch any more; sync said: {out}"


# -- 2. a proposal a reviewer pushed to, accepted here ----------------------------------------
def test_accepting_a_proposal_a_reviewer_reworded_on_the_server_takes_the_whole_proposal(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())
    team.git("checkout", "-q", branch)
    path = team.path / "skills/deploys/SKILL.md"
    path.write_text(path.read_text().replace("last 50 lines", "last 200 lines"))
    team.git("commit", "-qam", "review: 200 lines")
    team.git("push", "-q", "origin", branch)
    assert a.sync()[0] == 0
    code, out, err = a.evolve("accept", "a", branch.removeprefix("proposals/"))
    assert code == 0, out + err
    assert "last 200 lines" in a.read("skills/deploys/SKILL.md")  # the lesson as the reviewer left it


# -- 3. a person's amend of a commit already pushed --------------------------------------------
def test_a_persons_amend_of_their_pushed_commit_stays_on_main(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    a.person_rule("- Deploy on Fridya only after noon.")
    assert a.sync()[0] == 0
    a.write("memo.md", a.read("memo.md").replace("Fridya", "Friday"))  # the typo they just pushed
    a.git("commit", "-q", "-a", "--amend", "--no-edit")
    code, out = a.sync()
    assert code == 0, out
    assert "Friday only" in a.read("memo.md"), f"the person's fix left main; sync said: {out}"
    assert not a.agent.repo.branches("machine/"), out


# -- 4. credentials ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "https://0123456789abcdef0123456789abcdef01234567@github.com/me/agent.git",  # a classic PAT
        "https://alice%3Ahunter2hunter2@example.test/agent.git",  # the colon percent-encoded
    ],
)
def test_a_url_with_a_token_or_password_is_refused(url):
    from evolve.errors import UserError

    with pytest.raises(UserError, match="password or token"):
        check_url(url)


# -- 5. a person's second commit against the server's reflection --------------------------------
def test_a_persons_edit_beats_the_servers_reflection_after_an_earlier_commit_of_theirs(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    b.reflect(memo_op("strategies", "- Use pytest -x --ff for quick checks."))  # the model, on the server
    assert b.sync()[0] == 0
    a.person_rule("- Alice keeps notes short.", "What I do well and where I often stumble")  # unrelated
    a.write("memo.md", a.read("memo.md").replace("- Use pytest -x for", "- Use pytest -x, never -k, for"))
    a.commit("my wording")
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    # the issue: "a person beats a reflection on either side": their text on main, the lesson waits
    assert "never -k" in memo, f"the person's edit left main for a branch; sync said: {out}"
    assert not a.agent.repo.branches("machine/"), out


# -- 6. a person's bytes are theirs -----------------------------------------------------------
def test_a_persons_non_utf8_byte_survives_a_replanned_reflection(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    data = a.read("memo.md").encode().replace(b"- Use pytest -x", b"- Caf\xe9 rule: use pytest -x")
    (a.path / "memo.md").write_bytes(data)  # a Latin-1 editor
    a.commit("my rule, in Latin-1")
    assert a.sync()[0] == 0
    b.reflect(memo_op("strategies", "- Use pytest -x --ff for quick checks."))  # replanned on a's commit
    code, out = b.sync()
    assert code == 0, out
    memo = (b.path / "memo.md").read_bytes()
    assert b"- Caf\xe9 rule" in memo, memo  # today: b"- Caf\xef\xbf\xbd rule" (U+FFFD) on main everywhere
    assert git_daemon.git("agent", "rev-parse", "main") == b.head()


# -- 7. a person's staged edit ----------------------------------------------------------------
def test_a_staged_edit_does_not_make_every_sync_fail_with_run_again(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    b.person_rule("- Bob's rule.", "What I do well and where I often stumble")
    assert b.sync()[0] == 0
    a.add_to_memo("- Alice typed this and ran git add.")
    a.git("add", "memo.md")  # their coming commit, which evolve leaves to them
    outs = [a.sync() for _ in range(3)]
    code, out = outs[-1]
    # today: three times "memo.md changed while evolve was bringing the branch up to date; nothing
    # was lost — run the command again" — running it again never helps while the file is staged
    assert code == 0 or "staged" in out, outs
    assert "- Alice typed this and ran git add." in a.read("memo.md")


# -- 8. a hostile proposal branch -------------------------------------------------------------
def test_a_proposal_branch_holding_gitattributes_is_refused_in_one_line(machines, git_daemon, tmp_path):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    assert a.sync()[0] == 0
    attacker = Clone(tmp_path / "attacker", git_daemon.url())
    attacker.git("checkout", "-q", branch)
    (attacker.path / ".gitattributes").write_text("* filter=evil\n")
    attacker.git("add", "-A")
    attacker.git("commit", "-q", "--amend", "--no-edit")  # still a reflection by its trailers
    attacker.git("push", "-qf", "origin", branch)
    ours = a.agent.repo.branches("proposals/")[branch]
    code, out = a.sync()  # main is checked for .gitattributes; the proposal branches are too
    assert code == 0, out
    refused = [line for line in out.splitlines() if ".gitattributes" in line]
    assert len(refused) == 1 and branch in refused[0], out  # one line; the rest of the sync goes on
    assert a.agent.repo.branches("proposals/")[branch] == ours  # the server's is not taken
    # taken anyway (by hand, with plain git): `evolve accept` refuses it in one line, exit 1
    a.git("update-ref", f"refs/heads/{branch}", f"refs/evolve/fetched/{branch}")
    code, out, err = a.evolve("accept", "a", branch.removeprefix("proposals/"))
    assert code == 1 and ".gitattributes" in err and "crash.log" not in err, (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    assert not (a.path / ".gitattributes").exists()


# -- 9. a reject on the server sticks for the other machine's pending proposal ------------------
def test_a_lesson_rejected_on_the_server_is_not_pushed_for_review_again(machines, git_daemon, tmp_path):
    a, b = machines
    review_on(a, git_daemon.url())
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    first = only_proposal(a)
    assert a.sync()[0] == 0
    Clone(tmp_path / "team", git_daemon.url()).git("push", "-q", "origin", f":{first}")  # rejected
    b.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))  # b learned it too, offline
    assert a.sync()[0] == 0  # a records the reject on main: RULE is blocked
    assert "Evolve-Kind: reject" in a.out("log", "-1", "--format=%B")
    code, out = b.sync()
    assert code == 0, out
    pushed = git_daemon.git("agent", "branch", "--list", "proposals/*").strip()
    assert first not in pushed  # a's own proposal stays deleted
    assert not pushed or RULE not in git_daemon.git("agent", "show", f"{pushed}:skills/deploys/SKILL.md"), (
        pushed
    )
    assert pushed == "", f"the rejected lesson is up for review again: {pushed}; sync said: {out}"


# -- 10. two people decide the same proposal differently ---------------------------------------
def test_a_reject_here_is_not_dropped_silently_when_the_other_machine_accepted(machines, git_daemon):
    a, b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    pid = branch.removeprefix("proposals/")
    b.ok("accept", "a", pid)  # Bob takes it
    assert b.sync()[0] == 0
    a.ok("reject", "a", pid)  # Alice, offline, refuses it
    code, out = a.sync()
    assert code == 0, out
    bodies = a.out("log", "--format=%B%x00").split("\0")
    rejects = [body for body in bodies if "Evolve-Kind: reject" in body]
    # today: Alice's reject commit is dropped as "the same decision" (an accept has the same id),
    # nothing is said, and the lesson she rejected is on her main
    assert rejects or pid in out, f"the person's reject vanished without a word; sync said: {out!r}"


# -- 11. branches anyone can push to the server ------------------------------------------------
def test_empty_proposal_branches_on_the_server_do_not_write_accept_commits_on_main(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    a.create(git_daemon.url())
    attacker = Clone(tmp_path / "attacker", git_daemon.url())
    tip = attacker.git("rev-parse", "HEAD")
    names = [f"proposals/{i:016x}" for i in range(40)]  # no commit of their own: nothing to accept
    attacker.git("update-ref", "--stdin", input="".join(f"create refs/heads/{n} {tip}\n" for n in names))
    attacker.git("push", "-q", "origin", "refs/heads/proposals/*:refs/heads/proposals/*")
    code, out = a.sync()
    accepts = [s for s in a.subjects() if s.startswith("accept(")]
    # today: 40 "accept(a): … (merged on the server)" commits land on main and are pushed (40 out);
    # with 300 such branches one sync takes ~9 s, with 2,000 more than two minutes
    assert accepts == [], f"{len(accepts)} accept commits on main; sync said: {out.splitlines()[0]}"


def test_a_branch_named_after_this_machine_on_the_server_does_not_block_every_sync(
    machines, git_daemon, tmp_path
):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    # a copied home (same machine name) or anyone with push access: machine/<a's name> exists there
    attacker = Clone(tmp_path / "attacker", git_daemon.url())
    attacker.git("push", "-q", "origin", f"main:refs/heads/machine/{a.home.machine()}")
    a_line_on_both(a, b, "- Deploy when ready.")
    a.reword("- Deploy when ready.", "- Alice: deploy at noon.")
    b.reword("- Deploy when ready.", "- Bob: deploy at dawn.")
    assert b.sync()[0] == 0
    a.sync()  # a's conflicting commit is kept on machine/<a>: the push of that branch is refused
    a.person_rule("- Alice: an unrelated rule.", "What I do well and where I often stumble")
    code, out = a.sync()
    # today: "the server kept changing during 5 attempts; evolve tries again later", forever: the
    # atomic push refuses main with it, so nothing of a's ever reaches the server again
    assert "an unrelated rule" in git_daemon.git("agent", "show", "main:memo.md"), out
