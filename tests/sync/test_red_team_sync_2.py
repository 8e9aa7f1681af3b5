"""Red team of the sync fixes (issue 17, second pass): each test is a reproduction that fails today.

Two machines and a real git server on 127.0.0.1 (git daemon); a reviewer or an attacker is a
plain clone of the server. Assertions are on what a person sees.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from evolve.errors import UserError
from evolve.sync.remote import check_url, redact
from evolve.workspace.authorship import made_by_evolve
from tests.sync_helpers import SELF, Clone, Machine, create_op, memo_op, only_proposal, review_on

RULE = "- When a deploy fails, read the last 50 lines of its log before retrying."


def at(machine: Machine, when: str, *args: str) -> str:
    """`git args` in the machine's repository with the author and committer date `when`."""
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    proc = subprocess.run(["git", *args], cwd=machine.path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout.strip()


# -- 1. an amend that fixes the author too -------------------------------------------------------
def test_an_amend_that_changes_the_author_stays_on_main(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    a.person_rule("- Deploy on Fridya only after noon.")
    assert a.sync()[0] == 0
    a.write("memo.md", a.read("memo.md").replace("Fridya", "Friday"))
    # the typo, and the work e-mail they forgot to set: `git commit --amend --reset-author`
    a.git("config", "user.email", "alice@work.example.test")
    a.git("commit", "-q", "-a", "--amend", "--no-edit", "--reset-author")
    code, out = a.sync()
    assert code == 0, out
    assert "Friday only" in a.read("memo.md"), f"the person's fix left main; sync said: {out}"
    assert not a.agent.repo.branches("machine/"), out


def test_another_persons_commit_with_the_same_parent_and_subject_is_not_taken_for_an_amend(
    machines, git_daemon
):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    b.add_to_memo("- Bob: tag every release.")
    b.commit("my edit")
    assert b.sync()[0] == 0 and a.sync()[0] == 0  # Alice's machine synced Bob's commit
    a.git("reset", "-q", "--hard", "HEAD~1")  # and dropped it from her main
    a.add_to_memo("- Alice keeps notes short.", SELF)
    a.commit("my edit")  # same parent, same subject: still Bob's commit is not hers to replace
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    assert "Bob: tag every release" in memo and "Alice keeps notes short" in memo, out


# -- 2. a person's amend of an evolve reflection --------------------------------------------------
def test_a_persons_amend_of_a_pushed_reflection_is_recorded_as_theirs(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert a.sync()[0] == 0
    a.write("memo.md", a.read("memo.md").replace("pytest -x for", "pytest -x --lf for"))
    a.git("commit", "-q", "-a", "--amend", "--no-edit")  # the person rewords the lesson
    code, out = a.sync()
    assert code == 0, out
    assert "--lf" in git_daemon.git("agent", "show", "main:memo.md"), out
    # the commit holding the person's words on the server: who does it say wrote them?
    sha = git_daemon.git("agent", "log", "-1", "--format=%H", "-S--lf", "main", "--", "memo.md")
    body = git_daemon.git("agent", "log", "-1", "--format=%an%n%B", sha)
    assert "Evolve-Kind: reflection" not in body, (
        f"the person's words are filed as the model's lesson:\n{body}"
    )
    (commit,) = a.agent.repo.log(sha, limit=1)
    assert (commit.author, commit.email, commit.kind) == ("Alice", "alice@example.test", "human_edit"), body
    assert not made_by_evolve(commit, a.agent.evolve_emails), body  # blame says the person wrote those lines


# -- 3. a partly accepted proposal, rejected on the other machine ----------------------------------
def test_a_reject_here_of_a_partly_accepted_proposal_does_not_leave_its_rest_up_for_review(
    machines, git_daemon
):
    a, b = machines
    review_on(a, git_daemon.url())
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    a.reflect(
        memo_op("strategies", "- Use pytest -x for quick checks."),
        create_op("deploys", f"# Deploys\n\n{RULE}\n"),
    )
    branch = only_proposal(a)
    pid = branch.removeprefix("proposals/")
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    b.person_rule("- Bob: run the whole suite before a release.")  # the same spot of the memo
    out = b.ok("accept", "a", pid)  # the skill lands, the memo lesson stays for another look
    assert b.agent.repo.branches("proposals/"), out
    assert b.sync()[0] == 0
    a.ok("reject", "a", pid)  # Alice, offline, refuses the whole proposal
    code, out = a.sync()
    assert code == 0, out
    assert "pytest -x" not in a.read("memo.md"), out
    assert not (a.path / "skills/deploys/SKILL.md").exists(), out  # the accept is undone here
    left = a.ok("proposals", "a")
    assert "pytest" not in left and not a.agent.repo.branches("proposals/"), (
        f"the lesson Alice rejected is up for review again: {left}; sync said: {out}"
    )
    assert not git_daemon.git("agent", "branch", "--list", "proposals/*"), out  # gone there too
    code, out = b.sync()  # Bob's machine learns the reject: its rest goes, no second decision
    assert code == 0 and not b.agent.repo.branches("proposals/"), out
    assert "pytest" not in b.ok("proposals", "a") and b.head() == a.head(), out


# -- 4. URLs: a legitimate user name is not a token ------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "https://deploy-bot-for-production-cluster-01@git.example.test/agent.git",
        "ssh://jenkins-build-agent-production-01@git.example.test/agent.git",
        "https://Alexandra-Konstantinopoulou-Smith@git.example.test/agent.git",
        "git@[::1]:agent.git",  # scp-like with an IPv6 host (git takes it)
    ],
)
def test_a_legitimate_user_name_or_host_is_not_refused(url):
    assert check_url(url) == url


# -- 5. URLs: a token in an scp-like URL ------------------------------------------------------------
def test_a_token_in_an_scp_like_url_is_refused_or_at_least_never_printed():
    url = "alice:ghp_0123456789abcdefABCDEF0123456789abcd@github.com:me/agent.git"
    shown = redact(f"fatal: could not read from {url}")
    assert "ghp_" not in shown, shown  # what a git error message shows of it
    with pytest.raises(UserError, match="password or token"):
        check_url(url)


# -- 6. a proposal branch reset to main on the server ---------------------------------------------
def test_a_proposal_reset_to_main_on_the_server_is_not_recorded_as_accepted(machines, git_daemon, tmp_path):
    a, b = machines
    review_on(a, git_daemon.url())
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    assert a.sync()[0] == 0
    b.person_rule("- Bob: tag every release.")  # main moves on
    assert b.sync()[0] == 0
    # a careless reviewer "discards" the proposal (or anyone with push access): branch := main
    team = Clone(tmp_path / "team", git_daemon.url())
    team.git("push", "-qf", "origin", f"main:{branch}")
    code, out = a.sync()
    assert code == 0, out
    accepts = [s for s in a.subjects() if s.startswith("accept(")]
    assert not (a.path / "skills/deploys/SKILL.md").exists()
    # today: "accept(a): lessons (merged on the server)" on main, the lesson nowhere, not blocked
    assert not accepts, f"recorded as accepted, its lesson on no branch: {accepts}; sync said: {out}"


# -- 7. a reject here, the PR merged on the server ------------------------------------------------
@pytest.mark.parametrize("delete_branch", [False, True])
def test_a_reject_here_of_a_proposal_the_team_merged_as_a_pr_is_not_dropped_silently(
    machines, git_daemon, tmp_path, delete_branch
):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    pid = branch.removeprefix("proposals/")
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())  # the forge's "Merge pull request" button
    team.git("fetch", "-q", "origin", branch)
    team.git("merge", "-q", "--no-ff", "-m", f"Merge pull request #1 from {branch}", "FETCH_HEAD")
    team.git("push", "-q", "origin", "main")
    if delete_branch:
        team.git("push", "-q", "origin", f":{branch}")
    a.ok("reject", "a", pid)  # Alice, offline, refuses it
    code, out = a.sync()
    assert code == 0, out
    # a reject of an evolve accept made elsewhere undoes it (with a note); a PR merge is an accept too
    gone = not (a.path / "skills/deploys/SKILL.md").exists()
    assert gone or pid in out, f"the lesson Alice rejected is on main without a word; sync said: {out!r}"
    # as for an evolve accept: the reject stays, the merged lesson leaves main, the sync says so
    assert gone and pid in out, out
    assert a.sync()[0] == 0 and not (a.path / "skills/deploys/SKILL.md").exists()
    assert not git_daemon.git("agent", "ls-tree", "main", "skills/deploys"), out  # gone there too


# -- 8. a person's edit against the server's reflection, another person's line elsewhere ----------
def test_a_persons_edit_beats_the_servers_reflection_when_someone_else_edited_other_lines(
    machines, git_daemon
):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    b.person_rule("- Bob keeps notes short.", SELF)  # another person, another section of the memo
    b.reflect(memo_op("strategies", "- Use pytest -x --ff for quick checks."))  # the model, same line
    assert b.sync()[0] == 0
    a.write("memo.md", a.read("memo.md").replace("- Use pytest -x for", "- Use pytest -x, never -k, for"))
    a.commit("my wording")
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    assert "Bob keeps notes short" in memo, out
    # the issue: "a person beats a reflection on either side"; Bob's line is not the one she changed
    assert "never -k" in memo, f"the person's edit left main for a branch; sync said: {out}"
    assert not a.agent.repo.branches("machine/"), out
