"""`evolve log`, `evolve review`, `evolve revert`: git history as people read it."""

from __future__ import annotations

from evolve.commands.output import emit_json, say
from evolve.home import Home
from evolve.reflect import proposals
from evolve.store.history import FORMAT, Commit
from evolve.workspace import undo
from evolve.workspace.agent import Agent


def log(home: Home, name: str, limit: int | None = None, as_json: bool = False) -> int:
    """The commits, newest first; each undo lists the lesson lines it blocks (`evolve unblock`)."""
    agent = Agent.open(name, home)
    commits = agent.log(limit)
    by_commit: dict[str, list[undo.Block]] = {}
    for block in undo.blocks(agent.repo).values():
        by_commit.setdefault(block.commit, []).append(block)
    if as_json:
        emit_json(
            [{**c.to_dict(), "blocks": [b.to_dict() for b in by_commit.get(c.sha, [])]} for c in commits]
        )
        return 0
    for commit in commits:
        say(f"{commit.sha[:12]}  {commit.date}  {commit.kind:<11} {commit.subject}")
        for line in trailer_lines(commit, skip=("Evolve-Kind",)):
            say(f"{'':14}{line}")
        for block in by_commit.get(commit.sha, []):
            say(f"{'':14}blocks {block.id}: {block.line} (lift with `evolve unblock {name} {block.id}`)")
    return 0


def trailer_lines(commit: Commit, skip: tuple[str, ...] = ()) -> list[str]:
    """`Key: value` per trailer line, as the commit holds them (evolve's format marker left out)."""
    return [
        f"{key}: {value}"
        for key, values in commit.lines.items()
        if key not in (*skip, FORMAT)
        for value in values
    ]


def review(home: Home, name: str, rev: str = "HEAD", as_json: bool = False) -> int:
    agent = Agent.open(name, home)
    if proposals.exists(agent, rev):
        proposal = proposals.get(agent, rev)
        if as_json:
            emit_json(
                {
                    **proposal.to_dict(),
                    "trailers": proposal.commit.trailers,
                    "diff": proposals.diff(agent, proposal),
                }
            )
            return 0
        say(f"proposal {proposal.id} (not applied; the agent does not see it)")
        say(f"  {proposal.commit.subject}")
        for line in trailer_lines(proposal.commit):
            say(f"  {line}")
        say()
        say(proposals.diff(agent, proposal).rstrip())
        say(f"\ndecide with `evolve accept {name} {proposal.id}` or `evolve reject {name} {proposal.id}`")
        return 0
    sha = agent.repo.resolve(rev)
    commit = agent.repo.log(sha, limit=1)[0]
    patch = agent.repo.git("show", "--format=", "--stat", "--patch", sha, "--").decode("utf-8", "replace")
    if as_json:
        emit_json({**commit.to_dict(), "patch": patch})
        return 0
    say(f"{commit.kind} {commit.sha}  by {commit.author} <{commit.email}>  {commit.date}")
    say(f"  {commit.subject}")
    for line in trailer_lines(commit):
        say(f"  {line}")
    say()
    say(patch.rstrip())
    return 0


def revert(home: Home, name: str, rev: str, as_json: bool = False) -> int:
    agent = Agent.open(name, home)
    sha = agent.revert(rev)
    if as_json:
        emit_json({"reverted": agent.repo.resolve(rev), "commit": sha})
    else:
        say(f"reverted {rev} as {sha[:12]}; evolve will not learn that change again")
    return 0
