"""Review on the server: every `proposals/<id>` branch travels, and what a team did there counts.

Merging a proposal on the server — by a merge, a squash or a rebase — and syncing is the
same as `evolve accept`: it is recognised by content (the proposal's change is already on
main), never by sha or trailers, and recorded by an `accept` commit naming its lesson lines
(a squash leaves no reflection trailer behind). Deleting the branch on the server while its
content is not on main is a reject: a commit blocks its lesson lines, so no machine
proposes them again; lines that did reach main (a partial merge) are not blocked. A
branch left with nothing of its own on the server (reset to main's tip) is deleted there all
the same: the proposal as this machine knew it is decided, never taken as merged. A
proposal made on another machine appears here; one accepted or rejected here is deleted
there; one a reviewer pushed to is taken as the reviewer left it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from evolve.reflect.proposals import (
    decided_whole,
    lessons_of,
    reflections_on,
    reject_message,
    removals_of,
    rest_of,
    taught_and_removed,
)
from evolve.store.git import GitError
from evolve.store.history import PROPOSALS, Commit, build_message, clean_line
from evolve.store.worktree import WHY
from evolve.sync.refs import MACHINE, SYNCED, View
from evolve.sync.remote import FETCHED
from evolve.workspace import undo
from evolve.workspace.agent import Agent

PROPOSAL_FILES = ("memo.md", "skills/")


@dataclass
class Reviewed:
    """What the server's review changes here (the caller commits and moves it all at once)."""

    main: str  # main with the accept and reject commits on top
    local: dict[str, str | None] = field(default_factory=dict)  # branch → new sha, None: delete here
    remote: dict[str, str | None] = field(default_factory=dict)  # branch → push it, None: delete there
    notes: list[str] = field(default_factory=list)


def review(agent: Agent, view: View, main: str) -> Reviewed:
    """Each proposal branch seen here, on the server now and at the last sync, decided."""
    done = Reviewed(main)
    decided: set[str] | None = None
    blocked: dict[str, undo.Block] | None = None
    repo = agent.repo
    names = sorted(b for b in view.branches() if b.startswith(PROPOSALS))
    on_server = {b: view.fetched[b] for b in names if b in view.fetched}
    real = reflections_on(repo, on_server, main) if on_server else {}  # one `git log` for them all
    rests = _rests(agent, view, names, real, main)
    whole = decided_whole(repo, main) if rests else set()
    for branch in names:
        here, there, before = view.local.get(branch), view.fetched.get(branch), view.synced.get(branch)
        if rests.get(branch) in whole:  # its proposal was rejected (or wholly accepted) since
            tips = sorted({sha for sha in (here, there) if sha is not None})
            saved = [
                _keep_persons(agent, done, branch, sha) for sha in tips if _persons_commits(agent, main, sha)
            ]
            done.local[branch] = None
            if there is not None:
                done.remote[branch] = None
            done.notes.append(
                f"{branch}: the rest of {rests[branch]}, which was decided as a whole since: "
                "deleted, not up for review"
                + (f"; the person's commits on it are kept on {', '.join(saved)}" if saved else "")
            )
            continue
        if there is not None and branch not in real:  # no reflection of its own there: no proposal
            if here is None and before is None:
                continue  # nothing to take or decide
            if before is not None:  # reset to main (or to nothing evolve made): deleted there, so
                done.remote[branch] = None  # a reject of the proposal as this machine knew it
            there = None
        if there is not None and there != here and (unsafe := repo.refused_in_tree(there)) is not None:
            done.notes.append(f"{branch}: the server's holds {unsafe!r} ({WHY}); not taken here")
            if here is not None:
                done.remote[branch] = there  # neither side changes: the server's stays there
            continue
        settle: str | None = None  # the sha of a proposal the server decided
        deleted = False
        if there is None and before is not None:  # deleted on the server since the last sync
            settle, deleted = here, True
            if here is not None and here != before and _persons_commits(agent, before, here):
                kept = _keep_persons(agent, done, branch, here)  # the team's decision is on `before`
                done.notes.append(
                    f"{branch}: deleted on the server; the person's commits on it are kept on {kept}"
                )
                settle = before
        elif there is not None and here is None:
            if before == there:  # accepted or rejected here: it goes on the server too
                done.remote[branch] = None
            elif merged(agent, there, done.main)[0]:
                settle = there
            else:
                done.local[branch] = there  # made on another machine
                done.notes.append(f"{branch}: a proposal from the server, waiting for review")
        elif there is not None and here is not None:
            if there != here and (here == before or repo.is_ancestor(here, there)):
                done.local[branch] = here = there  # a reviewer pushed to it on the server
            elif there != here and (there == before or repo.is_ancestor(there, here)):
                done.remote[branch] = here
            elif there != here:
                kept = (
                    _keep_persons(agent, done, branch, here) if _persons_commits(agent, there, here) else ""
                )
                done.local[branch] = here = there
                done.notes.append(
                    f"{branch}: changed here and on the server; the server's is kept"
                    + (f", the person's commits made here are on {kept}" if kept else "")
                )
            if merged(agent, here, done.main)[0]:  # merged on the server, the branch left there
                settle = here
        elif here is not None:  # made here: the team reviews it on the server
            blocked = blocked if blocked is not None else undo.blocks(repo, tip=done.main)
            if _all_blocked(agent, here, done.main, blocked):
                done.local[branch] = None
                done.notes.append(
                    f"{branch}: its lessons were rejected already (on main): deleted, not proposed again"
                )
            else:
                done.remote[branch] = here
        if settle is not None:
            decided = decided if decided is not None else _decided(agent, done.main)
            _settle(agent, done, branch, settle, decided, deleted=deleted)
    return done


