"""Where Codex keeps its rollouts, and the one rule that gives a rollout to a folder.

Codex stores rollouts by date (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`,
CODEX_HOME defaulting to `~/.codex`), not by project. A rollout belongs to the folder its
first line names (`session_meta.cwd`, resolved); a source folder rule covers that folder
and everything inside it, and `*` covers every folder. The first line never changes (the
file is only appended to), so what it says is cached per file. Standard library only: the
Codex hook uses `covers` on every turn.
"""

# pathlib costs more than the hook's budget: os.path it is.
# ruff: noqa: PTH100, PTH109, PTH110, PTH111, PTH112, PTH116, PTH118, PTH120, PTH123
from __future__ import annotations

import os

from evolve.regular import open_regular

ANY = "*"  # the user-scope rule: every folder
FIRST_LINE_CAP = 4 << 20  # session_meta carries the base instructions: tens of kB, not more
_FOLDERS: dict[str, tuple[int, int, str]] = {}  # path -> (device, inode, resolved cwd)
_FOLDERS_CAP = 100_000


def codex_home() -> str:
    """Codex's config folder: $CODEX_HOME or ~/.codex (absolute)."""
    raw = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return os.path.abspath(os.path.expanduser(raw))


def sessions_dir(home: str | None = None) -> str:
    return os.path.join(home or codex_home(), "sessions")


def covers(folder: str, cwd: str) -> bool:
    """Whether a source rule (`*` or an absolute folder) covers a session's resolved folder."""
    if folder == ANY:
        return True
    folder = folder.rstrip("/")
    return not folder or cwd == folder or cwd.startswith(folder + "/")


def rule_folder(raw: str) -> str:
    """A rule as written in agent.toml (`*`, `~/…` or absolute), ready for `covers`."""
    return raw if raw == ANY else os.path.realpath(os.path.expanduser(raw))


def rollout_folder(path: str) -> str | None:
    """The resolved `session_meta.cwd` of a rollout; None while its first line is unwritten.

    A file whose first line is complete but names no folder gives "" (it belongs to `*` only).
    """
    try:
        with open_regular(path) as handle:  # a FIFO among the rollouts is skipped, never waited on
            info = os.fstat(handle.fileno())
            known = _FOLDERS.get(path)
            if known is not None and known[:2] == (info.st_dev, info.st_ino):
                return known[2]
            first = handle.readline(FIRST_LINE_CAP)
    except OSError:
        return None
    if not first.endswith(b"\n"):
        return None  # still being written (or a line too long to be a session_meta)
    folder = _meta_cwd(first)
    if len(_FOLDERS) >= _FOLDERS_CAP:
        _FOLDERS.clear()
    _FOLDERS[path] = (info.st_dev, info.st_ino, folder)
    return folder


def _meta_cwd(line: bytes) -> str:
    import json  # lazily: the hook never reads a rollout

    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return ""
    payload = obj.get("payload") if isinstance(obj, dict) and obj.get("type") == "session_meta" else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return os.path.realpath(cwd) if isinstance(cwd, str) and cwd.startswith("/") else ""


def belongs(path: str, folders: list[str]) -> bool | None:
    """Whether the rollout at `path` is covered by one of `folders` (rule_folder'd); None: not yet known."""
    cwd = rollout_folder(path)
    if cwd is None:
        return None
    return any(covers(folder, cwd) for folder in folders if folder == ANY or cwd)


def rollouts(home: str | None = None, since: float | None = None) -> list[str]:
    """Every rollout file under the sessions folder (modified after `since`), sorted."""
    found = []
    for folder, dirs, files in os.walk(sessions_dir(home)):
        dirs.sort()
        for name in files:
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                path = os.path.join(folder, name)
                if since is not None:
                    try:
                        if os.stat(path).st_mtime <= since:
                            continue
                    except OSError:
                        continue
                found.append(path)
    return sorted(found)
