"""Bringing the server's work in, under the agent's lock: main, the proposals, this machine's branches.

Main: nothing to do when the server has nothing new; a fast-forward when only the server
moved; this machine's commits replayed on the server's (`replay`) when both did. A main
the server rewrote (force-pushed) is refused unless the person accepts the rewrite, after
being told which commits would leave main (they stay here on a backup branch); a server
holding an unrelated history, or a tree evolve must not write (`.gitattributes`,
`.gitmodules`: they would make git run filters), is refused. Then the server's review
decisions (`review`), and the local proposals built on replayed commits are moved onto
their replayed parents. Everything lands in ONE journalled move of the branch and its refs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from evolve import config as config_mod
from evolve.errors import ConfigError
from evolve.store import threeway
from evolve.store.git import ZERO
from evolve.store.history import PROPOSALS, Commit
from evolve.store.repo import Repo
from evolve.store.worktree import WHY
from evolve.sync.refs import HEADS, MACHINE, Held, Refused, View
from evolve.workspace.agent import Agent

BACKUP = "backup/before-rewrite-"  # main as it was when a person accepted the server's rewrite


@dataclass
class Integrated:
    """What this sync did here, and what the server must get."""

    main: str
    received: int = 0  # commits that came from the server
    branches: dict[str, str | None] = field(default_factory=dict)  # here: branch → sha, None deletes
    push: dict[str, str | None] = field(default_factory=dict)  # there: branch → sha, None deletes
    notes: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # files written here
    mapping: dict[str, str] = field(default_factory=dict)  # a replayed commit → its replay


def integrate(
    agent: Agent, view: View, machine: str, *, accept_rewrite: bool = False, accept_held: bool = False
) -> Integrated:
    """Everything the server has, brought in (call under the agent's lock); nothing is pushed here.

    `accept_held`: a person took the main the last sync held back (`screen`) as reviewed.
    """
    repo = agent.repo
    local = view.local.get("main") or repo.tip() or ""
    server, before = view.fetched.get("main"), view.synced.get("main")
    result = Integrated(local)
    held = None
    if server is not None and server != local and not repo.is_ancestor(server, local):
        check_tree(repo, server)
        rewritten = before is not None and not repo.is_ancestor(before, server)
        if rewritten and not accept_rewrite:
            raise Refused(_rewrite_message(agent, before or "", server))
        forward = not rewritten if before == local else repo.is_ancestor(local, server)  # one git call fewer
        base = local if forward else (before if rewritten else None) or repo.merge_base(local, server)
        if base is None:
            raise Refused(
                f"the server's main shares no history with agent {agent.name!r}; point it at an empty "
                f"repository, or join the server's agent with `evolve init NAME --from URL`"
            )
        held = _screened(agent, server, [local, base], accept_held)
        if forward:
            result.main = server
        else:
            if rewritten:
                result.branches[f"{BACKUP}{int(time.time())}"] = local
            _replay(agent, result, base, server, machine)
        result.received = int(repo.text("rev-list", "--count", f"{local}..{server}") or 0)
    elif server is None and before is not None and not accept_rewrite:
        raise Refused(
            f"the server has no main any more (it had {before[:12]} at the last sync); nothing was "
            f"changed here. `evolve sync --accept-rewrite {agent.name}` pushes the main of this machine"
        )
    _review(agent, view, result)
    _rebase_proposals(agent, view, result, local)
    _tidy_machine_branches(agent, view, result, machine)
    if result.main != local or result.branches:
        updates = [
            (HEADS + b, sha or ZERO, view.local.get(b) or ZERO)
            for b, sha in result.branches.items()
            if sha != view.local.get(b)
        ]
        updates += [(ref, ZERO, sha) for ref, sha in (held or {}).items()]  # taken now: nothing held
        result.paths = repo.move_branch(result.main, local, refs=updates, journal_id="sync")
        result.notes += _settings_notes(agent, local, result.main)
    return result


def _screened(agent: Agent, server: str, known: list[str], accept_held: bool) -> dict[str, str]:
    """Hold the server's main back when `screen` finds anything; else the held ref to clear."""
    from evolve.sync.screen import HELD, held_message, screen

    repo = agent.repo
    held = repo.refs(HELD)
    reasons = screen(agent, server, known + list(held.values()) if accept_held else known)
    if reasons:
        repo.update_refs([(HELD, server, None)], "evolve: held")
        raise Held(held_message(agent, reasons))
    return held


def _replay(agent: Agent, result: Integrated, base: str, server: str, machine: str) -> None:
    from evolve.sync.replay import Replayer  # lazily: the reflection stack, only when both moved

    commits = _local_commits(agent.repo, base, result.main)
    replayed = Replayer(agent, base, server, machine).run(commits)
    result.main = replayed.tip
    result.branches.update(replayed.branches)
    result.notes += replayed.notes
    result.mapping = replayed.mapping


def _local_commits(repo: Repo, base: str, tip: str) -> list[Commit]:
    """Main's commits since `base`, oldest first (a person's merge replays as its first-parent change)."""
    shas = repo.text("rev-list", "--reverse", "--first-parent", f"{base}..{tip}").split()
    by_sha = {c.sha: c for c in repo.log(tip, limit=len(shas) + 1)} if shas else {}
    missing = [s for s in shas if s not in by_sha]
    if missing:  # a merge's side history made the first-parent list longer than the window
        by_sha.update({c.sha: c for c in repo.log(tip)})
    return [by_sha[s] for s in shas]


def _review(agent: Agent, view: View, result: Integrated) -> None:
    from evolve.sync.review import review

    reviewed = review(agent, view, result.main)
    result.main = reviewed.main
    result.notes += reviewed.notes
    result.branches.update(reviewed.local)
    result.push.update(reviewed.remote)


def _rebase_proposals(agent: Agent, view: View, result: Integrated, old_main: str) -> None:
    """A proposal not on the server yet, built on a commit that was replayed, moves onto its replay."""
    mapping = result.mapping
    if not mapping:
        return
    from evolve.sync.commits import commit_env, message_of

    repo = agent.repo
    for branch, sha in view.local.items():
        if not branch.startswith(PROPOSALS) or branch in view.fetched or branch in result.branches:
            continue
        fork = repo.merge_base(sha, old_main)
        if fork is None or fork not in mapping:
            continue
        onto = mapping[fork]
        shas = repo.text("rev-list", "--reverse", f"{fork}..{sha}").split()
        raws = repo.read_blobs(shas)
        for commit in shas:
            entries, left = threeway.replay_entries(repo, commit, onto=onto)
            theirs = repo.tree_entries(commit, left)
            entries.update({path: theirs.get(path) for path in left})  # the proposal's own version
            raw = raws.get(commit) or b""
            onto = repo.build_commit(onto, entries, message_of(raw), commit_env(raw))
        result.branches[branch] = onto


def _tidy_machine_branches(agent: Agent, view: View, result: Integrated, machine: str) -> None:
    """Kept branches of this machine whose content reached main go (here and on the server)."""
    repo = agent.repo
    for branch, sha in view.local.items():
        if not branch.startswith(MACHINE):
            continue
        if view.foreign(branch) and view.fetched.get(branch) != sha:
            result.notes.append(
                f"{branch}: the server has a branch of that name with other commits (not this machine's); "
                "yours stays here only — rename it (`git branch -m`) to send it"
            )
        if branch in result.branches:
            continue
        fork = repo.merge_base(sha, result.main)
        paths = repo.changed_paths(fork, sha) if fork else []
        if fork and (fork == sha or repo.tree_entries(sha, paths) == repo.tree_entries(result.main, paths)):
            result.branches[branch] = None
            result.notes.append(f"{branch}: its commits are on main now; the branch is deleted")


def pushes(view: View, result: Integrated) -> list[tuple[str, str | None, str | None]]:
    """(branch, the sha the server must take or None to delete it, what it holds now) per change.

    Every one is compared with (and leased on) the fetch. A `machine/` branch the server holds
    with commits this machine did not put there is someone else's: never overwritten or deleted.
    """
    here = {**view.local, **result.branches, "main": result.main}
    wanted = {b: sha for b, sha in here.items() if b == "main" or b.startswith((PROPOSALS, MACHINE))}
    wanted.update(result.push)
    updates = []
    for branch, sha in sorted(wanted.items()):
        server = view.fetched.get(branch)
        if sha != server and (sha is not None or server is not None) and not view.foreign(branch):
            updates.append((branch, sha, server))
    return updates


def check_tree(repo: Repo, sha: str) -> None:
    """Refuse a server tree evolve must not write into the work tree."""
    path = repo.refused_in_tree(sha)
    if path is not None:
        raise Refused(
            f"the server's main holds {path!r} ({WHY}); evolve does not take it: remove it on the "
            "server, then sync again"
        )


def _rewrite_message(agent: Agent, before: str, server: str) -> str:
    repo = agent.repo
    gone = repo.log(f"{server}..{before}")
    listed = "; ".join(f"{c.sha[:12]} {c.subject}" for c in gone[:5]) + (" …" if len(gone) > 5 else "")
    return (
        f"the server's main was rewritten (force-pushed): {len(gone)} commit(s) this machine had synced "
        f"are no longer on it ({listed}); nothing was changed here. If that was meant, `evolve sync "
        f"--accept-rewrite {agent.name}` takes the server's main: those commits leave main here too (kept "
        f"on this machine on a branch {BACKUP}<time>), this machine's newer commits are replayed on top"
    )


def _settings_notes(agent: Agent, old: str, new: str) -> list[str]:
    """What a pulled agent.toml sets that does not apply here (`[sources]`, `[model]`: this machine's)."""
    if "agent.toml" not in agent.repo.changed_paths(old, new, ["agent.toml"]):
        return []
    text = (agent.repo.read_blobs([f"{new}:agent.toml"]).get(f"{new}:agent.toml") or b"").decode(
        "utf-8", "replace"
    )
    try:
        import tomllib

        raw = tomllib.loads(text)
        merged = config_mod.merge(
            config_mod.Config(), raw, "agent.toml from the server", agent=True, shared=agent.local_config_path
        )
    except (ValueError, ConfigError) as exc:
        return [f"agent.toml from the server does not load ({exc}); fix it in {agent.path / 'agent.toml'}"]
    return list(merged.warnings)
