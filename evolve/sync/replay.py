"""Local commits replayed on top of the server's: nothing the server has is rewritten.

Each local commit is applied again, file by file and 3-way, on the server's main and keeps
its message, trailers and author. Whose commit it is comes from `made_by_evolve` (one rule for
replay, replan and blame): a reflection evolve both authored and committed is the model's —
and so is a copy of one that changes nothing (an amend or rebase that only re-committed it;
its stored operations are found by its `Evolve-Reflection` id). Everything else — a person's
commit, their amend of a reflection, a reflection's message a person reused (`git commit -C`),
their revert, an evolve command they ran — is a person's. Where the files conflict:

- a reflection is planned again from its stored operations (`replan`): a person's lines on
  the server stay, two reflections' memo lessons are merged, what cannot land waits;
- a person's commit against the server's reflections wins on main (their side of each
  conflicting hunk), and the lesson it displaced waits on a `proposals/` branch;
- where both sides only added lines (none changed or removed), both stay: the server's
  first, then this machine's — the order every machine gets;
- a person's commit against a person's changed lines on the server (the same person's on
  another machine, or anyone's) stays off main: kept as it was made, on its own parent, on a
  branch named after this machine, so that `git merge` of it shows both versions in a real
  conflict; `evolve status` says so.

A reflection that would bring back a lesson a person undid on the server is planned again
too (the undo wins). Nothing moves here: the caller moves the branch and refs at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from evolve.store import threeway
from evolve.store.files import sha256
from evolve.store.git import GitError
from evolve.store.history import PROPOSALS, Commit, build_message
from evolve.store.repo import Entry
from evolve.store.worktree import LINK
from evolve.sync.commits import commit_env, from_model, message_of, persons_env, rewritten
from evolve.sync.refs import MACHINE
from evolve.sync.remote import FETCHED
from evolve.sync.replan import noted_reflection, removes_lines, replan, union
from evolve.sync.review import fork_of, merged_on_server
from evolve.sync.twins import Twins
from evolve.workspace import undo
from evolve.workspace.agent import Agent
from evolve.workspace.authorship import made_by_evolve


@dataclass
class Replayed:
    """Where the local commits went: the new main, and the branches made for what could not land."""

    tip: str
    mapping: dict[str, str] = field(default_factory=dict)  # old sha → its replayed commit
    kept: list[Commit] = field(default_factory=list)  # a person's commits kept off main
    branches: dict[str, str] = field(default_factory=dict)  # new or moved branch → sha
    notes: list[str] = field(default_factory=list)  # one line per thing a person should know


class Replayer:
    """Replays `commits` (oldest first) from merge base `base` onto `onto`."""

    def __init__(self, agent: Agent, base: str, onto: str, machine: str) -> None:
        self.agent, self.repo, self.base, self.machine = agent, agent.repo, base, machine
        self.server = onto  # the server's main: only its side says what someone else did
        self.result = Replayed(onto)
        self._blocked: Mapping[str, str] | None = None
        self._twins = Twins(agent, base, onto)  # the server's commits a local one is a new version of
        self._as: dict[str, tuple[str, dict[str, str]]] = {}  # a commit → the message and env it lands with
        self._decided: tuple[set[str], set[str]] | None = None
        self._originals: dict[str, str | None] = {}  # a reflection → the commit holding its operations
        self._server_commits: dict[str, Commit] | None = None

    @property
    def tip(self) -> str:
        return self.result.tip

    def run(self, commits: list[Commit]) -> Replayed:
        raws = self.repo.read_blobs([c.sha for c in commits])
        for commit in commits:
            raw = raws.get(commit.sha) or b""
            new = self._replay(commit, raw)
            if new is not None:
                self.result.mapping[commit.sha] = self.result.tip = new
        if self.result.kept:
            self._keep()
        self._copy_notes()
        return self.result

    # -- one commit --------------------------------------------------------------------
    def _replay(self, commit: Commit, raw: bytes) -> str | None:
        twin = self._twins.of(commit)
        if twin is not None:
            return self._amended(commit, raw, twin)
        if not self.repo.changed_paths(commit.parents[0], commit.sha):
            accepted, rejected = self._decided_on_server()
            ids = set(commit.values("Evolve-Rejected-Proposal"))
            merged = merged_on_server(self.agent, ids - accepted - rejected, self.base, self.server)
            if ids & accepted or merged:  # rejected here, accepted there: the person's undo wins on main
                return self._reject_accepted(commit, raw, ids & accepted, merged)
            if _decided(commit) & (accepted | rejected):
                return None  # the other machine recorded the same decision
            return self.repo.build_commit(self.tip, {}, message_of(raw), commit_env(raw))
        entries, left = threeway.replay_entries(self.repo, commit.sha, onto=self.tip)
        if self._by_model(commit):
            if left or self._brings_back_undone(commit):
                return self._planned_again(commit, raw, entries, left)
            return self.repo.build_commit(self.tip, entries, message_of(raw), commit_env(raw))
        if not left:
            return self.repo.build_commit(self.tip, entries, message_of(raw), commit_env(raw))
        if rewritten(
            commit, self.agent.evolve_emails
        ):  # a person's amend of evolve's: what it brings is theirs
            paths = self.repo.changed_paths(commit.parents[0], commit.sha)
            self._as[commit.sha] = self.agent.human_edit_message(paths), persons_env(raw)
        added = self._added_on_both_sides(commit.parents[0], commit.sha, left)
        if added is not None:
            message, env = self._as.get(commit.sha) or (message_of(raw), commit_env(raw))
            return self.repo.build_commit(self.tip, {**entries, **added}, message, env)
        if any(self._person_changed(path, commit.parents[0], commit.sha) for path in left):
            self.result.kept.append(commit)
            return None
        return self._person_wins(commit, raw, entries, left)

    def _by_model(self, commit: Commit) -> bool:
        """Whether `commit` is the model's reflection: evolve's own (`from_model`), or an unchanged copy.

        An amend or rebase that changed nothing makes the person its committer but the lessons
        are still the model's: the same change as the reflection evolve made, whose stored
        operations it uses (`replan.noted_reflection`). A copy that changed anything is a person's.
        """
        if from_model(commit, self.agent.evolve_emails):
            return True
        if commit.trailers.get("Evolve-Kind") != "reflection":
            return False
        if commit.sha not in self._originals:
            self._originals[commit.sha] = noted_reflection(self.repo, commit, self.agent.evolve_emails)
        return self._originals[commit.sha] is not None

    def _reject_accepted(
        self, commit: Commit, raw: bytes, ids: set[str], merged: Mapping[str, str] | None = None
    ) -> str:
        """A reject of what the server accepted stays, and undoes the accept as a revert would.

        `ids`: accepted by evolve (`Evolve-Accepted`); `merged`: id → the proposal's commit the
        team merged on the server as a pull request (its own change is undone). Its blocks keep
        the lesson from coming back; the lines the accept added leave main (where a later
        commit changed them too, they stay, and the note says so).
        """
        merged = merged or {}
        accepts = [
            c
            for c in self.repo.log(f"{self.base}..{self.server}")
            if set(c.values("Evolve-Accepted")) & ids and self.repo.changed_paths(c.parents[0], c.sha)
        ]
        changes = [(c.sha, f"{c.sha}^") for c in accepts]  # newest first, as `git revert` of each would go
        changes += [(sha, fork_of(self.agent, sha, self.base)) for _, sha in sorted(merged.items())]
        env, onto, left = commit_env(raw), self.tip, []
        for sha, before in changes:
            if not self.repo.changed_paths(before, sha):
                continue
            entries, stuck = threeway.replay_entries(self.repo, sha, base=before, reverse=True, onto=onto)
            left += stuck
            if entries:
                onto = self.repo.build_commit(onto, entries, message_of(raw), env)
        ids = ids | set(merged)
        paths = self.repo.changed_paths(self.tip, onto)
        found = self.repo.tree_entries(onto, paths)
        new = self.repo.build_commit(self.tip, {p: found.get(p) for p in paths}, message_of(raw), env)
        names = ", ".join(sorted(ids))
        kept = f"; still on main (changed since): {', '.join(sorted(set(left)))}" if left else ""
        undid = "its lesson leaves main" if paths else "its blocks keep the lesson from coming back"
        where = "accepted on the server by another machine" if not merged else "merged on the server"
        self.result.notes.append(
            f"{names}: rejected on {self.machine}, {where} — the "
            f"reject stays on main and {undid} (a person's undo wins){kept}"
        )
        return new

    def _amended(self, commit: Commit, raw: bytes, twin: str) -> str | None:
        """The person's later version of `twin` wins: the change from it to theirs lands on top.

        The server's commit stays as it is (never rewritten); what changed after it on the
        server is kept as for any commit of theirs (another person's lines: a machine branch).
        """
        paths = self.repo.changed_paths(twin, commit.sha)
        if not paths:
            return self.tip  # the same content (a reworded message): the server's commit stands
        entries, left = threeway.replay_entries(self.repo, commit.sha, base=twin, onto=self.tip)
        message, env = message_of(raw), commit_env(raw)
        if made_by_evolve(self._twins.server_commit(twin), self.agent.evolve_emails):
            # a person rewrote evolve's commit (a reflection): what they changed is theirs
            message, env = self.agent.human_edit_message(paths), persons_env(raw)
            self._as[commit.sha] = message, env
        self.result.notes.append(
            f"{commit.subject}: a new version of {twin[:12]}, which the server already has; "
            "the change between them is a commit on top"
        )
        if not left:
            return self.repo.build_commit(self.tip, entries, message, env)
        added = self._added_on_both_sides(twin, commit.sha, left)
        if added is not None:
            return self.repo.build_commit(self.tip, {**entries, **added}, message, env)
        if any(self._person_changed(path, twin, commit.sha, since=twin) for path in left):
            self.result.kept.append(commit)
            return None
        return self._person_wins(commit, raw, entries, left, parent=twin)

    def _planned_again(self, commit: Commit, raw: bytes, entries: dict, left: list[str]) -> str:
        why = (
            f"the server's main changed {', '.join(left)}"
            if left
            else "a person undid a lesson it brings back"
        )
        planned = replan(self.agent, commit, self.tip, self._blocks(), why)
        if planned is None:  # no stored operations: the server's side of each file stays, ours waits
            theirs = {path: entries.get(path) for path in entries if path not in left}
            new = self.repo.build_commit(self.tip, theirs, message_of(raw), commit_env(raw))
            mine = self.repo.tree_entries(commit.sha)
            parked = {path: mine.get(path) for path in left}
            self._park(commit, new, parked, f"{self._lesson(commit)} (for review: {why})", why)
            return new
        env = commit_env(raw)
        new = self.repo.build_commit(self.tip, self._blob_entries(planned.main), planned.message, env)
        if planned.parked:
            branch = PROPOSALS + (commit.trailers.get("Evolve-Reflection") or commit.sha[:16])
            self.result.branches[branch] = self.repo.build_commit(
                new, self._blob_entries(planned.parked), planned.parked_message, env
            )
            self.result.notes.append(f"{branch}: waits for review ({why})")
        return new

    def _person_wins(
        self, commit: Commit, raw: bytes, entries: dict, left: list[str], parent: str | None = None
    ) -> str:
        """Their side of each conflicting hunk on main; the server's lesson it displaced waits.

        `parent`: what their change is from (default: the commit's parent).
        """
        parent = parent or commit.parents[0]
        versions = self.repo.read_blobs(
            [f"{rev}:{p}" for p in left for rev in (parent, commit.sha, self.tip)]
        )
        mine_tree, theirs_tree = (
            self.repo.tree_entries(commit.sha, left),
            self.repo.tree_entries(self.tip, left),
        )
        resolved: dict[str, Entry | None] = dict(entries)
        displaced: dict[str, Entry | None] = {}
        for path in left:
            base, mine, theirs = (versions.get(f"{rev}:{path}") for rev in (parent, commit.sha, self.tip))
            mine_entry, theirs_entry = mine_tree.get(path), theirs_tree.get(path)
            merged = self._merged(base, mine, theirs) if _text(mine_entry) and _text(theirs_entry) else None
            if merged is not None:
                won, both = merged
                if not removes_lines(base or b"", mine or b""):
                    won = both  # the person only added lines: theirs and the lesson both stay
                resolved[path] = self._blob(won, mine_entry)
                if both != won:
                    displaced[path] = self._blob(both, mine_entry)
            else:  # a link, a deletion or a binary file: the person's whole version
                resolved[path] = mine_entry
                if theirs_entry != mine_entry:
                    displaced[path] = theirs_entry
        message, env = self._as.get(commit.sha) or (message_of(raw), commit_env(raw))
        new = self.repo.build_commit(self.tip, resolved, message, env)
        if displaced:
            why = f"a person's commit on {self.machine} changed the same lines as the server's reflection"
            self._park(
                commit, new, displaced, f"kept for review: the server's lesson in {', '.join(displaced)}", why
            )
        return new

    def _added_on_both_sides(self, parent: str, mine: str, paths: list[str]) -> dict[str, Entry] | None:
        """Each of `paths` with both sides' lines, when both only added lines since `parent`.

        The server's lines first, then this machine's (`union`): every machine gets one order.
        None when a side changed or removed a line there, or a file is a link, binary, or
        was created or deleted: that is a real conflict.
        """
        trees = [self.repo.tree_entries(rev, paths) for rev in (parent, mine, self.tip)]
        if not all(_text(tree.get(path)) for tree in trees for path in paths):
            return None
        blobs = self.repo.read_blobs([f"{rev}:{p}" for p in paths for rev in (parent, mine, self.tip)])
        found: dict[str, Entry] = {}
        for path in paths:
            base, ours, theirs = (blobs.get(f"{rev}:{path}") or b"" for rev in (parent, mine, self.tip))
            if removes_lines(base, ours) or removes_lines(base, theirs) or b"\0" in ours + theirs:
                return None
            try:
                found[path] = self._blob(union(self.repo, base, theirs, ours), trees[1][path])
            except GitError:
                return None
        return found

    def _merged(
        self, base: bytes | None, mine: bytes | None, theirs: bytes | None
    ) -> tuple[bytes, bytes] | None:
        """(the person's side of each conflicting hunk, both sides' lines); None for binary files."""
        if mine is None or theirs is None:
            return None
        try:
            won = self.repo.merge_text(base or b"", mine, theirs, favor="current")
            return won, union(self.repo, base or b"", mine, theirs)
        except GitError:
            return None

    def _lesson(self, commit: Commit) -> str:
        """A reflection's subject without its `reflect(name): ` prefix (`_park` adds it once)."""
        return commit.subject.removeprefix(f"reflect({self.agent.name}): ")

    def _park(
        self, commit: Commit, on: str, entries: dict[str, Entry | None], subject: str, why: str
    ) -> None:
        """A proposal on top of `on` holding what could not land (a person reviews it)."""
        name = sha256(f"{commit.sha} {on}".encode())[:16]
        message = build_message(
            f"reflect({self.agent.name}): {subject}",
            {
                "Evolve-Kind": "reflection",
                "Evolve-Reflection": name,
                "Evolve-Review": [f"{p}: {why}" for p in entries],
            },
        )
        branch = PROPOSALS + name
        self.result.branches[branch] = self.repo.build_commit(
            on, entries, message, self.agent.evolve_identity.env()
        )
        self.result.notes.append(f"{branch}: waits for review ({why})")

    def _keep(self) -> None:
        """A branch after this machine at the person's last kept commit, as they made it.

        On its own parent (never rebuilt on the server's main), so `git merge` of it is a real
        3-way merge: each conflict shows both versions, and nothing is replaced by a fast-forward.
        """
        taken = set(self.repo.branches(MACHINE))  # here, and on the server (never someone else's)
        taken |= {ref.removeprefix(FETCHED) for ref in self.repo.refs(FETCHED + MACHINE)}
        branch, number = f"{MACHINE}{self.machine}", 1
        while branch in taken:
            number += 1
            branch = f"{MACHINE}{self.machine}-{number}"
        self.result.branches[branch] = self.result.kept[-1].sha
        subjects = "; ".join(c.subject for c in self.result.kept)
        self.result.notes.append(
            f"{branch}: kept this machine's commit ({subjects}), which changes lines the server's main "
            f"changed too; main has the server's. `git merge {branch}` shows both versions (keep what "
            f"you want, then commit), then `git branch -d {branch}`"
        )

    def _copy_notes(self) -> None:
        """A replayed reflection keeps its stored operations (a later sync may need them again)."""
        noted = {old: self._originals.get(old) or old for old in self.result.mapping}
        found = self.repo.notes(list(set(noted.values())))
        for old, new in self.result.mapping.items():
            text = found.get(noted[old])
            if text is not None:  # an unchanged amend's operations are on the reflection it copies
                self.repo.add_note(new, text, self.agent.evolve_identity)

    # -- what the server's side holds ----------------------------------------------------
    def _person_changed(self, path: str, parent: str, mine: str, since: str | None = None) -> bool:
        """Whether another person's change on the server's side overlaps the person's in `path`.

        The person's change is `parent` → `mine`; the server's side is the merge base (or
        `since`) → the server's main, never the tip: it holds this machine's own replayed
        commits, and a person's earlier commit here is not "another person" for their next one.
        Decided by the lines in conflict, not the file: the reflections' changes are taken out
        of the tip's version again (3-way, newest first) and the person's change merged into
        what is left — only a conflict there is with another person's lines. What cannot be
        told that way (a binary file, a link, a reflection's lines a person changed since) is
        another person's: kept on a branch, never lost.
        """
        found = self.repo.text(
            "log", "--format=%H", f"{since or self.base}..{self.server}", "--", path
        ).split()
        server = self._server_log()
        reflections = [sha for sha in found if sha in server and self._by_model(server[sha])]
        if len(reflections) == len(found):
            return False  # only reflections changed it there
        entries = [self.repo.tree_entries(rev, [path]).get(path) for rev in (self.tip, mine)]
        if not all(_text(entry) for entry in entries):
            return True
        specs = [f"{rev}:{path}" for r in reflections for rev in (r, f"{r}^")]
        versions = self.repo.read_blobs([*specs, f"{self.tip}:{path}", f"{parent}:{path}", f"{mine}:{path}"])
        text = versions[f"{self.tip}:{path}"]
        try:
            for reflection in reflections:  # newest first, as `git revert` of each would go
                after, before = versions[f"{reflection}:{path}"], versions[f"{reflection}^:{path}"]
                if text is None or after is None or before is None:
                    return True  # the reflection created or deleted the file: told by the file
                text = self.repo.merge_text(after, text, before, favor="none")
            base, changed = versions[f"{parent}:{path}"], versions[f"{mine}:{path}"]
            if text is None or changed is None:
                return True
            self.repo.merge_text(base or b"", text, changed, favor="none")
        except GitError:
            return True  # a conflict with a person's lines (or a binary file)
        return False

    def _blocks(self) -> Mapping[str, str]:
        """Fingerprint → lesson of every block at the server's tip (re-wrapped lessons are found too)."""
        if self._blocked is None:
            self._blocked = {fp: b.lesson for fp, b in undo.blocks(self.repo, tip=self.tip).items()}
        return self._blocked

    def _brings_back_undone(self, commit: Commit) -> bool:
        """Whether the reflection adds a lesson line a person undid on the server's side."""
        if all(self._by_model(c) for c in self._server_log().values()):
            return False  # only the model's reflections arrived: nothing was undone there
        added = self.repo.git(
            "diff", "-U0", "--no-color", "--no-ext-diff", f"{commit.sha}^", commit.sha, "--"
        )
        lines = [
            line[1:]
            for line in added.decode("utf-8", "replace").splitlines()
            if line.startswith("+") and not line.startswith("+++")
        ]
        return bool(undo.relearned("\n".join(lines), "", self._blocks()))

    def _server_log(self) -> dict[str, Commit]:
        """The server's side (merge base → the server's main), by sha."""
        if self._server_commits is None:
            self._server_commits = {c.sha: c for c in self.repo.log(f"{self.base}..{self.server}")}
        return self._server_commits

    def _decided_on_server(self) -> tuple[set[str], set[str]]:
        """(the proposals the server's side accepted, those it rejected) since the merge base."""
        if self._decided is not None:
            return self._decided
        accepted: set[str] = set()
        rejected: set[str] = set()
        out = self.repo.git(  # not `text`: stripping would eat a leading \x1f (nothing accepted)
            "log",
            "--format=%(trailers:key=Evolve-Accepted,valueonly,separator=%x2c)%x1f"
            "%(trailers:key=Evolve-Rejected-Proposal,valueonly,separator=%x2c)",
            f"{self.base}..{self.server}",
        ).decode("utf-8", "replace")
        for line in out.splitlines():
            accepts, _, rejects = line.partition("\x1f")
            accepted.update(item.strip() for item in accepts.split(",") if item.strip())
            rejected.update(item.strip() for item in rejects.split(",") if item.strip())
        self._decided = accepted, rejected
        return self._decided

    def _blob_entries(self, changes: dict[str, bytes | None]) -> dict[str, Entry | None]:
        return {path: (None if data is None else self._blob(data, None)) for path, data in changes.items()}

    def _blob(self, data: bytes, like: Entry | None) -> Entry:
        blob = self.repo.git("hash-object", "-w", "--stdin", input=data).decode().strip()
        return (like[0] if like and like[0] != LINK else "100644", blob)


def _text(entry: Entry | None) -> bool:
    return entry is not None and entry[0] != LINK


def _decided(commit: Commit) -> set[str]:
    """The proposal an empty commit decides (an accept marker or a reject), if any."""
    return set(commit.values("Evolve-Accepted")) | set(commit.values("Evolve-Rejected-Proposal"))


__all__ = ["Replayed", "Replayer"]