def _rests(
    agent: Agent, view: View, names: list[str], real: dict[str, tuple[str, str]], main: str
) -> dict[str, str]:
    """Branch → the proposal it is the rest of (a partial accept's), here or on the server."""
    local = {b: view.local[b] for b in names if b in view.local}
    mine = reflections_on(agent.repo, local, main) if local else {}
    found: dict[str, str] = {}
    for branch in names:
        for reflection in {seen[0] for seen in (mine.get(branch), real.get(branch)) if seen}:
            if origin := rest_of(branch, agent.repo.log(reflection, limit=1)[0]):
                found[branch] = origin
    return found


def _persons_commits(agent: Agent, old: str, new: str) -> list[Commit]:
    """The commits of `new` that `old` does not have and that are not evolve's reflections."""
    return [c for c in agent.repo.log(f"{old}..{new}") if c.trailers.get("Evolve-Kind") != "reflection"]


def _keep_persons(agent: Agent, done: Reviewed, branch: str, sha: str) -> str:
    """A branch after this machine holding `sha` (a person's commits on a proposal): pushed, listed."""
    taken = set(agent.repo.branches(MACHINE)) | set(done.local)
    name = f"{MACHINE}{agent.home.machine()}-{branch.removeprefix(PROPOSALS)}"
    kept, number = name, 1
    while kept in taken:
        number += 1
        kept = f"{name}-{number}"
    done.local[kept] = sha
    return kept


def _all_blocked(agent: Agent, sha: str, main: str, blocked: dict[str, undo.Block]) -> bool:
    """Whether everything a reflection's proposal (nobody else's commit on it) teaches was undone."""
    fork = fork_of(agent, sha, main)
    if _persons_commits(agent, fork, sha):
        return False
    lessons, retired, removed = taught_and_removed(agent, fork, sha)
    ids = [*lessons, *(i.split(" ", 1)[0] for i in undo.rejected_removals(removed, retired))]
    return bool(ids) and all(i in blocked for i in ids)


