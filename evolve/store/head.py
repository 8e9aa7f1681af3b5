"""What an agent repository has checked out, read from `.git/HEAD` (no git process).

evolve writes, and a session reads, only the agent's branch: another branch, a proposal
or a detached HEAD checked out means a person is looking at something else, and its files
are neither committed to the agent's branch nor shown to the agent. The session-start hook
asks too, so this stays one small file read.
"""

from __future__ import annotations

from pathlib import Path

BRANCH = "main"  # the branch an agent reads and evolve writes


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
