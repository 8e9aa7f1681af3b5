"""Who wrote each line: a person, or evolve — by `git blame`, the commit's identities and trailers.

A line is evolve's when the commit that last wrote it was evolve's own choice: an
`Evolve-Kind` trailer that is not a person's request (`evolve revert`, `evolve restore`) nor
a person's edit evolve committed for them (`Evolve-Source: human`), AND evolve's own identity
as both its author and its committer (`evolve_emails`: by e-mail). Everything else is a
person's: their `git commit`, `git revert`, a merge, and any of evolve's commits they
re-committed — `git commit --amend` (with `--reset-author` too), `commit -C <sha>`, a
rebase — or a message carrying evolve's trailers under their name. An exact undo of one of
evolve's commits is looked through (`reverts`): what it brought back in place of the
commit's lines is whoever's it was before. Protection is per line: a person's typo fix
does not make the rest of a skill the model wrote theirs. The caller commits uncommitted
edits first (as the person's), so every line has an author. When blame cannot answer,
every line is the person's: protection fails closed, never open.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from evolve.config import GitConfig
from evolve.store.fixed import asked_once
from evolve.store.git import PLAIN_CONFIG, GitError
from evolve.store.history import Commit
from evolve.store.repo import Repo
from evolve.workspace import reverts

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

    None when the file is not there. A line an exact undo of one of evolve's commits brought
    back in place of that commit's lines (`reverts.restored_from`) is whoever's it was
    before: the person undid a lesson, they did not write the older text. A person's global
    or system git settings do not change the answer (blame.ignoreRevsFile would otherwise
    make blame fail or credit their lines to earlier commits).
    """
    tip = rev or repo.tip()
    if tip is None:
        return None
    return _Blame(repo, commits, evolve).authors(tip, path)


class _Blame:
    """Blame's answers for one question, traced through exact undos, each commit judged once."""

    def __init__(self, repo: Repo, commits: Mapping[str, Commit], evolve: Collection[str]) -> None:
        self.repo, self.commits, self.evolve = repo, commits, evolve
        self.read: dict[tuple[str, str], list[bool] | None] = {}  # (rev, path) → its authors
        self.undone: dict[str, Commit | bool] = {}  # sha → a person's (True), evolve's, or what it undoes

    def authors(self, rev: str, path: str) -> list[bool] | None:
        if (rev, path) in self.read:
            return self.read[(rev, path)]
        try:
            blob = _file_at(self.repo, rev, path)
        except GitError:
            self.read[(rev, path)] = None
            return None  # not at that commit
        try:
            out = _blame(self.repo, rev, path)
        except GitError:
            return [True] * _line_count(blob)  # fail closed: nobody may touch what blame cannot tell
        found: list[bool] = []
        sha, line, name = "", 0, path
        for text in out.decode("utf-8", "surrogateescape").split("\n"):
            if not sha and text:
                sha, line = text.split(" ", 1)[0], int(text.split(" ")[1])
            elif text.startswith("filename "):
                name = text[len("filename ") :]
            elif text.startswith("\t"):  # the content line ends one line's block
                found.append(self._persons(sha, name, line))
                sha, name = "", path
        if len(found) != _line_count(blob):
            found = [True] * _line_count(blob)
        self.read[(rev, path)] = found
        return found

    def _persons(self, sha: str, path: str, line: int) -> bool:
        """Whether line `line` of `path` as commit `sha` wrote it is a person's (traced through an undo)."""
        if sha not in self.undone:
            self.undone[sha] = self._judged(self.commits.get(sha))
        verdict = self.undone[sha]
        if isinstance(verdict, bool):
            return verdict
        parent = verdict.parents[0]
        before = reverts.restored_from(self.repo, sha, verdict.sha, parent, path, line)
        if before is None:
            return True  # edited, or a line the undone commit had only deleted: the undo's, the person's
        authors = self.authors(parent, path)
        return authors is None or before > len(authors) or authors[before - 1]

    def _judged(self, commit: Commit | None) -> Commit | bool:
        """False: evolve's; the evolve commit it may be an exact undo of; else True (a person's)."""
        if made_by_evolve(commit, self.evolve):
            return False
        undone = self.commits.get(commit.reverts or "") if commit is not None else None
        if (
            commit is None
            or undone is None
            or len(commit.parents) != 1
            or len(undone.parents) != 1
            or commit.trailers.get("Evolve-Kind") not in (None, "revert")
            or not made_by_evolve(undone, self.evolve)
        ):
            return True
        return undone


def text_authors(
    repo: Repo, path: str, commits: Mapping[str, Commit], evolve: Collection[str], text: str
) -> list[bool]:
    """For each line of `text`, the file as it is now: True when a person wrote it.

    Blame's answer when the branch tip holds exactly this text; when it does not (a person's
    edit not committed yet) or blame cannot tell, every line is the person's (fail closed).
    """
    data = text.encode("utf-8", "surrogateescape")
    tip = repo.tip()
    try:
        committed = _file_at(repo, tip, path) if tip else None
    except GitError:
        committed = None
    authors = line_authors(repo, path, commits, evolve, tip) if committed == data else None
    return authors if authors is not None else [True] * _line_count(data)


def line_commits(repo: Repo, path: str, rev: str | None = None) -> list[str] | None:
    """The commit that last wrote each line of `path` at `rev` (by LF); None when unknown.

    Plain blame (no undo traced): the commit a lesson's line came from, as git shows it.
    """
    tip = rev or repo.tip()
    if tip is None:
        return None
    try:
        count = _line_count(_file_at(repo, tip, path))
        out = _blame(repo, tip, path)
    except GitError:
        return None
    shas: list[str] = []
    expect_sha = True
    for line in out.decode("utf-8", "surrogateescape").split("\n"):
        if expect_sha and line:
            shas.append(line.split(" ", 1)[0])
            expect_sha = False
        elif line.startswith("\t"):
            expect_sha = True  # the content line ends one line's block
    return shas if len(shas) == count else None


def _file_at(repo: Repo, rev: str, path: str) -> bytes:
    """`path`'s content at commit `rev`; GitError when it holds none.

    Asked once per Repo (`fixed.asked_once`): a reflection reads each file's authors for the
    bundle, the plan and the plan again under the lock, at the same commit.
    """
    args = ("cat-file", "blob", f"{rev}:{path}")
    return asked_once(repo, rev, args, lambda: repo.git(*args))


def _blame(repo: Repo, rev: str, path: str) -> bytes:
    """`git blame --line-porcelain` of `path` at `rev`, without the person's settings; once per Repo.

    `--ignore-revs-file=` clears the revisions a blame.ignoreRevsFile of the repository's own
    config names too: blame would credit a person's edit of a line to the commit before it.
    """
    args = ("blame", "--line-porcelain", "--ignore-revs-file=", rev, "--", path)
    return asked_once(repo, rev, args, lambda: repo.git(*args, env=PLAIN_CONFIG))


def _line_count(blob: bytes) -> int:
    """Lines as git counts them: by LF, a last line without one included."""
    return blob.count(b"\n") + (1 if blob and not blob.endswith(b"\n") else 0)
