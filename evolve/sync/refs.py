"""Three views of the branches a sync cares about: here, on the server now, on the server last time.

`refs/heads/` is this machine; `refs/evolve/fetched/` is the server as the last fetch saw
it; `refs/evolve/synced/` is the server as it was when the last sync finished. Comparing
the last two tells what happened on the server in between (a proposal merged or deleted
there, main force-pushed); they are written only after a push the server took, so a sync
killed anywhere leaves them saying what is true. Only `main`, `proposals/*` and this
machine's `machine/*` branches are tracked.
"""

from __future__ import annotations

from dataclasses import dataclass

from evolve.errors import UserError
from evolve.store.git import ZERO
from evolve.store.history import PROPOSALS
from evolve.store.repo import Repo
from evolve.sync.remote import FETCHED

HEADS = "refs/heads/"
MACHINE = "machine/"  # branches of a person's commits that conflicted with another person's
SYNCED = "refs/evolve/synced/"


class Refused(UserError):
    """The server's history cannot be integrated as it is; the message says what to do."""


class Held(Refused):
    """The server's main brings what evolve does not take unreviewed (`screen`): nothing was taken."""


@dataclass
class View:
    """Branch name → sha, in the three places (absent: the branch is not there)."""

    local: dict[str, str]
    fetched: dict[str, str]
    synced: dict[str, str]

    def branches(self) -> set[str]:
        return set(self.local) | set(self.fetched) | set(self.synced)

    def quiet(self) -> bool:
        """Nothing happened here or on the server since the last sync.

        A `machine/` branch the last sync did not leave on the server (someone else's there,
        under this machine's name) is none of this machine's business.
        """
        return all(
            self.local.get(b) == self.synced.get(b)
            and (
                self.fetched.get(b) == self.synced.get(b) or (b.startswith(MACHINE) and b not in self.synced)
            )
            for b in self.branches()
        )

    def foreign(self, branch: str) -> bool:
        """Whether the server's `machine/` branch holds what this machine did not put there."""
        there = self.fetched.get(branch)
        return branch.startswith(MACHINE) and there is not None and there != self.synced.get(branch)


def read(repo: Repo, machine: str) -> View:
    """The three views, in one `git for-each-ref`."""
    found = repo.refs(HEADS, FETCHED, SYNCED)

    def under(prefix: str) -> dict[str, str]:
        named = {ref.removeprefix(prefix): sha for ref, sha in found.items() if ref.startswith(prefix)}
        return {name: sha for name, sha in named.items() if tracked(name, machine)}

    return View(under(HEADS), under(FETCHED), under(SYNCED))


def tracked(branch: str, machine: str) -> bool:
    own = branch.removeprefix(MACHINE)
    return (
        branch == "main"
        or branch.startswith(PROPOSALS)
        or (branch.startswith(MACHINE) and (own == machine or own.startswith(f"{machine}-")))
    )


def record(repo: Repo, view: View, server: dict[str, str]) -> None:
    """The server now holds `server` (tracked branches): the fetched and synced views say so."""
    updates = []
    for prefix, before in ((FETCHED, view.fetched), (SYNCED, view.synced)):
        for branch in set(before) | set(server):
            if prefix == FETCHED and branch.startswith(MACHINE) and branch not in server:
                continue  # someone else's under this machine's name: the fetch keeps it
            new, old = server.get(branch, ZERO), before.get(branch, ZERO)
            if new != old:
                updates.append((prefix + branch, new, old))
    if updates and not repo.update_refs(updates, "evolve: synced"):
        repo.update_refs([(ref, new, None) for ref, new, _old in updates], "evolve: synced")


def forget(repo: Repo) -> None:
    """No server any more: what evolve knew about one goes (the branches here stay)."""
    updates = [(ref, ZERO, sha) for ref, sha in repo.refs(FETCHED, SYNCED).items()]
    if updates:
        repo.update_refs(updates, "evolve: remote removed")
