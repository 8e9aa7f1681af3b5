"""What git prints about one commit, asked once per `Repo`: a commit's history cannot change.

A commit id names its tree, its parents and so its whole history for ever, so `git log`,
`git ls-tree`, `git blame` or a file's blob from one prints the same bytes each time (a
reflection reads the history and its files' authors three times: for the bundle, the plan,
and the plan again under the lock). Unless the
repository rewrites what git shows: replace refs, grafts, a shallow boundary (a fetch can
deepen it). With any of those, or a revision that is not a full commit id, every question
goes to git as before.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from evolve.store.repo import Repo

    Parsed = TypeVar("Parsed")

_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_KEPT = 64  # answers kept per Repo (a long-lived watcher's Repo forgets them all past this)
_KEPT_BYTES = 8 << 20  # and their bytes: a tree of 100,000 files lists 11 MB, and a sync reads many trees
_PARSED_WEIGHT = 3  # a tree's listing parsed into tuples of strings: ~2.7 times its bytes in memory
_TOO_BIG = object()  # kept in an answer's place: it was over the bound (`too_big_to_keep`)


def asked_once(repo: Repo, rev: str, key: tuple, ask: Callable[[], bytes]) -> bytes:
    """`ask()`'s answer about commit `rev`, from the first time `key` was asked of this `repo`."""
    return _once(repo, rev, key, ask, lambda answer: answer, 1)


def parsed_once(
    repo: Repo, rev: str, key: tuple, ask: Callable[[], bytes], parse: Callable[[bytes], Parsed]
) -> Parsed:
    """`parse` of `ask()`'s answer about commit `rev`, asked and parsed once per `repo` (as `asked_once`).

    Parsing a tree's listing of 25,000 entries costs ~0.03 s a time, more than the git
    process: the parse is kept instead of the bytes, weighed at what it holds in memory. It
    is shared: it must not be changed.
    """
    return _once(repo, rev, key, ask, parse, _PARSED_WEIGHT)


def too_big_to_keep(repo: Repo, rev: str, key: tuple) -> bool:
    """Whether `key`'s answer about `rev` was found over the bound to keep (ask a smaller question)."""
    return repo.fixed_answers.get((rev, *key), (0, None))[1] is _TOO_BIG


def _once(repo: Repo, rev: str, key: tuple, ask: Callable[[], bytes], parse: Callable, weight: int) -> Any:
    if not _ID.fullmatch(rev) or not plain_history(repo):
        return parse(ask())
    kept = repo.fixed_answers
    full = (rev, *key)
    found = kept.get(full)
    if found is not None and found[1] is not _TOO_BIG:
        return found[1]
    answer = ask()
    size = weight * len(answer)
    if size > _KEPT_BYTES:  # not kept, but known to be too big: a caller may ask less of git
        _make_room(kept, 0)
        kept[full] = (0, _TOO_BIG)
    elif plain_history(repo):  # else history was rewritten while git answered: asked again
        _make_room(kept, size)
        kept[full] = (size, parse(answer))
        return kept[full][1]
    return parse(answer)


def _make_room(kept: dict[tuple, tuple[int, Any]], size: int) -> None:
    """Forget every answer kept when one of `size` bytes more would pass a bound."""
    if len(kept) >= _KEPT or sum(weight for weight, _answer in kept.values()) + size > _KEPT_BYTES:
        kept.clear()


def plain_history(repo: Repo) -> bool:
    """Whether git shows commits as they are: no replace refs, grafts or shallow boundary."""
    git_dir = repo.git_dir
    if (
        not git_dir.is_dir()
        or not repo.refs_in_files
        or {"GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE"} & set(os.environ)
    ):
        return False
    if (git_dir / "shallow").exists() or (git_dir / "info" / "grafts").exists():
        return False
    if (git_dir / "commondir").exists():  # git reads refs, grafts and shallow from the folder it names
        return False
    if (git_dir / "refs" / "replace").exists():
        return False
    try:
        packed = (git_dir / "packed-refs").read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return b" refs/replace/" not in packed


__all__ = ["asked_once", "parsed_once", "plain_history", "too_big_to_keep"]
