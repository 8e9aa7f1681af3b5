"""A merge's conflict markers of the person's own `conflict-marker-size`, below git's 7 too.

With `conflict-marker-size=4` (in .gitattributes or .git/info/attributes), git writes
`<<<< HEAD` / `====` / `>>>> side`: every check started at seven characters, so the hook
let the merge through, and the agent read both sides of it. Shorter markers count only
where the file's own attribute says so: `>>>` quotes and `===` underlines are text.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from evolve.errors import EXIT_BUSY, Busy
from evolve.store import git as git_mod
from evolve.workspace import conflicts, lessons
from evolve.workspace.memo import MARKER_SIZE
from tests import people
from tests.helpers import bundle_of, git_out
from tests.people import memo, person

agent, ans = people.agent, people.ans  # the people fixtures

SHORT_LINES = "\n<<<< what I typed\n====\n>>>> what the tool printed\n"


def set_size(agent, size: int | None, where: str = ".gitattributes", path: str = "memo.md") -> None:
    """The person's attribute, in a committed .gitattributes or in the repository's own info/attributes."""
    if size is None:
        return
    target = agent.path / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"{path} conflict-marker-size={size}\n")
    if where == ".gitattributes":
        assert person(agent, "add", ".gitattributes").returncode == 0
        assert person(agent, "commit", "-qm", "attributes").returncode == 0


def merge_conflict(agent, path: str = "memo.md") -> str:
    """A person's `git merge` stopped on a conflict in `path`; its text, markers and all."""
    target = agent.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    start = agent.memo_text() if path == "memo.md" else "# Deploy\n"
    target.write_text(start + "\n- deploy with make deploy\n")
    assert person(agent, "add", path).returncode == 0
    assert person(agent, "commit", "-qm", "base").returncode == 0
    for branch, change in (("side", "ENV=staging"), ("main", "ENV=prod")):
        if branch == "side":
            person(agent, "switch", "-qc", "side")
        else:
            person(agent, "switch", "-q", "main")
        target.write_text(target.read_text().replace("make deploy\n", f"make deploy {change}\n"))
        assert person(agent, "commit", "-qam", branch).returncode == 0
    assert person(agent, "merge", "side").returncode != 0  # a conflict
    return target.read_text()


@pytest.mark.parametrize(
    ("size", "where"),
    [
        (4, ".gitattributes"),
        (4, ".git/info/attributes"),
        (2, ".gitattributes"),
        (None, ""),
        (12, ".gitattributes"),
    ],
)
@pytest.mark.parametrize("path", ["memo.md", "notes/deploy.md"])
def test_the_hook_refuses_a_merge_whose_markers_are_the_files_own_size(agent, size, where, path):
    set_size(agent, size, where, path)
    text = merge_conflict(agent, path)
    assert f"\n{'<' * (size or MARKER_SIZE)} HEAD\n" in text and f"\n{'=' * (size or MARKER_SIZE)}\n" in text
    proc = person(agent, "commit", "-qam", "merged")
    assert proc.returncode != 0 and f"{path}: " in proc.stderr and "conflict markers" in proc.stderr, (
        proc.stderr
    )
    assert proc.stderr.count("conflict markers") == 1


def test_short_marker_lines_are_text_unless_the_files_attribute_makes_them_markers(agent):
    notes = agent.path / "notes.md"
    notes.write_text("# Session log" + SHORT_LINES)
    (agent.path / ".gitattributes").write_text("other.md conflict-marker-size=4\n")  # another file's size
    assert person(agent, "add", "-A").returncode == 0
    assert person(agent, "commit", "-qm", "a log").returncode == 0, "ordinary text was refused"
    (agent.path / ".gitattributes").write_text("notes.md conflict-marker-size=4\n")
    notes.write_text(notes.read_text() + "\nmore\n")
    proc = person(agent, "commit", "-qam", "now they are markers")
    assert proc.returncode != 0 and "notes.md: holds merge conflict markers" in proc.stderr, proc.stderr


