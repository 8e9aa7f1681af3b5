"""The git layer: commits with trailers, history, locks, concurrency and crash safety."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from evolve.errors import EvolveError, LockBusy, UserError
from evolve.store import commit, worktree
from evolve.store import git as gitcmd
from evolve.store.history import build_message, clean_line
from evolve.store.journal import write_journal
from evolve.store.locks import FileLock, is_locked
from evolve.store.repo import Identity, Repo
from evolve.workspace import memo
from tests.helpers import (
    EVOLVE,
    commit_all,
    evolve_commit,
    git,
    git_out,
    head,
    make_agent,
    parsed_trailers,
    skill_text,
    trailer_lines,
    write_skill,
)

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
BODY = "".join(
    f"- rule {i}: when the build step {i} fails, read its log before retrying\n" for i in range(12)
)


@pytest.fixture
def agent(evolve_home):
    return make_agent("demo")


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


# -- skill history ----------------------------------------------------------------------
def _when(day: int) -> str:
    return f"2024-03-{day:02d}T10:00:00+00:00"


def _commit_at(agent, changes, day):
    message = build_message("reflect(demo): x", {"Evolve-Kind": "reflection"})
    with agent.repo.locked():
        return agent.repo.commit_changes(
            {k: (v.encode() if isinstance(v, str) else v) for k, v in changes.items()},
            message,
            EVOLVE,
            when=_when(day),
        )


def sk(name: str, extra: str = "") -> str:
    return skill_text(name, body=BODY + extra)


def test_skill_history_created_updated_patch_count(agent):
    _commit_at(agent, {"skills/alpha/SKILL.md": sk("alpha")}, 1)
    _commit_at(
        agent, {"skills/alpha/SKILL.md": sk("alpha", "- more\n"), "skills/beta/SKILL.md": sk("beta")}, 2
    )
    _commit_at(agent, {"skills/alpha/SKILL.md": sk("alpha", "- more\n- again\n")}, 3)
    _commit_at(agent, {"memo.md": b"# memo\n"}, 4)  # touches no skill
    _commit_at(agent, {"skills/beta/notes.md": "extra file in the folder\n"}, 5)
    history = agent.repo.skill_history()
    assert set(history) == {"alpha", "beta"}
    assert (history["alpha"].created_at, history["alpha"].updated_at, history["alpha"].patch_count) == (
        "2024-03-01T10:00:00Z",
        "2024-03-03T10:00:00Z",
        2,
    )
    assert (history["beta"].created_at, history["beta"].updated_at, history["beta"].patch_count) == (
        "2024-03-02T10:00:00Z",
        "2024-03-05T10:00:00Z",
        1,
    )


def test_skill_history_follows_a_folder_rename(agent):
    _commit_at(agent, {"skills/old-name/SKILL.md": sk("old-name")}, 1)
    _commit_at(agent, {"skills/old-name/SKILL.md": sk("old-name", "- patch\n")}, 2)
    _commit_at(
        agent, {"skills/old-name/SKILL.md": None, "skills/new-name/SKILL.md": sk("new-name", "- patch\n")}, 3
    )
    assert "R" in git_out(agent.path, "show", "-M", "--name-status", "--format=", "HEAD")[:1]
    history = agent.repo.skill_history()
    assert set(history) == {"new-name"}
    entry = history["new-name"]
    assert (entry.created_at, entry.updated_at, entry.patch_count) == (
        "2024-03-01T10:00:00Z",
        "2024-03-03T10:00:00Z",
        2,
    )


def test_skill_history_follows_a_person_git_mv(agent):
    _commit_at(agent, {"skills/first/SKILL.md": sk("first")}, 1)
    git(agent.path, "mv", "skills/first", "skills/second")
    path = agent.path / "skills/second/SKILL.md"
    path.write_text(path.read_text().replace("name: first", "name: second"))
    commit_all(agent.path, "rename")
    records = {r["name"]: r for r in agent.skill_records()}
    assert records["second"]["created_at"] == "2024-03-01T10:00:00Z"
    assert records["second"]["patch_count"] == 1


def test_skill_history_restarts_after_delete_and_recreate(agent):
    files = {
        "skills/gamma/SKILL.md": sk("gamma"),
        "skills/gamma/scripts/run.sh": "echo hi\n",
        "skills/gamma/references/more.md": "more\n",
    }
    _commit_at(agent, files, 1)
    _commit_at(agent, {"skills/gamma/SKILL.md": sk("gamma", "- p\n")}, 2)
    _commit_at(agent, dict.fromkeys(files), 3)  # retired, with its scripts
    assert agent.repo.skill_history() == {}
    _commit_at(agent, {"skills/gamma/SKILL.md": sk("gamma", "- reborn\n")}, 4)
    entry = agent.repo.skill_history()["gamma"]
    assert (entry.created_at, entry.updated_at, entry.patch_count) == (
        "2024-03-04T10:00:00Z",
        "2024-03-04T10:00:00Z",
        0,
    )
    assert len(entry.commits) == 1


def test_skill_history_of_a_new_repo_is_empty(agent):
    assert agent.repo.skill_history() == {}
    assert agent.skill_records() == []


# -- locks ------------------------------------------------------------------------------
def test_a_held_index_lock_is_waited_for_and_never_deleted(agent):
    lock = agent.path / ".git" / "index.lock"
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL)  # a person's git is running
    done: dict[str, object] = {}

    def write():
        try:
            done["sha"] = evolve_commit(agent, {"waited.txt": b"w\n"})
        except BaseException as exc:  # pragma: no cover - reported below
            done["error"] = exc
        done["at"] = time.monotonic()

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(0.8)
    assert thread.is_alive(), done
    assert lock.exists()
    released = time.monotonic()
    os.close(fd)
    lock.unlink()  # the person's git finishes
    thread.join(10)
    assert "error" not in done
    assert done["at"] >= released
    assert head(agent.path) == done["sha"]
    assert not lock.exists()


def test_a_stuck_index_lock_fails_clearly_and_restores_files(agent, monkeypatch):
    monkeypatch.setattr(
        commit, "acquire_index_lock", functools.partial(gitcmd.acquire_index_lock, timeout=0.3)
    )
    (agent.path / "memo.md").write_text(MEMO_BEFORE)
    git(agent.path, "commit", "-qam", "memo")
    before = head(agent.path)
    lock = agent.path / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(EvolveError, match=r"index\.lock exists .* remove it by hand"):
        evolve_commit(agent, {"memo.md": b"# evolve's\n", "new.txt": b"n\n"})
    assert lock.exists()
    assert head(agent.path) == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert not (agent.path / "new.txt").exists()
    assert not (agent.path / ".git" / "evolve-journal.json").exists()


HOLD_FLOCK = """
import sys, time
from pathlib import Path
from evolve.store.locks import FileLock
with FileLock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_evolve_lock_held_by_a_live_process(agent):
    path = agent.path / ".git" / "evolve.lock"
    proc = subprocess.Popen([sys.executable, "-c", HOLD_FLOCK, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        assert is_locked(path)
        with pytest.raises(LockBusy, match=f"pid {proc.pid}"):
            with agent.repo.locked(timeout=0.2):
                pass
        assert path.exists()
    finally:
        proc.kill()
        proc.wait()
    # the kernel freed the dead holder's lock: no stale-lock cleanup is needed
    assert not is_locked(path)
    with agent.repo.locked(timeout=1):
        assert is_locked(path)
    assert path.exists()


def test_file_lock_try_once(tmp_path):
    path = tmp_path / "x.lock"
    with FileLock(path):
        with pytest.raises(LockBusy):
            FileLock(path, timeout=0).acquire()
    FileLock(path, timeout=0).acquire().release()


# -- crash safety -----------------------------------------------------------------------
MEMO_BEFORE = memo.replace_section(memo.render_empty("demo"), memo.SELF, "- memo before")


def _prepare(agent):
    write_skill(agent.path, "kept", body="- original\n")
    (agent.path / "memo.md").write_text(MEMO_BEFORE)
    commit_all(agent.path, "base")
    return head(agent.path)


def test_failure_before_the_branch_moves_restores_the_files(agent, monkeypatch):
    before = _prepare(agent)

    def boom(repo, *args, **kwargs):
        assert (repo.path / "memo.md").read_text() == "# evolve wrote this\n"  # files were written
        raise RuntimeError("crash between writing files and moving the branch")

    monkeypatch.setattr(commit, "commit_loop", boom)
    with pytest.raises(RuntimeError):
        evolve_commit(
            agent,
            {
                "memo.md": b"# evolve wrote this\n",
                "skills/kept/SKILL.md": None,
                "skills/brand-new/SKILL.md": skill_text("brand-new").encode(),
            },
        )
    assert head(agent.path) == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert "- original" in (agent.path / "skills/kept/SKILL.md").read_text()
    assert not (agent.path / "skills/brand-new").exists()
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert not (agent.path / ".git" / "evolve-journal.json").exists()


KILLED_WRITER = """
import os, pathlib, signal, sys
from evolve.workspace.agent import Agent
from evolve.store.history import build_message
from evolve.store import commit
from evolve.store.repo import Identity
where = sys.argv[2]
real_swap = commit.swap
def die_before(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
def die_after(*a, **k):
    result = real_swap(*a, **k)
    os.kill(os.getpid(), signal.SIGKILL)
def die_mid_write(self, target):  # the new skill's bytes are in a temp file, not yet renamed
    if target.parent.name == "brand-new":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(self, target)
real_replace = pathlib.Path.replace
if where == "before":
    commit.commit_loop = die_before
elif where == "mid-write":
    pathlib.Path.replace = die_mid_write
else:
    commit.swap = die_after
agent = Agent.open(sys.argv[1])
changes = {"memo.md": b"# evolve wrote this\\n", "skills/kept/SKILL.md": None,
           "skills/brand-new/SKILL.md": b"---\\nname: brand-new\\ndescription: d\\n---\\nx\\n",
           "person.txt": b"evolve's version\\n"}
with agent.repo.locked():
    agent.repo.commit_changes(changes, build_message("reflect(demo): x", {}), Identity("evolve", "e@l"))
"""


def test_journal_of_a_killed_process_is_rolled_back_by_the_next_lock(agent):
    before = _prepare(agent)
    (agent.path / "person.txt").write_text("person's first\n")
    commit_all(agent.path, "person file")
    before = head(agent.path)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "before"])
    assert proc.returncode == -signal.SIGKILL
    journal = agent.path / ".git" / "evolve-journal.json"
    assert journal.exists()
    assert json.loads(journal.read_text())["tip"] == before
    assert (agent.path / "memo.md").read_text() == "# evolve wrote this\n"
    # meanwhile a person edits one of the files evolve had written
    (agent.path / "person.txt").write_text("person's newer edit\n")
    with agent.repo.locked(timeout=2):  # the dead process's flock is gone
        pass
    assert not journal.exists()
    assert head(agent.path) == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert "- original" in (agent.path / "skills/kept/SKILL.md").read_text()
    assert not (agent.path / "skills/brand-new").exists()
    assert (agent.path / "person.txt").read_text() == "person's newer edit\n"
    assert git_out(agent.path, "status", "--porcelain") == "M person.txt"


