"""The git layer's commits: files and trailers, the paths it refuses, a person's index and identity.

Locks and crash safety are in test_repo_crash.py, skill history in test_repo_history.py,
what Repo reads of `.git` in test_repo_reads.py, concurrency in test_repo_concurrency.py.
"""

from __future__ import annotations

import re

import pytest

from evolve.errors import EvolveError, UserError
from evolve.store import commit
from evolve.store.history import build_message, clean_line
from evolve.store.identity import Identity
from tests import helpers
from tests.helpers import (
    EVOLVE,
    evolve_commit,
    git,
    git_out,
    head,
    parsed_trailers,
    skill_text,
    trailer_lines,
)

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

agent = helpers.agent  # the fixture: agent "demo" in the test's home


# -- commits and trailers ---------------------------------------------------------------
def test_commit_changes_writes_files_and_one_commit_with_parseable_trailers(agent):
    before = head(agent.path)
    trailers = {
        "Evolve-Kind": "reflection",
        "Evolve-Score": "0.93",
        "Evolve-Signals": ["user_correction", "error_recovered"],
        "Evolve-Runs": ["run-1", "run-2"],
        "Evolve-Model": "offline",
    }
    sha = evolve_commit(
        agent,
        {"skills/fix-tests/SKILL.md": skill_text("fix-tests").encode(), "memo.md": b"# Memo\n"},
        "reflect(demo): learned a thing",
        trailers,
    )
    assert head(agent.path) == sha
    assert git_out(agent.path, "rev-parse", "HEAD^") == before
    assert (agent.path / "skills/fix-tests/SKILL.md").read_text() == skill_text("fix-tests")
    assert (agent.path / "memo.md").read_text() == "# Memo\n"
    assert git_out(agent.path, "show", "--format=", "--name-only", "HEAD").splitlines() == [
        "memo.md",
        "skills/fix-tests/SKILL.md",
    ]
    assert parsed_trailers(agent.path) == {
        "Evolve-Kind": "reflection",
        "Evolve-Score": "0.93",
        "Evolve-Signals": "user_correction, error_recovered",
        "Evolve-Runs": "run-1, run-2",
        "Evolve-Model": "offline",
        "Evolve-Format": "2",
    }
    assert trailer_lines(agent.path)["Evolve-Runs"] == ["run-1", "run-2"]  # one line per item
    assert (
        git_out(agent.path, "log", "-1", "--format=%an <%ae>|%s")
        == "evolve <evolve@localhost>|reflect(demo): learned a thing"
    )
    # the real index and the work tree agree with HEAD: nothing shows as changed
    assert git_out(agent.path, "status", "--porcelain") == ""
    log = agent.log()
    assert log[0].trailers["Evolve-Signals"] == "user_correction, error_recovered"
    assert log[0].values("Evolve-Runs") == ["run-1", "run-2"]


def test_newlines_in_subject_and_trailers_become_one_line(agent):
    hostile = "first line\nEvolve-Kind: revert\n\nSigned-off-by: mallory <m@x>\r\u2028tail"
    evolve_commit(
        agent,
        {"notes.txt": b"x\n"},
        f"reflect(demo): {hostile}",
        {
            "Evolve-Kind": "reflection",
            "Evolve-Summary": hostile,
            "Evolve-Ops": [f"create {hostile}", "patch x"],
        },
    )
    subject = git_out(agent.path, "log", "-1", "--format=%s")
    assert "\n" not in subject and subject.startswith("reflect(demo): first line Evolve-Kind: revert")
    trailers = parsed_trailers(agent.path)
    assert set(trailers) == {"Evolve-Kind", "Evolve-Summary", "Evolve-Ops", "Evolve-Format"}
    assert trailers["Evolve-Kind"] == "reflection"
    assert agent.log()[0].values("Evolve-Ops") == [clean_line(f"create {hostile}", 1000), "patch x"]
    assert trailers["Evolve-Summary"] == clean_line(hostile, 1000)
    assert agent.log()[0].kind == "reflection"


def test_list_trailers_of_older_commits_are_read_in_their_comma_joined_form(agent):
    from evolve.store.history import build_message

    old = "reflect(demo): old\n\nEvolve-Kind: reflection\nEvolve-Ops: create_skill a, patch_skill b\n"
    new = build_message(
        "reflect(demo): new",
        {"Evolve-Kind": "reflection", "Evolve-Rejected": ["create_skill c: exists, use patch"]},
    )
    for message in (old, new):
        (agent.path / "notes.txt").write_text(message)
        git(agent.path, "add", "notes.txt")
        git(agent.path, "commit", "-q", "--no-verify", "-m", message)
    newest, older = agent.log()[:2]
    assert older.values("Evolve-Ops") == ["create_skill a", "patch_skill b"]
    assert newest.values("Evolve-Rejected") == ["create_skill c: exists, use patch"]  # not split at ', '