def test_short_markers_committed_past_the_hook_hold_reflection_status_and_every_reader(agent, ans, capsys):
    set_size(agent, 4)
    ans(memo("strategies", "- keep the lesson"))
    merge_conflict(agent)
    assert person(agent, "commit", "-qam", "merged, sort of", "--no-verify").returncode == 0
    ans.api.reply_tool({"summary": "more", "operations": [memo("self", "- x")]})
    assert main(["reflect", "a"]) == EXIT_BUSY
    assert "memo.md holds merge conflict markers" in capsys.readouterr().err
    assert main(["status", "--json"]) == 0
    [held] = [a["held"] for a in json.loads(capsys.readouterr().out)["agents"]]
    assert held["what"] == "conflict markers in memo.md"
    main(["doctor"])
    assert "memo.md holds merge conflict markers" in capsys.readouterr().out
    assert main(["prompt", "a"]) == 0
    said = capsys.readouterr().out
    assert "holds unresolved merge conflict markers" in said and "ENV=prod" not in said
    assert not [lesson for lesson in lessons.current(agent) if lesson.kind == lessons.MEMO]
    assert bundle_of(agent).memo == ""


def test_without_the_attribute_the_same_lines_are_lessons_read_everywhere(agent, capsys):
    text = agent.memo_text().replace(
        "## Strategies for this user and domain\n", "## Strategies for this user and domain\n" + SHORT_LINES
    )
    (agent.path / "memo.md").write_text(text)
    assert person(agent, "commit", "-qam", "quoted a session").returncode == 0
    assert main(["prompt", "a"]) == 0
    assert "what the tool printed" in capsys.readouterr().out
    assert "what the tool printed" in bundle_of(agent).memo
    assert not [p for p in agent.memo_problems() if "conflict" in p]


def test_a_conflict_of_short_markers_staged_by_hand_is_never_committed_by_a_sync(agent):
    # `git stash pop` conflicted, and `git add` alone marked it resolved: sync and the watcher
    # commit a person's edits first (commit_human_edits), and must stop there
    set_size(agent, 4, ".git/info/attributes")
    merge_conflict(agent)
    person(agent, "merge", "--abort")
    (agent.path / "memo.md").write_text(
        agent.memo_text() + "<<<< Updated upstream\nours\n====\ntheirs\n>>>> Stashed\n"
    )
    before = git_out(agent.path, "rev-parse", "HEAD")
    with pytest.raises(Busy, match="memo.md holds merge conflict markers"):
        agent.commit_human_edits()
    assert git_out(agent.path, "rev-parse", "HEAD") == before


@pytest.mark.parametrize(
    ("value", "size"),
    [("4", 4), ("12", 12), ("set", 7), ("unset", 7), ("0", 7), ("-3", 7), ("5x", 5), ("", 7)],
)
def test_the_size_is_read_as_gits_merge_reads_it(agent, value, size):
    line = f"memo.md conflict-marker-size={value}" if value not in ("set", "unset", "") else ""
    line = {"set": "memo.md conflict-marker-size", "unset": "memo.md -conflict-marker-size"}.get(value, line)
    (agent.path / ".gitattributes").write_text(line + "\n")
    assert conflicts.marker_sizes(agent.path, ["memo.md", "skills/x/SKILL.md"]) == {
        "memo.md": size,
        "skills/x/SKILL.md": MARKER_SIZE,
    }


def test_git_is_asked_only_of_a_text_that_could_hold_a_short_conflict(agent, monkeypatch):
    def no_git(*args, **kwargs):
        raise AssertionError("git was asked")

    monkeypatch.setattr(git_mod, "git", no_git)
    ordinary = "> a quote\n\nTitle\n=====\n\n```\n<<<< x\n```\n"  # no `<` line outside a fence
    real = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> side\n"
    assert conflicts.conflicted(agent.path, {"memo.md": ordinary, "b.md": real}) == {"b.md"}
    monkeypatch.undo()
    (agent.path / ".gitattributes").write_text("*.md conflict-marker-size=4\n")
    assert conflicts.conflicted(agent.path, {"memo.md": SHORT_LINES}) == {"memo.md"}
