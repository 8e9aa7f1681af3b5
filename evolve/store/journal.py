"""Work-tree writes that survive a kill: a journal first, then a rollback or a recovery.

Moving the checked-out branch to another history (sync), journalled file writes
(restore, commit_changes) and `recover()`, which the writer lock runs first to finish or
undo what a killed evolve left. `Repo` calls these; nothing else does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from evolve.store import worktree
from evolve.store.commit import ConcurrentChange, entries_at, index_file, index_snapshot, swap
from evolve.store.files import atomic_write, sha256
from evolve.store.git import ZERO, acquire_index_lock

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Entry, Repo

JOURNAL = "evolve-journal.json"


def move_branch(
    repo: Repo,
    new: str,
    expected: str,
    *,
    refs: Sequence[tuple[str, str, str]] = (),
    journal_id: str | None = None,
) -> list[str]:
    """Move the agent's branch, checked out, from `expected` to `new` (any commit), its files too.

    Call inside `locked()` once a person's edits are committed. A file that differs and
    that the person staged raises Busy; every other one is checked to be still as
    `expected` has it (else ConcurrentChange: nothing is touched), journalled, written
    (links as links, modes as git has them), then the branch, `refs` ((ref, new, old); new
    ZERO deletes) and the real index move in one transaction. Returns the paths written.
    """
    branch = repo.branch  # the caller read `expected` from it; HEAD on another is Busy (swap)
    diff = _tree_diff(repo, expected, new)
    for path in diff:
        worktree.plain_path(repo, path)  # a bad path is refused before anything touches the disk
    repo.refuse_staged(diff)  # a person's coming commit is never written over
    changed = [
        p for p, (was, _) in diff.items() if _entry_of(repo, p, len(expected)) != (was[1] if was else None)
    ]
    if changed:
        raise ConcurrentChange(
            f"{', '.join(changed[:3])} changed while evolve was bringing the branch up to date; "
            "nothing was lost — run the command again"
        )
    blobs = repo.read_blobs([after[1] for _, after in diff.values() if after])
    contents = {p: (blobs[after[1]] if after else None) for p, (_, after) in diff.items()}
    journal = {
        "id": journal_id,
        "branch": branch,
        "tip": expected,
        "files": {
            p: {
                "old": before[1] if before else None,
                "old_mode": before[0] if before else None,
                "new": None if contents[p] is None else sha256(contents[p] or b""),
            }
            for p, (before, _) in diff.items()
        },
    }
    atomic_write(repo.git_dir / JOURNAL, json.dumps(journal).encode())
    try:
        for path in sorted(diff, key=lambda p: diff[p][1] is not None):  # deletions first
            after = diff[path][1]
            worktree.write_file(repo, path, contents[path], after[0] if after else None)
        entries = "".join(
            f"{after[0]} {after[1]}\t{p}\n" if after else f"0 {ZERO}\t{p}\n"
            for p, (_, after) in sorted(diff.items())
        )
        if not swap(repo, branch, new, expected, entries, refs):
            raise ConcurrentChange(
                "someone committed while evolve was bringing the branch up to date; "
                "nothing was lost — run the command again"
            )
    except BaseException:
        rollback(repo, journal)
        (repo.git_dir / JOURNAL).unlink(missing_ok=True)
        raise
    (repo.git_dir / JOURNAL).unlink(missing_ok=True)
    return sorted(diff)


def _tree_diff(repo: Repo, old: str, new: str) -> dict[str, tuple[Entry | None, Entry | None]]:
    """Path → (entry at `old`, entry at `new`) for every file or link that differs."""
    out = repo.git("diff-tree", "-r", "-z", "--no-renames", old, new)
    fields = out.split(b"\0")
    found: dict[str, tuple[Entry | None, Entry | None]] = {}
    for index in range(0, len(fields) - 1, 2):
        meta, name = fields[index].decode(), fields[index + 1]
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, old_blob, new_blob, _status = meta[1:].split()
        found[name.decode("utf-8", "surrogateescape")] = (
            None if old_mode == "000000" else (old_mode, old_blob),
            None if new_mode == "000000" else (new_mode, new_blob),
        )
    return found


def _entry_of(repo: Repo, path: str, id_length: int) -> str | None:
    """The blob id the work tree's file (or link) at `path` would have; None when absent."""
    data = worktree.current(repo, path)
    if data is None:
        return None
    import hashlib  # here: only moving the branch needs it

    header = b"blob %d\0" % len(data)
    digest = hashlib.sha1 if id_length == 40 else hashlib.sha256
    return digest(header + data).hexdigest()


