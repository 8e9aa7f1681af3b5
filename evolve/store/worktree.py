"""An agent repository's work tree as files: what evolve may write there, how, and what differs.

evolve writes its files itself (links as links, modes as git has them, never through a
symlink or outside the tree) and never a file git reads for itself (`.gitattributes`
filters, `.gitmodules` URLs, anything under `.git`). What differs from the branch tip is
read with evolve's own files counted whatever ignore rules say. `Repo` calls these.
"""

from __future__ import annotations

import os
from pathlib import Path

from evolve.errors import PathRefused
from evolve.store import indexfile
from evolve.store.files import atomic_symlink, atomic_write

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Repo

# evolve's files: committed whatever ignore rules say
OWN_PATHS = ("memo.md", "agent.toml", "guards.toml", "skills")
UNWRITABLE = (".git", ".gitmodules", ".gitattributes")  # into git's own files, or making git run filters
WHY = "it could make git run filters, fetch from elsewhere or write into .git"  # why they are refused
LINK = "120000"
EXECUTABLE = "100755"
_FLAGGED: dict[tuple[str, int, int, int], list[str]] = {}  # index key → evolve's files git does not look at


def refused_path(path: str) -> bool:
    """Whether evolve never writes `path`: not a plain relative path in the work tree, or one git reads."""
    parts = Path(path).parts
    return (
        not parts or Path(path).is_absolute() or ".." in parts or any(p.lower() in UNWRITABLE for p in parts)
    )


def plain_path(repo: Repo, path: str) -> Path:
    """`path` in the work tree; PathRefused for one evolve never writes (`refused_path`)."""
    if refused_path(path):
        raise PathRefused(f"refusing to write outside the agent repository: {path!r}")
    return repo.path.joinpath(*Path(path).parts)


def safe_path(repo: Repo, path: str) -> Path:
    """Refuse anything that is not a plain relative path inside the work tree."""
    target = plain_path(repo, path)
    for parent in [target, *target.parents]:
        if parent == repo.path:
            break
        if parent.is_symlink():
            raise PathRefused(f"refusing to write through a symlink: {path!r}")
    return target


def write_file(repo: Repo, path: str, content: bytes | None, mode: str | None = None) -> None:
    """Write (None: delete) one file; with a git `mode`, as a link or with that mode."""
    target = safe_path(repo, path)
    if content is None:
        target.unlink(missing_ok=True)
        parent = target.parent
        while parent != repo.path and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    elif mode == LINK:
        atomic_symlink(target, content)
    else:
        atomic_write(target, content, executable=None if mode is None else mode == EXECUTABLE)


def current(repo: Repo, path: str) -> bytes | None:
    """A work-tree file's bytes, a link's target (never followed), None when absent."""
    target = repo.path / path
    try:
        if target.is_symlink():
            return os.fsencode(target.readlink())
        return target.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def is_executable(repo: Repo, path: str) -> bool:
    target = repo.path / path
    return target.is_file() and os.access(target, os.X_OK)


def check_out(repo: Repo, rev: str) -> None:
    """Every file of `rev` written into an empty work tree, and the index made to match.

    For a fresh clone: evolve writes the files itself (links as links, no filters, no
    hooks), never `git checkout`.
    """
    entries = repo.tree_entries(rev)
    blobs = repo.read_blobs(sorted({blob for _mode, blob in entries.values()}))
    for path, (mode, blob) in sorted(entries.items()):
        write_file(repo, path, blobs.get(blob) or b"", mode)
    repo.git("read-tree", rev)
    repo.git("update-index", "-q", "--refresh", check=False)


def dirty_paths(repo: Repo) -> list[str]:
    """Paths whose working-tree content differs from the branch tip (incl. untracked).

    evolve's own files (`OWN_PATHS`: the memo, agent.toml, everything under skills/) count
    whatever a `.gitignore` (one pushed to the server, say) or a person's global excludes
    say: only the editor temp files the agent template ignores stay out.
    """
    out = repo.git(  # one process: the branch first, ignored files as "!! path", each one (-uall)
        *("status", "--porcelain=v1", "-z", "--branch", "--no-ahead-behind"),
        *("--untracked-files=all", "--no-renames", "--ignored=traditional"),
    )
    branch, _, entries = out.decode("utf-8", "surrogateescape").partition("\0")
    if branch == f"## No commits yet on {repo.branch}":
        return []  # nothing committed yet: no tip to differ from
    paths: set[str] = set()
    ignored: set[str] = set()
    for entry in entries.split("\0"):
        if len(entry) > 3:
            (ignored if entry[:2] == "!!" else paths).add(entry[3:])
    own = {p for p in ignored if p in OWN_PATHS or any(p.startswith(f"{d}/") for d in OWN_PATHS)}
    return sorted(paths | _not_template_ignored(repo, own) | _hidden_from_status(repo))


def _hidden_from_status(repo: Repo) -> set[str]:
    """Own files a person told git not to look at whose content differs from the tip.

    (`update-index --assume-unchanged`, `--skip-worktree`): status never lists them, and
    a write composed from the work tree would carry the person's edit as evolve's.
    """
    flagged = _flagged_own_paths(repo)
    if not flagged:
        return set()
    tip = {}
    for entry in repo.text("ls-tree", "-z", "HEAD", "--", *flagged).split("\0"):
        meta, _, path = entry.partition("\t")
        if path:
            tip[path] = meta.split()[2]
    present = [p for p in flagged if (repo.path / p).is_file()]
    hashed = repo.text("hash-object", "--", *present).split("\n") if present else []
    now = dict(zip(present, hashed, strict=True))
    return {p for p in flagged if now.get(p) != tip.get(p)}


def _not_template_ignored(repo: Repo, ignored: set[str]) -> set[str]:
    """Of evolve's own files that ignore rules hide, those the agent template does not ignore."""
    if not ignored:
        return set()
    listing = ("ls-files", "-z", "--others", "--ignored")
    temp = repo.text(*listing, *(f"--exclude={p}" for p in _template_ignores()), "--", *OWN_PATHS)
    return ignored - set(temp.split("\0"))


def _template_ignores() -> list[str]:
    """The patterns of the agent template's `.gitignore` (editor temp files, evolve's own)."""
    from importlib import resources

    text = (resources.files("evolve.template_workspace") / "gitignore").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _flagged_own_paths(repo: Repo) -> list[str]:
    """Own files marked assume-unchanged or skip-worktree.

    Read from the index file while no entry there is flagged at all (the usual case: no git
    process); else one `git ls-files -v` per change of the index.
    """
    try:
        st = (repo.git_dir / "index").stat()
    except OSError:
        return []
    key = (str(repo.git_dir), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _FLAGGED:
        if len(_FLAGGED) > 4096:
            _FLAGGED.clear()
        _FLAGGED[key] = [] if indexfile.plain_entries(repo.git_dir) else _flagged_listed(repo)
    return _FLAGGED[key]


def _flagged_listed(repo: Repo) -> list[str]:
    """`_flagged_own_paths` from `git ls-files -v` (lowercase: assume-unchanged, S: skip-worktree)."""
    listing = repo.git("ls-files", "-v", "-z", "--", *OWN_PATHS).decode("utf-8", "surrogateescape")
    entries = [e for e in listing.split("\0") if len(e) > 2]
    return [e[2:] for e in entries if e[0].islower() or e[0] == "S"]


__all__ = [
    "EXECUTABLE",
    "LINK",
    "OWN_PATHS",
    "WHY",
    "check_out",
    "current",
    "dirty_paths",
    "is_executable",
    "plain_path",
    "refused_path",
    "safe_path",
    "write_file",
]
