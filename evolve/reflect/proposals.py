"""Proposals: what a reflection parked on `proposals/<id>` until a person decides.

A proposal is one commit on its own branch (everything, in review mode or when the guard
flags it; or just the operations that touch a person's lines), which the agent never reads.
Accepting replays it onto the agent's branch as one commit (the same trailers, plus
`Evolve-Accepted`), file by file: what applies cleanly lands, a file a later commit changed
too stays on the proposal for another look. Rejecting is a commit of its own on the
agent's branch that names each lesson line of the proposal (`Evolve-Blocks`), so the lesson
is not proposed again, on this machine or any other the repository reaches; then the
branch goes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evolve.errors import UserError
from evolve.store.history import FORMAT, PROPOSALS, Commit, build_message, clean_line
from evolve.workspace import undo
from evolve.workspace.agent import Agent

PREFIX = PROPOSALS
_ID = re.compile(r"[0-9a-f]{6,40}")


@dataclass
class Proposal:
    id: str
    branch: str
    commit: Commit

    @property
    def flags(self) -> list[str]:
        return [f.strip() for f in self.commit.trailers.get("Evolve-Flags", "").split(";") if f.strip()]

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "summary": self.commit.subject,
            "date": self.commit.date,
            "sha": self.commit.sha,
            "flags": self.flags,
            "ops": self.commit.values("Evolve-Ops"),
            "review": self.commit.trailers.get("Evolve-Review", ""),
        }


def branch_for(reflection_id: str) -> str:
    return f"{PREFIX}{reflection_id}"


def rest_id(proposal_id: str) -> str:
    """The id of what stays of a partly accepted proposal (hex, like every proposal id)."""
    return hashlib.sha256(f"rest of {proposal_id}".encode()).hexdigest()[:16]


def pending(agent: Agent) -> list[Proposal]:
    """The proposals evolve made (a person's own branch under proposals/ is not one)."""
    found = []
    for branch, sha in sorted(agent.repo.branches(PREFIX).items()):
        name = branch.removeprefix(PREFIX)
        commit = agent.repo.log(sha, limit=1)[0]
        if _ID.fullmatch(name) and commit.trailers.get("Evolve-Kind") == "reflection":
            found.append(Proposal(name, branch, commit))
    return sorted(found, key=lambda p: p.commit.date)


def _matching(agent: Agent, proposal_id: str) -> list[Proposal]:
    if not _ID.fullmatch(proposal_id or ""):
        return []
    return [p for p in pending(agent) if p.id == proposal_id or p.id.startswith(proposal_id)]


def get(agent: Agent, proposal_id: str) -> Proposal:
    if not _ID.fullmatch(proposal_id or ""):
        raise UserError(f"{proposal_id!r} is not a proposal id; see `evolve proposals {agent.name}`")
    found = _matching(agent, proposal_id)
    exact = [p for p in found if p.id == proposal_id]
    if len(exact) == 1 or len(found) == 1:
        return (exact or found)[0]
    if found:
        raise UserError(f"{proposal_id!r} names {len(found)} proposals; give more of its id")
    raise UserError(f"no pending proposal {proposal_id!r}; see `evolve proposals {agent.name}`")


def exists(agent: Agent, proposal_id: str) -> bool:
    return bool(_matching(agent, proposal_id))


def diff(agent: Agent, proposal: Proposal) -> str:
    from evolve.transcripts.redact import make_visible

    raw = agent.repo.git("show", "--format=", "--stat", "--patch", proposal.commit.sha, "--")
    return make_visible(raw.decode("utf-8", "replace"))


@dataclass
class Accepted:
    sha: str | None  # the commit on the agent's branch (None: nothing applied cleanly)
    applied: list[str]
    left: list[str]  # files that did not apply: a proposal of their own keeps them
    rest: str | None = None  # that proposal's id


def accept(agent: Agent, proposal_id: str) -> Accepted:
    proposal = get(agent, proposal_id)
    with agent.repo.locked():
        agent.commit_human_edits_held()
        changes, left = agent.repo.replay_files(proposal.commit.sha)
        if not changes:
            raise UserError(
                f"nothing of {proposal.id} applies cleanly ({', '.join(left)} changed since); "
                f"edit the files by hand or `evolve reject {agent.name} {proposal.id}`"
            )
        trailers: dict[str, object] = {
            k: v for k, v in proposal.commit.lines.items() if k not in ("Evolve-Review", FORMAT)
        }
        trailers["Evolve-Accepted"] = proposal.id
        if left:
            trailers["Evolve-Not-Accepted"] = left
        sha = agent.repo.commit_changes(
            changes, build_message(proposal.commit.subject, trailers), agent.evolve_identity
        )
        rest = None
        if left:  # the files that did not apply stay a proposal of their own, for another look
            rest = rest_id(proposal.id)
            kept = {k: v for k, v in proposal.commit.lines.items() if k != FORMAT}
            kept["Evolve-Rest-Of"] = [proposal.id]
            agent.repo.part_of(
                proposal.commit.sha,
                left,
                f"{PREFIX}{rest}",
                build_message(proposal.commit.subject, kept),
                agent.evolve_identity,
            )
        agent.repo.delete_branch(proposal.branch, proposal.commit.sha)
    agent.sync_links(changes)
    return Accepted(sha, sorted(changes), left, rest)


def reject(agent: Agent, proposal_id: str) -> Proposal:
    """Drop the proposal; what it taught and what it removed become blocks, in a commit of their own.

    Its new lesson lines are not learned again, and neither is what it took away: the skills
    it retired are not retired again, the lines it deleted are not deleted again.
    """
    proposal = get(agent, proposal_id)
    parent, sha = f"{proposal.commit.sha}^", proposal.commit.sha
    retired, removed = removals_of(agent, parent, sha)
    message = reject_message(
        agent, proposal.id, proposal.commit.subject, lessons_of(agent, parent, sha), retired, removed
    )
    with agent.repo.locked():
        agent.commit_human_edits_held()
        agent.repo.commit_changes({}, message, agent.evolve_identity)
        agent.repo.delete_branch(proposal.branch, proposal.commit.sha)
    return proposal


def _added(agent: Agent, old: str, new: str, *excluded: str) -> list[str]:
    """The lines the change `old..new` adds to the memo and skills (not under `excluded`)."""
    diff = _diff(agent, old, new, *excluded)
    return [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]


def _diff(agent: Agent, old: str, new: str, *excluded: str) -> list[str]:
    paths = ["memo.md", "skills/", *(f":(exclude){p}" for p in excluded)]
    patch = agent.repo.git("diff", "--no-color", "--no-ext-diff", "--text", "-U0", old, new, "--", *paths)
    return patch.decode("utf-8", "replace").splitlines()


def lessons_of(agent: Agent, old: str, new: str) -> dict[str, str]:
    """Fingerprint → line, for every lesson line the change `old..new` adds to the memo or skills."""
    return undo.lesson_lines("\n".join(_added(agent, old, new)))


def removals_of(agent: Agent, old: str, new: str) -> tuple[list[str], list[str]]:
    """(the skills the change `old..new` retires, the lines it deletes from the files it keeps).

    A line it only moves is no removal; a retire is blocked as a whole, not line by line.
    """
    gone = agent.repo.text("diff", "--name-only", "--diff-filter=D", "-z", old, new, "--", "skills/")
    deleted = [p for p in gone.split("\0") if p]
    retired = sorted({p.split("/")[1] for p in deleted if p.endswith("/SKILL.md") and p.count("/") == 2})
    added = set(_added(agent, old, new))
    removed = [
        line[1:]
        for line in _diff(agent, old, new, *deleted)
        if line.startswith("-") and not line.startswith("---") and line[1:] not in added
    ]
    return retired, removed


def reject_message(
    agent: Agent,
    proposal_id: str,
    subject: str,
    lessons: Mapping[str, str],
    retired: Sequence[str] = (),
    removed: Sequence[str] = (),
    how: str = "",
) -> str:
    """The reject commit's message: one `Evolve-Blocks` line per lesson line, retire and deletion."""
    blocks = [f"{fp} {clean_line(text, 200)}" for fp, text in lessons.items()]
    blocks += [clean_line(item, 220) for item in undo.rejected_removals(removed, retired)]
    return build_message(
        f"reject({agent.name}): {subject.partition(': ')[2] or proposal_id}{how}",
        {"Evolve-Kind": "reject", "Evolve-Rejected-Proposal": proposal_id, undo.BLOCKS: blocks or ["-"]},
    )


def unblock(agent: Agent, block_id: str) -> undo.Block:
    """Let evolve learn a lesson line again that a person undid (one commit says so)."""
    with agent.repo.locked():  # first: a person's git operation in progress makes it wait
        found = undo.blocks(agent.repo)
        candidates = [b for fp, b in found.items() if block_id and fp.startswith(block_id)]
        block = found.get(block_id) or (candidates[0] if len(candidates) == 1 else None)
        if block is None and candidates:
            raise UserError(f"{block_id!r} names {len(candidates)} blocks; give more of its id")
        if block is None:
            raise UserError(f'no block {block_id!r}; see `evolve log {agent.name} --json` ("blocks")')
        message = build_message(
            f"unblock({agent.name}): {clean_line(block.line, 120)}",
            {"Evolve-Kind": "unblock", undo.UNBLOCKS: [block.id]},
        )
        agent.commit_human_edits_held()
        agent.repo.commit_changes({}, message, agent.evolve_identity)
    return block


def summary_line(proposal: Proposal) -> str:
    flags = f" · flags: {'; '.join(proposal.flags)}" if proposal.flags else ""
    return f"{proposal.id}  {proposal.commit.date}  {proposal.commit.subject}{flags}"


__all__ = ["Accepted", "Proposal", "accept", "diff", "exists", "get", "pending", "reject", "unblock"]
