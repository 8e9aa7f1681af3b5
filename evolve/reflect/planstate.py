"""What an answer is planned against: the agent's files as they are, and who wrote each line.

Read under the agent's lock, just before planning: the skills, memo and guards.toml, the
authors of every line the answer touches (`git blame`; a file not yet committed is all a
person's), what a person undid, and what evolve may not write (a link, a file where a folder
belongs, conflict markers). Everything else is read only when the answer touches it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from evolve.reflect.operations import GUARD_OPS, GUARDS_FILE, SkillSnapshot, SkillState
from evolve.store.history import Commit
from evolve.workspace import conflicts
from evolve.workspace.agent import Agent
from evolve.workspace.authorship import line_authors
from evolve.workspace.curate import folder_files
from evolve.workspace.lessons import case_files
from evolve.workspace.memo import MEMO_FILE


def answer_targets(source: Mapping[str, Any]) -> set[str]:
    """The skill names an answer's operations name (whose authorship the plan must know)."""
    ops = source.get("operations")
    return (
        {op["name"] for op in ops if isinstance(op, dict) and isinstance(op.get("name"), str)}
        if isinstance(ops, list)
        else set()
    )


def person_files(agent: Agent, name: str, commits: Mapping[str, Commit]) -> bool:
    """Whether a file of the skill's folder besides SKILL.md holds lines a person wrote."""
    return any(
        any(line_authors(agent.repo, path, commits, agent.evolve_emails) or ())
        for path in folder_files(agent, name)
        if not path.endswith("/SKILL.md")
    )


def current_state(
    agent: Agent,
    source: Mapping[str, Any],
    commits: Mapping[str, Commit],
    ignored: Collection[str] | None = None,
) -> SkillState:
    """The skills, memo and guards as they are, with who wrote each line of what the answer touches.

    `ignored`: the lessons ignored at least once (a guard is only for one of them).
    """
    targets = answer_targets(source)
    snapshots = []
    skills = agent.skills()
    sizes = conflicts.smallest_markers(agent.path, {f"skills/{s.name}/SKILL.md": s.text for s in skills})
    for skill in skills:
        link = skill.path.is_symlink() or skill.path.parent.is_symlink()
        authors: tuple[bool, ...] = ()
        if skill.name in targets and not link:
            authors = _authors(agent, f"skills/{skill.name}/SKILL.md", skill.text, commits)
        snapshots.append(
            SkillSnapshot(
                skill.name,
                skill.valid,
                skill.pinned,
                skill.body,
                "" if link else skill.text,
                authors,
                skill.name in targets and person_files(agent, skill.name, commits),
                link,
                sizes[f"skills/{skill.name}/SKILL.md"],
            )
        )
    return SkillState.build(
        snapshots,
        agent.memo_text(),
        memo_authors=_authors(agent, MEMO_FILE, agent.memo_text(), commits),
        memo_refusal=_unwritable(agent.memo_path, "a file") or conflicted_memo(agent.path, agent.memo_text()),
        skills_refusal=_unwritable(agent.skills_dir, "a folder"),
        cases=case_files(agent, commits),
        **_guards_state(agent, source, commits),
        ignored=frozenset(ignored or ()),  # a guard is refused for any other lesson
    )


def _guards_state(agent: Agent, source: Mapping[str, Any], commits: Mapping[str, Commit]) -> dict:
    """guards.toml, who wrote its lines and what a person undid: read only when the answer touches it."""
    ops = source.get("operations")
    if not (isinstance(ops, list) and any(isinstance(op, dict) and op.get("op") in GUARD_OPS for op in ops)):
        return {}
    from evolve.workspace import guarding

    path = agent.path / GUARDS_FILE
    refused = _unwritable(path, "a file")
    if refused:
        return {"guards_refusal": refused}
    text = guarding.text_of(agent) if path.exists() else None
    return {
        "guards": text,
        "guards_authors": _authors(agent, GUARDS_FILE, text, commits) if text is not None else (),
        "guards_blocked": guarding.undone(agent, commits),
    }


def _authors(agent: Agent, path: str, text: str, commits: Mapping[str, Commit]) -> tuple[bool, ...]:
    """Who wrote each line of `path`; a file not yet committed is all a person's."""
    authors = line_authors(agent.repo, path, commits, agent.evolve_emails)
    return tuple(authors) if authors is not None else (True,) * (text.count("\n") + 1)


def conflicted_memo(folder: Path, text: str) -> str:
    """Why no model may write a memo holding a merge's markers (it would write into their conflict), or ""."""
    if conflicts.conflicted(folder, {MEMO_FILE: text}):
        return "memo.md holds merge conflict markers; a person must resolve them first"
    return ""


def _unwritable(path: Path, should_be: str) -> str:
    """Why evolve may not write `path` (a person made it a link, or the other kind), or ""."""
    link = path.is_symlink()
    return refusal(
        path.name,
        should_be,
        link=link,
        other_kind=path.exists() and path.is_dir() != (should_be == "a folder"),
    )


def refusal(name: str, should_be: str, *, link: bool, other_kind: bool) -> str:
    """The reason for `_unwritable` (shared with plans made from a commit that is not checked out)."""
    if link:
        return f"{name} is a symbolic link; evolve never writes through one"
    if other_kind:
        return f"{name} is not {should_be}; a person must make it one again"
    return ""
