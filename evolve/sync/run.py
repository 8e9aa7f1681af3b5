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
from evolve.store import head, ledger
from evolve.store.git import broken_branch_remedy
from evolve.store.locks import FileLock
from evolve.store.repo import Repo
from evolve.store.worktree import WHY
from evolve.sync import refs, remote
from evolve.sync.refs import Held, Refused
from evolve.sync.remote import Offline
from evolve.workspace.agent import Agent

ATTEMPTS = 5  # pushes refused because the server moved meanwhile, before giving up for now
LOCK_WAIT_S = 10.0
SYNC_LOCK = "evolve-sync.lock"
OK = ("synced", "up to date")


@dataclass
class Outcome:
    """How one agent's sync went, for one line of output (and `--json`)."""

    agent: str
    state: str  # synced | up to date | offline | busy | held | refused | failed | no remote
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


def sync(
    agent: Agent,
    *,
    accept_rewrite: bool = False,
    accept_held: bool = False,
    push_first: bool = False,
    record: bool = True,
    push_anyway: bool = False,
) -> Outcome:
    """Sync `agent` with its server; never raises for what the outcome can say.

    `push_first` (the watcher, after a commit here): when this machine only moved ahead,
    push straight away, leased on what the server had at the last sync; the server's own
    news then come with the next full sync (a rescan). `accept_held`: a person takes the
    server's main the last sync held back (`screen`) as reviewed. `push_anyway`: the person
    pushes what holds a secret they wrote (`secrets`), as it is.
    """
    try:
        outcome = _sync(agent, accept_rewrite, accept_held, push_first, push_anyway)
    except Busy as exc:
        outcome = Outcome(agent.name, "busy", str(exc))
    except Offline as exc:
        outcome = Outcome(agent.name, "offline", str(exc))
    except Held as exc:
        outcome = Outcome(agent.name, "held", str(exc))
    except Refused as exc:
        outcome = Outcome(agent.name, "refused", str(exc))
    except UserError as exc:
        outcome = Outcome(agent.name, "failed", str(exc))
    if record and outcome.state != "no remote":
        with ledger.opened(agent.home.state_db) as conn:
            with ledger.transaction(conn):
                ledger.record_sync(conn, agent.name, time.time(), outcome.state, outcome.detail, outcome.ok)
    return outcome


def _sync(
    agent: Agent, accept_rewrite: bool, accept_held: bool, push_first: bool, push_anyway: bool
) -> Outcome:
    repo = agent.repo
    url = repo.remote_url(remote.REMOTE)
    if url is None:
        return Outcome(agent.name, "no remote", f"set one with `evolve remote {agent.name} URL`")
    try:  # set by hand (`git remote add`): the URL `evolve remote` would refuse is not used either
        url = remote.checked_reach(repo, url)  # a relative folder made absolute: local_side sees a folder
    except UserError as exc:
        raise Refused(f"{exc}; set it again with `evolve remote {agent.name} URL`") from None
    if head.broken_branch(repo.git_dir):  # else the fetch fails on it, as if the server were to blame
        raise UserError(f"{repo.path}: {broken_branch_remedy(repo.path, head.BRANCH)}")
    with FileLock(repo.git_dir / SYNC_LOCK, timeout=LOCK_WAIT_S):  # one sync of an agent at a time
        pushed = _pushed_ahead(agent, url) if push_first and not accept_rewrite else None
        return pushed or _attempts(agent, url, accept_rewrite, accept_held, push_anyway)


def _pushed_ahead(agent: Agent, url: str) -> Outcome | None:
    """The push-first path; None when it does not apply or the server moved (then: a full sync)."""
    repo = agent.repo
    view = refs.read(repo, agent.home.machine())
    main, before = view.local.get("main"), view.synced.get("main")
    if not main or not before or main == before or not repo.is_ancestor(before, main) or repo.dirty_paths():
        return None
    if _links_out(repo, before, main) or _secrets_out(repo, before, main) or _refused_out(repo, before, main):
        return None  # the full sync says why nothing goes
    updates = [
        (b, view.local.get(b), view.synced.get(b))
        for b in sorted(view.branches())
        if view.local.get(b) != view.synced.get(b)
    ]
    pushed = remote.push(repo, url, updates)
    if pushed.rejected:
        return None
    refs.record(repo, view, _server_after(view, updates))
    return Outcome(agent.name, "synced", "", 0, _count(agent, before, main))


