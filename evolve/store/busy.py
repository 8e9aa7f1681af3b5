"""Why evolve may not write now: what a person is doing in git holds every write back.

A git operation not finished (merge, revert, cherry-pick, rebase, am, bisect), unmerged
paths, another branch or a detached HEAD checked out, an index the branch moved away from,
or a file staged for the person's own commit: each is a sentence saying how to end it,
and the writer lock raises Busy with it. What the index holds is read in `staging`; this
module remembers it while the index and the tip stay as they are. `Repo` calls these.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from evolve.errors import Busy
from evolve.store import head, indexfile, staging
from evolve.store.git import GitError
from evolve.store.journal import JOURNAL

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Entry, Repo

# A person's git operation that is not finished: evolve never commits under their feet.
OPERATIONS = {
    "MERGE_HEAD": "a merge",
    "REVERT_HEAD": "a revert",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "rebase-merge": "a rebase",
    "rebase-apply/applying": "a git am",  # git am keeps its state where a rebase would
    "rebase-apply": "a rebase",
    "BISECT_LOG": "a bisect",
}
ABORT = {
    "a merge": "git merge --abort",
    "a revert": "git revert --abort",
    "a cherry-pick": "git cherry-pick --abort",
    "a rebase": "git rebase --abort",
    "a git am": "git am --abort",
    "a bisect": "git bisect reset",
}
_UNMERGED: dict[tuple[str, int, int, int], bool] = {}  # index stat → has conflicted entries


def operation_in_progress(repo: Repo) -> str | None:
    """The person's unfinished git operation ("a revert", "unmerged paths"), or None."""
    for name, what in OPERATIONS.items():
        if (repo.git_dir / name).exists():
            return what
    return "unmerged paths" if _unmerged(repo) else None


