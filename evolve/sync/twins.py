"""A local commit that is a person's new version of one the server already has (an amend, a rebase).

Such a commit is not replayed as a change of its own: the server's commit stays (never
rewritten) and only what changed between the two lands on top (`Replayer._amended`).
"""

from __future__ import annotations

from evolve.store.history import Commit
from evolve.store.identity import person_identity
from evolve.sync.refs import SYNCED
from evolve.workspace.agent import Agent, local_person


class Twins:
    """Local commits matched to the server's commits they replace, from merge base `base` to `server`."""

    def __init__(self, agent: Agent, base: str, server: str) -> None:
        self.agent, self.repo, self.base, self.server = agent, agent.repo, base, server
        self._server_side: list[Commit] | None = None
        self._twins: dict[str, str] = {}  # a local commit → the server's commit it replaces
        self._person: str | None = None  # this machine's person's e-mail (git's user.email)

    def of(self, commit: Commit) -> str | None:
        """The server's commit `commit` is a person's new version of (an amend, a rebase here).

        One this machine synced and no longer has on main, with the same parent (or the one
        its parent replaces), the same author date or subject (an amend keeps both unless
        told otherwise), and the same reflection if it is one. And the same author — or, for
        an amend that reset it (`--reset-author`: a new e-mail or name), a commit this
        machine's person committed here, authored as themselves, that keeps the server
        commit's author name or e-mail: two people's commits from two machines are never
        twins (taking one for the other would undo the other person's change).
        """
        if not commit.parents:
            return None
        if self._server_side is None:
            synced = self.repo.refs(SYNCED).get(f"{SYNCED}main")  # what this machine had synced
            seen = synced and self.repo.is_ancestor(synced, self.server)
            self._server_side = self.repo.log(f"{self.base}..{synced}") if seen else []
        parent = self._twins.get(commit.parents[0], commit.parents[0])
        for theirs in self._server_side:
            if (
                theirs.parents[:1] == [parent]
                and self._same_person(theirs, commit)
                and (theirs.date == commit.date or theirs.subject == commit.subject)
                and theirs.trailers.get("Evolve-Reflection") == commit.trailers.get("Evolve-Reflection")
                and theirs.sha not in self._twins.values()
            ):
                self._twins[commit.sha] = theirs.sha
                return theirs.sha
        return None

    def server_commit(self, sha: str) -> Commit:
        """The server's commit `sha`, one `of` named."""
        return next(c for c in self._server_side or () if c.sha == sha)

    def _same_person(self, theirs: Commit, commit: Commit) -> bool:
        """Whether `commit` (local) is by the author of `theirs` (the server's), as `of` needs."""
        if (theirs.author, theirs.email) == (commit.author, commit.email):
            return True
        if self._person is None:
            self._person = person_identity(self.agent.path, local_person()).email
        reset = commit.committer_email == commit.email == self._person  # `--amend --reset-author` here
        return reset and (theirs.author == commit.author or theirs.email == commit.email)


__all__ = ["Twins"]
