"""What holds an agent: a person's git work in its repository that every evolve write waits for.

A merge, revert, cherry-pick, rebase or bisect in progress, unmerged paths, another branch
(or a detached HEAD) checked out, a work tree behind its branch (the branch moved without
its files), a file the person staged where reflections write (the memo, a skill), or
conflict markers in memo.md or a skill (a merge committed with `--no-verify`). While one
holds, a reflection stops with exit 75 and the command that ends the hold — never
`--force`, which the same hold refuses —, a cycle skips the agent, and `evolve status`
says what holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from evolve.workspace import conflicts
from evolve.workspace import memo as memo_mod
from evolve.workspace.agent import LEARNED, Agent

MAX_READ = 4 << 20  # a larger file is no memo or skill a person keeps by hand


@dataclass(frozen=True)
class Hold:
    what: str  # in a few words, for a table: "a merge", "branch 'x' checked out", "conflict markers"
    reason: str  # the whole line: where, and the command that ends it

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "reason": self.reason}


def hold_of(agent: Agent, staged: bool = True) -> Hold | None:
    """What holds `agent` now, or None (also for a folder that is no repository).

    `staged=False` leaves out what the index holds (a file staged for the person's own commit,
    a work tree behind its branch): a write commits the person's unstaged edits first and
    asks again after.
    """
    if not (agent.path / ".git").is_dir():
        return None
    repo = agent.repo
    reason = repo.busy_reason()
    if reason:
        operation = repo.operation_in_progress()
        if operation:
            return Hold(operation, reason)
        elsewhere = repo.checked_out_elsewhere()
        label = f"{elsewhere} checked out" if elsewhere else f"{repo.branch} checked out in a worktree"
        return Hold(label, reason)
    marked = marked_files(agent)
    if marked:  # before staged files: a conflict "resolved" with `git add` alone is staged too
        return Hold(
            f"conflict markers in {marked[0]}",
            f"{agent.path / marked[0]} holds merge conflict markers (<<<<<<< ======= >>>>>>>), committed "
            "or not: resolve them and commit, then try again",
        )
    reason = repo.index_reason(LEARNED) if staged else None
    if reason and repo.behind():
        return Hold("a work tree behind its branch", reason)
    if reason:
        return Hold("staged work", reason)
    return None


def marked_files(agent: Agent) -> list[str]:
    """memo.md and the skills' SKILL.md files holding a merge's conflict markers (links never read)."""
    paths = [memo_mod.MEMO_FILE]
    skills = agent.skills_dir
    if skills.is_dir() and not skills.is_symlink():
        paths += sorted(f"skills/{entry.name}/SKILL.md" for entry in skills.iterdir() if entry.is_dir())
    texts = {path: text for path in paths if (text := _text(agent, path)) is not None}
    marked = conflicts.conflicted(agent.path, texts)  # by each file's own conflict-marker-size
    return [path for path in paths if path in marked]


def _text(agent: Agent, path: str) -> str | None:
    """The file's text if it could hold conflict markers (never through a link)."""
    target = agent.path / path
    try:
        if target.is_symlink() or target.parent.is_symlink() or not target.is_file():
            return None
        if target.stat().st_size > MAX_READ:
            return None
        raw = target.read_bytes()
    except OSError:
        return None
    return raw.decode("utf-8", "replace") if conflicts.may_hold(raw) else None
