"""Proposals: what a reflection parked on `proposals/<id>` until a person decides.

A proposal is a reflection's commit on its own branch (everything, in review mode; or just
the operations the write-path guard flags and those that touch a person's lines), which the agent
never reads; a reviewer may have pushed commits on top of it. A branch is a proposal when
its name is a hex id and its own history (since it left main) holds an evolve reflection
commit that changes something: a branch anyone pushed at main's tip is not one. Accepting
replays the whole branch (every commit since it left main) onto the agent's branch as one
commit (the reflection's trailers, plus `Evolve-Accepted`), file by file: what applies
cleanly lands, a file a later commit changed too stays on the proposal for another look.
A reviewer's commits on the branch (not `made_by_evolve`) land as commits of their own on
top of the accept (their author, date and message), in the same branch move: their lines
stay a person's, which no later reflection rewrites.
Rejecting is a commit of its own on the agent's branch that names each lesson line of the
proposal (`Evolve-Blocks`), so the lesson is not proposed again, on this machine or any
other the repository reaches; then the branch goes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evolve.errors import UserError
from evolve.store import threeway
from evolve.store.history import FOR_REVIEW, FORMAT, PROPOSALS, Commit, build_message, clean_line
from evolve.store.identity import Identity
from evolve.store.repo import Repo
from evolve.store.worktree import refused_path
from evolve.workspace import undo
from evolve.workspace.agent import Agent

PREFIX = PROPOSALS
_ID = re.compile(r"[0-9a-f]{6,40}")


@dataclass
class Proposal:
    id: str
    branch: str
    commit: Commit  # the reflection's commit (its subject and trailers)
    tip: str = ""  # the branch's tip: the reflection's commit, or a reviewer's on top of it
    base: str = ""  # where the branch left main

    def __post_init__(self) -> None:
        self.tip = self.tip or self.commit.sha
        self.base = self.base or f"{self.commit.sha}^"

    @property
    def flags(self) -> list[str]:
        return [f.strip() for f in self.commit.trailers.get("Evolve-Flags", "").split(";") if f.strip()]

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "summary": self.commit.subject,
            "date": self.commit.date,
            "sha": self.tip,
            "flags": self.flags,
            "ops": self.commit.values("Evolve-Ops"),
            "review": self.commit.trailers.get("Evolve-Review", ""),
        }


def branch_for(reflection_id: str) -> str:
    return f"{PREFIX}{reflection_id}"


def rest_id(proposal_id: str) -> str:
    """The id of what stays of a partly accepted proposal (hex, like every proposal id)."""
    return hashlib.sha256(f"rest of {proposal_id}".encode()).hexdigest()[:16]


def rest_of(branch: str, reflection: Commit) -> str | None:
    """The proposal whose rest (what its partial accept left) `branch` is: None for any other."""
    name = branch.removeprefix(PREFIX)
    return next((pid for pid in reflection.values("Evolve-Rest-Of") if rest_id(pid) == name), None)


def decided_whole(repo: Repo, main: str) -> set[str]:
    """The proposals `main` decided as a whole: rejected, or accepted with nothing left over.

    Such a decision decides the proposal's rest too (a reject or accept on another machine
    of the proposal that was partly accepted here): the rest is no longer up for review.
    """
    found: set[str] = set()
    for commit in repo.log(main) if main else []:
        found.update(commit.values("Evolve-Rejected-Proposal"))
        if not commit.values("Evolve-Not-Accepted"):
            found.update(commit.values("Evolve-Accepted"))
    return found


def pending(agent: Agent) -> list[Proposal]:
    """The proposals evolve made (a person's own branch under proposals/ is not one).

    The rest of a proposal decided as a whole since is not one either (the next sync deletes it).
    """
    tips = agent.repo.branches(PREFIX)
    main = agent.repo.tip() or ""
    found = []
    for branch, (sha, base) in sorted(reflections_on(agent.repo, tips, main).items()):
        commit = agent.repo.log(sha, limit=1)[0]
        found.append(Proposal(branch.removeprefix(PREFIX), branch, commit, tips[branch], base))
    if any(rest_of(p.branch, p.commit) for p in found):
        whole = decided_whole(agent.repo, main)
        found = [p for p in found if rest_of(p.branch, p.commit) not in whole]
    return sorted(found, key=lambda p: p.commit.date)


def reflections_on(repo: Repo, tips: Mapping[str, str], main: str) -> dict[str, tuple[str, str]]:
    """Branch → (its reflection's commit, where it left `main`), for the branches that are proposals.

    A proposal's name is a hex id and its own history (what `main` does not hold) has an
    evolve reflection commit that changes something (the oldest such, on its first-parent
    line: commits on top of it are a reviewer's). One `git log` for all the branches.
    """
    wanted = {b: sha for b, sha in tips.items() if _ID.fullmatch(b.removeprefix(PREFIX))}
    if not wanted:
        return {}
    revs = "".join(f"{sha}\n" for sha in sorted(set(wanted.values()))) + (f"^{main}\n" if main else "")
    fmt = "%m %H %T %P%x1f%(trailers:key=Evolve-Kind,valueonly,separator=%x2C)%x1e"
    out = repo.text("log", "--stdin", "--boundary", f"--format={fmt}", "--", input=revs.encode())
    own: dict[str, tuple[str, list[str], bool]] = {}  # sha → (tree, parents, a reflection)
    trees: dict[str, str] = {}
    for record in out.split("\x1e"):
        head, _, kind = record.strip("\n").partition("\x1f")
        mark, sha, tree, *parents = head.split() or ["", "", ""]
        if not sha:
            continue
        trees[sha] = tree
        if mark != "-":
            own[sha] = (tree, parents, kind.strip() == "reflection")
    found: dict[str, tuple[str, str]] = {}
    for branch, tip in wanted.items():
        reflection, sha, base = None, tip, ""
        while sha in own:  # first parents, back to where the branch left main
            tree, parents, is_reflection = own[sha]
            base = parents[0] if parents else ""
            if is_reflection and base and trees.get(base) != tree:
                reflection = sha
            if not parents:
                break
            sha = parents[0]
        if reflection is not None and base:
            found[branch] = (reflection, base)
    return found


def _matching(agent: Agent, proposal_id: str) -> list[Proposal]:
    if not _ID.fullmatch(proposal_id or ""):
        return []
    return [p for p in pending(agent) if p.id == proposal_id or p.id.startswith(proposal_id)]


def get(agent: Agent, proposal_id: str) -> Proposal:
    if not _ID.fullmatch(proposal_id or ""):
        raise UserError(f"{proposal_id!r} is not a proposal id; see `evolve proposals {agent.name}`")
    found = _matching(agent, proposal_id)
    exact = [p for p in found if p.id == proposal_id]
    if len(exact) == 1 or len(found) == 1:
        return (exact or found)[0]
    if found:
        raise UserError(f"{proposal_id!r} names {len(found)} proposals; give more of its id")
    raise UserError(f"no pending proposal {proposal_id!r}; see `evolve proposals {agent.name}`")


def exists(agent: Agent, proposal_id: str) -> bool:
    return bool(_matching(agent, proposal_id))


def diff(agent: Agent, proposal: Proposal) -> str:
    from evolve.transcripts.redact import make_visible

    if proposal.tip == proposal.commit.sha:
        raw = agent.repo.git("show", "--format=", "--stat", "--patch", proposal.tip, "--")
    else:  # a reviewer's commits on top: the whole branch since it left main
        raw = agent.repo.git("diff", "--stat", "--patch", proposal.base, proposal.tip, "--")
    return make_visible(raw.decode("utf-8", "replace"))


@dataclass
class Accepted:
    sha: str | None  # the commit on the agent's branch (None: nothing applied cleanly)
    applied: list[str]
    left: list[str]  # files that did not apply: a proposal of their own keeps them
    rest: str | None = None  # that proposal's id


def accept(agent: Agent, proposal_id: str) -> Accepted:
    proposal = get(agent, proposal_id)
    refused = [p for p in agent.repo.changed_paths(proposal.base, proposal.tip) if refused_path(p)]
    if refused:  # a branch anyone with push access to the server may have written
        raise UserError(
            f"proposal {proposal.id} holds {refused[0]!r}, which evolve never writes (it could make "
            f"git run filters or write into .git); nothing was applied: fix the branch {proposal.branch} "
            f"or `evolve reject {agent.name} {proposal.id}`"
        )
    with agent.repo.locked():
        agent.repo.refuse_worktrees([proposal.branch])  # before anything is written
        agent.commit_human_edits_held()
        changes, left = threeway.replay_files(agent.repo, proposal.tip, base=proposal.base)
        if not changes:
            raise UserError(
                f"nothing of {proposal.id} applies cleanly ({', '.join(left)} changed since); "
                f"edit the files by hand or `evolve reject {agent.name} {proposal.id}`"
            )
        trailers: dict[str, object] = {
            k: v for k, v in proposal.commit.lines.items() if k not in ("Evolve-Review", FORMAT)
        }
        trailers["Evolve-Accepted"] = proposal.id
        if left:
            trailers["Evolve-Not-Accepted"] = left
        message = build_message(proposal.commit.subject.removesuffix(FOR_REVIEW), trailers)  # reviewed now
        steps = _people_steps(agent, proposal, sorted(changes))
        if steps is None:  # all evolve's: one commit
            sha = agent.repo.commit_changes(changes, message, agent.evolve_identity)
        else:  # a reviewer's commits among them: their lines stay theirs
            sha = _commit_steps(agent, steps, message)
        rest = None
        if left:  # the files that did not apply stay a proposal of their own, for another look
            rest = rest_id(proposal.id)
            kept = {k: v for k, v in proposal.commit.lines.items() if k != FORMAT}
            kept["Evolve-Rest-Of"] = [proposal.id]
            agent.repo.part_of(
                proposal.tip,
                left,
                f"{PREFIX}{rest}",
                build_message(proposal.commit.subject, kept),
                agent.evolve_identity,
                base=proposal.base,
            )
        agent.repo.delete_branch(proposal.branch, proposal.tip)
    agent.sync_links(changes)
    return Accepted(sha, sorted(changes), left, rest)


@dataclass
class _Step:
    entries: dict[str, tuple[str, str] | None]  # the applied paths' state after this commit
    env: dict[str, str] | None  # a person's identity and date; None: evolve's (the accept message)
    message: str = ""


def _people_steps(agent: Agent, proposal: Proposal, applied: list[str]) -> list[_Step] | None:
    """The branch's commits as steps to commit on the agent's branch, when a person made some.

    None when every commit on the branch's first-parent line is evolve's (`made_by_evolve`):
    the accept is one commit. Otherwise consecutive commits of evolve become one step (the
    accept's message), and each person's commit one of its own (their name, date and message;
    a message with `Evolve-` trailers becomes a person's edit message, so no trailer of theirs
    decides anything on main). Each step holds the whole branch's change up to that commit,
    replayed 3-way on the tip, of the paths that apply for the whole branch: the last step is
    exactly what the one-commit accept would commit.
    """
    from evolve.workspace.authorship import made_by_evolve

    shas = agent.repo.text(
        "rev-list", "--first-parent", "--reverse", proposal.tip, f"^{proposal.base}", "--"
    ).split()
    if not shas:
        return None
    commits = {c.sha: c for c in agent.repo.log(proposal.tip, limit=len(shas) + 50)}
    evolve_made = [made_by_evolve(commits.get(sha), agent.evolve_emails) for sha in shas]
    if all(evolve_made):
        return None
    steps: list[_Step] = []
    state: dict[str, tuple[str, str] | None] = {}
    for index, sha in enumerate(shas):
        last = index == len(shas) - 1
        if not last and evolve_made[index] and evolve_made[index + 1]:
            continue  # a run of evolve's commits is one step
        if agent.repo.changed_paths(proposal.base, sha, applied):
            entries, _left = threeway.replay_entries(agent.repo, sha, base=proposal.base, only=applied)
            state = {**state, **entries}  # a path that does not apply yet keeps its last state
        if steps and state == steps[-1].entries:
            continue  # changed nothing the accept lands
        if evolve_made[index]:
            steps.append(_Step(dict(state), None))
            continue
        name, email, cname, cemail, date, raw = agent.repo.text(
            "log", "-1", "--format=%an%x00%ae%x00%cn%x00%ce%x00%aI%x00%B", sha, "--"
        ).split("\0", 5)
        if email in agent.evolve_emails and cemail:  # e.g. `git commit -C` of evolve's commit
            name, email = cname, cemail
        person = Identity(name or cname, email or cemail)
        message = raw.strip() + "\n"
        commit = commits.get(sha)
        if commit is None or any(key.startswith("Evolve-") for key in commit.lines):
            before = steps[-1].entries if steps else {}
            edited = sorted(p for p in state if before.get(p) != state[p])
            message = agent.human_edit_message(edited or applied)
        env = {**person.env(), "GIT_AUTHOR_DATE": date}
        steps.append(_Step(dict(state), env, message))
    if all(step.env for step in steps):  # the accept's own commit, with its trailers, all the same
        steps.insert(0, _Step({}, None))
    return steps


def _commit_steps(agent: Agent, steps: list[_Step], message: str) -> str:
    """Commit the steps on the tip, evolve's as `message`, and move the branch once."""
    tip = agent.repo.tip() or ""
    new = tip
    accept_sha = None
    for step in steps:
        env = step.env or agent.evolve_identity.env()
        new = agent.repo.build_commit(new, step.entries, step.message if step.env else message, env)
        if step.env is None and accept_sha is None:
            accept_sha = new
    agent.repo.move_branch(new, tip)
    return accept_sha or new


def reject(agent: Agent, proposal_id: str) -> Proposal:
    """Drop the proposal; what it taught and what it removed become blocks, in a commit of their own.

    Its new lesson lines are not learned again, and neither is what it took away: the skills
    it retired are not retired again, the lines it deleted are not deleted again.
    """
    proposal = get(agent, proposal_id)
    parent, sha = proposal.base, proposal.tip
    lessons, retired, removed = taught_and_removed(agent, parent, sha)
    message = reject_message(agent, proposal.id, proposal.commit.subject, lessons, retired, removed)
    with agent.repo.locked():
        agent.repo.refuse_worktrees([proposal.branch])  # before anything is written
        agent.commit_human_edits_held()
        agent.repo.commit_changes({}, message, agent.evolve_identity)
        agent.repo.delete_branch(proposal.branch, proposal.tip)
    return proposal


def _added(diff: list[str]) -> list[str]:
    """The lines a diff (`_diff`) adds."""
    return [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]


def _diff(agent: Agent, old: str, new: str, *excluded: str) -> list[str]:
    paths = ["memo.md", "skills/", *(f":(exclude){p}" for p in excluded)]
    patch = agent.repo.git("diff", "--no-color", "--no-ext-diff", "--text", "-U0", old, new, "--", *paths)
    return patch.decode("utf-8", "replace").splitlines()


def lessons_of(agent: Agent, old: str, new: str) -> dict[str, str]:
    """Fingerprint → line, for every lesson line the change `old..new` adds to the memo or skills."""
    return _lessons(_diff(agent, old, new))


def _lessons(diff: list[str]) -> dict[str, str]:
    return undo.lesson_lines("\n".join(_added(diff)))


def removals_of(agent: Agent, old: str, new: str) -> tuple[list[str], list[str]]:
    """(the skills the change `old..new` retires, the lines it deletes from the files it keeps).

    A line it only moves is no removal; a retire is blocked as a whole, not line by line.
    """
    return _removals(agent, old, new, _diff(agent, old, new))


def taught_and_removed(agent: Agent, old: str, new: str) -> tuple[dict[str, str], list[str], list[str]]:
    """`lessons_of` and `removals_of` together, from one `git diff` of `old..new` (not three)."""
    diff = _diff(agent, old, new)
    return (_lessons(diff), *_removals(agent, old, new, diff))


def _removals(agent: Agent, old: str, new: str, diff: list[str]) -> tuple[list[str], list[str]]:
    """`removals_of`, given the change's `_diff`: asked again only without the files it deletes."""
    gone = agent.repo.text("diff", "--name-only", "--diff-filter=D", "-z", old, new, "--", "skills/")
    deleted = [p for p in gone.split("\0") if p]
    retired = sorted({p.split("/")[1] for p in deleted if p.endswith("/SKILL.md") and p.count("/") == 2})
    added = set(_added(diff))
    kept = _diff(agent, old, new, *deleted) if deleted else diff
    removed = [
        line[1:]
        for line in kept
        if line.startswith("-") and not line.startswith("---") and line[1:] not in added
    ]
    return retired, removed


def reject_message(
    agent: Agent,
    proposal_id: str,
    subject: str,
    lessons: Mapping[str, str],
    retired: Sequence[str] = (),
    removed: Sequence[str] = (),
    how: str = "",
) -> str:
    """The reject commit's message: one `Evolve-Blocks` line per lesson line, retire and deletion."""
    blocks = [f"{fp} {clean_line(text, 200)}" for fp, text in lessons.items()]
    blocks += [clean_line(item, 220) for item in undo.rejected_removals(removed, retired)]
    return build_message(
        f"reject({agent.name}): {subject.partition(': ')[2] or proposal_id}{how}",
        {"Evolve-Kind": "reject", "Evolve-Rejected-Proposal": proposal_id, undo.BLOCKS: blocks or ["-"]},
    )


def unblock(agent: Agent, block_id: str) -> undo.Block:
    """Let evolve learn a lesson line again that a person undid (one commit says so)."""
    with agent.repo.locked():  # first: a person's git operation in progress makes it wait
        found = undo.blocks(agent.repo)
        candidates = [b for fp, b in found.items() if block_id and fp.startswith(block_id)]
        block = found.get(block_id) or (candidates[0] if len(candidates) == 1 else None)
        if block is None and candidates:
            raise UserError(f"{block_id!r} names {len(candidates)} blocks; give more of its id")
        if block is None:
            raise UserError(f'no block {block_id!r}; see `evolve log {agent.name} --json` ("blocks")')
        message = build_message(
            f"unblock({agent.name}): {clean_line(block.line, 120)}",
            {"Evolve-Kind": "unblock", undo.UNBLOCKS: [block.id]},
        )
        agent.commit_human_edits_held()
        agent.repo.commit_changes({}, message, agent.evolve_identity)
    return block


def summary_line(proposal: Proposal) -> str:
    flags = f" · flags: {'; '.join(proposal.flags)}" if proposal.flags else ""
    return f"{proposal.id}  {proposal.commit.date}  {proposal.commit.subject}{flags}"


__all__ = ["Accepted", "Proposal", "accept", "diff", "exists", "get", "pending", "reject", "unblock"]
