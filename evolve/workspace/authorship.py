"""Who wrote each line: a person, or evolve — by `git blame` and the commit's trailers.

A line is a person's when the commit that last wrote it was not evolve's own choice: no
`Evolve-Kind` trailer (a person's `git commit`, `git revert`, a merge), evolve committing
a person's uncommitted edits (`Evolve-Source: human`), a commit evolve made because a
person asked for exactly that content (`evolve revert`, `evolve restore`), or one of
evolve's commits a person rewrote (`git commit --amend` or a rebase makes them its
committer). Protection is per line: a person's typo fix does not make the rest of a skill
the model wrote theirs. The caller commits uncommitted edits first (as the person's), so
every line has an author. When blame cannot answer, every line is the person's: protection
fails closed, never open.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from evolve.store.git import PLAIN_CONFIG, GitError
from evolve.store.history import Commit
from evolve.store.repo import Repo

ON_REQUEST = frozenset({"revert", "restore"})  # evolve wrote what a person asked for, verbatim


def made_by_evolve(commit: Commit | None) -> bool:
    """Whether evolve decided this commit's content (a reflection, init, pin, an accept…)."""
    if commit is None:
        return False  # unknown (e.g. outside the history read): a person's, to be safe
    kind = commit.trailers.get("Evolve-Kind")
    if not kind or kind in ON_REQUEST or commit.trailers.get("Evolve-Source") == "human":
        return False
    rewritten = commit.committer_email and commit.committer_email != commit.email
    return not rewritten  # evolve is author and committer of what it wrote


def line_authors(
    repo: Repo, path: str, commits: Mapping[str, Commit], rev: str | None = None
) -> list[bool] | None:
    """For each line of `path` at `rev` (the branch tip; by LF): True when a person wrote it.

    None when the file is not there. A person's global or system git settings do not
    change the answer (blame.ignoreRevsFile would otherwise make blame fail or credit
    their lines to earlier commits).
    """
    blamed = _blame(repo, path, rev)
    if blamed is None:
        return None
    shas, count = blamed
    if shas is None:
        return [True] * count  # fail closed: nobody may touch what blame cannot tell
    return [not made_by_evolve(commits.get(sha)) for sha in shas]


def line_commits(repo: Repo, path: str, rev: str | None = None) -> list[str] | None:
    """The commit that last wrote each line of `path` at `rev` (by LF); None when unknown."""
    blamed = _blame(repo, path, rev)
    return blamed[0] if blamed is not None else None


def _blame(repo: Repo, path: str, rev: str | None) -> tuple[list[str] | None, int] | None:
    """(each line's commit, or None when blame cannot tell; the file's lines), None: no such file."""
    tip = rev or repo.tip()
    if tip is None:
        return None
    try:
        blob = repo.git("cat-file", "blob", f"{tip}:{path}")
    except GitError:
        return None  # not at the tip
    count = _line_count(blob)
    try:
        out = repo.git("blame", "--line-porcelain", tip, "--", path, env=PLAIN_CONFIG)
    except GitError:
        return None, count
    shas: list[str] = []
    expect_sha = True
    for line in out.decode("utf-8", "surrogateescape").split("\n"):
        if expect_sha and line:
            shas.append(line.split(" ", 1)[0])
            expect_sha = False
        elif line.startswith("\t"):
            expect_sha = True  # the content line ends one line's block
    return (shas if len(shas) == count else None), count


def _line_count(blob: bytes) -> int:
    """Lines as git counts them: by LF, a last line without one included."""
    return blob.count(b"\n") + (1 if blob and not blob.endswith(b"\n") else 0)


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
