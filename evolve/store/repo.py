"""An agent's git repository: the one face of its reads, its history and its writes.

Every write builds its tree in a private index from the branch tip plus the exact files
it changes, moves the branch with `update-ref NEW OLD` while holding git's own
`index.lock`, then refreshes those entries in the real index. A person's concurrent
`git commit` therefore either lands before (and evolve rebuilds on top of it) or after
(and sees evolve's change in its index): nobody's work is silently undone. The how lives
beside it: commit (commits, the swap), busy (what holds a write back), worktree (files),
trees (a commit's tree read whole), threeway (a change re-applied) and journal (surviving
a kill); `Repo` calls them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from evolve.errors import Busy, UserError
from evolve.store import busy, commit, head, journal, remotes, threeway, trees, worktree
from evolve.store.diagnosis import damage_remedy
from evolve.store.git import ZERO, BrokenBranch, GitError, RepositoryDamaged, git, git_text, update_lines
from evolve.store.history import Commit, SkillHistory, read_log, read_skill_history
from evolve.store.identity import Identity
from evolve.store.journal import JOURNAL
from evolve.store.locks import FileLock

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any

NOTES = "refs/notes/evolve"  # what evolve keeps beside its commits (a reflection's operations)
LOCK = "evolve.lock"
Entry = tuple[str, str]  # a tree entry: (git mode, blob id)


class Repo:
    """One agent repository; `branch` is the branch the agent reads."""

    def __init__(self, path: Path, branch: str = head.BRANCH) -> None:
        self.path = path
        self.branch = branch
        self.git_dir = path / ".git"
        # what the index holds against the tip, for busy (per Repo: the index and tip it was read at)
        self.staged_memo: tuple[tuple, tuple[dict[str, Entry | None], bool]] | None = None
        # the memo as it was when this lock's write decided what to stage (`busy.staged_meanwhile`)
        self.index_read: tuple[tuple, tuple[dict[str, Entry | None], bool]] | None = None
        # what git printed about a commit, or its parse, and its weight in bytes (`fixed.asked_once`)
        self.fixed_answers: dict[tuple, tuple[int, Any]] = {}

    # -- reading ---------------------------------------------------------------------
    def git(self, *args: str, **kwargs: Any) -> bytes:
        return git(self.path, *args, own=True, **kwargs)

    def text(self, *args: str, **kwargs: Any) -> str:
        return git_text(self.path, *args, own=True, **kwargs)

    def tip(self, branch: str | None = None) -> str | None:
        """The commit the branch names, or None while it has none.

        Read from the ref's file (its loose file, else packed-refs: git writes both by rename)
        where one names a commit id: every write asks, and a git process costs a thousand
        times more. Anything else (no such branch, a symbolic ref, a reftable store, a linked
        worktree's `.git` file) is asked of git. A tip read just before someone moves the
        branch is as stale as git's answer would be: each write moves it by compare-and-swap.
        """
        name = branch or self.branch
        if self.refs_in_files:
            found = head.branch_tip(self.git_dir, name)
            if found is not None:
                return found
            if head.no_such_branch(self.git_dir, name):
                self._refuse_damaged(name)
                return None
        try:
            out = self.git("rev-parse", "-q", "--verify", f"refs/heads/{name}^{{commit}}")
        except GitError as exc:
            if exc.code != 1:  # git could not read the refs (a cut packed-refs): not "no history yet"
                raise
            self._refuse_damaged(name)  # git's quiet answer, also over refs it cannot read
            if self.git("rev-parse", "-q", "--verify", f"refs/heads/{name}", check=False).strip():
                raise BrokenBranch(
                    self.path, name
                ) from None  # it names a tree or a blob (through a symref too)
            return None
        return out.decode().strip() or None

    def _refuse_damaged(self, name: str) -> None:
        """RepositoryDamaged when the branch names no commit because its ref files are damaged."""
        if self.refs_in_files and head.broken_branch(self.git_dir, name):  # emptied, overwritten, deleted
            raise BrokenBranch(self.path, name)
        if self.refs_in_files and head.packed_refs_damaged(self.git_dir):  # git skips what it cannot read
            said = GitError(
                ["rev-parse"], 1, ".git/packed-refs holds what git never writes there", cwd=self.path
            )
            raise RepositoryDamaged(self.path, damage_remedy(self.path, said))

    @property
    def refs_in_files(self) -> bool:
        """Whether refs and HEAD are files git writes by rename (not a reftable store)."""
        return not (self.git_dir / "reftable").exists()

    def at_tip(self, *args: str) -> bytes | None:
        """`git args… <the branch tip> --`, or None while the branch has no commit.

        The branch is named, not looked up first: one git process where two were.
        """
        try:
            return self.git(*args, f"refs/heads/{self.branch}^{{commit}}", "--")
        except GitError:
            tip = self.tip()
            if tip is None:
                return None  # no commit yet
            self.refuse_non_commit(tip)
            raise

    def refuse_non_commit(self, tip: str, branch: str | None = None) -> None:
        """BrokenBranch when the branch file names a tag, a tree or a blob where its commit belongs."""
        kind = self.git("cat-file", "-t", tip, check=False).decode().strip()
        if kind and kind != "commit":
            raise BrokenBranch(self.path, branch or self.branch)

    def resolve(self, rev: str) -> str:
        """A user-given revision → full sha; refuses option-like input."""
        if not rev or rev.startswith("-") or not re.fullmatch(r"[\w./~^@{}-]+", rev):
            raise UserError(f"{rev!r} is not a revision; pass a sha from `evolve log`")
        out = self.git("rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}", check=False)
        sha = out.decode().strip()
        if not sha:
            # git answers a lost commit as quietly as one never made: where the branch's own
            # commit cannot be read either, the repository is damaged, and git's error says so
            tip = self.tip()
            if tip is not None:
                self.git("log", "-1", "--format=", tip, "--")
            raise UserError(f"no commit {rev!r} in {self.path}; see `evolve log`")
        return sha

    def log(self, rev: str | None = None, limit: int | None = None) -> list[Commit]:
        return read_log(self, rev, limit)

    def show(self, rev: str) -> str:
        sha = self.resolve(rev)
        return self.git("show", "--stat", "--patch", "--format=fuller", sha, "--").decode("utf-8", "replace")

    def read_blobs(self, specs: list[str]) -> dict[str, bytes | None]:
        """`rev:path` or blob shas → contents, through one `git cat-file --batch`."""
        if not specs:
            return {}
        out = self.git("cat-file", "--batch", input="".join(s + "\n" for s in specs).encode())
        result: dict[str, bytes | None] = {}
        position = 0
        for spec in specs:
            end = out.index(b"\n", position)
            header = out[position:end].decode()
            position = end + 1
            if header.endswith("missing") or header.endswith("ambiguous"):
                result[spec] = None
                continue
            size = int(header.split()[2])
            result[spec] = out[position : position + size]
            position += size + 1
        return result

    def dirty_paths(self) -> list[str]:
        """`worktree.dirty_paths`: paths whose work-tree content differs from the tip (incl. untracked)."""
        return worktree.dirty_paths(self)

    def skill_history(self, skills_dir: str = "skills") -> dict[str, SkillHistory]:
        return read_skill_history(self, skills_dir)

    def reverse_changes(self, sha: str) -> dict[str, bytes | None]:
        """What undoing commit `sha` changes on top of the tip (3-way, like `git revert`)."""
        return threeway.replay_changes(self, sha, reverse=True)

    def merge_text(self, base: bytes, current: bytes, other: bytes, *, favor: str = "union") -> bytes:
        """`threeway.merge_text`: `other`'s change from `base` merged into `current`, line by line."""
        return threeway.merge_text(self, base, current, other, favor=favor)

    def changed_paths(self, old: str, new: str, only: list[str] | None = None) -> list[str]:
        """The paths that differ between two commits (no rename detection)."""
        out = self.git("diff", "--name-only", "-z", "--no-renames", old, new, "--")
        paths = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
        return [p for p in paths if only is None or p in only]

    def refused_in_tree(self, rev: str) -> str | None:
        """`trees.refused_in_tree`: the first path of `rev`'s tree evolve never writes, or None."""
        return trees.refused_in_tree(self, rev)

    def tree_entries(self, rev: str, paths: Sequence[str] = ()) -> dict[str, Entry]:
        """Path → (mode, blob) of every file and link at `rev` (under `paths`, when given)."""
        return trees.tree_entries(self, rev, paths)

    def part_of(
        self,
        sha: str,
        paths: Sequence[str],
        branch: str,
        message: str,
        author: Identity,
        base: str | None = None,
    ) -> str:
        """A new `branch` holding only `paths` of commit `sha`'s change, on `base` (`sha`'s parent).

        What a partly accepted proposal keeps for another look: still its own change, so
        replaying it later tries the same 3-way merge again.
        """
        parent = self.text("rev-parse", "--verify", f"{base}^{{commit}}" if base else f"{sha}^{{commit}}^")
        listed = self.git("ls-tree", "-z", sha, "--", *paths).decode("utf-8", "surrogateescape")
        entries = {}
        for item in listed.split("\0"):
            if item:
                meta, path = item.split("\t", 1)
                mode, _kind, blob = meta.split()
                entries[path] = f"{mode} {blob}\t{path}"
        lines = [entries.get(path, f"0 {ZERO}\t{path}") for path in paths]  # gone there: deleted
        new = commit.commit_tree(self, parent, "".join(line + "\n" for line in lines), message, author.env())
        self.git("update-ref", f"refs/heads/{branch}", new, ZERO)
        return new

    def export(self, rev: str, target: Path) -> None:
        """`trees.export`: `rev`'s tree as plain files in `target`, the repository untouched."""
        trees.export(self, rev, target)

    def folder_at(self, rev: str, folder: str) -> dict[str, tuple[str, bytes]]:
        """`trees.folder_at`: path → (git mode, bytes) of every file and link under `folder` at `rev`."""
        return trees.folder_at(self, rev, folder)

    def add_note(self, sha: str, text: str, author: Identity) -> None:
        """Attach `text` to commit `sha` under evolve's notes ref (replacing an older note)."""
        self.git("notes", "--ref", NOTES, "add", "-f", "-F", "-", sha, input=text.encode(), env=author.env())

    def notes(self, shas: Sequence[str]) -> dict[str, str]:
        """Commit → evolve's note on it, for those of `shas` that have one (two git processes)."""
        listed = self.text("notes", "--ref", NOTES, "list", check=False).splitlines()
        wanted = set(shas)
        pairs = (line.partition(" ") for line in listed)
        blobs = {commit: blob for blob, _, commit in pairs if commit in wanted}
        found = self.read_blobs(list(blobs.values()))
        return {c: (found.get(b) or b"").decode("utf-8", "replace") for c, b in blobs.items()}

    def note_emails(self) -> set[str]:
        """Every e-mail evolve's notes were written with (their commits' authors and committers)."""
        out = self.text("log", "--format=%ae%n%ce", NOTES, "--", check=False)
        return set(out.split())

    def update_refs(
        self, updates: Sequence[tuple[str, str, str | None]], reason: str = "evolve: commit"
    ) -> bool:
        """Move refs (ref, new, old) in one transaction: all or none; ZERO as new deletes, as old creates.

        False when a ref was not at its `old` value (someone moved it): nothing moved then.
        An `old` of None moves the ref whatever it holds.
        """
        script = "start\n" + "".join(line + "\n" for line in update_lines(updates))
        try:
            self.git("update-ref", "-m", reason, "--stdin", input=(script + "prepare\ncommit\n").encode())
        except GitError:
            return False
        return True

    def refs(self, *prefixes: str) -> dict[str, str]:
        """Full ref name → sha, for every ref under `prefixes` (one `git for-each-ref`)."""
        out = self.text("for-each-ref", "--format=%(refname) %(objectname)", *prefixes)
        return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)

    def is_ancestor(self, old: str, new: str) -> bool:
        """Whether commit `old` is in the history of `new` (or is it)."""
        try:
            self.git("merge-base", "--is-ancestor", old, new)
        except GitError:
            return False
        return True

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of two commits; None for unrelated histories."""
        return self.text("merge-base", a, b, check=False) or None

    def remote_url(self, remote: str = "origin") -> str | None:
        """The URL a remote of the repository points at (git's config), or None: `remotes.remote_url`."""
        return remotes.remote_url(self, remote)

    def delete_branch(self, branch: str, expected: str) -> None:
        """Delete `branch` if it still points at `expected` (compare-and-swap)."""
        self.git("update-ref", "-d", f"refs/heads/{branch}", expected)

    def refuse_worktrees(self, branches: Iterable[str]) -> None:
        """Busy when a linked worktree has one of `branches` checked out (`busy.worktree_reason`)."""
        reason = busy.worktree_reason(self, branches)
        if reason:
            raise Busy(reason)

    def branches(self, prefix: str) -> dict[str, str]:
        """Branch name → tip sha for branches under `prefix` (e.g. 'proposals/')."""
        out = self.text("for-each-ref", "--format=%(refname:strip=2) %(objectname)", f"refs/heads/{prefix}")
        return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)

    # -- writing ---------------------------------------------------------------------
    def operation_in_progress(self) -> str | None:
        """`busy.operation_in_progress`: the person's unfinished git operation, or None."""
        return busy.operation_in_progress(self)

    def checked_out_elsewhere(self) -> str | None:
        """What HEAD holds when it is not the agent's branch ("branch 'x'", "a detached HEAD")."""
        return head.checked_out_elsewhere(self.git_dir, self.branch)

    def busy_reason(self, holds: Sequence[str] = ()) -> str | None:
        """Why evolve may not write now because of what a person is doing in git, or None.

        A git operation, another checkout, a work tree behind the branch; and with `holds`
        (paths, or folders), a file under them the person staged for their own commit.
        """
        return busy.operation_reason(self) or self.index_reason(holds)

    def index_reason(self, holds: Sequence[str] = ()) -> str | None:
        """`busy.index_reason`: the index left behind by a branch move, or a staged file under `holds`."""
        return busy.index_reason(self, holds)

    def behind(self) -> bool:
        """Whether the index still holds an older commit's files (the branch moved without them)."""
        return busy.behind(self)

    def staged_paths(self) -> set[str]:
        """The paths a person staged (`git add`): the index holds them unlike the branch tip."""
        return busy.staged_paths(self)

    def index_matches(self, tip: str) -> bool:
        """`busy.index_matches`: whether the index is known to hold exactly `tip`'s files."""
        return busy.index_matches(self, tip)

    def index_holding(self, tip: str) -> bytes | None:
        """`busy.index_holding`: the index's bytes when they hold exactly `tip`'s files."""
        return busy.index_holding(self, tip)

    def now_matches(self, tip: str) -> None:
        """`busy.now_matches`: the index evolve just wrote holds exactly `tip`'s files."""
        busy.now_matches(self, tip)

    def staged_against_head(self) -> set[str]:
        """`busy.staged_against_head`: the paths `git diff --cached --name-only` lists."""
        return busy.staged_against_head(self)

    def staged_meanwhile(self, entries: str) -> list[str]:
        """`busy.staged_meanwhile`: paths of `entries` staged otherwise since the write read the index."""
        return busy.staged_meanwhile(self, entries)

    def refuse_staged(self, paths: Iterable[str]) -> None:
        """Raise Busy when a person staged one of `paths`: evolve never writes over their coming commit."""
        busy.refuse_staged(self, paths)

    @contextmanager
    def locked(self, timeout: float = 60.0) -> Iterator[None]:
        """The per-agent writer lock (one evolve writer at a time); the one door every write takes.

        Raises Busy while a person's merge, revert, cherry-pick, rebase or bisect is not
        finished, paths are unmerged, another branch (or a detached HEAD) is checked out, or
        the branch moved without its work tree: nothing evolve does may commit then (it would
        commit that checkout's files to main, or undo the commit the branch moved to).
        """
        if not head.is_git_dir(self.git_dir):  # emptied or half made: git would find an enclosing one
            raise UserError(
                f"{self.path}: .git is not a git repository (missing, empty or damaged); nothing was "
                "written — `evolve doctor` says what to do"
            )
        shared = head.shared_repository(self.path)
        if shared is not None:  # another folder's work tree on this index: its files are no edits
            raise RepositoryDamaged(self.path, f".git {shared}")
        with FileLock(self.git_dir / LOCK, timeout=timeout):
            self.index_read = None  # each write decides on the index as it reads it under this lock
            reason = busy.operation_reason(self)
            if reason:
                raise Busy(reason)
            self.recover()  # a killed evolve's half-done write is not a person's index
            reason = self.index_reason()
            if reason:
                raise Busy(reason)
            yield

    def commit_changes(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        author: Identity,
        *,
        branch: str | None = None,
        write_worktree: bool = True,
        journal_id: str | None = None,
        when: str | None = None,
        also: commit.Extra | None = None,
        expect: Mapping[str, bytes | None] | None = None,
    ) -> str:
        """Commit exactly `changes` (path → bytes, None deletes) on top of the branch tip.

        Call inside `locked()`. With write_worktree the files are written first (journal,
        then atomic writes) and restored if anything fails before the branch moves. `also`:
        a second commit on top of this one, on a new branch, created in the same ref
        transaction (both appear, or neither); its sha is then `also.sha`. `expect`: the
        bytes each of those files held when evolve read them (None: absent); a file that
        differs now raises EditedMeanwhile before anything is written.
        """
        branch = branch or self.branch
        if write_worktree:  # evolve's content for these files, composed from the work tree
            self.refuse_staged(changes)
        on_checkout = branch == self.current_branch()
        if branch == self.branch and not on_checkout:  # the lock's check saw it checked out
            raise Busy(commit.SWITCHED)
        write_worktree = write_worktree and on_checkout
        if write_worktree:
            for path in changes:
                worktree.safe_path(self, path)  # refuse a bad path before anything touches the disk
        # Committing the work tree as it is (a person's edits): their symlinks stay symlinks.
        links = frozenset(
            p for p in changes if on_checkout and not write_worktree and (self.path / p).is_symlink()
        )
        if write_worktree and expect:
            commit.check_unchanged(self, expect)
        written = None
        try:
            if write_worktree:
                written = journal.write_journal(self, changes, journal_id, branch)
                for path, content in changes.items():
                    worktree.write_file(self, path, content)
            sha = commit.commit_loop(
                self, changes, message, author, branch, on_checkout, when, links, also, wrote=write_worktree
            )
        except BaseException:
            if written is not None:
                journal.rollback(self, written)  # if this fails, the journal stays for recover()
                (self.git_dir / JOURNAL).unlink(missing_ok=True)
            raise
        if written is not None:
            (self.git_dir / JOURNAL).unlink(missing_ok=True)
        return sha

    def current_branch(self) -> str | None:
        """The branch checked out (None: a detached HEAD), read from `.git/HEAD` as the lock's check does."""
        name = head.checked_out(self.git_dir) if self.refs_in_files else None
        if name is None:
            ref = self.git("symbolic-ref", "-q", "HEAD", check=False).decode().strip()
            return ref.removeprefix("refs/heads/") or None
        return name or None

    def build_commit(
        self, base: str | None, entries: Mapping[str, Entry | None], message: str, env: Mapping[str, str]
    ) -> str:
        """`commit.build_commit`: a commit on `base` with `entries` (None deletes); nothing moves."""
        return commit.build_commit(self, base, entries, message, env)

    def safe_path(self, path: str) -> Path:
        """Refuse anything that is not a plain relative path inside the work tree."""
        return worktree.safe_path(self, path)

    def check_out(self, rev: str) -> None:
        """`worktree.check_out`: every file of `rev` written into an empty work tree, the index to match."""
        worktree.check_out(self, rev)

    # -- crash-safe writes (evolve/store/journal.py) -----------------------------------
    def move_branch(
        self,
        new: str,
        expected: str,
        *,
        refs: Sequence[tuple[str, str, str]] = (),
        journal_id: str | None = None,
    ) -> list[str]:
        """`journal.move_branch`: the checked-out branch (and its files) moved to `new`."""
        self.refuse_worktrees([self.branch, *(ref.removeprefix("refs/heads/") for ref, _new, _old in refs)])
        return journal.move_branch(self, new, expected, refs=refs, journal_id=journal_id)

    def journalled(
        self, changes: Mapping[str, bytes | None], journal_id: str | None = None
    ) -> AbstractContextManager[None]:
        """`journal.journalled`: write `changes` yourself inside, under a journal (never a staged file)."""
        self.refuse_staged(changes)
        return journal.journalled(self, changes, journal_id)

    def recover(self) -> None:
        """`journal.recover`: finish or undo what a killed evolve left."""
        journal.recover(self)


def init_repo(path: Path, files: Mapping[str, bytes], message: str, author: Identity) -> Repo:
    """A new repository on branch main whose first commit holds `files`."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", head.BRANCH)
    repo = Repo(path)
    for name, content in files.items():
        worktree.write_file(repo, name, content)
    repo.git("add", "-A")
    tree = repo.text("write-tree")
    sha = repo.text("commit-tree", tree, input=message.encode(), env=author.env())
    repo.git("update-ref", "refs/heads/main", sha, ZERO)
    commit.remember_index(repo, sha, (repo.git_dir / "index").read_bytes())  # it holds that tree
    return repo


__all__ = ["Entry", "LOCK", "NOTES", "Repo", "init_repo"]
