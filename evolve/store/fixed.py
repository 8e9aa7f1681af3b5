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
    from evolve.store.repo import Repo

_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_KEPT = 64  # answers kept per Repo (a long-lived watcher's Repo forgets them all past this)
_KEPT_BYTES = 8 << 20  # and their bytes: a tree of 100,000 files lists 11 MB, and a sync reads many trees


def asked_once(repo: Repo, rev: str, key: tuple, ask: Callable[[], bytes]) -> bytes:
    """`ask()`'s answer about commit `rev`, from the first time `key` was asked of this `repo`."""
    if not _ID.fullmatch(rev) or not plain_history(repo):
        return ask()
    kept = repo.fixed_answers
    full = (rev, *key)
    if full not in kept:
        answer = ask()
        if len(answer) > _KEPT_BYTES or not plain_history(repo):
            return answer  # too big to keep, or history rewritten while git answered: asked again
        if len(kept) >= _KEPT or sum(map(len, kept.values())) + len(answer) > _KEPT_BYTES:
            kept.clear()
        kept[full] = answer
    return kept[full]


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


__all__ = ["asked_once", "plain_history"]
