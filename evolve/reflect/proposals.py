"""Review mode: reflections parked on `proposals/<id>` branches until a person decides.

A proposal is one commit on its own branch, made from the agent's branch; the agent never
reads it. Accepting replays that commit onto the agent's branch as one commit (the same
trailers, plus `Evolve-Accepted`); rejecting deletes the branch and remembers the lesson's
fingerprints so it is not proposed again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evolve.errors import UserError
from evolve.store import ledger
from evolve.store.history import Commit, build_message
from evolve.workspace.agent import Agent

PREFIX = "proposals/"
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


def pending(agent: Agent) -> list[Proposal]:
    found = []
    for branch, sha in sorted(agent.repo.branches(PREFIX).items()):
        commit = agent.repo.log(sha, limit=1)[0]
        found.append(Proposal(branch.removeprefix(PREFIX), branch, commit))
    return sorted(found, key=lambda p: p.commit.date)


def get(agent: Agent, proposal_id: str) -> Proposal:
    if not _ID.fullmatch(proposal_id or ""):
        raise UserError(f"{proposal_id!r} is not a proposal id; see `evolve proposals {agent.name}`")
    for proposal in pending(agent):
        if proposal.id == proposal_id or proposal.id.startswith(proposal_id):
            return proposal
    raise UserError(f"no pending proposal {proposal_id!r}; see `evolve proposals {agent.name}`")


def exists(agent: Agent, proposal_id: str) -> bool:
    return bool(_ID.fullmatch(proposal_id or "")) and any(
        p.id == proposal_id or p.id.startswith(proposal_id) for p in pending(agent)
    )


def diff(agent: Agent, proposal: Proposal) -> str:
    from evolve.transcripts.redact import make_visible

    raw = agent.repo.git("show", "--format=", "--stat", "--patch", proposal.commit.sha, "--")
    return make_visible(raw.decode("utf-8", "replace"))


def accept(agent: Agent, proposal_id: str) -> str:
    proposal = get(agent, proposal_id)
    with agent.repo.locked():
        agent.commit_human_edits_held()
        changes = agent.repo.replay_changes(proposal.commit.sha)
        trailers = {k: v for k, v in proposal.commit.trailers.items() if k != "Evolve-Review"}
        trailers["Evolve-Accepted"] = proposal.id
        message = build_message(proposal.commit.subject, trailers)
        sha = agent.repo.commit_changes(changes, message, agent.evolve_identity)
        agent.repo.delete_branch(proposal.branch, proposal.commit.sha)
    agent.sync_links(changes)
    return sha


def reject(agent: Agent, proposal_id: str, conn=None) -> Proposal:
    proposal = get(agent, proposal_id)
    own = conn is None
    conn = conn or ledger.connect(agent.home.state_db)
    try:
        with ledger.transaction(conn):
            ledger.add_event(
                conn,
                agent.name,
                "proposal_rejected",
                {
                    "id": proposal.id,
                    "summary": proposal.commit.subject,
                    "fingerprints": proposal.commit.values("Evolve-Fingerprints"),
                    "ops": proposal.commit.values("Evolve-Ops"),
                },
                dirty=False,
            )
        with agent.repo.locked():
            agent.repo.delete_branch(proposal.branch, proposal.commit.sha)
    finally:
        if own:
            conn.close()
    return proposal


def summary_line(proposal: Proposal) -> str:
    flags = f" · flags: {'; '.join(proposal.flags)}" if proposal.flags else ""
    return f"{proposal.id}  {proposal.commit.date}  {proposal.commit.subject}{flags}"


__all__ = ["Proposal", "accept", "diff", "exists", "get", "pending", "reject"]
