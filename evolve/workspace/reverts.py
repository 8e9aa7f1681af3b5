"""An exact undo of a commit, and where each line it brought back stood before that commit.

`git revert <sha>` (or `evolve revert`) of a reflection that replaced evolve's line B with a
lesson A brings B back under the reverting person's name; `git blame` then calls B theirs,
although they only undid A. An undo that is exactly the inverse of the commit it names
(the same hunks, reversed; any edit of the person's, a resolved conflict included, makes
it theirs) lets blame look through it: a line it brought back in place of the commit's own
lines is traced to the line it was before that commit. A line the commit had only deleted
(no line of its own in that place; a retired skill's whole file) stays the undo's: bringing
back what was deleted is the person's choice, and it must stick.

Diffs are read with -U0 and no person's settings; the answer for a pair of commits never
changes, so it is kept for the life of the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evolve.store.git import PLAIN_CONFIG, GitError

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Repo

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_BINARY = ("Binary files ", "GIT binary patch")


@dataclass(frozen=True)
class Hunk:
    """One -U0 hunk: where its new side starts, how many lines it has there, whether it removed any."""

    start: int
    count: int
    removes: bool


@dataclass(frozen=True)
class Undo:
    """An exact undo's hunks by path (its own, and the commit's reversed: the same order)."""

    mine: dict[str, list[Hunk]]
    before: dict[str, list[Hunk]]  # the reverted commit's change, read from it to its parent


_UNDOS: dict[tuple[str, str], Undo | None] = {}  # (undo, undone) → its hunks, None: not exact


def restored_from(repo: Repo, undo: str, undone: str, parent: str, path: str, line: int) -> int | None:
    """Line `line` (1-based) of `path` at `undo`, traced to its line at `parent` (`undone`'s parent).

    None when `undo` is not exactly `undone`'s inverse, the line is not one it brought back,
    or `undone` had only deleted it there.
    """
    key = (undo, undone)
    if key not in _UNDOS:
        if len(_UNDOS) > 4096:
            _UNDOS.clear()
        _UNDOS[key] = _exact(repo, undo, undone, parent)
    found = _UNDOS[key]
    if found is None:
        return None
    for mine, before in zip(found.mine.get(path, []), found.before.get(path, []), strict=False):
        if mine.start <= line < mine.start + mine.count:
            return before.start + (line - mine.start) if mine.removes else None
    return None


def _exact(repo: Repo, undo: str, undone: str, parent: str) -> Undo | None:
    """The hunks of `undo` and of `undone` reversed, when they are the same change; else None."""
    try:
        mine = _diff(repo, f"{undo}^", undo)
        before = _diff(repo, undone, parent)  # read backwards: `undone` undone
    except GitError:
        return None
    if mine is None or before is None or mine[0] != before[0]:
        return None
    return Undo(mine[1], before[1])


def _diff(repo: Repo, old: str, new: str) -> tuple[list[str], dict[str, list[Hunk]]] | None:
    """(the change with positions and blob ids left out, each path's hunks); None when binary."""
    raw = repo.git(
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        old,
        new,
        "--",
        env=PLAIN_CONFIG,
    ).decode("utf-8", "surrogateescape")
    shape: list[str] = []
    hunks: dict[str, list[Hunk]] = {}
    path, header = "", False
    for line in raw.split("\n"):
        if line.startswith("diff --git "):
            path, header = "", True  # until the first hunk: `--- a/x` is a header, not a line
        elif header and line.startswith(_BINARY):
            return None
        elif header and line.startswith(("--- a/", "+++ b/")):
            path = line[6:]  # a quoted name stays "": its lines are never traced (the undo's)
        elif header and line.startswith("index "):
            continue  # blob ids differ wherever the file changed elsewhere
        match = _HUNK.match(line)
        if match:
            header = False
            hunks.setdefault(path, []).append(Hunk(int(match.group(1)), int(match.group(2) or "1"), False))
            shape.append("@@")
            continue
        if not header and line.startswith("-") and hunks.get(path):
            last = hunks[path][-1]
            hunks[path][-1] = Hunk(last.start, last.count, True)
        shape.append(line)
    return shape, hunks


__all__ = ["restored_from"]
