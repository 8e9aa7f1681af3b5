"""Where an agent stands with its server, for `evolve status`, `evolve remote` and `evolve proposals`.

Read from what is already here (the last sync's row in state.db, the branches): nothing
touches the network. A person's commit kept on a `machine/` branch is listed until its
content is on main (then the next sync deletes the branch) or the person deletes it.
"""

from __future__ import annotations

import sqlite3

from evolve.clock import stamp
from evolve.store.history import PROPOSALS
from evolve.sync import refs
from evolve.sync.remote import FETCHED, REMOTE, redact
from evolve.workspace.agent import Agent


def sync_state(agent: Agent, row: sqlite3.Row | None) -> dict[str, object] | None:
    """The agent's server and last sync (None: no remote): url, state, at, detail, failures, kept."""
    url = agent.repo.remote_url(REMOTE)
    if url is None:
        return None
    machine = agent.home.machine()
    main = agent.repo.tip() or ""
    kept = [
        branch
        for branch, sha in agent.repo.branches(refs.MACHINE).items()
        if refs.tracked(branch, machine) and not agent.repo.is_ancestor(sha, main)
    ]
    return {
        "url": redact(url),
        "mode": agent.config.git.sync,
        "state": row["state"] if row else "never synced",
        "at": stamp(row["at"]) if row else None,
        "ok_at": stamp(row["ok_at"]) if row and row["ok_at"] else None,
        "detail": row["detail"] if row else "",
        "failures": row["failures"] if row else 0,
        "kept": kept,
    }


def proposal_places(agent: Agent) -> dict[str, str]:
    """Proposal id → where it is: "here only" (pushed at the next sync), "on the server", "changed here"."""
    if agent.repo.remote_url(REMOTE) is None:
        return {}
    found = agent.repo.refs(f"refs/heads/{PROPOSALS}", f"{FETCHED}{PROPOSALS}")
    places = {}
    for ref, sha in found.items():
        if not ref.startswith("refs/heads/"):
            continue
        branch = ref.removeprefix("refs/heads/")
        there = found.get(FETCHED + branch)
        where = "here only (pushed at the next sync)" if there is None else "on the server"
        if there is not None and there != sha:
            where = "here and on the server, different (the next sync settles it)"
        places[branch.removeprefix(PROPOSALS)] = where
    return places


def remote_problems(agent: Agent, row: sqlite3.Row | None) -> list[str]:
    """What `evolve doctor` says about the agent's server, each with its remedy."""
    from evolve.errors import UserError
    from evolve.sync.remote import check_url

    url = agent.repo.remote_url(REMOTE)
    if url is None:
        return []
    found = []
    try:
        check_url(url)
    except UserError as exc:  # set by hand with `git remote add`: evolve never stores such a URL
        found.append(f"{exc}; `evolve remote {agent.name} URL` with a URL evolve accepts")
    if row is not None and row["state"] in ("refused", "failed"):
        found.append(f"the last sync was {row['state']}: {row['detail']}")
    return found
