"""The skill state the `apply_reflection` tests compose against (tests/reflect/answers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.reflect.operations import SkillState
from evolve.workspace.skills import parse_skill
from tests.reflect.answers import BROKEN, MEMO, PINNED, REBASE


@pytest.fixture
def state() -> SkillState:
    """Built from `Skill` objects, as `list_skills` returns them."""
    skills = [
        parse_skill(text, name, Path("skills", name, "SKILL.md"))
        for name, text in (("git-rebase", REBASE), ("pinned-one", PINNED), ("broken-one", BROKEN))
    ]
    built = SkillState.build(skills, MEMO)
    flags = [(s.valid, s.pinned) for s in built.skills.values()]
    assert flags == [(True, False), (True, True), (False, False)]
    return built
