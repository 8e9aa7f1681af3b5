"""The Agent API: create/open, a person's edits as their own commits, revert, history."""

from __future__ import annotations

import os
import shutil
import stat
import threading

import pytest

from evolve.errors import UserError
from evolve.home import Home
from evolve.workspace import memo
from evolve.workspace.agent import Agent
from evolve.workspace.folders import list_agents
from evolve.workspace.template import HOOK_MARKER
from tests.helpers import (
    commit_all,
    evolve_commit,
    git,
    git_out,
    head,
    make_agent,
    parsed_trailers,
    skill_text,
    write_skill,
)

LINES = [f"- rule {i}: when step {i} fails, read the log of step {i} first\n" for i in range(30)]


@pytest.fixture
def agent(evolve_home):
    return make_agent("demo")


@pytest.fixture
def no_identity(tmp_path, monkeypatch):
    """A machine where git knows no user.name / user.email."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    return empty


def skill_with(name: str, lines: list[str]) -> str:
    return skill_text(name, body="".join(lines))


# -- create / open ----------------------------------------------------------------------
def test_create_makes_a_repo_with_the_template_in_one_commit(agent, evolve_home):
    assert agent.path == evolve_home / "agents" / "demo"
    files = git_out(agent.path, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    for expected in ("agent.toml", "memo.md", ".gitignore", "skills/.gitkeep"):
        assert expected in files
    assert git_out(agent.path, "rev-list", "--count", "HEAD") == "1"
    assert (
        git_out(agent.path, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s")
        == "evolve <evolve@localhost>|evolve <evolve@localhost>|init(demo): new agent"
    )
    assert parsed_trailers(agent.path) == {"Evolve-Kind": "init"}
    assert git_out(agent.path, "branch", "--show-current") == "main"
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert 'name = "demo"' in (agent.path / "agent.toml").read_text()
    assert memo.problems(agent.memo_text(), 2000) == []
    assert "*.swp" in (agent.path / ".gitignore").read_text()
    hook = agent.path / ".git" / "hooks" / "pre-commit"
    assert HOOK_MARKER in hook.read_text()
    assert hook.stat().st_mode & stat.S_IXUSR
    assert list_agents(Home.resolve()) == ["demo"]
    assert not [p for p in (evolve_home / "agents").iterdir() if p.name.startswith(".")]


def test_create_works_without_any_git_identity(evolve_home, no_identity):
    assert git(evolve_home.parent, "config", "user.email", check=False).returncode != 0
    agent = make_agent("anon")
    assert git_out(agent.path, "log", "-1", "--format=%an <%ae>") == "evolve <evolve@localhost>"


def test_evolve_identity_is_configurable(evolve_home):
    evolve_home.mkdir(parents=True)
    (evolve_home / "config.toml").write_text(
        "[git]\nauthor_name = 'Robo'\nauthor_email = 'robo@example.test'\n"
    )
    agent = make_agent("robo")
    assert git_out(agent.path, "log", "-1", "--format=%an <%ae>") == "Robo <robo@example.test>"


def test_an_existing_agent_is_never_overwritten(agent):
    (agent.path / "memo.md").write_text("precious\n")
    before = head(agent.path)
    with pytest.raises(UserError, match="already exists"):
        make_agent("demo")
    assert (agent.path / "memo.md").read_text() == "precious\n"
    assert head(agent.path) == before


def test_an_existing_folder_is_never_overwritten(evolve_home):
    folder = evolve_home / "agents" / "taken"
    folder.mkdir(parents=True)
    (folder / "mine.txt").write_text("mine\n")
    with pytest.raises(UserError, match="already exists"):
        make_agent("taken")
    assert [p.name for p in folder.iterdir()] == ["mine.txt"]


def test_concurrent_creates_of_one_name_leave_exactly_one_agent(evolve_home):
    Home.resolve().ensure()
    results: list[str] = []

    def create():
        try:
            make_agent("same")
            results.append("ok")
        except UserError:
            results.append("exists")

    threads = [threading.Thread(target=create) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == ["exists", "exists", "exists", "ok"]
    agent = Agent.open("same", Home.resolve())
    assert git_out(agent.path, "rev-list", "--count", "HEAD") == "1"
    assert [p.name for p in (evolve_home / "agents").iterdir()] == ["same"]


def test_open_unknown_agent_is_a_user_error(evolve_home):
    with pytest.raises(UserError, match="evolve init nobody"):
        Agent.open("nobody", Home.resolve())


# -- a person's edits -------------------------------------------------------------------
def test_human_edits_are_committed_first_as_their_own_commit(agent):
    text = memo.replace_section(agent.memo_text(), memo.STRATEGIES, "- the user likes tables")
    (agent.path / "memo.md").write_text(text)
    write_skill(agent.path, "mine")
    sha = agent.commit_human_edits()
    assert sha == head(agent.path)
    assert (
        git_out(agent.path, "log", "-1", "--format=%an <%ae>|%s")
        == "Test Person <person@example.test>|edit(demo): memo.md, skills/mine/SKILL.md"
    )
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Source"] == "human"
    assert "Evolve-Problems" not in trailers
    assert agent.log()[0].kind == "human_edit"
    assert git_out(agent.path, "status", "--porcelain") == ""
    # evolve's own commit that follows holds only evolve's files
    evolve_commit(agent, {"skills/learned/SKILL.md": skill_text("learned").encode()})
    assert git_out(agent.path, "show", "--format=", "--name-only", "HEAD") == "skills/learned/SKILL.md"
    assert (agent.path / "memo.md").read_text() == text
    assert agent.commit_human_edits() is None


def test_human_edits_without_identity_are_the_logins_not_evolves(agent, no_identity):
    """C20: without a git identity, human edits were authored `evolve <evolve@localhost>`."""
    import pwd
    import socket

    (agent.path / "notes.md").write_text("n\n")
    agent.commit_human_edits()
    login = pwd.getpwuid(os.getuid()).pw_name
    name, email = git_out(agent.path, "log", "-1", "--format=%an|%ae").split("|")
    assert email == f"{login}@{socket.gethostname()}"
    assert name and name != "evolve" and email != "evolve@localhost"
    assert parsed_trailers(agent.path)["Evolve-Source"] == "human"


def test_staged_paths_are_left_to_the_persons_own_commit(agent):
    """B12: a person's `git add X; git commit -m msg` lost its message to evolve's edit commit."""
    write_skill(agent.path, "mine")
    git(agent.path, "add", "skills/mine")  # the person is about to commit it
    (agent.path / "notes.md").write_text("unstaged\n")
    sha = agent.commit_human_edits()
    assert git_out(agent.path, "show", "--format=", "--name-only", sha) == "notes.md"
    git(agent.path, "commit", "-qm", "my own skill")  # the person's commit still works
    assert git_out(agent.path, "log", "-1", "--format=%s") == "my own skill"
    assert git_out(agent.path, "show", "--format=", "--name-only", "HEAD") == "skills/mine/SKILL.md"
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_a_broken_skill_does_not_stop_the_human_edit_commit(agent):
    write_skill(agent.path, "broken", text="---\nname: other\n---\nbody\n")
    (agent.path / "memo.md").write_text("no sections at all\n")
    (agent.path / "skills" / ".gitkeep").unlink()
    sha = agent.commit_human_edits()
    assert sha == head(agent.path)
    files = git_out(agent.path, "show", "--format=", "--name-status", "HEAD").splitlines()
    assert sorted(files) == ["A\tskills/broken/SKILL.md", "D\tskills/.gitkeep", "M\tmemo.md"]
    problems = parsed_trailers(agent.path)["Evolve-Problems"]
    assert "skills/broken: name 'other' differs from its folder 'broken'" in problems
    assert "frontmatter has no 'description'" in problems
    assert "memo.md must have exactly one" in problems
    assert (agent.path / "skills/broken/SKILL.md").read_text() == "---\nname: other\n---\nbody\n"


def test_a_human_edits_problems_use_the_agents_own_limits(agent):
    toml = (agent.path / "agent.toml").read_text() + "\n[limits]\nskill_body_tokens = 50\n"
    (agent.path / "agent.toml").write_text(toml)
    write_skill(agent.path, "wordy", text=skill_text("wordy", body="- a rule worth keeping\n" * 20))
    agent.commit_human_edits()
    problems = parsed_trailers(agent.path)["Evolve-Problems"]
    assert "skills/wordy: body is about 115 tokens; at most 50" in problems


def test_defaults_live_in_the_config_alone():
    from evolve import config
    from evolve.reflect.operations import Limits
    from evolve.schedule.rules import Rules
    from evolve.schedule.signals import SignalSettings

    cfg = config.Config()
    assert Limits() == Limits.from_config(cfg.limits)
    assert Rules() == Rules.from_config(cfg.schedule)
    assert SignalSettings() == SignalSettings.from_config(cfg.signals)


def test_staged_and_then_edited_file_commits_the_work_tree(agent):
    (agent.path / "a.md").write_text("staged\n")
    git(agent.path, "add", "a.md")
    (agent.path / "a.md").write_text("edited after staging\n")
    agent.commit_human_edits()
    assert git_out(agent.path, "show", "HEAD:a.md") == "edited after staging"
    assert git_out(agent.path, "status", "--porcelain") == ""


# -- history kinds ----------------------------------------------------------------------
def test_log_kinds_are_told_apart_by_trailers(agent):
    evolve_commit(
        agent,
        {"skills/s/SKILL.md": skill_text("s").encode()},
        "reflect(demo): one",
        {"Evolve-Kind": "reflection", "Evolve-Score": "0.9"},
    )
    (agent.path / "mine.md").write_text("x\n")
    agent.commit_human_edits()
    (agent.path / "plain.md").write_text("y\n")
    commit_all(agent.path, "reflect(demo): a person's subject that looks like evolve's")
    reflection = agent.log()[2].sha
    agent.revert(reflection)
    kinds = [c.kind for c in agent.log()]
    assert kinds == ["revert", "human_edit", "human_edit", "reflection", "init"]
    newest = agent.log()[0]
    assert newest.trailers["Evolve-Reverts"] == reflection
    assert newest.reverts == reflection


def test_a_person_git_revert_is_a_revert(agent):
    sha = evolve_commit(agent, {"x.md": b"x\n"})
    git(agent.path, "revert", "--no-edit", sha)
    newest = agent.log()[0]
    assert newest.kind == "revert" and newest.reverts == sha


# -- revert -----------------------------------------------------------------------------
def _three_commits(agent, first_change, later_changes):
    evolve_commit(
        agent,
        {
            "skills/alpha/SKILL.md": skill_with("alpha", LINES).encode(),
            "skills/beta/SKILL.md": skill_with("beta", LINES).encode(),
        },
    )
    target = evolve_commit(agent, first_change, "reflect(demo): the lesson to undo")
    evolve_commit(agent, later_changes, "reflect(demo): a later lesson")
    return target


def _lines(replace: dict[int, str]) -> list[str]:
    return [replace.get(i, line) for i, line in enumerate(LINES)]


def test_revert_applies_when_later_commits_changed_other_skills(agent):
    target = _three_commits(
        agent,
        {"skills/alpha/SKILL.md": skill_with("alpha", _lines({3: "- alpha lesson\n"})).encode()},
        {
            "skills/beta/SKILL.md": skill_with("beta", _lines({3: "- beta lesson\n"})).encode(),
            "skills/gamma/SKILL.md": skill_text("gamma").encode(),
        },
    )
    sha = agent.revert(target[:10])
    assert head(agent.path) == sha
    assert (agent.path / "skills/alpha/SKILL.md").read_text() == skill_with("alpha", LINES)
    assert "- beta lesson" in (agent.path / "skills/beta/SKILL.md").read_text()
    assert (agent.path / "skills/gamma/SKILL.md").exists()
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Reverts"] == target
    assert trailers["Evolve-Kind"] == "revert"
    assert (
        git_out(agent.path, "log", "-1", "--format=%s") == 'revert(demo): "reflect(demo): the lesson to undo"'
    )
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_revert_applies_when_a_later_commit_changed_another_part_of_the_same_skill(agent):
    target = _three_commits(
        agent,
        {"skills/alpha/SKILL.md": skill_with("alpha", _lines({3: "- early lesson\n"})).encode()},
        {
            "skills/alpha/SKILL.md": skill_with(
                "alpha", _lines({3: "- early lesson\n", 20: "- late\n"})
            ).encode()
        },
    )
    agent.revert(target)
    assert (agent.path / "skills/alpha/SKILL.md").read_text() == skill_with("alpha", _lines({20: "- late\n"}))


def test_revert_of_a_created_skill_deletes_it(agent):
    target = evolve_commit(agent, {"skills/new-one/SKILL.md": skill_text("new-one").encode()})
    evolve_commit(agent, {"skills/other/SKILL.md": skill_text("other").encode()})
    agent.revert(target)
    assert not (agent.path / "skills/new-one").exists()
    assert (agent.path / "skills/other/SKILL.md").exists()
    assert [s.name for s in agent.skills()] == ["other"]


@pytest.mark.parametrize("later_line", [4, 5, 6])
def test_revert_next_to_a_later_change(agent, later_line):
    # Reverting line 3 when a later commit changed line 4 (adjacent) or 5-6 (one or two
    # unchanged lines between). git's 3-way merge treats touching hunks as a conflict.
    target = _three_commits(
        agent,
        {"skills/alpha/SKILL.md": skill_with("alpha", _lines({3: "- early\n"})).encode()},
        {
            "skills/alpha/SKILL.md": skill_with(
                "alpha", _lines({3: "- early\n", later_line: "- late\n"})
            ).encode()
        },
    )
    before = head(agent.path)
    if later_line == 4:
        with pytest.raises(UserError, match="cannot revert"):
            agent.revert(target)
        assert head(agent.path) == before
    else:
        agent.revert(target)
        assert (agent.path / "skills/alpha/SKILL.md").read_text() == skill_with(
            "alpha", _lines({later_line: "- late\n"})
        )


def test_a_conflicting_revert_is_a_user_error_and_touches_nothing(agent):
    target = _three_commits(
        agent,
        {"skills/alpha/SKILL.md": skill_with("alpha", _lines({3: "- first\n"})).encode()},
        {
            "skills/alpha/SKILL.md": skill_with("alpha", _lines({3: "- second\n"})).encode(),
            "memo.md": b"later memo\n",
        },
    )
    (agent.path / "untracked-note.md").write_text("a person's note\n")
    before = head(agent.path)
    files_before = {p: p.read_bytes() for p in agent.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    with pytest.raises(UserError, match="cannot revert .* same lines"):
        agent.revert(target)
    # the person's note was committed first (their own commit); nothing else moved
    assert git_out(agent.path, "log", "-1", "--format=%s") == "edit(demo): untracked-note.md"
    assert git_out(agent.path, "rev-parse", "HEAD^") == before
    files_after = {p: p.read_bytes() for p in agent.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert files_after == files_before
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert not (agent.path / ".git" / "evolve-journal.json").exists()


def test_revert_refuses_the_first_commit_and_unknown_revisions(agent):
    with pytest.raises(UserError, match="first commit"):
        agent.revert("HEAD")
    with pytest.raises(UserError, match="no commit"):
        agent.revert("0123456789abcdef")
    with pytest.raises(UserError, match="not a revision"):
        agent.revert("--hard")


# -- records ----------------------------------------------------------------------------
def test_skill_records_report_valid_and_broken_skills(agent):
    evolve_commit(agent, {"skills/good/SKILL.md": skill_text("good").encode()})
    evolve_commit(agent, {"skills/good/SKILL.md": skill_text("good", body="- better\n").encode()})
    write_skill(agent.path, "bad", text="---\nname: bad\ndescription: [oops\n---\n")
    records = {r["name"]: r for r in agent.skill_records()}
    assert records["good"]["valid"] and records["good"]["patch_count"] == 1
    assert records["good"]["created_at"].endswith("Z")
    assert not records["bad"]["valid"]
    assert any("not valid YAML" in p for p in records["bad"]["problems"])
    assert records["bad"]["created_at"] is None  # not committed yet
    assert [s.name for s in agent.skills() if s.valid] == ["good"]


def test_log_survives_control_characters_in_a_person_message(agent):
    (agent.path / "x.md").write_text("x\n")
    git(agent.path, "add", "-A")
    git(agent.path, "commit", "-q", "--no-verify", "-m", "subject \x1e with rs\n\nbody \x1f unit\x1e")
    commits = agent.log()
    assert [c.kind for c in commits] == ["human_edit", "init"]
    assert commits[0].subject == "subject \x1e with rs"


def test_human_edit_of_a_file_with_a_non_utf8_name(agent):
    name = os.fsdecode(b"caf\xe9.md")
    (agent.path / name).write_text("x\n")
    agent.commit_human_edits()
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert b"caf\xe9.md\0" in agent.repo.git("ls-tree", "--name-only", "-z", "HEAD")
    evolve_commit(agent, {"after.md": b"a\n"})  # the next evolve commit still works
    assert (agent.path / name).read_text() == "x\n"


def test_revert_of_a_person_rename(agent):
    write_skill(agent.path, "one", body="".join(LINES))
    commit_all(agent.path, "one")
    git(agent.path, "mv", "skills/one/SKILL.md", "notes-one.md")
    git(agent.path, "commit", "-qm", "moved")
    agent.revert("HEAD")
    assert (agent.path / "skills/one/SKILL.md").read_text() == skill_with("one", LINES)
    assert not (agent.path / "notes-one.md").exists()
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_human_edits_keep_symlinks_and_git_attributes(agent, tmp_path):
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("never commit me\n")
    (agent.path / "link.md").symlink_to(secret)
    (agent.path / ".gitattributes").write_text("*.md text\n")
    agent.commit_human_edits()
    assert git_out(agent.path, "ls-tree", "HEAD", "link.md").startswith("120000 ")
    assert git_out(agent.path, "show", "HEAD:link.md") == str(secret)
    assert git_out(agent.path, "show", "HEAD:.gitattributes") == "*.md text"
    assert git_out(agent.path, "status", "--porcelain") == ""
    evolve_commit(agent, {"after.md": b"a\n"})
    assert (agent.path / "link.md").is_symlink()


def test_a_removed_agent_name_is_reused_only_after_purge(evolve_home, capsys) -> None:
    from evolve.cli import main

    assert main(["init", "again"]) == 0
    assert main(["remove", "again"]) == 0
    assert main(["init", "again"]) == 1
    assert "--purge" in capsys.readouterr().err
    assert main(["remove", "again", "--purge"]) == 0
    assert main(["init", "again"]) == 0


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_fifo_or_folder_where_the_memo_was_is_never_committed_as_its_deletion(agent, kind):
    # git cannot carry a FIFO: the memo looked deleted, and evolve sync committed and pushed
    # that deletion as the person's edit, the memo gone from every machine
    from evolve.errors import Busy

    before = head(agent.path)
    agent.memo_path.unlink()
    os.mkfifo(agent.memo_path) if kind == "fifo" else agent.memo_path.mkdir()
    with pytest.raises(Busy) as refused:
        agent.commit_human_edits()
    assert "memo.md is not a regular file" in str(refused.value) and "\n" not in str(refused.value)
    assert head(agent.path) == before and git_out(agent.path, "ls-tree", "--name-only", "HEAD", "memo.md")


def test_main_checked_out_again_in_a_worktree_holds_evolves_commits(agent, tmp_path):
    # `git worktree add --force ../other main`: a commit of evolve's on main left that worktree's
    # index behind, and the person's next `git commit -a` there undid it (read as their revert)
    from evolve.errors import Busy

    other = tmp_path / "other"
    git(agent.path, "worktree", "add", "-q", "--force", str(other), "main")
    before = head(agent.path)
    agent.memo_path.write_text(agent.memo_path.read_text() + "- my line\n")
    with pytest.raises(Busy) as refused:
        agent.commit_human_edits()
    assert f"main is checked out in {other}" in str(refused.value) and "\n" not in str(refused.value)
    assert head(agent.path) == before
    git(other, "switch", "-q", "--detach")
    assert agent.commit_human_edits() and "- my line" in git_out(agent.path, "show", "HEAD:memo.md")


def test_a_fifo_where_a_skill_folder_was_is_never_committed_as_the_skills_deletion(agent):
    # git saw skills/x/SKILL.md deleted (it cannot carry the FIFO that took its folder's place):
    # committed and synced, the skill was gone from every machine
    from evolve.errors import Busy

    write_skill(agent.path, "fmt")
    git(agent.path, "add", "-A")
    git(agent.path, "commit", "-qm", "my skill")
    before = head(agent.path)
    shutil.rmtree(agent.skills_dir / "fmt")
    os.mkfifo(agent.skills_dir / "fmt")
    with pytest.raises(Busy) as refused:
        agent.commit_human_edits()
    assert f"{agent.skills_dir / 'fmt'} is not a regular file" in str(refused.value)
    assert "checkout -- skills/fmt`" in str(refused.value) and "\n" not in str(refused.value)
    assert head(agent.path) == before
