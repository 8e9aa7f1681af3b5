"""Who wrote each line: a person, or evolve — by `git blame`, the commit's identities and trailers.

A line is evolve's when the commit that last wrote it was evolve's own choice: an
`Evolve-Kind` trailer that is not a person's request (`evolve revert`, `evolve restore`) nor
a person's edit evolve committed for them (`Evolve-Source: human`), AND evolve's own identity
as both its author and its committer (`evolve_emails`: by e-mail). Everything else is a
person's: their `git commit`, `git revert`, a merge, and any of evolve's commits they
re-committed — `git commit --amend` (with `--reset-author` too), `commit -C <sha>`, a
rebase — or a message carrying evolve's trailers under their name. Protection is per
line: a person's typo fix does not make the rest of a skill the model wrote theirs. The
caller commits uncommitted edits first (as the person's), so every line has an author.
When blame cannot answer, every line is the person's: protection fails closed, never open.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from evolve.config import GitConfig
from evolve.store.git import PLAIN_CONFIG, GitError
from evolve.store.history import Commit
from evolve.store.repo import Repo

ON_REQUEST = frozenset({"revert", "restore"})  # evolve wrote what a person asked for, verbatim
DEFAULT_EMAIL = GitConfig.author_email  # evolve's own e-mail when `[git]` does not name another


def evolve_emails(configured: str, noted: Iterable[str] = ()) -> frozenset[str]:
    """The e-mails evolve's own commits carry: as configured now, its default, and `noted`.

    `noted`: those this machine wrote evolve's notes with (every reflection's): a changed
    `[git] author_email` leaves evolve's older lines evolve's, not a person's.
    """
    return frozenset({configured, DEFAULT_EMAIL, *noted})


def made_by_evolve(commit: Commit | None, evolve: Collection[str]) -> bool:
    """Whether evolve decided this commit's content (a reflection, init, pin, an accept…).

    `evolve`: evolve's e-mails (`evolve_emails`); both the author and the committer must be
    one of them.
    """
    if commit is None:
        return False  # unknown (e.g. outside the history read): a person's, to be safe
    kind = commit.trailers.get("Evolve-Kind")
    if not kind or kind in ON_REQUEST or commit.trailers.get("Evolve-Source") == "human":
        return False
    return commit.email in evolve and commit.committer_email in evolve


def line_authors(
    repo: Repo, path: str, commits: Mapping[str, Commit], evolve: Collection[str], rev: str | None = None
) -> list[bool] | None:
    """For each line of `path` at `rev` (the branch tip; by LF): True when a person wrote it.

    None when the file is not there. A person's global or system git settings do not
    change the answer (blame.ignoreRevsFile would otherwise make blame fail or credit
    their lines to earlier commits).
    """
    tip = rev or repo.tip()
    if tip is None:
        return None
    try:
        blob = repo.git("cat-file", "blob", f"{tip}:{path}")
    except GitError:
        return None  # not at the tip
    try:
        out = repo.git("blame", "--line-porcelain", tip, "--", path, env=PLAIN_CONFIG)
    except GitError:
        return [True] * _line_count(blob)  # fail closed: nobody may touch what blame cannot tell
    authors: list[bool] = []
    expect_sha = True
    for line in out.decode("utf-8", "surrogateescape").split("\n"):
        if expect_sha and line:
            authors.append(not made_by_evolve(commits.get(line.split(" ", 1)[0]), evolve))
            expect_sha = False
        elif line.startswith("\t"):
            expect_sha = True  # the content line ends one line's block
    if len(authors) != _line_count(blob):
        return [True] * _line_count(blob)
    return authors


def _line_count(blob: bytes) -> int:
    """Lines as git counts them: by LF, a last line without one included."""
    return blob.count(b"\n") + (1 if blob and not blob.endswith(b"\n") else 0)
