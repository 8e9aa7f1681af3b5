"""A reflection that conflicts on replay is applied again from its stored operations.

When the server's main changed the files a local reflection changed, merging lines is not
enough (a patch's `old` moved, a person's line sits in the way, a lesson was undone there).
The answer's operations kept with the commit (`reflect.apply.store_operations`) are planned
again against the server's side, read from git objects at that commit: a person's lines
are protected and their undo wins there as in any reflection. A memo section is first
merged 3-way (the reflection's change on top of the server's section), so two reflections'
lessons both stay. What the plan cannot land waits on a `proposals/` branch, never dropped:
the operations that wait for a person, and — for an operation the new base refuses (a skill
both created, a patch whose text is gone) — the file as the reflection wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evolve.reflect.apply import changes_of, reflection_message
from evolve.reflect.compose import compose
from evolve.reflect.operations import (
    BLOCKED_REASON,
    GUARD_OPS,
    GUARDS_FILE,
    MEMO,
    RETIRE,
    Limits,
    Plan,
    SkillSnapshot,
    SkillState,
)
from evolve.reflect.planstate import answer_targets, conflicted_memo, refusal
from evolve.store.history import FOR_REVIEW, Commit
from evolve.store.repo import NOTES, Entry, Repo
from evolve.store.worktree import LINK
from evolve.workspace import conflicts
from evolve.workspace import memo as memo_mod
from evolve.workspace.agent import Agent
from evolve.workspace.authorship import line_authors, made_by_evolve
from evolve.workspace.lessons import case_files
from evolve.workspace.skills import SKILL_FILE, parse_skill

# The trailers a reflection's message derives from its plan: written anew for the new plan.
PLANNED = frozenset(
    "Evolve-Kind Evolve-Reflection Evolve-Ops Evolve-Retired Evolve-Kept Evolve-Left-Out "
    "Evolve-Evicted Evolve-Waiting Evolve-Proposal Evolve-Rejected Evolve-Format Evolve-Guard "
    "Evolve-Guard-Downgraded".split()
)
GONE = "there is no skill named"
# A person's bytes are theirs: a file that is not UTF-8 (a Latin-1 editor) is read and written
# back byte for byte (each stray byte a lone surrogate in between), never as U+FFFD.
BYTES = "surrogateescape"  # a retire of a skill the other side retired: nothing is lost


@dataclass
class Replanned:
    """What a conflicting reflection becomes on top of the server's side."""

    main: dict[str, bytes | None]  # what lands (path → bytes, None deletes)
    message: str
    parked: dict[str, bytes | None] = field(default_factory=dict)  # waits, on top of `main`
    parked_message: str = ""
    plan: Plan | None = None


def stored_operations(repo: Repo, sha: str) -> dict[str, Any] | None:
    """The answer kept with reflection `sha`: {"summary", "operations"}, None when there is none."""
    text = repo.notes([sha]).get(sha)
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("operations"), list):
        return None
    return data


def noted_reflection(repo: Repo, commit: Commit, evolve: Collection[str]) -> str | None:
    """The commit whose note holds reflection `commit`'s stored operations, None when none does.

    `commit` itself, or — git notes do not follow `git commit --amend` or a rebase — the
    reflection evolve made that `commit` is an unchanged copy of: the same `Evolve-Reflection`
    id, made by evolve (`made_by_evolve`), and the same change (`git patch-id`). A person's
    amend that changed the reflection is a different change: theirs, never the model's.
    """
    listed = repo.text("notes", "--ref", NOTES, "list", check=False).splitlines()
    noted = [c for _, _, c in (line.partition(" ") for line in listed) if c]
    if commit.sha in noted:
        return commit.sha
    reflection = commit.trailers.get("Evolve-Reflection")
    if commit.trailers.get("Evolve-Kind") != "reflection" or not reflection or not commit.parents:
        return None
    raws = repo.read_blobs(noted)  # commit objects (a pruned one is None: not a candidate)
    wanted = f"Evolve-Reflection: {reflection}"
    for sha in noted:
        raw = raws.get(sha) or b""
        if wanted not in raw.decode("utf-8", "replace").splitlines():
            continue
        original = next(iter(repo.log(sha, limit=1)), None)
        if (
            original is not None
            and original.parents
            and original.trailers.get("Evolve-Reflection") == reflection
            and made_by_evolve(original, evolve)
            and _patch_id(repo, original) == _patch_id(repo, commit)
        ):
            return sha
    return None


def _patch_id(repo: Repo, commit: Commit) -> str:
    """The change a commit makes, as `git patch-id --stable` names it (line numbers aside)."""
    diff = repo.git(
        "diff-tree", "-p", "--no-renames", "--no-color", "--full-index", commit.parents[0], commit.sha
    )
    return repo.text("patch-id", "--stable", input=diff).split(" ", 1)[0]