def _settle(agent: Agent, done: Reviewed, branch: str, sha: str, decided: set[str], *, deleted: bool) -> None:
    """A proposal the server decided: an accept or reject commit on main, the branch gone everywhere."""
    name = branch.removeprefix(PROPOSALS)
    done.local[branch] = None
    if not deleted:
        done.remote[branch] = None
    if name in decided:
        return  # accepted or rejected here or on another machine already
    whole, missing = merged(agent, sha, done.main)
    fork = fork_of(agent, sha, done.main)
    lessons = lessons_of(agent, fork, sha)
    own = reflections_on(agent.repo, {branch: sha}, fork).get(branch) if fork != sha else None
    subject = agent.repo.log(own[0] if own else sha, limit=1)[0].subject  # the reflection's, not a reviewer's
    if whole or (lessons and not missing):
        message = build_message(
            f"accept({agent.name}): {subject.partition(': ')[2] or name} (merged on the server)",
            {
                "Evolve-Kind": "accept",
                "Evolve-Accepted": name,
                undo.LEARNED: [f"{fp} {clean_line(line, 200)}" for fp, line in lessons.items()] or ["-"],
            },
        )
        done.notes.append(f"{branch}: merged on the server: accepted")
    else:
        partly = ", partly merged" if len(missing) < len(lessons) else ""
        retired, removed = _removals_left(agent, fork, sha, done.main)
        how = f" (deleted on the server{partly})"
        message = reject_message(agent, name, subject, missing, retired, removed, how)
        done.notes.append(
            f"{branch}: deleted on the server before reaching main: rejected: its lesson is blocked"
        )
    done.main = agent.repo.build_commit(done.main, {}, message, agent.evolve_identity.env())
    decided.add(name)


def merged(agent: Agent, sha: str, main: str) -> tuple[bool, dict[str, str]]:
    """(whether the proposal's whole change is on `main`, its lesson lines that are not)."""
    repo = agent.repo
    fork = fork_of(agent, sha, main)
    if fork == sha or _reverse_applies(agent, fork, sha, main):
        return True, {}
    present = undo.tree_text(repo, main)
    lessons = lessons_of(agent, fork, sha)
    return False, {fp: line for fp, line in lessons.items() if f" {undo.lesson_text(line)} " not in present}


def _removals_left(agent: Agent, fork: str, sha: str, main: str) -> tuple[list[str], list[str]]:
    """What the proposal retires or deletes that `main` still has: a reject keeps it there."""
    retired, removed = removals_of(agent, fork, sha)
    on_main = agent.repo.tree_entries(main, ["skills/"])
    present = undo.tree_text(agent.repo, main)
    return (
        [name for name in retired if f"skills/{name}/SKILL.md" in on_main],
        [line for line in removed if undo.lesson_text(line) and f" {undo.lesson_text(line)} " in present],
    )


def _reverse_applies(agent: Agent, fork: str, sha: str, main: str) -> bool:
    """Whether undoing the proposal's change applies to `main` as it is: the change is there."""
    repo = agent.repo
    patch = repo.git("diff", "--binary", "--full-index", "--no-renames", fork, sha, "--")
    if not patch.strip():
        return False  # an empty proposal is decided by what the team did with its branch
    with tempfile.TemporaryDirectory(dir=repo.git_dir, prefix="evolve-idx-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        repo.git("read-tree", main, env=env)
        try:
            repo.git("apply", "--cached", "--check", "-R", input=patch, env=env)
        except GitError:
            return False
    return True


def fork_of(agent: Agent, sha: str, main: str) -> str:
    """Where the proposal left main (its first commit's parent, for a one-commit proposal)."""
    return agent.repo.text("merge-base", sha, main, check=False) or f"{sha}^"


def merged_on_server(agent: Agent, ids: Iterable[str], base: str, server: str) -> dict[str, str]:
    """Each of `ids` the server's main took since `base` without evolve → its proposal commit.

    A pull request merged on the server (a merge, a squash, a rebase; its branch deleted
    afterwards or not) leaves no `Evolve-Accepted` trailer: it is recognised by content as
    `review` recognises it (`review.merged`: the proposal's commit on main, or its change
    there), on the proposal as the server has it now, else as this machine last synced it.
    """
    repo, found = agent.repo, {}
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    known = repo.refs(FETCHED + PROPOSALS, SYNCED + PROPOSALS)
    for pid in wanted:
        for prefix in (FETCHED, SYNCED):
            sha = known.get(f"{prefix}{PROPOSALS}{pid}")
            if sha is None or repo.is_ancestor(sha, base):
                continue  # not there, or on main before the server's side began
            if merged(agent, sha, server)[0] and not merged(agent, sha, base)[0]:
                found[pid] = sha
                break
    return found


def _decided(agent: Agent, main: str) -> set[str]:
    """The proposals main's history already accepted or rejected."""
    found: set[str] = set()
    for commit in agent.repo.log(main):
        found.update(commit.values("Evolve-Accepted"), commit.values("Evolve-Rejected-Proposal"))
    return found
