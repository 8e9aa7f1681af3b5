"""The agent the plugin tests share: one memo bullet and one skill, committed by evolve."""

from __future__ import annotations

from pathlib import Path

from evolve.workspace.agent import Agent
from tests.helpers import evolve_commit, make_agent, skill_text

BULLET = "Always use pnpm in this repository, never npm."
MEMO = (
    "# Memo of demo\n\n## What I do well and where I often stumble\n\n"
    f"## Strategies for this user and domain\n\n- {BULLET}\n"
)


def learned(home: Path | None = None) -> Agent:
    """An agent with one memo bullet and one skill."""
    agent = make_agent("demo", home)
    evolve_commit(
        agent,
        {"memo.md": MEMO.encode(), "skills/fix-tests/SKILL.md": skill_text("fix-tests").encode()},
    )
    return agent
