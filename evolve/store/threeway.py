"""A commit's change re-applied on another tip, 3-way, and one file merged line by line.

What `revert`, accepting a proposal and sync's replay need: the change is applied in a
scratch index (never the person's), so a conflict leaves nothing behind; the answer is
what applied cleanly and which paths did not. `Repo` calls these.
"""

from __future__ import annotations

from pathlib import Path

from evolve.errors import UserError
from evolve.store.files import scratch
from evolve.store.git import GitError

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Entry, Repo


def replay_changes(repo: Repo, sha: str, *, reverse: bool = False) -> dict[str, bytes | None]:
    """Commit `sha`'s change (or its undoing) re-applied on top of the tip, 3-way, whole."""
    verb = "revert" if reverse else "apply"
    changes, left = replay_files(repo, sha, reverse=reverse)
    if left:
        remedy = "revert the later commit first" if reverse else "reject it instead"
        raise UserError(
            f"cannot {verb} {sha[:12]} cleanly: a later commit changed the same lines of "
            f"{', '.join(left)}; {remedy} or edit the files by hand"
        )
    return changes


def replay_files(
    repo: Repo, sha: str, *, reverse: bool = False, base: str | None = None
) -> tuple[dict[str, bytes | None], list[str]]:
    """Commit `sha`'s change (since `base`, default its parent) re-applied on the tip, 3-way.

    (path → new bytes for the files that apply cleanly, the paths that do not).
    """
    entries, left = replay_entries(repo, sha, reverse=reverse, base=base)
    blobs = repo.read_blobs([entry[1] for entry in entries.values() if entry])
    return {path: (blobs[entry[1]] if entry else None) for path, entry in entries.items()}, left


def replay_entries(
    repo: Repo,
    sha: str,
    *,
    reverse: bool = False,
    only: list[str] | None = None,
    onto: str | None = None,
    base: str | None = None,
) -> tuple[dict[str, Entry | None], list[str]]:
    """`replay_files` as tree entries (path → (mode, blob), None: deleted), on `onto` (the tip).

    Modes travel (a symlink stays a symlink, an executable stays one); binary files too.
    `base` (default: `sha`'s parent) makes the change several commits' (a branch's).
    """
    base = base or f"{sha}^"
    paths = repo.changed_paths(base, sha, only)
    if not paths:
        raise UserError(f"{sha[:12]} changed nothing; there is nothing to {'revert' if reverse else 'apply'}")
    left: list[str] = []
    with scratch(repo.git_dir, "evolve-idx-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        repo.git("read-tree", onto or repo.tip() or "", env=env)
        for path in paths:
            patch = repo.git("diff", "--binary", "--full-index", "--no-renames", base, sha, "--", path)
            try:
                repo.git("apply", "--cached", *(["-R"] if reverse else []), "--3way", input=patch, env=env)
            except GitError:
                left.append(path)  # a conflict (its stages stay in this scratch index only)
                continue
            if repo.git("ls-files", "--unmerged", "--", path, env=env).strip():
                left.append(path)
        applied = [p for p in paths if p not in left]
        staged = repo.text("ls-files", "-s", "--", *applied, env=env).splitlines() if applied else []
    found: dict[str, Entry | None] = {}
    for line in staged:
        meta, _, path = line.partition("\t")
        mode, blob = meta.split()[:2]
        found[path] = (mode, blob)
    return {path: found.get(path) for path in applied}, left


def merge_text(repo: Repo, base: bytes, current: bytes, other: bytes, *, favor: str = "union") -> bytes:
    """`other`'s change from `base` merged into `current`, line by line (`git merge-file`).

    Where both changed the same lines `favor` decides: "current", "other", or "union"
    (both sides' lines, `current`'s first); "none": a conflict raises GitError. Text only:
    a binary file raises GitError.
    """
    flag = {"current": ["--ours"], "other": ["--theirs"], "union": ["--union"], "none": []}[favor]
    with scratch(repo.git_dir, "evolve-merge-") as tmp:
        files = []
        for name, data in (("current", current), ("base", base), ("other", other)):
            (Path(tmp) / name).write_bytes(data)
            files.append(str(Path(tmp) / name))
        return repo.git("merge-file", "-p", *flag, *files)


__all__ = ["merge_text", "replay_changes", "replay_entries", "replay_files"]