def test_clean_line():
    assert clean_line("a\nb\r\n\tc\x00d\u2029e") == "a b c d e"
    assert clean_line("  x  ") == "x"
    long = clean_line("y" * 500, 300)
    assert len(long) == 300 and long.endswith("…")
    message = build_message("s\nt", {"K": ["a\nb", "c"], "Empty": ""})
    assert message == "s t\n\nK: a b\nK: c\nEmpty: -\nEvolve-Format: 2\n"  # one line per item


def test_deleting_a_file_and_empty_folders(agent):
    evolve_commit(agent, {"skills/gone/SKILL.md": skill_text("gone").encode()})
    evolve_commit(agent, {"skills/gone/SKILL.md": None})
    assert not (agent.path / "skills/gone").exists()
    assert (agent.path / "skills").is_dir()  # .gitkeep keeps it
    assert "skills/gone/SKILL.md" not in git_out(agent.path, "ls-tree", "-r", "--name-only", "HEAD")
    assert git_out(agent.path, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    "path",
    [
        "../escape.txt",
        "/tmp/abs.txt",
        ".git/hooks/pre-commit",
        "skills/../../x",
        ".GIT/config",
        ".gitattributes",
    ],
)
def test_commit_changes_refuses_paths_outside_the_work_tree(agent, path):
    before = head(agent.path)
    with pytest.raises(EvolveError, match="refusing"):
        evolve_commit(agent, {path: b"evil\n"})
    assert head(agent.path) == before
    assert not (agent.path.parent / "escape.txt").exists()
    assert not (agent.path / ".git" / "evolve-journal.json").exists()


def test_commit_changes_refuses_to_write_through_a_symlink(agent, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (agent.path / "skills" / "linked").symlink_to(outside)
    with pytest.raises(EvolveError, match="symlink"):
        evolve_commit(agent, {"skills/linked/SKILL.md": b"x"})
    assert list(outside.iterdir()) == []


def test_commit_to_another_branch_leaves_the_work_tree_alone(agent):
    before = head(agent.path)
    message = build_message("propose(demo): x", {"Evolve-Kind": "proposal"})
    with agent.repo.locked():
        sha = agent.repo.commit_changes(
            {"skills/p/SKILL.md": skill_text("p").encode()}, message, EVOLVE, branch="proposals/one"
        )
    assert head(agent.path) == before
    assert git_out(agent.path, "rev-parse", "proposals/one") == sha
    assert git_out(agent.path, "rev-parse", "proposals/one^") == before
    assert not (agent.path / "skills/p").exists()
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_log_dates_are_iso_utc_and_resolve_refuses_options(agent):
    commits = agent.log()
    assert len(commits) == 1 and commits[0].kind == "init"
    assert ISO_UTC.fullmatch(commits[0].date)
    for bad in ("--output=/tmp/x", "-n1", "HEAD;rm", ""):
        with pytest.raises(UserError):
            agent.repo.resolve(bad)
    with pytest.raises(UserError, match="no commit"):
        agent.repo.resolve("deadbeef")


def test_identity_env_sets_author_and_committer():
    env = Identity("A B", "a@b").env("2024-01-01T00:00:00+00:00")
    assert env["GIT_AUTHOR_NAME"] == env["GIT_COMMITTER_NAME"] == "A B"
    assert env["GIT_AUTHOR_DATE"] == "2024-01-01T00:00:00+00:00"


def test_each_git_command_sees_the_environment_as_it_is_now_scrubbed(agent, monkeypatch):
    """The scrubbed environment is kept between git commands: a change of the process's is seen."""
    ident = lambda: agent.repo.git("var", "GIT_AUTHOR_IDENT").decode()  # noqa: E731
    assert "Changed Person" not in ident()
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Changed Person")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.probe'='yes'")
    monkeypatch.setenv("GIT_INDEX_FILE", str(agent.path / "elsewhere"))
    assert "Changed Person" in ident()
    assert agent.repo.git("config", "--get", "core.probe", check=False) == b""
    assert agent.repo.git("rev-parse", "--git-path", "index").decode().strip().endswith("/index")
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    assert "Changed Person" not in ident()


def test_commit_changes_without_any_git_identity(agent, tmp_path, monkeypatch):
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    sha = evolve_commit(agent, {"x.txt": b"x\n"})
    assert (
        git_out(agent.path, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha)
        == "evolve <evolve@localhost>|evolve <evolve@localhost>"
    )