# -- crash safety --------------------------------------------------------------
@contextmanager
def journalled(
    repo: Repo, changes: Mapping[str, bytes | None], journal_id: str | None = None
) -> Iterator[None]:
    """Write `changes` to the work tree yourself inside, and commit them: all or nothing.

    For writes `commit_changes` cannot make (a restore keeps file modes and links). A
    failure inside puts the files back; a kill leaves the journal for `recover()`.
    """
    journal = write_journal(repo, changes, journal_id, repo.branch)
    try:
        yield
    except BaseException:
        rollback(repo, journal)
        (repo.git_dir / JOURNAL).unlink(missing_ok=True)
        raise
    (repo.git_dir / JOURNAL).unlink(missing_ok=True)


def write_journal(
    repo: Repo, changes: Mapping[str, bytes | None], journal_id: str | None, branch: str | None
) -> dict:
    existing = [p for p in changes if (repo.path / p).is_file()]
    olds = {}
    if existing:
        out = repo.git("hash-object", "-w", "--", *existing).decode().split()
        olds = dict(zip(existing, out, strict=True))
    journal = {
        "id": journal_id,
        "branch": branch,
        "tip": repo.tip(branch),
        "files": {
            p: {"old": olds.get(p), "new": None if c is None else sha256(c)} for p, c in changes.items()
        },
    }
    atomic_write(repo.git_dir / JOURNAL, json.dumps(journal).encode())
    return journal


def rollback(repo: Repo, journal: dict) -> None:
    """Put back files whose content is still what evolve wrote (never a person's)."""
    olds = [f["old"] for f in journal["files"].values() if f["old"]]
    blobs = repo.read_blobs(olds)
    for path, entry in journal["files"].items():
        current = worktree.current(repo, path)
        ours = (
            (current is None)
            if entry["new"] is None
            else (current is not None and sha256(current) == entry["new"])
        )
        if not ours:
            continue
        old = blobs.get(entry["old"]) if entry["old"] else None
        worktree.write_file(repo, path, old, entry.get("old_mode"))
    _remove_leftovers(repo, list(journal["files"]))


def _remove_leftovers(repo: Repo, paths: list[str]) -> None:
    """An interrupted write's temp files and the folders it left empty (never a person's file)."""
    for path in paths:
        target = repo.path / path
        folder = target.parent
        for leftover in folder.glob(f".{target.name}.*.evolve-tmp") if folder.is_dir() else ():
            leftover.unlink(missing_ok=True)
        while (
            folder != repo.path and folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir())
        ):
            folder.rmdir()
            folder = folder.parent


def recover(repo: Repo) -> None:
    """Finish or undo an apply a crash interrupted (called under the lock)."""
    path = repo.git_dir / JOURNAL
    try:
        journal = json.loads(path.read_bytes())
    except FileNotFoundError:
        return
    except ValueError:
        path.unlink(missing_ok=True)
        return
    tip = repo.tip(journal["branch"])
    # Roll back unless evolve's commit landed: the branch may also have moved because a
    # person committed something else, and evolve's orphaned files must not be left
    # behind to be committed later as a person's edit.
    if tip == journal["tip"] or not _landed(repo, journal, tip):
        rollback(repo, journal)
    if journal["branch"] == repo.current_branch():
        _refresh_index(repo, tip, list(journal["files"]))
    path.unlink(missing_ok=True)


def _refresh_index(repo: Repo, tip: str | None, paths: list[str]) -> None:
    """Make the real index agree with `tip` for `paths` (a crash: staged, or left stale)."""
    entries = entries_at(repo, tip, paths)
    real = repo.git_dir / "index"
    fd = acquire_index_lock(repo.git_dir)
    try:
        index_file(repo, index_snapshot(repo), entries).replace(real)
    finally:
        os.close(fd)
        (repo.git_dir / "index.lock").unlink(missing_ok=True)


def _landed(repo: Repo, journal: dict, tip: str | None) -> bool:
    """Whether the branch tip holds exactly what the journalled apply wrote."""
    if tip is None:
        return False
    files = journal["files"]
    blobs = repo.read_blobs([f"{tip}:{path}" for path in files])
    for path, entry in files.items():
        blob = blobs.get(f"{tip}:{path}")
        if (None if blob is None else sha256(blob)) != entry["new"]:
            return False
    return True
