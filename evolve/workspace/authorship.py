"""Who wrote each line: a person, or evolve — by `git blame` and the commit's trailers.

A line is a person's when the commit that last wrote it was not evolve's own: no
`Evolve-Kind` trailer (a person's `git commit`, `git revert`, a merge), or evolve
committing a person's uncommitted edits (`Evolve-Source: human`). Protection is per line:
a person's typo fix does not make the rest of a skill the model wrote theirs. The caller
commits uncommitted edits first (as the person's), so every line has an author.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from evolve.store.history import Commit
from evolve.store.repo import Repo


def made_by_evolve(commit: Commit | None) -> bool:
    """Whether evolve decided this commit's content (a reflection, init, restore, pin…)."""
    if commit is None:
        return False  # unknown (e.g. outside the history read): a person's, to be safe
    kind = commit.trailers.get("Evolve-Kind")
    return bool(kind) and commit.trailers.get("Evolve-Source") != "human"


def line_authors(repo: Repo, path: str, commits: Mapping[str, Commit]) -> list[bool] | None:
    """For each line of `path` at the branch tip: True when a person wrote it (None: no file)."""
    tip = repo.tip()
    if tip is None:
        return None
    out = repo.git("blame", "--line-porcelain", tip, "--", path, check=False)
    if not out:
        return None
    authors: list[bool] = []
    expect_sha = True
    for line in out.decode("utf-8", "surrogateescape").split("\n"):
        if expect_sha and line:
            authors.append(not made_by_evolve(commits.get(line.split(" ", 1)[0])))
            expect_sha = False
        elif line.startswith("\t"):
            expect_sha = True  # the content line ends one line's block
    return authors


def person_lines(repo: Repo, paths: Iterable[str], commits: Mapping[str, Commit]) -> dict[str, list[bool]]:
    """`line_authors` of every path that exists at the tip."""
    found = {}
    for path in paths:
        authors = line_authors(repo, path, commits)
        if authors is not None:
            found[path] = authors
    return found


def holds_person_lines(authors: list[bool] | None) -> bool:
    return bool(authors) and any(authors or ())
