"""`evolve pin`, `unpin`, `restore`, `prune`: a person's hand on an agent's skill set."""

from __future__ import annotations

from evolve.commands.output import emit_json, say, warn
from evolve.home import Home
from evolve.workspace.agent import Agent


def _show(done, as_json: bool, text: str) -> int:
    if as_json:
        emit_json(done.to_dict())
        return 0
    say(text)
    for note in done.notes:
        warn(note)
    return 0


def pin(home: Home, name: str, skill: str, as_json: bool = False) -> int:
    from evolve.workspace.curate import set_pinned

    done = set_pinned(Agent.open(name, home), skill, True)
    text = (
        f"pinned {skill}: evolve will not patch, retire or evict it (commit {done.commit[:12]})"
        if done.commit
        else done.notes.pop(0)
    )
    return _show(done, as_json, text)


def unpin(home: Home, name: str, skill: str, as_json: bool = False) -> int:
    from evolve.workspace.curate import set_pinned

    done = set_pinned(Agent.open(name, home), skill, False)
    text = f"unpinned {skill} (commit {done.commit[:12]})" if done.commit else done.notes.pop(0)
    return _show(done, as_json, text)


def restore(home: Home, name: str, skill: str, as_json: bool = False) -> int:
    from evolve.workspace.curate import restore as restore_skill

    done = restore_skill(Agent.open(name, home), skill)
    return _show(
        done,
        as_json,
        f"restored {skill} as it was before {(done.restored_from or '')[:12]} "
        f"removed it (commit {(done.commit or '')[:12]})",
    )


def prune(home: Home, name: str, dry_run: bool = False, as_json: bool = False) -> int:
    from evolve.metrics.usage import refresh_rates
    from evolve.observe.records import drain_pending
    from evolve.store import ledger
    from evolve.workspace.curate import prune as prune_skills

    agent = Agent.open(name, home)
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)
        usage = refresh_rates(conn, home, name)
    done = prune_skills(agent, usage, dry_run=dry_run)
    if as_json:
        emit_json({**done.to_dict(), "dry_run": dry_run, "max_skills": agent.config.limits.max_skills})
        return 0
    cap = agent.config.limits.max_skills
    if not done.evicted:
        say(f"{name}: nothing to prune (max_skills = {cap})")
    else:
        verb = "would evict" if dry_run else "proposed evicting" if done.proposal else "evicted"
        say(f"{name}: {verb} {len(done.evicted)} skill(s) over max_skills = {cap}: {', '.join(done.evicted)}")
        if done.proposal:
            proposal = done.proposal.rpartition("/")[2]
            say(
                f"with a remote, eviction waits for review on {done.proposal}: "
                f"`evolve review {name} {proposal}`, then `evolve accept` or `evolve reject`"
            )
        elif done.commit:
            say(f"commit {done.commit[:12]}; bring one back with `evolve restore {name} SKILL`")
    for note in done.notes:
        warn(note)
    return 0
