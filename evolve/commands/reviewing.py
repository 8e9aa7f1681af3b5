"""`evolve proposals`, `evolve accept`, `evolve reject`: review mode's decisions."""

from __future__ import annotations

from evolve.commands.output import emit_json, say
from evolve.home import Home
from evolve.reflect import proposals as proposals_mod
from evolve.workspace.agent import Agent


def proposals(home: Home, name: str, as_json: bool = False) -> int:
    from evolve.sync.status import proposal_places

    agent = Agent.open(name, home)
    pending = proposals_mod.pending(agent)
    places = proposal_places(agent)  # with a remote: here only, or on the server for review
    if as_json:
        emit_json([{**p.to_dict(), "where": places.get(p.id, "here")} for p in pending])
    elif not pending:
        say(f"no pending proposals for {name!r}")
    else:
        for proposal in pending:
            where = f" · {places[proposal.id]}" if proposal.id in places else ""
            say(proposals_mod.summary_line(proposal) + where)
        say(f"\nreview one with `evolve review {name} ID`, then `evolve accept` or `evolve reject`")
    return 0


def accept(home: Home, name: str, proposal_id: str, as_json: bool = False) -> int:
    agent = Agent.open(name, home)
    done = proposals_mod.accept(agent, proposal_id)
    if as_json:
        emit_json(
            {
                "accepted": proposal_id,
                "commit": done.sha,
                "applied": done.applied,
                "left": done.left,
                "rest": done.rest,
            }
        )
        return 0
    say(f"accepted {proposal_id} as {(done.sha or '')[:12]}; the agent sees it from its next session")
    if done.rest:
        say(
            f"  not applied (changed since): {', '.join(done.left)}; they wait as proposal {done.rest} "
            f"(`evolve review {name} {done.rest}`)"
        )
    if "agent.toml" in done.applied:  # settings that do not apply where they stand: said now
        for warning in Agent(home, name).lenient_config.warnings:
            say(f"note: {warning}")
    return 0


def reject(home: Home, name: str, proposal_id: str, as_json: bool = False) -> int:
    proposal = proposals_mod.reject(Agent.open(name, home), proposal_id)
    if as_json:
        emit_json({"rejected": proposal.id})
    else:
        say(f"rejected {proposal.id}; evolve will not propose that lesson again")
    return 0


def unblock(home: Home, name: str, block_id: str, as_json: bool = False) -> int:
    block = proposals_mod.unblock(Agent.open(name, home), block_id)
    if as_json:
        emit_json({"unblocked": block.to_dict()})
    else:
        say(f"unblocked {block.id}: evolve may learn {block.line!r} again")
    return 0