def test_a_kill_mid_write_leaves_no_temp_file_and_no_empty_folder(agent):
    before = _prepare(agent)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "mid-write"])
    assert proc.returncode == -signal.SIGKILL
    left = agent.path / "skills" / "brand-new"
    assert [p.name for p in left.iterdir()][0].endswith(".evolve-tmp")  # what the kill left
    with agent.repo.locked(timeout=2):
        pass
    assert head(agent.path) == before
    assert not left.exists()
    assert git_out(agent.path, "status", "--porcelain", "--ignored", "--untracked-files=all") == ""


def test_journal_is_rolled_back_even_after_a_person_committed_something_else(agent):
    before = _prepare(agent)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "before"])
    assert proc.returncode == -signal.SIGKILL
    # the person commits only their own file; the branch moves although evolve's never did
    (agent.path / "own.md").write_text("mine\n")
    git(agent.path, "add", "own.md")
    git(agent.path, "commit", "-qm", "my own file")
    with agent.repo.locked(timeout=2):
        pass
    assert git_out(agent.path, "rev-parse", "HEAD^") == before
    assert (agent.path / "memo.md").read_text() == MEMO_BEFORE
    assert not (agent.path / "skills/brand-new").exists()
    assert not (agent.path / "person.txt").exists()
    # evolve's half-written files must not be left behind to be committed as a person's edit
    assert agent.repo.dirty_paths() == []