def replan(agent: Agent, commit: Commit, onto: str, blocked: Mapping[str, str], why: str) -> Replanned | None:
    """The reflection `commit` planned again on `onto`; None when it has no stored operations."""
    repo = agent.repo
    noted = noted_reflection(repo, commit, agent.evolve_emails)
    answer = stored_operations(repo, noted) if noted else None
    if answer is None:
        return None
    parent = commit.parents[0]
    memos = repo.read_blobs([f"{spec}:{memo_mod.MEMO_FILE}" for spec in (parent, commit.sha, onto)])
    base, mine, theirs = (
        _decoded(memos.get(f"{spec}:{memo_mod.MEMO_FILE}")) for spec in (parent, commit.sha, onto)
    )
    operations = [
        _merged_memo(repo, op, base, mine, theirs) if isinstance(op, dict) and op.get("op") == MEMO else op
        for op in answer["operations"]
    ]
    source = {"summary": answer.get("summary", ""), "operations": operations}
    history = {c.sha: c for c in repo.log(onto)}
    stored_held = answer.get("held")
    plan = compose(
        source,
        state_at(agent, onto, source, history),
        Limits.from_config(agent.config.limits),
        blocked,
        protect=True,
        held={  # what the guard held back keeps waiting for a person
            int(at): str(why) for at, why in stored_held.items() if str(at).isdigit()
        }
        if isinstance(stored_held, dict)
        else None,
    )
    files = _tree_files(repo, onto)
    main = changes_of(plan.operations, files, errors=BYTES)
    parked = changes_of(plan.waiting, files, errors=BYTES)
    refused = [r for r in plan.rejected if not r.reason.startswith((BLOCKED_REASON, GONE))]
    for rejection in refused:  # the new base refuses it: the file as the reflection wrote it waits
        for path in _paths_of(rejection.op_name, rejection.target, commit.sha, repo):
            if path == memo_mod.MEMO_FILE:
                parked[path] = _memo_with(theirs, operations, rejection.target)
            else:
                parked[path] = repo.read_blobs([f"{commit.sha}:{path}"]).get(f"{commit.sha}:{path}")
    reflection = commit.trailers.get("Evolve-Reflection") or commit.sha[:16]
    base_trailers: dict[str, object] = {k: v for k, v in commit.lines.items() if k not in PLANNED}
    base_trailers["Evolve-Replayed"] = f"planned again on {onto[:12]}: {why}"
    message = reflection_message(agent, plan.subject(), base_trailers, reflection, plan.operations, plan)
    result = Replanned(main, message, plan=plan)
    if parked:
        reasons = [f"{op.line()}: {op.why}" for op in plan.waiting] + [
            f"{r.line()} (as the reflection wrote it: {why})" for r in refused
        ]
        result.parked = parked
        result.parked_message = reflection_message(
            agent,
            f"{commit.subject.partition(': ')[2] or reflection}{FOR_REVIEW}",
            {**base_trailers, "Evolve-Review": reasons},
            reflection,
            plan.waiting,
            None,
        )
    return result


def _merged_memo(repo: Repo, op: Mapping[str, Any], base: str, mine: str, theirs: str) -> dict[str, Any]:
    """An update_memo whose content is its section merged 3-way onto the server's (a union on conflict)."""
    section = op.get("section")
    if section not in memo_mod.HEADINGS:
        return dict(op)
    contents = [memo_mod.section_content(text, section).strip("\r\n") for text in (base, mine, theirs)]
    merged = merge_lines(repo, *contents)
    return {**op, "content": merged}


def merge_lines(repo: Repo, base: str, mine: str, theirs: str) -> str:
    """`mine`'s change from `base` on top of `theirs`, line by line; both sides' lines on a conflict."""
    if mine == theirs or base == theirs:
        return mine
    if base == mine:
        return theirs
    merged = union(repo, *(text.encode("utf-8", BYTES) + b"\n" for text in (base, theirs, mine)))
    return _decoded(merged).strip("\r\n")


def union(repo: Repo, base: bytes, current: bytes, other: bytes) -> bytes:
    """Both sides' lines where they conflict (`current`'s first), deletions kept.

    A line one side removed and the other merely kept is not brought back: a person's undo stays.
    """
    merged = repo.merge_text(base, current, other, favor="union")
    old, ours, theirs = (_line_set(text) for text in (base, current, other))
    revived = ((old - ours) & theirs) | ((old - theirs) & ours)
    return b"".join(line for line in merged.splitlines(keepends=True) if line.rstrip(b"\r\n") not in revived)


def removes_lines(base: bytes, text: bytes) -> bool:
    """Whether `text` lacks a (non-blank) line `base` had: a change that is more than additions."""
    return bool(_line_set(base) - _line_set(text))


