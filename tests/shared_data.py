"""Where `../shared` is: beside the checkout, or beside the folder holding it (a worktree).

The real transcripts and references live there (a git worktree such as `wt/<branch>/` is
one folder deeper than the main checkout). Standard library only: the benchmarks import it.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (folder / "shared" for folder in ROOT.parents[:2] if (folder / "shared" / "data").is_dir()),
    ROOT.parent / "shared",
)
CLAUDE_DATA = SHARED / "data" / "claude-code"
CODEX_DATA = SHARED / "data" / "codex"
