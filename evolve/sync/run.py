"""One sync of one agent, end to end: fetch → integrate (under the agent's lock) → push → record.

The network is used outside the lock (a slow server never holds up a reflection or a
person's edit being committed); integration happens under it, a person's uncommitted
edits committed first as theirs. A push the server refuses because someone pushed first
starts over from the fetch. Every failure is one line: offline (transient: nothing
changed, tried again later), busy (exit 75), refused or failed (the person acts). When
nothing changed anywhere the sync is one fetch and two cheap local reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from evolve.errors import Busy, UserError
from evolve.store import ledger
from evolve.sync import refs, remote
from evolve.sync.refs import Refused
from evolve.sync.remote import Offline
from evolve.workspace.agent import Agent

ATTEMPTS = 5  # pushes refused because the server moved meanwhile, before giving up for now
LOCK_WAIT_S = 10.0
OK = ("synced", "up to date")


@dataclass
class Outcome:
    """How one agent's sync went, for one line of output (and `--json`)."""

    agent: str
    state: str  # synced | up to date | offline | busy | refused | failed | no remote
    detail: str = ""
    received: int = 0  # commits main took from the server
    sent: int = 0  # commits main gave it
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.state in OK

    def line(self) -> str:
        if self.state == "synced":
            moved = [f"{n} {what}" for n, what in ((self.received, "in"), (self.sent, "out")) if n]
            text = f"{self.agent}: synced" + (f" ({', '.join(moved)})" if moved else "")
        else:
            text = f"{self.agent}: {self.state}" + (f": {self.detail}" if self.detail else "")
        return "\n".join([text, *(f"  {note}" for note in self.notes)])

    def to_dict(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "state": self.state,
            "ok": self.ok,
            "detail": self.detail,
            "received": self.received,
            "sent": self.sent,
            "notes": self.notes,
        }


def sync(agent: Agent, *, accept_rewrite: bool = False, record: bool = True) -> Outcome:
    """Sync `agent` with its server; never raises for what the outcome can say."""
    try:
        outcome = _sync(agent, accept_rewrite)
    except Busy as exc:
        outcome = Outcome(agent.name, "busy", str(exc))
    except Offline as exc:
        outcome = Outcome(agent.name, "offline", str(exc))
    except Refused as exc:
        outcome = Outcome(agent.name, "refused", str(exc))
    except UserError as exc:
        outcome = Outcome(agent.name, "failed", str(exc))
    if record and outcome.state != "no remote":
        with ledger.opened(agent.home.state_db) as conn:
            with ledger.transaction(conn):
                ledger.record_sync(conn, agent.name, time.time(), outcome.state, outcome.detail, outcome.ok)
    return outcome


def _sync(agent: Agent, accept_rewrite: bool) -> Outcome:
    repo = agent.repo
    if repo.remote_url(remote.REMOTE) is None:
        return Outcome(agent.name, "no remote", f"set one with `evolve remote {agent.name} URL`")
    machine = agent.home.machine()
    for _attempt in range(ATTEMPTS):
        remote.fetch(repo)
        view = refs.read(repo, machine)
        if view.quiet() and not accept_rewrite and not repo.dirty_paths():
            return Outcome(agent.name, "up to date")
        from evolve.sync.integrate import integrate, pushes
        from evolve.sync.join import keep_machine_local

        with repo.locked(timeout=LOCK_WAIT_S):
            agent.commit_human_edits_held()
            keep_machine_local(agent)  # a remote added by hand: the machine's settings move first
            view = refs.read(repo, machine)
            done = integrate(agent, view, machine, accept_rewrite=accept_rewrite)
        if any(path.startswith("skills/") for path in done.paths):
            agent.sync_links(done.paths)  # the harnesses' links follow the skills that came
        updates = pushes(view, done)
        server = {b: s for b, s in view.fetched.items()} | {
            b: s for b, s in view.synced.items() if b.startswith(refs.MACHINE)
        }
        if updates:
            pushed = remote.push(repo, updates)
            if pushed.behind:
                continue
            if pushed.rejected:
                why = "; ".join(f"{b}: {r}" for b, r in sorted(pushed.rejected.items()))
                return Outcome(agent.name, "failed", f"the server refused the push ({why})", notes=done.notes)
            for branch, sha, _old in updates:
                if sha is None:
                    server.pop(branch, None)
                else:
                    server[branch] = sha
        refs.record(repo, view, server)
        sent = _count(agent, view.fetched.get("main"), done.main)
        changed = done.received or sent or updates or done.paths or done.branches
        return Outcome(agent.name, "synced" if changed else "up to date", "", done.received, sent, done.notes)
    raise UserError(f"the server kept changing during {ATTEMPTS} attempts; evolve tries again later")


def _count(agent: Agent, old: str | None, new: str) -> int:
    span = f"{old}..{new}" if old else new
    return int(agent.repo.text("rev-list", "--count", span) or 0)
