"""What a person's index holds against the branch: their staged files, or a branch that moved on.

evolve builds its commits from the branch tip plus the exact files it writes, but what it
writes is read from the work tree, and a person's edit is committed from it. Two states of
the index make that wrong, and both stop evolve (exit 75) rather than guess:

- a file staged with `git add`: the person's coming commit, with their message. evolve
  never writes over it (its version would carry their staged lines as the model's);
- an index the branch moved away from (`git update-ref`, a commit from a second worktree
  of the branch): it still holds an older commit's files for paths the branch changed
  since. Committing them, as a reflection or as "the person's edit", would silently undo
  that commit. Told apart from a person's staging by content: a staged file whose blob is
  the one an ancestor of the tip had (the branch's reflog and recent history are asked).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from evolve.store.git import ZERO

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Entry, Repo

LOOK_BACK = 20  # how many former tips (reflog) and ancestors an index left behind is looked for in


def staged(repo: Repo) -> dict[str, Entry | None]:
    """Path → its index entry (None: removed there) for every path the index holds unlike the tip.

    While the branch has no commit (a person deleted it, say), all the index holds is staged.
    """
    compared = against_tip(repo)
    return _index_entries(repo) if compared is None else compared[0]


def against_tip(repo: Repo) -> tuple[dict[str, Entry | None], bool] | None:
    """(`staged`'s answer, whether a path is unmerged) from one `git diff-index`; None: no tip.

    An unmerged path is listed with status U (its entry None), as `ls-files --unmerged` lists it.
    """
    out = repo.at_tip("diff-index", "--cached", "-z", "--no-renames")
    if out is None:
        return None
    fields = out.split(b"\0")
    found: dict[str, Entry | None] = {}
    unmerged = False
    for index in range(0, len(fields) - 1, 2):
        meta = fields[index].decode()
        if not meta.startswith(":"):
            continue
        _old_mode, mode, _old, blob, status = meta[1:].split()
        path = fields[index + 1].decode("utf-8", "surrogateescape")
        found[path] = None if mode == "000000" or blob == ZERO else (mode, blob)
        unmerged = unmerged or status == "U"
    return found, unmerged


def _index_entries(repo: Repo) -> dict[str, Entry | None]:
    """Path → (mode, blob) of every file the index holds."""
    found: dict[str, Entry | None] = {}
    for item in filter(None, repo.git("ls-files", "--stage", "-z").split(b"\0")):
        meta, _, path = item.partition(b"\t")
        mode, blob, _stage = meta.decode().split()
        found[path.decode("utf-8", "surrogateescape")] = (mode, blob)
    return found


def left_behind(repo: Repo, tip: str, entries: Mapping[str, Entry | None]) -> str | None:
    """The ancestor of `tip` whose files the index still holds (the branch moved without it), or None.

    Evidence is a staged file whose blob is the one that ancestor has at that path: a person
    `git add`s new content. A removal alone proves little (any commit before a file existed
    lacks it): only the tip the branch moved from counts for it (`_before_added`), nor does a
    former tip that is not an ancestor (`git reset --soft` leaves the person's own newer work
    staged).
    """
    present = {path: entry[1] for path, entry in entries.items() if entry is not None}
    branch = f"refs/heads/{repo.branch}"
    former = repo.text("log", "-g", "--format=%H", f"-n{LOOK_BACK}", branch, "--", check=False).split()
    if not present:
        return _before_added(repo, tip, former, [path for path in entries if not (repo.path / path).exists()])
    older = repo.text("rev-list", f"--max-count={LOOK_BACK}", f"{tip}^@", "--", check=False).split()
    candidates = list(dict.fromkeys(sha for sha in former + older if sha != tip))
    found = _blob_ids(repo, [f"{sha}:{path}" for sha in candidates for path in present])
    for sha in candidates:
        if any(found.get(f"{sha}:{path}") == blob for path, blob in present.items()):
            if repo.is_ancestor(sha, tip):
                return sha
    return None


def _before_added(repo: Repo, tip: str, former: list[str], removed: list[str]) -> str | None:
    """The branch's former tip, when the index and the work tree both lack what it added since.

    A branch moved to a commit that adds files (`git update-ref`) leaves them staged as
    removals; taken for a person's `git rm`, the advice (`commit it`, `git restore --staged`)
    would delete what that commit added. Only the tip the branch moved from counts, only
    when it is an ancestor lacking every removed path, also gone from the work tree, and only
    when the branch moved after the index was last written: a person's `git rm` of a skill
    the last commit added writes the index after that move.
    """
    previous = next((sha for sha in former if sha != tip), None)
    if not removed or previous is None or not _moved_since_index(repo):
        return None
    if not repo.is_ancestor(previous, tip):
        return None
    return None if _blob_ids(repo, [f"{previous}:{path}" for path in removed]) else previous


def _moved_since_index(repo: Repo) -> bool:
    """Whether the branch's reflog was written after the index (the branch moved without it)."""
    try:
        moved = (repo.git_dir / "logs" / "refs" / "heads" / repo.branch).stat().st_mtime_ns
        return moved > (repo.git_dir / "index").stat().st_mtime_ns
    except OSError:
        return False


def _blob_ids(repo: Repo, specs: Iterable[str]) -> dict[str, str]:
    """`rev:path` → the blob id there, for those that exist (one `git cat-file --batch-check`)."""
    wanted = [spec for spec in specs if "\n" not in spec]
    if not wanted:
        return {}
    out = repo.git(
        "cat-file", "--batch-check=%(objectname)", input="".join(s + "\n" for s in wanted).encode()
    )
    ids = out.decode().splitlines()
    return {spec: sha for spec, sha in zip(wanted, ids, strict=False) if " " not in sha}


def under(paths: Iterable[str], holds: Sequence[str]) -> list[str]:
    """Those of `paths` that are one of `holds` or inside one of them (a folder), sorted."""
    return sorted(p for p in paths if any(p == h or p.startswith(h.rstrip("/") + "/") for h in holds))


def behind_message(repo: Repo, older: str) -> str:
    """One line: the state, how it comes about, and the git command that ends it."""
    branch = repo.branch
    return (
        f"the work tree of {repo.path} is behind {branch}: its index still holds {older[:12]}'s files "
        f"({branch} moved without them: `git update-ref`, or a commit in another worktree of {branch}); "
        f"`git update-index -q --refresh && git read-tree -m -u {older[:12]} {branch}` brings them up "
        "to date and keeps your changes "
        "(or `git commit` what is staged, if you mean that older version), then try again"
    )


def staged_message(repo: Repo, path: str) -> str:
    """One line: which staged file holds evolve back, and what frees it."""
    if repo.tip() is None:  # `git restore --staged` needs a commit to restore from
        return (
            f"{repo.path / path} is staged (`git add`) while {repo.branch} has no commit (it was deleted, "
            f"say), so evolve does not write over it; `git commit` what is staged (or unstage it: "
            f"`git rm --cached {path}`), then try again"
        )
    return (
        f"{repo.path / path} is staged (`git add`) for your own commit, so evolve does not write over "
        f"it; commit it (or unstage it: `git restore --staged {path}`), then try again"
    )


__all__ = ["against_tip", "behind_message", "left_behind", "staged", "staged_message", "under"]