def test_journal_left_after_the_branch_moved_keeps_the_commit(agent):
    before = _prepare(agent)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, "demo", "after"])
    assert proc.returncode == -signal.SIGKILL
    assert (agent.path / ".git" / "evolve-journal.json").exists()
    assert git_out(agent.path, "rev-parse", "HEAD^") == before
    with agent.repo.locked(timeout=2):
        pass
    assert not (agent.path / ".git" / "evolve-journal.json").exists()
    assert (agent.path / "memo.md").read_text() == "# evolve wrote this\n"
    assert (agent.path / "skills/brand-new/SKILL.md").exists()
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_corrupt_journal_is_discarded(agent):
    journal = agent.path / ".git" / "evolve-journal.json"
    journal.write_text("{not json")
    with agent.repo.locked():
        pass
    assert not journal.exists()


def test_identity_env_sets_author_and_committer():
    env = Identity("A B", "a@b").env("2024-01-01T00:00:00+00:00")
    assert env["GIT_AUTHOR_NAME"] == env["GIT_COMMITTER_NAME"] == "A B"
    assert env["GIT_AUTHOR_DATE"] == "2024-01-01T00:00:00+00:00"


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


def test_dirty_paths_lists_untracked_and_modified(agent):
    (agent.path / "memo.md").write_text("changed\n")
    write_skill(agent.path, "new-one")
    assert agent.repo.dirty_paths() == ["memo.md", "skills/new-one/SKILL.md"]


