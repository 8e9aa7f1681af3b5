"""What an agent repository has checked out, and its branch tips, read from `.git` (no git process).

evolve writes, and a session reads, only the agent's branch: another branch, a proposal
or a detached HEAD checked out means a person is looking at something else, and its files
are neither committed to the agent's branch nor shown to the agent. The session-start hook
asks too, so this stays one small file read; so does its look at the proposal branches.
"""

from __future__ import annotations

from pathlib import Path

BRANCH = "main"  # the branch an agent reads and evolve writes
PROPOSALS = "proposals/"  # the branches of what waits for a person's review


def checked_out_elsewhere(git_dir: Path, branch: str) -> str | None:
    """What HEAD holds when it is not `branch` ("branch 'x'", "a detached HEAD"), or None."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None  # not a repository (yet): others say so
    if head == f"ref: refs/heads/{branch}":
        return None
    if head.startswith("ref: refs/heads/"):
        return f"branch '{head.removeprefix('ref: refs/heads/')}'"
    return "a detached HEAD"


def branch_tips(git_dir: Path, prefix: str) -> dict[str, str]:
    """Branch name → tip of the branches named `<prefix><name>` (a loose ref wins over a packed one)."""
    tips: dict[str, str] = {}
    full = f"refs/heads/{prefix}"
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="utf-8", errors="replace")
    except OSError:
        packed = ""
    for line in packed.splitlines():
        sha, _, ref = line.partition(" ")
        if ref.startswith(full) and "/" not in ref[len(full) :]:
            tips[ref.removeprefix("refs/heads/")] = sha
    try:
        loose = sorted((git_dir / full).iterdir())
    except OSError:
        loose = []
    for path in loose:
        try:
            sha = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:  # a folder, or gone meanwhile
            continue
        if sha:
            tips[prefix + path.name] = sha
    return tips