def _attempts(agent: Agent, url: str, accept_rewrite: bool, accept_held: bool, push_anyway: bool) -> Outcome:
    repo, machine = agent.repo, agent.home.machine()
    for _attempt in range(ATTEMPTS):
        # The work tree is read before the fetch, never beside it: a fetch writes objects, and
        # one into a repository that lost them brings back what the server has. Running beside
        # a read that failed there, it could finish before the failure was diagnosed, and
        # `repository_problem`'s fsck found a sound repository: evolve's crash, not damage.
        dirty = repo.dirty_paths()
        remote.fetch(repo, url, machine)
        view = refs.read(repo, machine)
        if view.quiet() and not accept_rewrite and not dirty:
            return Outcome(agent.name, "up to date")
        from evolve.sync.integrate import integrate, pushes
        from evolve.sync.join import keep_machine_local

        with repo.locked(timeout=LOCK_WAIT_S):
            view = refs.read(repo, machine)
            incoming = _incoming(repo, view)
            staged = repo.staged_paths() & incoming if incoming else set()
            edits = agent.commit_human_edits_held(writing=incoming)
            moved = keep_machine_local(agent)  # a remote added by hand: the machine's settings move first
            if edits or moved:  # main moved on: the view reads it again
                view = refs.read(repo, machine)
            done = integrate(agent, view, machine, accept_rewrite=accept_rewrite, accept_held=accept_held)
        done.notes += [
            f"{path}: your staged edit is committed as yours first (the server changed it too)"
            for path in sorted(staged)
        ]
        if any(path.startswith("skills/") for path in done.paths):
            agent.sync_links(done.paths)  # the harnesses' links follow the skills that came
        leaving = _links_out(repo, view.fetched.get("main"), done.main)
        if leaving:
            why = "; ".join(leaving)
            raise Refused(
                f"{why}: a link out of the repository would carry this machine's paths to the server "
                "(and no other machine takes it); nothing was pushed. Replace it with the file itself "
                '(`cp --remove-destination "$(readlink -f PATH)" PATH`), commit, then sync'
            )
        server = view.fetched.get("main")
        refused_path = _refused_out(repo, server, done.main)
        if refused_path:
            kept = (  # where the person's own setting can stay: .gitmodules has no such place
                "; an attribute of yours can live in .git/info/attributes instead"
                if refused_path.rsplit("/", 1)[-1].lower() == ".gitattributes"
                else ""
            )
            raise Refused(
                f"main holds {refused_path!r}, which every other machine refuses to take from the server "
                f"({WHY}); nothing was pushed. Remove it from main (`git rm {refused_path}`, commit{kept}), "
                "then sync"
            )
        secrets = [] if push_anyway else _secrets_out(repo, server, done.main)
        if secrets:  # a person's own secret: never rewritten, never pushed without their word
            from evolve.sync.secrets import held_push_message

            base = f"{remote.FETCHED}main" if server else "--root"
            raise Refused(held_push_message(agent.name, secrets, base))
        updates = pushes(view, done)
        refused: dict[str, str] = {}
        if updates:
            pushed = remote.push(repo, url, updates)
            if pushed.rejected and not pushed.behind and any(b != "main" for b, _new, _old in updates):
                pushed, refused = _push_apart(repo, url, updates)  # e.g. a hook refusing machine/*
            if pushed.behind:
                continue
            if pushed.rejected:
                if done.main:  # a branch file naming a tag: the server takes no tag for a branch
                    repo.refuse_non_commit(done.main)
                why = "; ".join(f"{b}: {r}" for b, r in sorted(pushed.rejected.items()))
                return Outcome(agent.name, "failed", f"the server refused the push ({why})", notes=done.notes)
        taken = [update for update in updates if update[0] not in refused]
        refs.record(repo, view, _server_after(view, taken))
        sent = _count(agent, view.fetched.get("main"), done.main)
        if refused:  # main went; those stay here, and every sync tries (and says) it again
            why = "; ".join(f"{b} ({r})" for b, r in sorted(refused.items()))
            detail = (
                f"main synced ({done.received} in, {sent} out), but the server refused {why}: kept on "
                "this machine only (tried again at each sync); let the server take these branches, "
                "or merge what you want into main and delete them"
            )
            return Outcome(agent.name, "failed", detail, done.received, sent, done.notes)
        changed = done.received or sent or updates or done.paths or done.branches
        return Outcome(agent.name, "synced" if changed else "up to date", "", done.received, sent, done.notes)
    raise UserError(f"the server kept changing during {ATTEMPTS} attempts; evolve tries again later")


