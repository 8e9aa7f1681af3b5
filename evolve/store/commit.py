"""Commits built in a private index and the branch moved by compare-and-swap under index.lock.

A commit's tree is the branch tip plus the exact entries evolve changes, built in a
scratch index so the person's index is never read; the branch then moves `OLD → NEW` in
one ref transaction while evolve holds git's own `index.lock`, and the real index is
refreshed for those paths first. A person's concurrent commit either lands before (evolve
builds again on top of it) or after (and finds evolve's change in its index). `Repo`
calls these, and so does the journal, which moves the branch the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import Busy, EvolveError, UserError
from evolve.store import head, indexfile
from evolve.store.files import scratch
from evolve.store.fixed import plain_history
from evolve.store.git import (
    ZERO,
    GitError,
    RefTransaction,
    acquire_index_lock,
    broken_branch_remedy,
    update_lines,
)
from evolve.store.worktree import EXECUTABLE, LINK, is_executable

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.identity import Identity
    from evolve.store.repo import Entry, Repo

LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # paths given to git: a file named `:!a` is that file
_BUILT: dict[str, bytes] = {}  # a commit this process made → an index holding exactly its tree


class ConcurrentChange(UserError):
    """A person committed the same files while evolve was writing them (nothing is lost)."""


class StagedMeanwhile(ConcurrentChange):
    """A file evolve commits was staged otherwise (`git add`) after evolve read the index: theirs wins."""


SWITCHED = "someone switched branches while evolve was writing; nothing was lost — run the command again"


class RefRefused(Busy):
    """git would not lock the branch nobody moved: a lock a git holds (or left when killed), or a hook."""


class EditedMeanwhile(ConcurrentChange):
    """A file evolve is about to write is not what it read: a person saved it meanwhile."""


@dataclass
class Extra:
    """A second commit made with another (see `Repo.commit_changes(also=...)`)."""

    branch: str
    changes: Mapping[str, bytes | None]
    message: str
    sha: str | None = None


def check_unchanged(repo: Repo, expect: Mapping[str, bytes | None]) -> None:
    """EditedMeanwhile when a file no longer holds the bytes evolve read (None: absent)."""
    for path, before in expect.items():
        target = repo.path / path
        try:
            now = None if target.is_symlink() else target.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            now = None
        if now != before:
            raise EditedMeanwhile(
                f"{target} changed while evolve was writing it; nothing was lost — run the command again"
            )


def blob_entries(repo: Repo, changes: Mapping[str, bytes | None], links: frozenset[str] = frozenset()) -> str:
    """`git update-index --index-info` lines; the blobs are written to the odb."""
    written = sorted(path for path, content in changes.items() if content is not None)
    blobs = dict(zip(written, write_blobs(repo, [changes[p] or b"" for p in written]), strict=True))
    lines = []
    for path, content in sorted(changes.items()):
        if content is None:
            lines.append(f"0 {ZERO}\t{path}")
        else:
            mode = LINK if path in links else EXECUTABLE if is_executable(repo, path) else "100644"
            lines.append(f"{mode} {blobs[path]}\t{path}")
    return "".join(line + "\n" for line in lines)


def write_blobs(repo: Repo, contents: Sequence[bytes]) -> list[str]:
    """Each content stored as a blob (as is: no filter), its id; one git process for them all."""
    if len(contents) <= 1:
        return [repo.text("hash-object", "-w", "--stdin", input=data) for data in contents]
    with scratch(repo.git_dir, "evolve-blobs-") as tmp:
        names = []
        for number, data in enumerate(contents):
            (Path(tmp) / str(number)).write_bytes(data)
            names.append(os.path.relpath(Path(tmp) / str(number), repo.path))
        listed = "".join(name + "\n" for name in names).encode()
        return repo.text("hash-object", "-w", "--no-filters", "--stdin-paths", input=listed).split()


def commit_loop(
    repo: Repo,
    changes: Mapping[str, bytes | None],
    message: str,
    author: Identity,
    branch: str,
    on_checkout: bool,
    when: str | None,
    links: frozenset[str] = frozenset(),
    also: Extra | None = None,
    wrote: bool = False,
) -> str:
    """Commit `changes` on `branch`'s tip, again on the new tip each time someone moved it first.

    ConcurrentChange once someone committed the same paths meanwhile. `wrote`: evolve wrote
    `changes` into the work tree (each move checks they are still there: `swap`).
    """
    entries = blob_entries(repo, changes, links)
    extra_entries = blob_entries(repo, also.changes) if also is not None else ""
    refused = 0
    for _attempt in range(50):
        old = repo.tip(branch)
        base = old or (repo.tip() if branch != repo.branch else None)
        try:
            new = commit_tree(repo, base, entries, message, author.env(when))
        except GitError:
            if base is not None:  # git cannot build on what the branch file names: say which file
                repo.refuse_non_commit(base, branch if old else repo.branch)
            raise
        refs = []
        if also is not None:
            also.sha = commit_tree(repo, new, extra_entries, also.message, author.env(when))
            refs.append((f"refs/heads/{also.branch}", also.sha, ZERO))
        try:
            shown = entries if on_checkout else None
            if swap(repo, branch, new, old, shown, refs, builds=True, wrote=changes if wrote else None):
                return new
        except RefRefused:
            refused += 1
            if refused == 3:  # git waited for the lock each time (core.filesRefLockTimeout)
                raise
            continue
        if old and _touched_since(repo, old, branch, list(changes)):
            raise ConcurrentChange(
                "someone committed changes to the same files while evolve was writing; "
                "nothing was lost — run the command again"
            )
    raise EvolveError("could not update the branch after 50 attempts (constant concurrent commits)")


def commit_tree(repo: Repo, base: str | None, entries: str, message: str, env: Mapping[str, str]) -> str:
    """A commit object: `base`'s tree with `entries` applied, `base` its parent.

    The scratch index starts as `base`'s tree: read by `git read-tree`, or, when this process
    made commit `base`, the index that built it (a commit names one tree for ever: the same
    entries, one git process fewer), or the real index when it is known to hold exactly
    `base`'s files (`Repo.index_holding`); never where replace refs or grafts make
    `read-tree` give another tree than the commit's own (`fixed.plain_history`).
    """
    with scratch(repo.git_dir, "evolve-idx-") as tmp:
        path = Path(tmp) / "index"
        index = {"GIT_INDEX_FILE": str(path)}
        built = (_BUILT.get(base) or repo.index_holding(base)) if base and plain_history(repo) else None
        if built is not None:
            path.write_bytes(built)
        elif base:
            repo.git("read-tree", base, env=index)
        if entries:
            repo.git("update-index", "--index-info", input=_encode(entries), env=index)
        tree = repo.text("write-tree", env=index)
        ready = path.read_bytes()
    parents = ["-p", base] if base else []
    try:  # a message read with surrogateescape keeps its bytes
        data = message.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = message.encode("utf-8", "replace")
    sha = repo.text("commit-tree", tree, *parents, input=data, env=env)
    remember_index(repo, sha, ready)
    return sha


def remember_index(repo: Repo, sha: str, data: bytes) -> None:
    """`data`, an index holding exactly commit `sha`'s tree, starts the next commit built on `sha`.

    Not with a split index (`core.splitIndex`): its entries live in a `sharedindex` file beside.
    """
    if indexfile.split_index(repo.git_dir):
        return
    if len(_BUILT) >= 16:
        _BUILT.clear()
    _BUILT[sha] = data


def build_commit(
    repo: Repo, base: str | None, entries: Mapping[str, Entry | None], message: str, env: Mapping[str, str]
) -> str:
    """A commit on `base` (nothing moves): its tree with `entries` (None deletes a path).

    `env` names the author and committer (GIT_AUTHOR_* / GIT_COMMITTER_*).
    """
    lines = "".join(
        f"{entry[0]} {entry[1]}\t{path}\n" if entry else f"0 {ZERO}\t{path}\n"
        for path, entry in sorted(entries.items())
    )
    return commit_tree(repo, base, lines, message, env)


def _touched_since(repo: Repo, old: str, branch: str, paths: list[str]) -> bool:
    new = repo.tip(branch)
    out = repo.git("diff", "--name-only", old, new or old, "--", *paths, env=LITERAL)
    return bool(out.strip())


def swap(
    repo: Repo,
    branch: str,
    new: str,
    old: str | None,
    index_entries: str | None,
    refs: Sequence[tuple[str, str, str]] = (),
    *,
    builds: bool = False,
    wrote: Mapping[str, bytes | None] | None = None,
) -> bool:
    """Move the branch old→new (and `refs`, in one transaction) under git's index.lock.

    `builds`: `new` is `old` with `index_entries` applied, so an index that held exactly
    `old`'s files (nothing staged) now holds `new`'s, and the lock's next check need not ask.

    The real index is refreshed too, so a person's next `git commit` starts from it, and
    it is refreshed first: `git commit` reads HEAD, then the index, and takes index.lock
    only after, so one that read the moved branch with the old index would drop evolve's
    change. When the branch does not move, the index is put back as it was (nobody else
    can write it while evolve holds index.lock).

    The index is shown only inside the ref transaction (`RefTransaction`): once `prepare`
    has locked the branch at `old` (and HEAD, which names it), a person's `git commit`,
    which read the index before it took index.lock, cannot move the branch any more, nor
    can `git checkout -b` (no index.lock) point HEAD at a new branch; so no index evolve
    shows belongs to a move that fails or to the person's other branch. A path the person
    staged otherwise since evolve read the index keeps their entry (StagedMeanwhile).

    `wrote`: the files evolve wrote into the work tree for this move, checked under the lock
    (EditedMeanwhile): a `git stash`, `checkout -- file` or `reset --hard` since put one back
    as HEAD has it, and the move would leave the work tree undoing evolve's change.
    """
    fd = acquire_index_lock(repo.git_dir)
    real = repo.git_dir / "index"
    staged, before, matched = False, None, False
    transaction, ready = None, None
    try:
        tip = repo.tip(branch)
        if tip not in (old, new):
            return False
        if index_entries is not None and repo.staged_meanwhile(index_entries):
            raise StagedMeanwhile(
                "a file evolve was committing was staged (`git add`) meanwhile; it stays staged "
                "for your commit and nothing was lost — run the command again"
            )
        if wrote:
            check_unchanged(repo, wrote)
        if index_entries is not None:  # built first: the refs stay locked for a rename only
            matched = builds and old is not None and branch == repo.branch and repo.index_matches(old)
            before = index_snapshot(repo)
            ready = index_file(repo, before, index_entries)
        ref = f"refs/heads/{branch}"
        lines = update_lines([(ref, new, old or ZERO), *refs])
        if tip == new != old:  # already moved (a move git reported lost that landed): held there
            lines = [f"verify {ref} {new}"]
        transaction = RefTransaction(repo.path, lines, "evolve: commit")
        if not transaction.prepare():
            if repo.tip(branch) == tip:  # not a lost race: retrying would meet the same refusal
                if head.broken_branch(repo.git_dir, branch):  # no git is at work: it never ends
                    raise UserError(f"{repo.path}: {broken_branch_remedy(repo.path, branch)}")
                named = repo.git("rev-parse", "-q", "--verify", f"refs/heads/{branch}", check=False)
                if named.strip():  # a symref to a tag: read through, never moved ("busy" for good)
                    repo.refuse_non_commit(named.decode().strip(), branch)
                raise RefRefused(_refusal(branch, transaction.error))
            return False
        if (repo.current_branch() == branch) != (index_entries is not None):
            raise Busy(SWITCHED)
        if ready is not None:
            ready.replace(real)
            staged = True
        moved = transaction.commit()
        if moved and matched:
            repo.now_matches(new)
        if moved or repo.tip(branch) == new:
            staged = False
            return True
        return False
    finally:
        try:
            if staged and before is None:  # back while the refs are still locked, then abort
                real.unlink(missing_ok=True)
            elif staged:
                index_file(repo, before).replace(real)
            elif ready is not None:  # never shown
                ready.unlink(missing_ok=True)
        finally:
            try:
                if transaction is not None:
                    transaction.close()
            finally:
                os.close(fd)
                (repo.git_dir / "index.lock").unlink(missing_ok=True)


def _refusal(branch: str, error: str) -> str:
    """One line: git's reason for not locking `branch` (its `fatal:` line), and what to do."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines or ["no reason given"]
    reason = said[-1].removeprefix("fatal: ").removeprefix("error: ").removeprefix("prepare: ")
    return (
        f"git would not move {branch}: {reason} — nothing was lost; run the command again once "
        "that git is done (a lock file left by a git that was killed: remove it; `evolve doctor --fix` "
        "deletes one an hour old)"
    )