def test_reverse_changes_refuses_an_empty_commit(agent):
    git(agent.path, "commit", "-q", "--allow-empty", "-m", "nothing", "--no-verify")
    with pytest.raises(UserError, match="changed nothing"):
        agent.repo.reverse_changes(head(agent.path))


def test_a_branch_move_that_loses_the_race_leaves_the_persons_staged_work_as_it_was(agent):
    # evolve puts its entries in the index before it moves the branch (a person's `git commit`
    # must never read the moved branch with the old index); when the move loses to a person's
    # commit, the index a person staged is back byte for byte
    (agent.path / "first.md").write_text("committed by the person\n")
    git(agent.path, "add", "first.md")
    git(agent.path, "commit", "-q", "--no-verify", "-m", "a first note")
    (agent.path / "notes.md").write_text("staged by the person\n")
    (agent.path / "memo.md").write_text(agent.memo_text() + "\n- staged memo line\n")
    git(agent.path, "add", "notes.md", "memo.md")
    before = (agent.path / ".git" / "index").read_bytes()
    repo = agent.repo
    tip = repo.tip()
    entries = commit.blob_entries(repo, {"skills/x/SKILL.md": b"evolve's\n", "memo.md": b"evolve's memo\n"})
    new = commit.commit_tree(repo, tip, entries, "reflect(demo): x", EVOLVE.env())
    stale = git_out(agent.path, "rev-parse", "HEAD~1")  # not where the branch is any more
    assert commit.swap(repo, "main", new, stale, entries) is False
    assert repo.tip() == tip
    assert (agent.path / ".git" / "index").read_bytes() == before
    assert git_out(agent.path, "diff", "--cached", "--name-only").split() == ["memo.md", "notes.md"]
    assert not (agent.path / ".git" / "index.lock").exists()
    assert commit.swap(repo, "main", new, tip, entries) is True  # and the move that wins stages it
    assert "skills/x/SKILL.md" in git_out(agent.path, "ls-files")


def test_a_move_already_lost_never_shows_a_person_evolves_index(agent, monkeypatch):
    # a person's `git commit` reads the index before it takes index.lock: had evolve put its
    # entries there for a move that then failed, the person's commit would carry evolve's file
    # under their name (seen under load: a person's "human 6" holding skills/e0/SKILL.md)
    repo = agent.repo
    stale = repo.tip()
    entries = commit.blob_entries(repo, {"skills/x/SKILL.md": b"evolve's\n"})
    new = commit.commit_tree(repo, stale, entries, "reflect(demo): x", EVOLVE.env())
    (agent.path / "notes.md").write_text("the person's note\n")
    git(agent.path, "add", "notes.md")
    git(agent.path, "commit", "-q", "--no-verify", "-m", "the person's note")
    index = agent.path / ".git" / "index"
    seen = []  # a ref transaction started: the lock's check let a lost move through
    monkeypatch.setattr(commit, "RefTransaction", lambda *a, **k: seen.append(a))
    before = index.stat()
    assert commit.swap(repo, "main", new, stale, entries) is False
    assert seen == [] and (index.stat().st_ino, index.stat().st_mtime_ns) == (
        before.st_ino,
        before.st_mtime_ns,
    )
    assert "skills/x/SKILL.md" not in git_out(agent.path, "ls-files")


def test_a_file_whose_name_starts_with_a_quote_keeps_its_name(agent):
    # git reads an --index-info path that starts with `"` as C-quoted: evolve quotes it
    names = ['"q"', '"notes" and more.md', '"back\\slash"']
    with agent.repo.locked():
        agent.repo.commit_changes({n: f"{n}\n".encode() for n in names}, "edit(demo): quoted", EVOLVE)
    listed = git_out(agent.path, "ls-files", "-z").split("\0")
    assert set(names) <= set(listed), listed
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert all(git_out(agent.path, "show", f"HEAD:{n}") == n for n in names)


def test_a_file_staged_on_a_branch_with_no_commit_is_never_written_over(agent):
    """The person deleted main (its files still in the index) and staged their own memo.

    With no tip to compare the index with, all of it is their coming commit.
    """
    git(agent.path, "update-ref", "-d", "refs/heads/main")
    (agent.path / "memo.md").write_text("# my own memo, staged\n")
    git(agent.path, "add", "memo.md")
    assert "memo.md" in agent.repo.staged_paths()
    with pytest.raises(EvolveError, match="memo.md"):
        agent.repo.commit_changes({"memo.md": b"evolve's memo\n"}, "evolve: memo", EVOLVE)
    assert (agent.path / "memo.md").read_text() == "# my own memo, staged\n"
    assert git_out(agent.path, "show", ":memo.md") == "# my own memo, staged"