def _push_apart(
    repo: Repo, url: str, updates: list[tuple[str, str | None, str | None]]
) -> tuple[remote.Pushed, dict[str, str]]:
    """The refused atomic push again, main first and each other branch alone.

    (main's result — a refusal or a server that moved, as one push would say —, the other
    branches the server refused: branch → its reason). Once main is refused nothing else goes.
    """
    first = [u for u in updates if u[0] == "main"]
    pushed = remote.push(repo, url, first) if first else remote.Pushed()
    refused: dict[str, str] = {}
    if pushed.rejected:
        return pushed, refused
    for update in (u for u in updates if u[0] != "main"):
        alone = remote.push(repo, url, [update])
        if alone.behind:
            return alone, refused
        refused.update(alone.rejected)
    return pushed, refused


def _links_out(repo: Repo, server: str | None, main: str) -> list[str]:
    """Links this machine's main would send that lead out of the repository (`screen.leaving_links`)."""
    from evolve.sync.screen import leaving_links

    return leaving_links(repo, server, main)


def _refused_out(repo: Repo, server: str | None, main: str) -> str | None:
    """A path main would send that every other machine refuses (`integrate.check_tree`), new to the server."""
    path = repo.refused_in_tree(main)
    if path is None or (server and repo.tree_entries(server, [path])):
        return None  # a server that has it already stops the others anyway: this push changes nothing
    return path


def _secrets_out(repo: Repo, server: str | None, main: str) -> list[str]:
    """Secrets a person wrote on lines the commits main would send add (`secrets.added_secrets`)."""
    if server == main:
        return []  # nothing to send: `evolve sync` with nothing to do loads no rules
    from evolve.sync.secrets import added_secrets

    return added_secrets(repo, server, main)


def _incoming(repo: Repo, view: refs.View) -> set[str]:
    """The files the server's main changed that this machine's main has otherwise."""
    local, server = view.local.get("main"), view.fetched.get("main")
    if not local or not server or local == server:
        return set()
    return set(repo.changed_paths(local, server))


def _server_after(view: refs.View, updates: list[tuple[str, str | None, str | None]]) -> dict[str, str]:
    """What the server holds of the tracked branches once `updates` were taken.

    A `machine/` branch counts only when it is this machine's there: what the last sync left,
    or the same commit as here; someone else's under this machine's name never enters `synced`.
    """
    server = {
        b: sha
        for b, sha in view.fetched.items()
        if not view.foreign(b) or (b.startswith(refs.MACHINE) and view.local.get(b) == sha)
    }
    for branch, sha, _old in updates:
        if sha is None:
            server.pop(branch, None)
        else:
            server[branch] = sha
    return server


def _count(agent: Agent, old: str | None, new: str) -> int:
    if old == new:  # nothing between a commit and itself: no git process to say so
        return 0
    span = f"{old}..{new}" if old else new
    return int(agent.repo.text("rev-list", "--count", span) or 0)
