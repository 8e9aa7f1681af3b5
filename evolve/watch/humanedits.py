"""Human edits of an agent repository: which file events count, and committing them.

Editors save in many ways — in place (the file is empty for a moment), temp file + rename,
vim's backup rename (`file~`, the `4913` probe), JetBrains' `___jb_tmp___`/`___jb_old___`
dance. Events only say *that* an agent's repository moved; nothing is committed until the
agent has been quiet for `human_edit_quiet_s`, and then what is committed is read from the
working tree by `Agent.commit_human_edits()`, so an intermediate state is never taken.
Editor temp names never start a pending edit (and the repo's .gitignore keeps them out).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from pathlib import Path

from evolve.errors import Busy
from evolve.home import Home
from evolve.store import ledger
from evolve.store.locks import is_locked
from evolve.store.repo import LOCK, Repo

log = logging.getLogger("evolve.watch")
_TEMP = re.compile(
    r"""(
        .*~                                   # vim/emacs backups (and vim's .x.un~)
      | .*\.sw[a-px]                          # vim swap files (and its .swx probe)
      | \d+                                   # vim's write probe: 4913, 5036, …
      | .*___jb_(tmp|old)___                  # JetBrains safe write
      | \.\#.* | \#.*\#                       # emacs lock and autosave files
      | \.goutputstream-.*                    # gedit / GIO atomic replace
      | .*\.kate-swp | \.DS_Store
      | .*\.evolve-tmp                        # evolve's own atomic writes
    )$""",
    re.VERBOSE,
)


def is_editor_temp(name: str) -> bool:
    """Whether a file name is an editor's (or evolve's) intermediate file."""
    return bool(_TEMP.fullmatch(name))


def repo_path(agents_dir: str, path: str) -> tuple[str, str] | None:
    """(agent, path inside its repo) for a path in an agent repo; None inside `.git/`."""
    prefix = agents_dir.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix) :].split(os.sep)  # noqa: PTH206 - event paths are hot strings
    if len(parts) < 2 or parts[0].startswith(".") or parts[1] == ".git" or not parts[1]:
        return None
    return parts[0], "/".join(parts[1:])


def counts_as_edit(rel: str) -> bool:
    """A path whose change may be a person's edit (not an editor's temp file)."""
    return not is_editor_temp(rel.rsplit("/", 1)[-1])


def uncommitted(repo: Path) -> bool:
    """Whether the files differ from the branch at all (one `git status`): most checks end here."""
    return bool(Repo(repo).dirty_paths())


def busy_reason(repo: Path) -> str | None:
    """Why committing a person's edits must wait now, or None.

    evolve's writer lock held → evolve is writing (its own files are not human edits; once
    it has committed, the tree equals HEAD and there is nothing to commit). A work tree
    behind its branch holds an older commit's files: committing them would undo the
    commit the branch moved to. A journal with
    no live holder is a dead writer's leftover: `Repo.locked()` recovers it before the
    person's edits are committed, so it does not block.
    """
    git_dir = repo / ".git"
    if is_locked(git_dir / LOCK):
        return "evolve is writing"
    if (git_dir / "index.lock").exists():
        return "git is writing the index"
    what, elsewhere = Repo(repo).operation_in_progress(), Repo(repo).checked_out_elsewhere()
    if what:
        return f"a git operation is in progress ({what})"
    if elsewhere:
        return f"{elsewhere} is checked out (edits there are not the agent's)"
    return Repo(repo).index_reason()  # the branch moved without its files: older files are no edit


def repo_signature(repo: Path) -> dict[str, tuple[int, int]]:
    """{path: (size, mtime_ns)} of the repository's files outside `.git/`, temp names skipped."""
    found: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(repo):
        if root == str(repo):
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            if is_editor_temp(name):
                continue
            full = Path(root, name)
            try:
                st = full.lstat()
            except OSError:
                continue
            found[full.relative_to(repo).as_posix()] = (st.st_size, st.st_mtime_ns)
    return found


def commit_edits(
    conn: sqlite3.Connection, home: Home, name: str, now: float | None = None
) -> tuple[str, list[str]] | None:
    """Commit what a person left uncommitted and record a `human_edit` event.

    Returns (sha, paths), or None when the tree already equals HEAD (e.g. after evolve's
    own write) or the agent is gone.
    """
    from evolve.workspace.agent import Agent

    agent = Agent(home, name)
    if not (agent.path / ".git").is_dir():
        return None
    sha = agent.commit_human_edits()
    if sha is None:
        return None
    out = agent.repo.text("diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "-z", sha)
    paths = [p for p in out.split("\0") if p]
    with ledger.transaction(conn):
        ledger.add_event(conn, name, "human_edit", {"paths": paths, "commit": sha}, now)
    return sha, paths


def commit_or_wait(conn: sqlite3.Connection, home: Home, name: str, repo: Path, now: float) -> bool:
    """Commit agent `name`'s human edits, logged; False: they wait (a person's git work, evolve writing).

    A secret the edit brought is logged as the pre-commit hook would have said it.
    """
    reason = busy_reason(repo)
    if reason:
        log.debug("%s: human edits wait: %s", name, reason)
        return False
    try:
        done = commit_edits(conn, home, name, now=now)
    except Busy as exc:  # evolve writing, or the person's git state since the check above
        log.debug("%s: human edits wait: %s", name, exc)
        return False
    if done:
        log.info("%s: committed a human edit %s (%s)", name, done[0][:12], ", ".join(done[1]))
        for found in secrets_in(repo, done[0]):  # what the pre-commit hook says
            log.warning(
                "%s: %s; remove it if it should not be there: the agent reads it, and no sync pushes "
                "it without `evolve sync --push-anyway %s`",
                name,
                found,
                name,
            )
    return True


def secrets_in(repo: Path, sha: str) -> list[str]:
    """Secrets on the lines a person's edit (commit `sha`) brought to memo.md or skills/: one line each.

    The pre-commit hook warns about them when the person commits; evolve commits their edits
    itself, so the watcher says it instead (the file, the line and the rule, never the secret).
    """
    from evolve.sync.secrets import added_secrets  # the rules a push is held by

    return added_secrets(Repo(repo), f"{sha}^", sha)
