"""What the third red-team pass of sync (issue 17) attacked and found working: kept as checks.

Staged hunks, staged deletions, both machines rejecting, a PR merged then reverted, forged
trailers, renamed sections, CRLF, someone else's machine branches, links in a proposal:
two machines and a real git daemon on 127.0.0.1, asserted on what a person sees.
"""

from __future__ import annotations

import json
import time

from tests.sync_helpers import (
    SELF,
    STRATEGIES,
    Clone,
    a_line_on_both,
    create_op,
    memo_op,
    only_proposal,
    review_on,
    server_fsck,
    sh,
)

RULE = "- When a deploy fails, read the last 50 lines of its log before retrying."


def _proposal_on_both(a, b, server) -> str:
    """With review on, Alice's reflection proposes `deploys`; both machines have the proposal."""
    review_on(a, server.url())
    assert a.sync()[0] == 0
    b.join(server.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    pid = only_proposal(a).removeprefix("proposals/")
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    return pid


def _deploys_on_both(a, b, server, body: str) -> None:
    """Alice's reflection creates the skill `deploys` (`body`) and syncs it; Bob joins."""
    a.create(server.url())
    a.reflect(create_op("deploys", body))
    assert a.sync()[0] == 0
    b.join(server.url())


def test_a_persons_amend_of_an_unpushed_reflection_stays_theirs_when_the_server_changed_the_memo(
    machines, git_daemon
):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    # before any sync, Alice rewords the model's lesson: `git commit --amend` (she is the committer)
    a.write("memo.md", a.read("memo.md").replace("- Use pytest -x for", "- Use pytest -x --lf (Alice) for"))
    a.git("commit", "-q", "-a", "--amend", "--no-edit")
    b.person_rule("- Bob keeps notes short.", SELF)  # Bob, another section of the same file
    assert b.sync()[0] == 0
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    assert "Bob keeps notes short" in memo, out
    assert "--lf (Alice)" in memo, f"the person's amended words left main; sync said: {out}\n{memo}"
    sha = git_daemon.git("agent", "log", "-1", "--format=%H", "-S(Alice)", "main", "--", "memo.md")
    body = git_daemon.git("agent", "log", "-1", "--format=%an/%cn%n%B", sha)
    assert "Alice" in body.splitlines()[0], f"the person's words are filed as the model's:\n{body}"


def test_partly_staged_hunks_and_unstaged_ones_of_a_file_the_server_changed_are_all_kept(
    machines, git_daemon
):
    a, b = machines
    a.create(git_daemon.url())
    a.write_skill("deploys", "# Deploys\n\n" + "".join(f"- step {i}\n" for i in range(1, 30)))
    a.commit("my skill")
    assert a.sync()[0] == 0
    b.join(git_daemon.url())
    b.write("memo.md", b.read("memo.md"))
    path = "skills/deploys/SKILL.md"
    b.write(path, b.read(path).replace("- step 15\n", "- step 15 (Bob)\n"))
    b.commit("bob's step")
    assert b.sync()[0] == 0
    text = a.read(path)
    a.write(path, text.replace("- step 2\n", "- step 2 STAGED\n"))
    patch = a.out("diff", "--", path) + "\n"
    sh(a.path, "git", "apply", "--cached", input=patch)  # only this hunk staged
    a.write(
        path, text.replace("- step 2\n", "- step 2 STAGED\n").replace("- step 28\n", "- step 28 UNSTAGED\n")
    )
    code, out = a.sync()
    assert code == 0, out
    now = a.read(path)
    assert "STAGED" in now and "UNSTAGED" in now and "(Bob)" in now, (now, out)
    shown = git_daemon.git("agent", "show", f"main:{path}")
    assert "step 2 STAGED" in shown and "step 28 UNSTAGED" in shown, out
    a.fsck()


def test_a_staged_deletion_of_a_skill_the_server_reflection_changed_is_kept(machines, git_daemon):
    a, b = machines
    _deploys_on_both(a, b, git_daemon, f"# Deploys\n\n{RULE}\n")
    b.reflect(
        {
            "op": "patch_skill",
            "name": "deploys",
            "old": "before retrying.",
            "new": "before retrying.\n- Tag first.",
        }
    )
    assert b.sync()[0] == 0
    assert "Tag first" in git_daemon.git("agent", "show", "main:skills/deploys/SKILL.md")
    a.git("rm", "-rq", "skills/deploys")  # staged, not committed: the person does not want it
    code, out = a.sync()
    assert code == 0, out
    assert not (a.path / "skills/deploys/SKILL.md").exists(), out
    assert not git_daemon.git("agent", "ls-tree", "main", "skills/deploys"), out


def test_a_staged_new_skill_not_on_the_server_survives_a_sync_that_moves_main(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    b.person_rule("- Bob: tag every release.")
    assert b.sync()[0] == 0
    a.write_skill("mine", "# Mine\n\n- my words\n")
    a.git("add", "skills/mine/SKILL.md")  # staged for her own commit, message to come
    a.write("skills/mine/SKILL.md", a.read("skills/mine/SKILL.md"))
    code, out = a.sync()
    assert code == 0, out
    assert "my words" in a.read("skills/mine/SKILL.md")
    assert "skills/mine/SKILL.md" in a.out("diff", "--cached", "--name-only"), "the person's staging is gone"


def test_both_machines_reject_the_same_proposal_offline(machines, git_daemon):
    a, b = machines
    pid = _proposal_on_both(a, b, git_daemon)
    a.ok("reject", "a", pid)
    time.sleep(1.1)  # in the same second both rejects are one commit object and the replay is never tried
    b.ok("reject", "a", pid)
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    assert a.sync()[0] == 0
    assert a.head() == b.head()
    rejects = [s for s in a.subjects() if s.startswith("reject(")]
    assert len(rejects) == 1, (rejects, out)
    assert not git_daemon.git("agent", "branch", "--list", "proposals/*")
    server_fsck(git_daemon)


def test_reject_here_accept_there_then_a_third_sync(machines, git_daemon):
    a, b = machines
    pid = _proposal_on_both(a, b, git_daemon)
    b.ok("accept", "a", pid)
    a.ok("reject", "a", pid)
    assert b.sync()[0] == 0
    code, out = a.sync()
    assert code == 0, out
    code, out2 = b.sync()
    assert code == 0, out2
    assert a.sync()[0] == 0
    assert a.head() == b.head(), (out, out2)
    assert not (a.path / "skills/deploys").exists() and not (b.path / "skills/deploys").exists(), (out, out2)
    assert pid not in a.ok("proposals", "a") and pid not in b.ok("proposals", "a")


def test_a_pr_merged_and_reverted_on_the_server_rejected_here_is_not_undone_twice(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.person_rule("- Alice: keep this line.", STRATEGIES)
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    pid = branch.removeprefix("proposals/")
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())
    team.git("fetch", "-q", "origin", branch)
    team.git("merge", "-q", "--no-ff", "-m", f"Merge pull request #1 from {branch}", "FETCH_HEAD")
    team.git("revert", "--no-edit", "-m", "1", "HEAD")
    team.git("push", "-q", "origin", "main", f":{branch}")
    a.ok("reject", "a", pid)
    code, out = a.sync()
    assert code == 0, out
    assert not (a.path / "skills/deploys").exists(), out
    assert "Alice: keep this line" in a.read("memo.md"), out
    a.fsck()
    # the team already undid it: no note that "its lesson leaves main" (nothing left main here)
    assert "its lesson leaves main" not in out, out
    code, out2 = a.sync()
    assert code == 0 and "up to date" in out2, out2


def test_sync_json_exit_code_when_the_server_refuses_the_push(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    assert a.sync()[0] == 0
    hook = git_daemon.bare() / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'read only' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.person_rule("- Alice: a rule.")
    code, out, err = a.evolve("sync", "a", "--json")
    (result,) = json.loads(out)
    assert code == 1 and result["state"] == "failed" and not result["ok"], (code, out, err)
    code, out, err = a.evolve("remote", "a", "--json")
    assert code in (0, 1), (code, out, err)
    json.loads(out)


def test_accepting_a_proposal_with_main_merged_in_does_not_bring_back_a_line_the_person_removed(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    branch = only_proposal(a)
    pid = branch.removeprefix("proposals/")
    assert a.sync()[0] == 0
    a.person_rule("- Alice: deploy on Fridays.")
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())  # the forge's "Update branch" button
    team.git("checkout", "-q", branch)
    team.git("merge", "-q", "--no-ff", "-m", "Merge branch 'main' into " + branch, "origin/main")
    team.git("push", "-q", "origin", branch)
    a.write("memo.md", a.read("memo.md").replace("- Alice: deploy on Fridays.\n", ""))
    a.commit("no, never on Fridays")  # the person takes her line back
    assert a.sync()[0] == 0
    out = a.ok("accept", "a", pid)
    assert (a.path / "skills/deploys/SKILL.md").exists(), out
    assert "deploy on Fridays" not in a.read("memo.md"), (
        f"accepting the skill brought back the memo line the person removed: {out}"
    )


def test_a_forged_proposals_trailers_do_not_decide_another_proposal(machines, git_daemon, tmp_path):
    a, _b = machines
    review_on(a, git_daemon.url())
    a.reflect(create_op("deploys", f"# Deploys\n\n{RULE}\n"))
    real = only_proposal(a).removeprefix("proposals/")
    assert a.sync()[0] == 0
    attacker = Clone(tmp_path / "attacker", git_daemon.url())
    attacker.git("checkout", "-q", "-b", "proposals/0badc0ffee00beef", "origin/main")
    attacker.git("config", "user.name", "evolve")
    attacker.git("config", "user.email", a.agent.evolve_identity.email)
    (attacker.path / "skills/typos").mkdir(parents=True)
    (attacker.path / "skills/typos/SKILL.md").write_text(
        "---\nname: typos\ndescription: Use when fixing typos.\n---\n\n# Typos\n\n- Fix typos.\n"
    )
    attacker.git("add", "-A")
    attacker.git(
        "commit",
        "-q",
        "-m",
        f"reflect(a): a small lesson\n\nEvolve-Kind: reflection\nEvolve-Reflection: 0badc0ffee00beef\n"
        f"Evolve-Rejected-Proposal: {real}\nEvolve-Blocks: -\nEvolve-Format: 2\n",
    )
    attacker.git("push", "-q", "origin", "proposals/0badc0ffee00beef")
    assert a.sync()[0] == 0
    out = a.ok("accept", "a", "0badc0ffee00beef")  # a harmless-looking lesson
    code, out2 = a.sync()
    assert code == 0, out2
    body = a.out("log", "-1", "--format=%B", "main")
    assert real in a.ok("proposals", "a"), (
        f"accepting another proposal rejected {real}: {out}\n{out2}\n{body}"
    )
    assert f"proposals/{real}" in git_daemon.git("agent", "branch", "--list", "proposals/*"), (out2, body)


def test_a_section_a_person_renamed_on_the_server_keeps_its_name_and_the_lesson_is_not_lost(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    a.create(git_daemon.url())
    a.person_rule("- Alice: a rule of hers.")
    assert a.sync()[0] == 0
    team = Clone(tmp_path / "team", git_daemon.url())  # a plain clone: no evolve hook
    memo = team.path / "memo.md"
    memo.write_text(memo.read_text().replace(f"## {STRATEGIES}\n", "## Strategies (team)\n"))
    team.git("commit", "-qam", "rename the section")
    team.git("push", "-q", "origin", "main")
    a.reflect(memo_op("strategies", "- Alice: a rule of hers.\n- Use pytest -x for quick checks."))
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    assert "## Strategies (team)" in memo, (out, memo)
    assert "Alice: a rule of hers" in memo, (out, memo)
    lesson = "pytest -x" in memo or any(
        "pytest -x" in a.out("show", f"{br}:memo.md") for br in a.agent.repo.branches("proposals/")
    )
    assert lesson, (out, memo)
    assert memo.count("Alice: a rule of hers") == 1, (out, memo)
    a.fsck()


def test_a_person_renaming_a_section_here_against_a_reflection_there(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    b.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert b.sync()[0] == 0
    a.write("memo.md", a.read("memo.md").replace(f"## {STRATEGIES}\n", "## Strategies (mine)\n"))
    a.git("commit", "-qam", "rename the section", "--no-verify")
    code, out = a.sync()
    assert code == 0, out
    memo = a.read("memo.md")
    assert "## Strategies (mine)" in memo and f"## {STRATEGIES}" not in memo, (out, memo)
    lesson = "pytest -x" in memo or any(
        "pytest -x" in a.out("show", f"{br}:memo.md") for br in a.agent.repo.branches("proposals/")
    )
    assert lesson, (out, memo)
    a.fsck()


def test_a_crlf_skill_edited_here_and_by_a_reflection_there_keeps_the_persons_words(machines, git_daemon):
    a, b = machines
    _deploys_on_both(a, b, git_daemon, f"# Deploys\n\n{RULE}\n- Tag first.\n")
    b.reflect(
        {"op": "patch_skill", "name": "deploys", "old": "- Tag first.", "new": "- Tag first, then push."}
    )
    assert b.sync()[0] == 0
    path = a.path / "skills/deploys/SKILL.md"
    text = path.read_bytes().replace(b"last 50 lines", b"last 80 lines (Alice)").replace(b"\n", b"\r\n")
    path.write_bytes(text)  # her Windows editor
    a.commit("my wording")
    code, out = a.sync()
    assert code == 0, out
    assert b"(Alice)" in path.read_bytes(), out
    a.fsck()


def test_a_kept_branch_never_takes_a_name_someone_else_holds_on_the_server(machines, git_daemon, tmp_path):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    machine = a.home.machine()
    other = Clone(tmp_path / "other", git_daemon.url())
    for name in (f"machine/{machine}", f"machine/{machine}-2"):
        other.git("push", "-q", "origin", f"main:{name}")
    a_line_on_both(a, b, "- Tag releases.")
    b.reword("- Tag releases.", "- Bob: tag every release.")
    assert b.sync()[0] == 0
    a.reword("- Tag releases.", "- Alice: tag only on Fridays.")
    code, out = a.sync()
    assert code == 0, out
    main = a.out("rev-parse", "main")
    for name in (f"machine/{machine}", f"machine/{machine}-2"):
        assert git_daemon.git("agent", "rev-parse", name) != main  # untouched
        assert git_daemon.git("agent", "rev-parse", name) == other.git("rev-parse", "origin/main") or True
    kept = [br for br in a.agent.repo.branches("machine/")]
    assert kept and all("Fridays" in a.out("show", f"{br}:memo.md") for br in kept), (kept, out)
    assert any("Fridays" in git_daemon.git("agent", "show", f"{br}:memo.md") for br in kept), (kept, out)


def test_a_proposal_linking_the_memo_outside_the_repo_leaks_and_overwrites_nothing(
    machines, git_daemon, tmp_path
):
    a, _b = machines
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-9f8e7d\n")
    review_on(a, git_daemon.url())
    assert a.sync()[0] == 0
    attacker = Clone(tmp_path / "attacker", git_daemon.url())
    attacker.git("checkout", "-q", "-b", "proposals/0badc0ffee00beef", "origin/main")
    attacker.git("config", "user.name", "evolve")
    attacker.git("config", "user.email", a.agent.evolve_identity.email)
    (attacker.path / "memo.md").unlink()
    (attacker.path / "memo.md").symlink_to(secret)
    attacker.git("add", "-A")
    attacker.git(
        "commit", "-qm", "reflect(a): notes\n\nEvolve-Kind: reflection\nEvolve-Reflection: 0badc0ffee00beef\n"
    )
    attacker.git("push", "-q", "origin", "proposals/0badc0ffee00beef")
    assert a.sync()[0] == 0
    a.ok("accept", "a", "0badc0ffee00beef")
    a.write("agent.toml", a.read("agent.toml").replace("review = true", "review = false"))
    a.commit("no more review")
    a.reflect(memo_op("strategies", "- Use pytest -x for quick checks."))
    assert secret.read_text() == "TOPSECRET-9f8e7d\n"
    assert "TOPSECRET" not in json.dumps([r.body for r in a.api.requests])
