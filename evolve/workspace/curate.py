"""A person's hand on the skill set: pin, unpin, restore from history, prune to the cap.

Each is one commit under the agent's lock (a person's uncommitted edits are committed
first, as theirs), with an `Evolve-Kind` trailer so `evolve log` tells them apart.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from evolve.errors import UserError
from evolve.names import check_name
from evolve.store.files import sha256
from evolve.store.history import PROPOSALS, Commit, build_message
from evolve.workspace import skills as skills_mod
from evolve.workspace.agent import Agent
from evolve.workspace.authorship import line_authors, made_by_evolve

PIN_KEY = "pinned"


@dataclass
class Done:
    """What a curation command did (or, with dry_run, would do)."""

    agent: str
    action: str
    skill: str | None = None
    commit: str | None = None
    changed: bool = True
    evicted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    restored_from: str | None = None
    proposal: str | None = None  # with a remote, what waits for review there instead

    def to_dict(self) -> dict:
        data = {
            "agent": self.agent,
            "action": self.action,
            "commit": self.commit,
            "changed": self.changed,
            "notes": self.notes,
        }
        if self.restored_from:
            data["restored_from"] = self.restored_from
        if self.skill is not None:
            data["skill"] = self.skill
        if self.action == "prune":
            data["evicted"] = self.evicted
            data["proposal"] = self.proposal
        return data


def set_pinned(agent: Agent, name: str, pinned: bool) -> Done:
    """Pin (or unpin) a skill: `metadata.pinned` in its frontmatter, every other byte kept."""
    check_name(name, "skill")
    action = "pin" if pinned else "unpin"
    with agent.repo.locked():
        agent.commit_human_edits_held()
        skill = agent.skill(name)
        if skill.pinned == pinned:
            return Done(
                agent.name,
                action,
                name,
                changed=False,
                notes=[f"skill {name!r} is already {'pinned' if pinned else 'not pinned'}"],
            )
        try:
            text = skills_mod.set_metadata_key(skill.text, PIN_KEY, "true" if pinned else None)
        except ValueError as exc:
            raise UserError(
                f'cannot {action} {name!r}: {exc} (set `metadata: pinned: "true"` in {skill.path})'
            ) from None
        after = skills_mod.parse_skill(text, name, skill.path, agent.config.limits.skill_body_tokens)
        if after.pinned != pinned or (skill.valid and not after.valid):
            raise UserError(
                f"cannot {action} {name!r} safely: its frontmatter is not in a form "
                f"evolve edits; edit {skill.path} by hand"
            )
        message = build_message(
            f"{action}({agent.name}): {name}", {"Evolve-Kind": action, "Evolve-Skill": name}
        )
        sha = agent.repo.commit_changes(
            {f"skills/{name}/SKILL.md": text.encode("utf-8")}, message, agent.evolve_identity
        )
    notes = [f"note: {p}" for p in after.problems]
    return Done(agent.name, action, name, sha, notes=notes)


def _removal(agent: Agent, name: str) -> str:
    """The newest commit that deleted the skill's SKILL.md (a retire, an eviction, an edit)."""
    out = agent.repo.text(
        "log",
        "--format=%H",
        "--diff-filter=D",
        "-n1",
        agent.repo.tip() or "HEAD",
        "--",
        f"skills/{name}/SKILL.md",
    )
    if not out:
        raise UserError(
            f"agent {agent.name!r} never had a skill {name!r} that was removed; see `evolve log {agent.name}`"
        )
    return out.split()[0]


def _folder_at(agent: Agent, rev: str, name: str) -> dict[str, tuple[str, bytes]]:
    """Path → (git mode, bytes) of the skill folder at `rev` (files and symlinks only)."""
    return agent.repo.folder_at(rev, f"skills/{name}")


def restore(agent: Agent, name: str) -> Done:
    """Bring back a retired or evicted skill exactly as it was just before it was removed.

    Restored as it was even if it breaks today's limits (a person asked for that content):
    the problems are reported, `evolve doctor` keeps reporting them, and evolve will not
    patch the skill until a person fixes it.
    """
    check_name(name, "skill")
    with agent.repo.locked():
        agent.commit_human_edits_held()
        folder = agent.skills_dir / name
        if folder.exists() or folder.is_symlink():
            raise UserError(f"skill {name!r} exists; nothing to restore (see `evolve skills {agent.name}`)")
        removed = _removal(agent, name)
        files = _folder_at(agent, f"{removed}^", name)
        if f"skills/{name}/SKILL.md" not in files:
            raise UserError(
                f"{removed[:12]} removed skills/{name}/SKILL.md but it was not there "
                "before; nothing to restore"
            )
        changes = {path: data for path, (_mode, data) in files.items()}
        for path in changes:
            agent.repo.safe_path(path)  # refused before anything touches the disk
        with agent.repo.journalled(changes):  # written with their modes and links, then committed
            for path, (mode, data) in sorted(files.items()):
                target = agent.path / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if mode == "120000":
                    target.symlink_to(os.fsdecode(data))
                else:
                    target.write_bytes(data)
                    target.chmod(0o755 if mode == "100755" else 0o644)
            message = build_message(
                f"restore({agent.name}): {name}",
                {"Evolve-Kind": "restore", "Evolve-Skill": name, "Evolve-Restored-From": removed},
            )
            sha = agent.repo.commit_changes(changes, message, agent.evolve_identity, write_worktree=False)
    agent.sync_links()
    skill = skills_mod.load_skill(folder, agent.config.limits.skill_body_tokens)
    notes = [f"restored as it was, but today: {p}" for p in skill.problems]
    count = len(agent.skills())
    if count > agent.config.limits.max_skills:
        notes.append(
            f"the agent now has {count} skills, over max_skills = "
            f"{agent.config.limits.max_skills}; `evolve prune {agent.name}` would evict "
            "the least used"
        )
    return Done(agent.name, "restore", name, sha, notes=notes, restored_from=removed)