def test_dirty_paths_is_one_git_process_and_an_unborn_branch_has_none(agent, tmp_path, monkeypatch):
    # the watcher asks it of every agent at each rescan's sync: one `git status`, nothing else
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    (agent.path / "memo.md").write_text("changed\n")
    assert agent.repo.dirty_paths() == ["memo.md"]
    assert agent.repo.dirty_paths() == ["memo.md"]
    assert trace.read_text().count("trace: built-in: git status") == 2
    assert " rev-parse " not in trace.read_text()
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", "-b", "main", str(unborn))
    (unborn / "memo.md").write_text("- a line\n")
    assert Repo(unborn).dirty_paths() == []


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


def test_paths_that_look_like_pathspec_magic_are_files_when_the_index_is_refreshed(agent):
    # `:!a` and `:(exclude)a` are file names to evolve: after a crash between staging its
    # entries and moving the branch, recover puts the index back and the work tree is clean
    repo = agent.repo
    changes = {":!a": b"one\n", ":(exclude)b": b"two\n"}
    written = write_journal(repo, changes, None, "main")
    for path, content in changes.items():
        worktree.write_file(repo, path, content)
    entries = commit.blob_entries(repo, changes)
    commit.index_file(repo, (agent.path / ".git" / "index").read_bytes(), entries).replace(
        agent.path / ".git" / "index"
    )
    assert written and ":!a" in git_out(agent.path, "ls-files")  # staged, the branch never moved
    with repo.locked():
        repo.recover()
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert ":!a" not in git_out(agent.path, "ls-files")
    assert not (agent.path / ":!a").exists()
    assert repo.tip() == head(agent.path)


def test_a_file_whose_name_starts_with_a_quote_keeps_its_name(agent):
    # git reads an --index-info path that starts with `"` as C-quoted: evolve quotes it
    names = ['"q"', '"notes" and more.md', '"back\\slash"']
    with agent.repo.locked():
        agent.repo.commit_changes({n: f"{n}\n".encode() for n in names}, "edit(demo): quoted", EVOLVE)
    listed = git_out(agent.path, "ls-files", "-z").split("\0")
    assert set(names) <= set(listed), listed
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert all(git_out(agent.path, "show", f"HEAD:{n}") == n for n in names)


def test_a_remotes_url_is_read_once_per_change_of_the_config(agent, tmp_path, monkeypatch):
    # the watcher asks it of every agent at each rescan: git runs again only when .git/config changed
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    config = agent.path / ".git" / "config"
    asked = lambda: trace.read_text().count("built-in: git config --get remote.origin.url")  # noqa: E731
    git(agent.path, "remote", "add", "origin", "https://example.invalid/a.git")
    assert agent.repo.remote_url() == agent.repo.remote_url() == "https://example.invalid/a.git"
    assert asked() == 2  # just written: another write in the same clock tick could look the same
    old = time.time() - 60
    os.utime(config, (old, old))  # settled
    assert agent.repo.remote_url() == Repo(agent.path).remote_url() == "https://example.invalid/a.git"
    assert asked() == 3
    git(agent.path, "remote", "set-url", "origin", "https://example.invalid/b.git")  # same length
    assert agent.repo.remote_url() == "https://example.invalid/b.git"
    git(agent.path, "config", "--unset", "remote.origin.url")
    assert agent.repo.remote_url() is None


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


def test_the_tip_is_what_git_names_whether_the_ref_is_loose_packed_symbolic_or_gone(agent):
    repo = agent.repo
    sha = git_out(agent.path, "rev-parse", "main")
    assert repo.tip() == sha  # its loose file
    git(agent.path, "pack-refs", "--all")
    assert not (agent.path / ".git" / "refs" / "heads" / "main").exists() and repo.tip() == sha  # packed
    git(agent.path, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    assert repo.tip("alias") == sha  # a symbolic ref: git resolves it
    git(agent.path, "branch", "gone")
    git(agent.path, "pack-refs", "--all")
    git(agent.path, "branch", "-D", "gone")
    assert repo.tip("gone") is None and repo.tip("never") is None


def test_the_branch_checked_out_is_read_from_head_as_git_names_it(agent):
    repo = agent.repo
    assert repo.current_branch() == "main"
    git(agent.path, "switch", "-q", "-c", "person/idea")
    assert repo.current_branch() == "person/idea" == git_out(agent.path, "branch", "--show-current")
    git(agent.path, "switch", "-q", "--detach", "main")
    assert repo.current_branch() is None and repo.checked_out_elsewhere() == "a detached HEAD"
