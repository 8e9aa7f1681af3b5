"""A packed-refs file git reads otherwise than evolve's fast read: evolve answers as git does.

evolve reads `main` from `.git/packed-refs` without a git process. git looks a ref up by
binary search in a file its header calls sorted, so a line out of place is one git never
finds, and of a ref listed twice it finds the one its search lands on; a line git does not
parse (two spaces, a CR) names no ref for it. The fast read found `main` in each, and
`evolve status --json` crashed (exit 3) where git said there was no such branch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.store import head
from tests.helpers import git, git_out, make_agent, run_cli

OTHERS = ("a", "b", "c", "d", "z")  # branches around main, so that its place in the file matters


def packed_agent(others: tuple[str, ...] = OTHERS) -> tuple[Path, str, str]:
    """An agent whose refs are all packed: (its packed-refs, main's commit, the others' commit)."""
    agent = make_agent("demo")
    first = git_out(agent.path, "rev-parse", "main")
    git(agent.path, "commit", "-q", "--allow-empty", "-m", "the second commit")
    for branch in others:
        git(agent.path, "branch", "-f", branch, first)
    git(agent.path, "pack-refs", "--all")
    assert not (agent.path / ".git" / "refs" / "heads" / "main").exists()
    return agent.path / ".git" / "packed-refs", git_out(agent.path, "rev-parse", "main"), first


def edited(packed: Path, how: str, other: str) -> None:
    """packed-refs rewritten as `how` says, every other byte as git wrote it."""
    header, *lines = packed.read_bytes().split(b"\n")[:-1]
    main = next(line for line in lines if line.endswith(b" refs/heads/main"))
    at = lines.index(main)
    if how == "main out of place":  # first: git's binary search, trusting "sorted", never looks there
        lines = [main, *(line for line in lines if line != main)]
    elif how == "main twice, another id after it":
        lines.insert(at + 1, other.encode() + b" refs/heads/main")
    elif how == "main twice, another id before it":
        lines.insert(at, other.encode() + b" refs/heads/main")
    elif how == "two spaces":
        lines[at] = main.replace(b" ", b"  ", 1)
    elif how == "a CR":
        lines[at] = main + b"\r"
    packed.write_bytes(b"\n".join([header, *lines]) + b"\n")


def git_tip(repo: Path) -> str | None:
    out = git(repo, "rev-parse", "-q", "--verify", "refs/heads/main^{commit}", check=False)
    return out.stdout.strip() or None


CASES = [
    "main out of place",
    "main twice, another id after it",
    "main twice, another id before it",
    "two spaces",
    "a CR",
]


@pytest.mark.parametrize("how", CASES)
def test_the_fast_read_of_main_agrees_with_git_or_is_unsure(evolve_home, how):
    packed, _main, first = packed_agent()
    edited(packed, how, first)
    found = head.branch_tip(str(packed.parent))
    assert found is None or found == git_tip(packed.parent.parent), (found, git_tip(packed.parent.parent))


@pytest.mark.parametrize("how", CASES)
def test_commands_answer_as_git_reads_packed_refs_never_crash(evolve_home, how):
    packed, _main, first = packed_agent()
    edited(packed, how, first)
    agent = packed.parent.parent
    tip = git_tip(agent)
    status = run_cli("status", "--json")
    assert status.returncode in (0, 1), status.stderr
    log = run_cli("log", "demo")
    if tip is None:  # git finds no main: the damage and its repair, one line, exit 1
        [row] = json.loads(status.stdout)["agents"]
        assert "packed-refs" in (row["repository_problem"] or ""), row
        assert log.returncode == 1, (log.stdout, log.stderr)
        last = log.stderr.splitlines()[-1]
        assert last.startswith(f"evolve: error: {agent}: git fails in this repository (")
        assert "packed-refs" in last
    else:  # git finds one: evolve reads the history git does
        assert log.returncode == 0, log.stderr
        assert ("the second commit" in log.stdout) == (tip != first), log.stdout
    assert "crash.log" not in status.stderr + log.stderr
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_a_sound_packed_refs_is_read_without_git(evolve_home):
    packed, main, _first = packed_agent()
    assert head.branch_tip(str(packed.parent)) == main
    assert not head.packed_refs_damaged(str(packed.parent))


def test_status_never_crashes_on_a_packed_refs_a_byte_shorter(evolve_home):
    # every one-byte deletion: git's answer or the damage named, never evolve's crash (exit 3)
    packed, _main, _first = packed_agent(others=("a",))  # a branch before main: its order counts
    text = packed.read_bytes()
    for at in range(len(text)):
        packed.write_bytes(text[:at] + text[at + 1 :])
        found = head.branch_tip(str(packed.parent))
        tip = git_tip(packed.parent.parent)
        assert found is None or found == tip, (at, found, tip)
        if at % 8 == 0:  # the command itself, on a sample
            out = run_cli("status", "--json")
            assert out.returncode in (0, 1), (at, out.stderr)
    assert not (evolve_home / "logs" / "crash.log").exists()
