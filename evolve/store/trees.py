"""A commit's tree read whole: its entries, a path evolve refuses in it, its files exported.

Reads only, each one git process (`ls-tree`, `archive`); a folder of an old commit is read
through GitPython's object database, the one place evolve uses it. `Repo` calls these.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path

from evolve.errors import PathRefused
from evolve.store.commit import LITERAL
from evolve.store.fixed import parsed_once, too_big_to_keep
from evolve.store.worktree import refused_path

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Entry, Repo


def refused_in_tree(repo: Repo, rev: str) -> str | None:
    """The first path of `rev`'s tree evolve never writes (`.gitattributes`, into `.git`, …), or None."""
    for _mode, _kind, _object, path in _listed(repo, rev):
        if refused_path(path) or any(part in (".", "") for part in path.split("/")):
            return path
    return None


LISTING = ("ls-tree", "-r", "-z", "--full-tree")
Listed = tuple[str, str, str, str]  # (mode, kind, object id, path)
PATHS_BYTES = 64 << 10  # the paths one ls-tree is given, far below the kernel's bound (ARG_MAX: 2 MB)


def tree_entries(repo: Repo, rev: str, paths: Sequence[str] = ()) -> dict[str, Entry]:
    """Path → (mode, blob) of every file and link at `rev` (under `paths`, when given).

    A tree whose whole listing is too big to keep (`fixed.too_big_to_keep`) is asked for
    `paths` alone: one small `ls-tree` instead of the whole tree listed again each time,
    each path literally (a file named `:!a` is that file), and only as many as one command
    line holds (a sync's thousands of changed paths: the whole tree, listed again).
    """
    if not paths:
        listed: Sequence[Listed] = _listed(repo, rev)
    elif too_big_to_keep(repo, rev, (*LISTING, rev)) and sum(map(len, paths)) < PATHS_BYTES:
        listed = _parsed(repo.git(*LISTING, rev, "--", *paths, env=LITERAL))
    else:
        whole = _listed(repo, rev)
        listed = sorted({entry for given in paths for entry in _under(whole, given)}, key=_path)
    return {path: (mode, blob) for mode, kind, blob, path in listed if kind == "blob"}


def _listed(repo: Repo, rev: str) -> tuple[Listed, ...]:
    """(mode, kind, object id, path) of every entry of `rev`'s tree by path, in folders and submodules too.

    One `ls-tree -r` of the whole tree, asked and parsed once per Repo (`fixed.parsed_once`):
    a sync reads one commit's tree for several sets of paths (the files it watches, the
    plugin's parts, the links, a path evolve refuses), each found here by bisection instead
    of by a git process of its own.
    """
    args = (*LISTING, rev)
    return parsed_once(repo, rev, args, lambda: repo.git(*args), _parsed)


def _parsed(out: bytes) -> tuple[Listed, ...]:
    listed = []
    for item in filter(None, out.split(b"\0")):
        meta, _, name = item.partition(b"\t")
        mode, kind, found = meta.decode().split()
        listed.append((sys.intern(mode), sys.intern(kind), found, name.decode("utf-8", "surrogateescape")))
    return tuple(sorted(listed, key=_path))


def _under(listed: tuple[Listed, ...], given: str) -> list[Listed]:
    """The entries of a sorted listing that are `given` or inside it, as `ls-tree` matches a path.

    Literally; "x/" only a folder: those whose path is `given` itself, and those starting with
    `given` and a slash.
    """
    folder = given if given.endswith("/") else f"{given}/"
    start = bisect_left(listed, folder, key=_path)
    end = bisect_left(listed, folder[:-1] + "0", key=_path)  # "0" follows "/"
    found = list(listed[start:end])
    if given == folder:
        return found
    at = bisect_left(listed, given, key=_path)
    return ([listed[at]] if at < len(listed) and listed[at][3] == given else []) + found


def _path(entry: Listed) -> str:
    return entry[3]


def export(repo: Repo, rev: str, target: Path) -> None:
    """`rev`'s tree as plain files in `target` (`git archive`), the repository untouched.

    No hook, filter or checkout runs; a link that leads out of `target` is PathRefused.
    """
    import io
    import tarfile

    data = repo.git("archive", "--format=tar", rev)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        try:
            archive.extractall(target, filter="data")
        except tarfile.FilterError as exc:
            raise PathRefused(
                f"main holds a link that leads out of the repository ({exc.tarinfo.name}); "
                "evolve never exports it: remove the link"
            ) from None


def folder_at(repo: Repo, rev: str, folder: str) -> dict[str, tuple[str, bytes]]:
    """Path → (git mode, bytes) of every file and link under `folder` at `rev`.

    Reads through GitPython's object database (the one place evolve uses it: a tree walk
    over an old commit); the handle is closed so no `git cat-file` process is left.
    """
    import git  # GitPython, lazily: only restoring a skill needs it

    handle = git.Repo(repo.path)
    try:
        try:
            tree = handle.commit(rev).tree / folder.rstrip("/")
        except (KeyError, ValueError, git.BadName):
            return {}
        return {
            str(item.path): (f"{item.mode:o}", item.data_stream.read())
            for item in tree.traverse()
            if isinstance(item, git.Blob)
        }
    finally:
        handle.close()


__all__ = ["export", "folder_at", "refused_in_tree", "tree_entries"]
