"""The watcher's human edits: a person's save, in any editor's style, is one commit of theirs.

Editor temp files never count; evolve's own writes are never a person's; edits wait while
evolve holds the agent's lock; an unchanged save costs one `git status`; a secret in a
person's edit is named (never shown) when the watcher commits it.
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import pytest

from evolve.watch.humanedits import counts_as_edit, is_editor_temp, repo_path
from tests import watch_helpers
from tests.helpers import evolve_commit, git_out
from tests.watch_helpers import commits, events_of, pump, settle

transcripts, demo, watcher = watch_helpers.transcripts, watch_helpers.demo, watch_helpers.watcher  # fixtures


@pytest.mark.parametrize(
    "name",
    [
        "memo.md~",
        ".memo.md.swp",
        ".memo.md.swx",
        "4913",
        "5036",
        "memo.md___jb_tmp___",
        "memo.md___jb_old___",
        ".#memo.md",
        "#memo.md#",
        ".goutputstream-AB12CD",
        ".memo.md.x1.evolve-tmp",
    ],
)
def test_editor_temp_names(name):
    assert is_editor_temp(name) and not counts_as_edit(f"skills/x/{name}")


def test_real_names_count_and_git_never_does():
    for rel in ("memo.md", "agent.toml", "skills/fix-tests/SKILL.md", "notes-2.md"):
        assert counts_as_edit(rel) and not is_editor_temp(rel.rsplit("/", 1)[-1])
    assert repo_path("/h/agents", "/h/agents/demo/memo.md") == ("demo", "memo.md")
    assert repo_path("/h/agents", "/h/agents/demo/.git/index") is None
    assert repo_path("/h/agents", "/h/agents/.new-demo-x/demo/memo.md") is None
    assert repo_path("/h/agents", "/h/other/demo/memo.md") is None


# -- human edits -----------------------------------------------------------------------
FINAL = (
    "# Memo\n\n## What I do well and where I often stumble\n\n- edited by a person\n\n"
    "## Strategies for this user and domain\n\n- keep answers short\n"
)


def save_in_place(path: Path, text: str) -> None:
    with path.open("w") as handle:  # truncated first: an empty file for a moment
        handle.flush()
        time.sleep(0.03)
        for part in (text[:10], text[10:]):
            handle.write(part)
            handle.flush()
            time.sleep(0.03)


def save_temp_rename(path: Path, text: str) -> None:
    temp = path.with_name(".goutputstream-X1Y2Z3")
    temp.write_text(text)
    time.sleep(0.03)
    temp.replace(path)


def save_vim(path: Path, text: str) -> None:
    probe = path.with_name("4913")
    probe.write_text("")
    probe.unlink()
    backup = path.with_name(path.name + "~")
    path.replace(backup)
    with path.open("w") as handle:
        handle.write(text[:5])
        handle.flush()
        time.sleep(0.03)
        handle.write(text[5:])
    backup.unlink()


def save_jetbrains(path: Path, text: str) -> None:
    temp = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    temp.write_text(text)
    path.replace(old)
    time.sleep(0.03)
    temp.replace(path)
    old.unlink()


@pytest.mark.parametrize("save", [save_in_place, save_temp_rename, save_vim, save_jetbrains])
def test_each_editor_save_style_gives_one_human_edit_commit(watcher, demo, save):
    before = commits(demo)
    settle(watcher, 2 * watcher.settings.timings.quiet_s)  # the start-up check of pending edits found nothing
    assert commits(demo) == before
    save(demo.memo_path, FINAL)
    pump(watcher, lambda: commits(demo) == before + 1)
    settle(watcher, 0.5 + 2 * watcher.settings.timings.quiet_s)  # watchdog holds a rename for up to 0.5 s
    assert commits(demo) == before + 1
    assert git_out(demo.path, "show", "HEAD:memo.md") + "\n" == FINAL
    assert git_out(demo.path, "status", "--porcelain") == ""
    assert "Evolve-Kind: human_edit" in git_out(demo.path, "log", "-1", "--format=%B")
    (event,) = events_of("demo")
    assert event["paths"] == ["memo.md"] and event["commit"] == git_out(demo.path, "rev-parse", "HEAD")


def test_a_new_skill_written_by_a_person_is_committed(watcher, demo):
    before = commits(demo)
    skill = demo.skills_dir / "run-tests" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: run-tests\ndescription: Use when running tests.\n---\n\n- run make test\n")
    pump(watcher, lambda: commits(demo) == before + 1)
    (event,) = events_of("demo")
    assert event["paths"] == ["skills/run-tests/SKILL.md"]


def test_evolves_own_writes_are_never_human_edits(watcher, demo):
    before = commits(demo)
    evolve_commit(
        demo,
        {
            "memo.md": FINAL.encode(),
            "skills/a/SKILL.md": b"---\nname: a\ndescription: Use when a.\n---\n\n- a\n",
        },
    )
    settle(watcher, 3 * watcher.settings.timings.quiet_s)
    assert commits(demo) == before + 1
    assert "Evolve-Kind: reflection" in git_out(demo.path, "log", "-1", "--format=%B")
    assert events_of("demo") == []


def test_edits_wait_while_evolve_holds_the_agent_lock(watcher, demo):
    before = commits(demo)
    with demo.repo.locked():
        demo.memo_path.write_text(FINAL)
        settle(watcher, 3 * watcher.settings.timings.quiet_s)
        assert commits(demo) == before
    pump(watcher, lambda: commits(demo) == before + 1)
    assert len(events_of("demo")) == 1


def test_an_edit_check_that_finds_the_files_unchanged_asks_git_once(watcher, demo, tmp_path, monkeypatch):
    # the watcher checks every agent when it starts and whenever its files were touched: when
    # they equal the branch (a save of the same text), one `git status` and nothing is committed
    before = commits(demo)
    settle(watcher, 3 * watcher.settings.timings.quiet_s)  # the start-up check, done
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    demo.memo_path.write_text(demo.memo_path.read_text())
    settle(watcher, 4 * watcher.settings.timings.quiet_s)
    commands = re.findall(r"trace: built-in: git (\S+)", trace.read_text())
    assert commands == ["status"], commands
    assert commits(demo) == before and events_of("demo") == []


def test_a_secret_in_a_persons_edit_is_named_when_the_watcher_commits_it(watcher, demo, caplog):
    """Red team B6: what the pre-commit hook warns about, the watcher's human-edit commit says too."""
    token = "ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789"
    before = commits(demo)
    text = demo.memo_path.read_text() + f"- release token is {token}\n"
    with caplog.at_level(logging.WARNING, logger="evolve.watch"):
        demo.memo_path.write_text(text)
        pump(watcher, lambda: commits(demo) == before + 1)
    number = text.splitlines().index(f"- release token is {token}") + 1
    assert f"demo: memo.md line {number} holds what looks like a secret (github-token)" in caplog.text
    assert "--push-anyway demo" in caplog.text and token not in caplog.text
    assert git_out(demo.path, "show", "HEAD:memo.md") + "\n" == text  # committed as the person wrote it