def plan_prune(agent: Agent, usage: dict[str, dict]) -> tuple[list[str], list[str]]:
    """(skills to evict, notes): the cap applied with the reflection's eviction order."""
    live = agent.skills()
    cap = agent.config.limits.max_skills
    excess = len(live) - cap
    if excess <= 0:
        return [], []
    commits = {c.sha: c for c in agent.repo.log()}
    mine = persons_skills(agent, [s.name for s in live], commits)
    evict = eviction_candidates(agent, live, usage, keep=mine)[:excess]
    notes = []
    if len(evict) < excess:
        notes.append(
            f"{len(live) - len(evict)} skills stay over max_skills = {cap}: broken and "
            "pinned skills, and skills holding lines a person wrote, are never evicted"
        )
    return evict, notes


def eviction_candidates(
    agent: Agent, live: list[skills_mod.Skill], usage: dict[str, dict], keep: Collection[str] = ()
) -> list[str]:
    """The skills that may be evicted, in eviction order (never broken, pinned or in `keep`)."""
    history = agent.repo.skill_history()
    candidates = {
        s.name: {
            "created_at": history[s.name].created_at if s.name in history else None,
            "last_used_at": usage.get(s.name, {}).get("last_used_at"),
        }
        for s in live
        if s.valid and not s.pinned and s.name not in keep
    }
    return eviction_order(candidates)


def eviction_order(candidates: dict[str, dict]) -> list[str]:
    """Never-invoked skills first (oldest created first), then least recently invoked.

    `candidates`: name → {"created_at": iso or None, "last_used_at": ts or None}; broken
    and pinned skills must not be in it.
    """
    never = sorted(
        (n for n, c in candidates.items() if not c.get("last_used_at")),
        key=lambda n: (candidates[n].get("created_at") or "", n),
    )
    used = sorted(
        (n for n, c in candidates.items() if c.get("last_used_at")),
        key=lambda n: (candidates[n]["last_used_at"], n),
    )
    return never + used


def persons_skills(agent: Agent, names: Iterable[str], commits: Mapping[str, Commit]) -> set[str]:
    """The skills holding a line a person wrote (checked only where a person ever committed)."""
    history = agent.repo.skill_history()
    touched = [
        n
        for n in names
        if n in history
        and any(not made_by_evolve(commits.get(sha), agent.evolve_emails) for sha in history[n].commits)
    ]
    return {
        n
        for n in touched
        if any(
            any(line_authors(agent.repo, path, commits, agent.evolve_emails) or ())
            for path in folder_files(agent, n)
        )
    }


def folder_files(agent: Agent, name: str) -> list[str]:
    """Every file of a skill folder, relative to the repository (what removing it deletes)."""
    folder = agent.skills_dir / name
    return sorted(str(p.relative_to(agent.path)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def prune(agent: Agent, usage: dict[str, dict], *, dry_run: bool = False) -> Done:
    """Apply `max_skills` now: one commit with `Evolve-Evicted` (none when nothing is over).

    With a remote the commit goes to a `proposals/` branch: one machine's usage never
    removes skills from every machine without a person's review.
    """
    with agent.repo.locked():
        if not dry_run:
            agent.commit_human_edits_held()
        evict, notes = plan_prune(agent, usage)
        done = Done(agent.name, "prune", changed=bool(evict), evicted=evict, notes=notes)
        if dry_run or not evict:
            return done
        changes: dict[str, bytes | None] = {}
        for name in evict:
            changes.update({p: None for p in folder_files(agent, name)})
        trailers: dict[str, object] = {"Evolve-Kind": "prune", "Evolve-Evicted": evict}
        if agent.shared:
            trailers["Evolve-Review"] = "with a remote, eviction waits for review"
            tip = agent.repo.tip() or ""
            done.proposal = PROPOSALS + sha256(f"prune {tip} {' '.join(evict)}".encode())[:16]
        message = build_message(
            f"prune({agent.name}): evict {len(evict)} skill{'s' if len(evict) != 1 else ''} over max_skills",
            trailers,
        )
        done.commit = agent.repo.commit_changes(changes, message, agent.evolve_identity, branch=done.proposal)
    agent.sync_links()
    return done