def entries_at(repo: Repo, rev: str | None, paths: Sequence[str]) -> str:
    """`update-index --index-info` lines giving `paths` their entries at `rev` (absent: removed)."""
    found = {}
    listed = repo.git("ls-tree", "-z", "--full-tree", rev, "--", *paths, env=LITERAL) if rev else b""
    for entry in filter(None, listed.split(b"\0")):
        meta, _, name = entry.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        found[name.decode("utf-8", "surrogateescape")] = f"{mode} {sha}"
    return "".join(f"{found.get(p, f'0 {ZERO}')}\t{p}\n" for p in paths)


def index_snapshot(repo: Repo) -> tuple[bytes, int] | None:
    """The real index's bytes and modification time (ns); None: there is none."""
    try:
        with (repo.git_dir / "index").open("rb") as handle:
            return handle.read(), os.fstat(handle.fileno()).st_mtime_ns
    except FileNotFoundError:
        return None


def index_file(repo: Repo, before: tuple[bytes, int] | None, entries: str = "") -> Path:
    """An index file beside the real one: `before` (`index_snapshot`; None: empty) with `entries` applied.

    The copy keeps the index's modification time: git tells an entry saved in the second
    the index was written (racily clean) by that time, and a copy stamped now would hide the
    file's next save from `git status` and `git commit -a`. Call holding index.lock (one at
    a time); the caller renames it over the index.
    """
    ready = repo.git_dir / "evolve-index"
    if before is None:
        ready.unlink(missing_ok=True)
    else:
        ready.write_bytes(before[0])
        os.utime(ready, ns=(before[1], before[1]))
    if entries:
        env = {"GIT_INDEX_FILE": str(ready)}
        repo.git("update-index", "--index-info", input=_encode(entries), env=env)
    fd = os.open(ready, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return ready


def _encode(entries: str) -> bytes:
    """`--index-info` lines → bytes; a non-UTF-8 file name (surrogate-escaped) keeps its bytes.

    git reads a path that starts with `"` as C-quoted: such a name is quoted, so `"q"` stays
    `"q"` and does not become `q`.
    """
    lines = []
    for line in entries.split("\n"):
        meta, tab, path = line.partition("\t")
        if tab and path.startswith('"'):
            path = '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'
        lines.append(meta + tab + path)
    return "\n".join(lines).encode("utf-8", "surrogateescape")


__all__ = [
    "SWITCHED",
    "ConcurrentChange",
    "EditedMeanwhile",
    "Extra",
    "RefRefused",
    "StagedMeanwhile",
    "build_commit",
    "check_unchanged",
    "commit_loop",
    "commit_tree",
    "entries_at",
    "index_file",
    "index_snapshot",
    "remember_index",
    "swap",
]