def _decoded(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", BYTES)


def _line_set(text: bytes) -> set[bytes]:
    return {line.rstrip(b"\r\n") for line in text.splitlines() if line.strip()}


def _memo_with(theirs: str, operations: list[Any], section: str) -> bytes:
    """The server's memo with one section replaced by the merged content (even over its cap)."""
    content = next(
        (op["content"] for op in operations if isinstance(op, dict) and op.get("section") == section), ""
    )
    return memo_mod.replace_section(theirs, section, content).encode("utf-8", BYTES)


def _paths_of(op_name: str, target: str, sha: str, repo: Repo) -> list[str]:
    if op_name == MEMO:
        return [memo_mod.MEMO_FILE] if target else []
    if not target or op_name == RETIRE:
        return []
    return [p for p in repo.tree_entries(sha, [f"skills/{target}"])] or [f"skills/{target}/{SKILL_FILE}"]


def _tree_files(repo: Repo, rev: str) -> Callable[[str], list[str]]:
    """The files of a skill folder at `rev` (what a retire there removes)."""
    return lambda name: sorted(repo.tree_entries(rev, [f"skills/{name}"]))


def state_at(agent: Agent, rev: str, source: Mapping[str, Any], commits: Mapping[str, Commit]) -> SkillState:
    """The skills and memo as commit `rev` holds them, with who wrote each line the answer touches.

    `reflect.planstate.current_state` reads the work tree; this reads git objects (a commit that
    is not checked out). A link is never read: a skill or memo that is one is a symlink snapshot.
    """
    repo, targets = agent.repo, answer_targets(source)
    entries = repo.tree_entries(rev, ["skills", memo_mod.MEMO_FILE])
    folders: dict[str, dict[str, Entry]] = {}
    for path, entry in entries.items():
        if path.startswith("skills/"):
            name, _, rest = path.removeprefix("skills/").partition("/")
            folders.setdefault(name, {})[rest] = entry
    wanted = [p for p in entries if p == memo_mod.MEMO_FILE or p.endswith(f"/{SKILL_FILE}")]
    blobs = repo.read_blobs([entries[p][1] for p in wanted if entries[p][0] != LINK])
    tokens = agent.config.limits.skill_body_tokens

    def authors(path: str) -> tuple[bool, ...]:
        return tuple(line_authors(repo, path, commits, agent.evolve_emails, rev) or ())

    snapshots = []
    sizes = conflicts.smallest_markers(  # this machine's attributes: a server's .gitattributes is refused
        agent.path, {p: _decoded(blobs.get(entries[p][1])) for p in wanted if p.endswith(f"/{SKILL_FILE}")}
    )
    for name, files in sorted(folders.items()):
        skill_md = files.get(SKILL_FILE)
        link = any(e[0] == LINK for e in (skill_md, files.get("")) if e)  # the file or the folder
        if skill_md is None or link:
            snapshots.append(SkillSnapshot(name, False, False, "", "", symlink=link))
            continue
        text = _decoded(blobs.get(skill_md[1]))
        skill = parse_skill(text, name, Path("skills", name, SKILL_FILE), tokens)
        mine = name in targets
        others = mine and any(any(authors(f"skills/{name}/{r}")) for r in files if r not in (SKILL_FILE, ""))
        lines = authors(f"skills/{name}/{SKILL_FILE}") if mine else ()
        size = sizes[f"skills/{name}/{SKILL_FILE}"]
        snapshot = SkillSnapshot(name, skill.valid, skill.pinned, skill.body, text, lines, others)
        snapshots.append(replace(snapshot, marker_size=size))
    memo = entries.get(memo_mod.MEMO_FILE)
    memo_link = memo is not None and memo[0] == LINK
    memo_text = "" if memo is None or memo_link else _decoded(blobs.get(memo[1]))
    folder_memo = any(p.startswith(f"{memo_mod.MEMO_FILE}/") for p in entries)
    skills = entries.get("skills")  # a file or a link where the folder should be
    guards: dict = {}
    if any(isinstance(op, dict) and op.get("op") in GUARD_OPS for op in source.get("operations") or ()):
        blob = repo.read_blobs([f"{rev}:{GUARDS_FILE}"]).get(f"{rev}:{GUARDS_FILE}")
        guards_text = None if blob is None else _decoded(blob)
        guards = {
            "guards": guards_text,
            "guards_authors": authors(GUARDS_FILE) if guards_text is not None else (),
        }
        guards["ignored"] = None  # checked when the reflection was made, against its bundle
    return SkillState.build(
        snapshots,
        memo_text,
        memo_authors=authors(memo_mod.MEMO_FILE),
        memo_refusal=refusal(memo_mod.MEMO_FILE, "a file", link=memo_link, other_kind=folder_memo)
        or conflicted_memo(
            agent.path, memo_text
        ),  # the server's memo, taken with its markers (--accept-held)
        skills_refusal=refusal(
            "skills", "a folder", link=bool(skills and skills[0] == LINK), other_kind=skills is not None
        ),
        cases=case_files(agent, commits, rev),
        **guards,
    )