def _unmerged(repo: Repo) -> bool:
    """Whether the index holds conflicted entries (after a stash pop, `checkout -m`).

    One git process per change of the index, not per question: the watcher plans often.
    """
    try:
        st = (repo.git_dir / "index").stat()
    except OSError:
        return False
    key = (str(repo.git_dir), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _UNMERGED:
        if len(_UNMERGED) > 4096:
            _UNMERGED.clear()
        try:  # the lock's check asks what is staged next: one git process for both
            compared = _against_tip(repo)
        except GitError:
            compared = None
        listed = b"" if compared is not None else repo.git("ls-files", "--unmerged", check=False)
        _UNMERGED[key] = compared[1] if compared is not None else bool(listed.strip())
    return _UNMERGED[key]


def operation_reason(repo: Repo) -> str | None:
    """A git operation in progress, or another checkout: why evolve may not write, or None.

    Another checkout is another branch here, or this branch in a linked worktree too.
    """
    what = operation_in_progress(repo)
    if what:
        remedy = f"finish it or `{ABORT[what]}`" if what in ABORT else "resolve and commit them"
        return f"a git operation is in progress in {repo.path} ({what}); {remedy}, then try again"
    elsewhere = repo.checked_out_elsewhere()
    if elsewhere:
        return (
            f"{repo.path} has {elsewhere} checked out, not {repo.branch}; evolve writes only "
            f"while {repo.branch} is checked out: `git switch {repo.branch}`, then try again"
        )
    # `git worktree add --force … main`: evolve's commit would leave that worktree behind, and
    # the person's next `git commit -a` there would undo it
    return worktree_reason(repo, [repo.branch])


def worktree_reason(repo: Repo, branches: Iterable[str]) -> str | None:
    """Why evolve may not move or delete one of `branches`: a linked worktree has it checked out.

    Its index and files would no longer match the branch (deleted: every file staged as new;
    moved: a commit there undoes the move), which git's own `git branch -d` and `-f` refuse.
    """
    held = head.worktree_branches(repo.git_dir)
    branch = next((b for b in branches if b in held), None)
    if branch is None:
        return None
    where = held[branch]
    return (
        f"{branch} is checked out in {where} (a worktree of {repo.path}); evolve never moves or deletes a "
        "branch a worktree has checked out (or is rebasing or bisecting: finish or abort that, or "
        f"`git bisect reset`, first): `git -C {where} switch --detach` (or `git worktree remove {where}`), "
        "then try again"
    )


def index_reason(repo: Repo, holds: Sequence[str] = ()) -> str | None:
    """The index left behind by a branch move, or (with `holds`) a staged file under them; or None.

    None while a killed evolve's journal is pending: its half-done write may be staged,
    and the next `locked()` recovers it before it asks again.
    """
    if (repo.git_dir / JOURNAL).exists():
        return None
    tip, entries = _staged(repo)
    older = staging.left_behind(repo, tip, entries) if tip is not None else None
    if older:
        return staging.behind_message(repo, older)
    held = staging.under(entries, holds)
    return staging.staged_message(repo, held[0]) if held else None


def behind(repo: Repo) -> bool:
    """Whether the index still holds an older commit's files (the branch moved without them)."""
    tip, entries = _staged(repo)
    return tip is not None and staging.left_behind(repo, tip, entries) is not None


def staged_paths(repo: Repo) -> set[str]:
    """The paths a person staged (`git add`): the index holds them unlike the branch tip."""
    return set(_staged(repo)[1])


def staged_against_head(repo: Repo) -> set[str]:
    """The paths `git diff --cached --name-only` lists: what the index holds unlike HEAD.

    No git process when HEAD names the branch, the index matches its tip (as the lock's
    check found it) and holds only plain entries: that diff hides intent-to-add entries,
    which `git diff-index` compares, so with one of them the answers could differ.
    """
    repo.index_read = repo.staged_memo  # what the caller decides on (at worst older: the lock's check)
    if head.checked_out(repo.git_dir) == repo.branch and indexfile.plain_entries(repo.git_dir):
        compared = _against_tip(repo)
        repo.index_read = repo.staged_memo
        if compared is not None and not compared[0]:
            return set()
    return set(repo.text("diff", "--cached", "--name-only", "-z", "--no-renames").split("\0")) - {""}


def refuse_staged(repo: Repo, paths: Iterable[str]) -> None:
    """Raise Busy when a person staged one of `paths`: evolve never writes over their coming commit."""
    held = staging.under(staged_paths(repo), list(paths))
    if held:
        raise Busy(staging.staged_message(repo, held[0]))
    repo.index_read = repo.staged_memo


def staged_meanwhile(repo: Repo, entries: str) -> list[str]:
    """Paths of `entries` (`--index-info` lines) a person staged otherwise since the write read the index.

    The write decided what to stage on `repo.index_read` (`refuse_staged`, `staged_against_head`).
    Unchanged index file: nothing to ask. Else one `git diff-index`: a path staged neither as
    then nor as evolve is about to stage it is the person's newer `git add` (theirs wins).
    Call holding index.lock, before the index is written.
    """
    seen = repo.index_read
    if seen is None or _memo_key(repo, seen[0][0]) == seen[0]:
        return []
    compared = _against_tip(repo)
    if compared is None:
        return []
    then, now = seen[1][0], compared[0]
    held = []
    for line in filter(None, entries.split("\n")):
        meta, _, path = line.partition("\t")
        mode, blob = meta.split()
        wanted = None if blob.strip("0") == "" else (mode, blob)
        if path in now and now[path] != wanted and (path not in then or then[path] != now[path]):
            held.append(path)
        elif path not in now and path in then:
            held.append(path)  # unstaged meanwhile (`git restore --staged`): theirs, too
    return held


def _staged(repo: Repo) -> tuple[str | None, dict[str, Entry | None]]:
    """(the branch tip, what the index holds unlike it); the tip is None when nothing is staged.

    One git process in the usual case, nothing staged: the index is compared with the
    branch by name, and the tip is looked up only when something is (every write asks).
    A branch with no commit has no tip: all its index holds is staged.
    """
    compared = _against_tip(repo)
    entries = staging.staged(repo) if compared is None else dict(compared[0])
    return (repo.tip() if entries else None), entries


def _against_tip(repo: Repo) -> tuple[dict[str, Entry | None], bool] | None:
    """`staging.against_tip`, remembered (in `repo.staged_memo`) while the index and the tip stay.

    A write asks three times (unmerged paths and staged files in the lock's check, then
    whether its own paths are staged), a sync more; what `git diff-index --cached` answers
    depends on nothing else. The index is known by its file's stat: git and evolve both
    replace it by rename. None where the tip is no ref file, or the index is missing.
    """
    tip = head.branch_tip(repo.git_dir, repo.branch) if repo.refs_in_files else None
    key = _memo_key(repo, tip) if tip is not None else None
    if key is None:
        return None
    if repo.staged_memo is None or repo.staged_memo[0] != key:
        compared = staging.against_tip(repo)
        if compared is None:
            return None
        repo.staged_memo = (key, compared)
    return repo.staged_memo[1]


def _memo_key(repo: Repo, tip: str) -> tuple | None:
    """The index as `_against_tip` knows it (its file's stat) against `tip`; None: no index."""
    try:
        return _stat_key(tip, (repo.git_dir / "index").stat())
    except OSError:
        return None


def _stat_key(tip: str, st: os.stat_result) -> tuple:
    """The memo's key: `tip` and the index file's identity and change stamps."""
    return (tip, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def index_matches(repo: Repo, tip: str) -> bool:
    """Whether the index, as its file is now, is known to hold exactly `tip`'s files.

    Known from `_against_tip`'s memo: nothing staged, nothing unmerged. Ask holding index.lock.
    """
    memo = repo.staged_memo
    return memo is not None and memo[0] == _memo_key(repo, tip) and memo[1] == ({}, False)


def index_holding(repo: Repo, tip: str) -> bytes | None:
    """The index file's bytes, when they hold exactly `tip`'s files and nothing else; else None.

    Known from `_against_tip`'s memo (nothing staged against `tip`) for the very file read
    (its stat taken on the open file), and only for plain entries (`indexfile`): an
    intent-to-add entry write-tree leaves out may hide from `git diff-index`.
    """
    memo = repo.staged_memo
    if memo is None or memo[0][0] != tip or memo[1] != ({}, False):
        return None
    if indexfile.split_index(repo.git_dir):
        return None
    try:
        with (repo.git_dir / "index").open("rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
    except OSError:
        return None
    if _stat_key(tip, st) != memo[0]:
        return None
    return data if indexfile.plain_data(data) else None


def now_matches(repo: Repo, tip: str) -> None:
    """The index evolve just wrote (holding index.lock) holds exactly `tip`'s files: nothing to ask git."""
    key = _memo_key(repo, tip)
    if key is not None:
        repo.staged_memo = (key, ({}, False))


__all__ = [
    "ABORT",
    "OPERATIONS",
    "behind",
    "index_holding",
    "index_matches",
    "index_reason",
    "now_matches",
    "operation_in_progress",
    "operation_reason",
    "refuse_staged",
    "staged_against_head",
    "staged_meanwhile",
    "staged_paths",
]
