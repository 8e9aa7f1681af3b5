"""An agent's git repository: commits under a lock with compare-and-swap, and history.

Every write builds its tree in a private index from the branch tip plus the exact files
it changes, moves the branch with `update-ref NEW OLD` while holding git's own
`index.lock`, then refreshes those entries in the real index. A person's concurrent
`git commit` therefore either lands before (and evolve rebuilds on top of it) or after
(and sees evolve's change in its index): nobody's work is silently undone.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import Busy, EvolveError, PathRefused, UserError
from evolve.store import head, journal, staging
from evolve.store.files import atomic_symlink, atomic_write
from evolve.store.git import ZERO, GitError, acquire_index_lock, config_values, git, git_text
from evolve.store.history import Commit, SkillHistory, read_log, read_skill_history
from evolve.store.journal import JOURNAL, ConcurrentChange, EditedMeanwhile
from evolve.store.locks import FileLock

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any

NOTES = "refs/notes/evolve"  # what evolve keeps beside its commits (a reflection's operations)
LOCK = "evolve.lock"
# A person's git operation that is not finished: evolve never commits under their feet.
OPERATIONS = {
    "MERGE_HEAD": "a merge",
    "REVERT_HEAD": "a revert",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "rebase-merge": "a rebase",
    "rebase-apply/applying": "a git am",  # git am keeps its state where a rebase would
    "rebase-apply": "a rebase",
    "BISECT_LOG": "a bisect",
}
ABORT = {
    "a merge": "git merge --abort",
    "a revert": "git revert --abort",
    "a cherry-pick": "git cherry-pick --abort",
    "a rebase": "git rebase --abort",
    "a git am": "git am --abort",
    "a bisect": "git bisect reset",
}


# evolve's files: committed whatever ignore rules say
OWN_PATHS = ("memo.md", "agent.toml", "guards.toml", "skills")


def _template_ignores() -> list[str]:
    """The patterns of the agent template's `.gitignore` (editor temp files, evolve's own)."""
    from importlib import resources

    text = (resources.files("evolve.template_workspace") / "gitignore").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


UNWRITABLE = (".git", ".gitmodules", ".gitattributes")  # into git's own files, or making git run filters
WHY = "it could make git run filters, fetch from elsewhere or write into .git"  # why they are refused


def refused_path(path: str) -> bool:
    """Whether evolve never writes `path`: not a plain relative path in the work tree, or one git reads."""
    parts = Path(path).parts
    return (
        not parts or Path(path).is_absolute() or ".." in parts or any(p.lower() in UNWRITABLE for p in parts)
    )


Entry = tuple[str, str]  # a tree entry: (git mode, blob id)
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # paths given to git: a file named `:!a` is that file
LINK = "120000"
EXECUTABLE = "100755"
_FLAGGED: dict[tuple[str, int, int, int], list[str]] = {}  # index key → evolve's files git does not look at
_UNMERGED: dict[tuple[str, int, int, int], bool] = {}  # index stat → has conflicted entries
_REMOTE_URLS: dict[tuple[str, str, int, int, int], str | None] = {}  # .git/config stat → a remote's URL
RACY_NS = 2_000_000_000  # a file younger than this may change again without its stat showing it


@dataclass
class Extra:
    """A second commit made with another (see `Repo.commit_changes(also=...)`)."""

    branch: str
    changes: Mapping[str, bytes | None]
    message: str
    sha: str | None = None


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def env(self, when: str | None = None) -> dict[str, str]:
        env = {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }
        if when:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        return env


class Repo:
    """One agent repository; `branch` is the branch the agent reads."""

    def __init__(self, path: Path, branch: str = head.BRANCH) -> None:
        self.path = path
        self.branch = branch
        self.git_dir = path / ".git"
        self._staged_memo: tuple[tuple, tuple[dict[str, Entry | None], bool]] | None = None

    # -- reading ---------------------------------------------------------------------
    def git(self, *args: str, **kwargs: Any) -> bytes:
        return git(self.path, *args, **kwargs)

    def text(self, *args: str, **kwargs: Any) -> str:
        return git_text(self.path, *args, **kwargs)

    def tip(self, branch: str | None = None) -> str | None:
        """The commit the branch names, or None while it has none.

        Read from the ref's file (its loose file, else packed-refs: git writes both by rename)
        where one names a commit id: every write asks, and a git process costs a thousand
        times more. Anything else (no such branch, a symbolic ref, a reftable store, a linked
        worktree's `.git` file) is asked of git. A tip read just before someone moves the
        branch is as stale as git's answer would be: each write moves it by compare-and-swap.
        """
        name = branch or self.branch
        if self._refs_in_files:
            found = head.branch_tip(self.git_dir, name)
            if found is not None or head.no_such_branch(self.git_dir, name):
                return found
        out = self.git("rev-parse", "-q", "--verify", f"refs/heads/{name}^{{commit}}", check=False)
        return out.decode().strip() or None

    @property
    def _refs_in_files(self) -> bool:
        """Whether refs and HEAD are files git writes by rename (not a reftable store)."""
        return not (self.git_dir / "reftable").exists()

    def at_tip(self, *args: str) -> bytes | None:
        """`git args… <the branch tip> --`, or None while the branch has no commit.

        The branch is named, not looked up first: one git process where two were.
        """
        try:
            return self.git(*args, f"refs/heads/{self.branch}^{{commit}}", "--")
        except GitError:
            if self.tip() is None:
                return None  # no commit yet
            raise

    def resolve(self, rev: str) -> str:
        """A user-given revision → full sha; refuses option-like input."""
        if not rev or rev.startswith("-") or not re.fullmatch(r"[\w./~^@{}-]+", rev):
            raise UserError(f"{rev!r} is not a revision; pass a sha from `evolve log`")
        out = self.git("rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}", check=False)
        sha = out.decode().strip()
        if not sha:
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
        """Paths whose working-tree content differs from the branch tip (incl. untracked).

        evolve's own files (`OWN_PATHS`: the memo, agent.toml, everything under skills/) count
        whatever a `.gitignore` (one pushed to the server, say) or a person's global excludes
        say: only the editor temp files the agent template ignores stay out.
        """
        out = self.git(  # one process: the branch first, ignored files as "!! path", each one (-uall)
            *("status", "--porcelain=v1", "-z", "--branch", "--no-ahead-behind"),
            *("--untracked-files=all", "--no-renames", "--ignored=traditional"),
        )
        branch, _, entries = out.decode("utf-8", "surrogateescape").partition("\0")
        if branch == f"## No commits yet on {self.branch}":
            return []  # nothing committed yet: no tip to differ from
        paths: set[str] = set()
        ignored: set[str] = set()
        for entry in entries.split("\0"):
            if len(entry) > 3:
                (ignored if entry[:2] == "!!" else paths).add(entry[3:])
        own = {p for p in ignored if p in OWN_PATHS or any(p.startswith(f"{d}/") for d in OWN_PATHS)}
        return sorted(paths | self._not_template_ignored(own) | self._hidden_from_status())

    def _hidden_from_status(self) -> set[str]:
        """Own files a person told git not to look at whose content differs from the tip.

        (`update-index --assume-unchanged`, `--skip-worktree`): status never lists them, and
        a write composed from the work tree would carry the person's edit as evolve's.
        """
        flagged = self._flagged_own_paths()
        if not flagged:
            return set()
        tip = {}
        for entry in self.text("ls-tree", "-z", "HEAD", "--", *flagged).split("\0"):
            meta, _, path = entry.partition("\t")
            if path:
                tip[path] = meta.split()[2]
        present = [p for p in flagged if (self.path / p).is_file()]
        hashed = self.text("hash-object", "--", *present).split("\n") if present else []
        now = dict(zip(present, hashed, strict=True))
        return {p for p in flagged if now.get(p) != tip.get(p)}

    def _not_template_ignored(self, ignored: set[str]) -> set[str]:
        """Of evolve's own files that ignore rules hide, those the agent template does not ignore."""
        if not ignored:
            return set()
        listing = ("ls-files", "-z", "--others", "--ignored")
        temp = self.text(*listing, *(f"--exclude={p}" for p in _template_ignores()), "--", *OWN_PATHS)
        return ignored - set(temp.split("\0"))

    def skill_history(self, skills_dir: str = "skills") -> dict[str, SkillHistory]:
        return read_skill_history(self, skills_dir)

    def reverse_changes(self, sha: str) -> dict[str, bytes | None]:
        """What undoing commit `sha` changes on top of the tip (3-way, like `git revert`)."""
        return self.replay_changes(sha, reverse=True)

    def replay_changes(self, sha: str, *, reverse: bool = False) -> dict[str, bytes | None]:
        """Commit `sha`'s change (or its undoing) re-applied on top of the tip, 3-way, whole."""
        verb = "revert" if reverse else "apply"
        changes, left = self.replay_files(sha, reverse=reverse)
        if left:
            remedy = "revert the later commit first" if reverse else "reject it instead"
            raise UserError(
                f"cannot {verb} {sha[:12]} cleanly: a later commit changed the same lines of "
                f"{', '.join(left)}; {remedy} or edit the files by hand"
            )
        return changes

    def replay_files(
        self,
        sha: str,
        *,
        reverse: bool = False,
        only: list[str] | None = None,
        onto: str | None = None,
        base: str | None = None,
    ) -> tuple[dict[str, bytes | None], list[str]]:
        """Commit `sha`'s change (since `base`, default its parent) re-applied on `onto` (the tip), 3-way.

        (path → new bytes for the files that apply cleanly, the paths that do not).
        """
        entries, left = self.replay_entries(sha, reverse=reverse, only=only, onto=onto, base=base)
        blobs = self.read_blobs([entry[1] for entry in entries.values() if entry])
        return {path: (blobs[entry[1]] if entry else None) for path, entry in entries.items()}, left

    def replay_entries(
        self,
        sha: str,
        *,
        reverse: bool = False,
        only: list[str] | None = None,
        onto: str | None = None,
        base: str | None = None,
    ) -> tuple[dict[str, Entry | None], list[str]]:
        """`replay_files` as tree entries: path → (mode, blob), None for a deleted file.

        Modes travel (a symlink stays a symlink, an executable stays one); binary files too.
        `base` (default: `sha`'s parent) makes the change several commits' (a branch's).
        """
        base = base or f"{sha}^"
        paths = self.changed_paths(base, sha, only)
        if not paths:
            raise UserError(
                f"{sha[:12]} changed nothing; there is nothing to {'revert' if reverse else 'apply'}"
            )
        left: list[str] = []
        with self._scratch("evolve-idx-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", onto or self.tip() or "", env=env)
            for path in paths:
                patch = self.git("diff", "--binary", "--full-index", "--no-renames", base, sha, "--", path)
                try:
                    self.git(
                        "apply", "--cached", *(["-R"] if reverse else []), "--3way", input=patch, env=env
                    )
                except GitError:
                    left.append(path)  # a conflict (its stages stay in this scratch index only)
                    continue
                if self.git("ls-files", "--unmerged", "--", path, env=env).strip():
                    left.append(path)
            applied = [p for p in paths if p not in left]
            staged = self.text("ls-files", "-s", "--", *applied, env=env).splitlines() if applied else []
        found: dict[str, Entry | None] = {}
        for line in staged:
            meta, _, path = line.partition("\t")
            mode, blob = meta.split()[:2]
            found[path] = (mode, blob)
        return {path: found.get(path) for path in applied}, left

    def merge_text(self, base: bytes, current: bytes, other: bytes, *, favor: str = "union") -> bytes:
        """`other`'s change from `base` merged into `current`, line by line (`git merge-file`).

        Where both changed the same lines `favor` decides: "current", "other", or "union"
        (both sides' lines, `current`'s first); "none": a conflict raises GitError. Text only:
        a binary file raises GitError.
        """
        flag = {"current": ["--ours"], "other": ["--theirs"], "union": ["--union"], "none": []}[favor]
        with self._scratch("evolve-merge-") as tmp:
            files = []
            for name, data in (("current", current), ("base", base), ("other", other)):
                (Path(tmp) / name).write_bytes(data)
                files.append(str(Path(tmp) / name))
            return self.git("merge-file", "-p", *flag, *files)

    def changed_paths(self, old: str, new: str, only: list[str] | None = None) -> list[str]:
        """The paths that differ between two commits (no rename detection)."""
        out = self.git("diff", "--name-only", "-z", "--no-renames", old, new, "--")
        paths = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
        return [p for p in paths if only is None or p in only]

    def refused_in_tree(self, rev: str) -> str | None:
        """The first path of `rev`'s tree evolve never writes (`.gitattributes`, into `.git`, …), or None."""
        listed = self.git("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev).split(b"\0")
        for raw in filter(None, listed):
            path = raw.decode("utf-8", "surrogateescape")
            if refused_path(path) or any(part in (".", "") for part in path.split("/")):
                return path
        return None

    def tree_entries(self, rev: str, paths: Sequence[str] = ()) -> dict[str, Entry]:
        """Path → (mode, blob) of every file and link at `rev` (under `paths`, when given)."""
        out = self.git("ls-tree", "-r", "-z", "--full-tree", rev, "--", *paths)
        found: dict[str, Entry] = {}
        for item in filter(None, out.split(b"\0")):
            meta, _, name = item.partition(b"\t")
            mode, kind, blob = meta.decode().split()
            if kind == "blob":
                found[name.decode("utf-8", "surrogateescape")] = (mode, blob)
        return found

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
        new = self._commit_tree(parent, "".join(line + "\n" for line in lines), message, author.env())
        self.git("update-ref", f"refs/heads/{branch}", new, ZERO)
        return new

    def export(self, rev: str, target: Path) -> None:
        """`rev`'s tree as plain files in `target` (`git archive`), the repository untouched.

        No hook, filter or checkout runs; a link that leads out of `target` is PathRefused.
        """
        import io
        import tarfile

        data = self.git("archive", "--format=tar", rev)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            try:
                archive.extractall(target, filter="data")
            except tarfile.FilterError as exc:
                raise PathRefused(
                    f"main holds a link that leads out of the repository ({exc.tarinfo.name}); "
                    "evolve never exports it: remove the link"
                ) from None

    def folder_at(self, rev: str, folder: str) -> dict[str, tuple[str, bytes]]:
        """Path → (git mode, bytes) of every file and link under `folder` at `rev`.

        Reads through GitPython's object database (the one place evolve uses it: a tree walk
        over an old commit); the handle is closed so no `git cat-file` process is left.
        """
        import git  # GitPython, lazily: only restoring a skill needs it

        handle = git.Repo(self.path)
        try:
            try:
                tree = handle.commit(rev).tree / folder.rstrip("/")
            except (KeyError, ValueError, git.BadName):
                return {}
            return {
                str(item.path): (f"{item.mode:o}", item.data_stream.read())
                for item in tree.traverse()
                if isinstance(item, git.Blob)
            }
        finally:
            handle.close()

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
        script = "start\n" + "".join(
            f"update {ref} {to} {was or ''}".rstrip() + "\n" for ref, to, was in updates
        )
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
        """The URL a remote of the repository points at (git's config), or None.

        One git process per change of `.git/config` (git rewrites it whole, by rename), not per
        question: the watcher syncs every agent at each rescan. A file written in the last
        seconds is asked every time (as git treats a racy index entry): another write within
        the same clock tick could keep its size, mtime and even its inode number.
        """
        try:
            st = (self.git_dir / "config").stat()
        except OSError:
            st = None
        settled = st is not None and time.time_ns() - st.st_mtime_ns > RACY_NS
        key = (str(self.git_dir), remote, st.st_ino, st.st_size, st.st_mtime_ns) if st and settled else None
        if key is not None and key in _REMOTE_URLS:
            return _REMOTE_URLS[key]
        out = self.git("config", "--get", f"remote.{remote}.url", check=False)
        url = out.decode("utf-8", "replace").strip() or None
        if key is not None:
            if len(_REMOTE_URLS) > 4096:
                _REMOTE_URLS.clear()
            _REMOTE_URLS[key] = url
        return url

    def delete_branch(self, branch: str, expected: str) -> None:
        """Delete `branch` if it still points at `expected` (compare-and-swap)."""
        self.git("update-ref", "-d", f"refs/heads/{branch}", expected)

    def branches(self, prefix: str) -> dict[str, str]:
        """Branch name → tip sha for branches under `prefix` (e.g. 'proposals/')."""
        out = self.text("for-each-ref", "--format=%(refname:strip=2) %(objectname)", f"refs/heads/{prefix}")
        return dict(line.split(" ", 1) for line in out.splitlines() if " " in line)

    # -- writing ---------------------------------------------------------------------
    def operation_in_progress(self) -> str | None:
        """The person's unfinished git operation ("a revert", "unmerged paths"), or None."""
        for name, what in OPERATIONS.items():
            if (self.git_dir / name).exists():
                return what
        return "unmerged paths" if self._unmerged() else None

    def _flagged_own_paths(self) -> list[str]:
        """Own files marked assume-unchanged or skip-worktree: one git process per change of the index."""
        try:
            st = (self.git_dir / "index").stat()
        except OSError:
            return []
        key = (str(self.git_dir), st.st_size, st.st_mtime_ns, st.st_ino)
        if key not in _FLAGGED:
            if len(_FLAGGED) > 4096:
                _FLAGGED.clear()
            listing = self.git("ls-files", "-v", "-z", "--", *OWN_PATHS).decode("utf-8", "surrogateescape")
            entries = [e for e in listing.split("\0") if len(e) > 2]
            _FLAGGED[key] = [e[2:] for e in entries if e[0].islower() or e[0] == "S"]
        return _FLAGGED[key]

    def _unmerged(self) -> bool:
        """Whether the index holds conflicted entries (after a stash pop, `checkout -m`).

        One git process per change of the index, not per question: the watcher plans often.
        """
        try:
            st = (self.git_dir / "index").stat()
        except OSError:
            return False
        key = (str(self.git_dir), st.st_size, st.st_mtime_ns, st.st_ino)
        if key not in _UNMERGED:
            if len(_UNMERGED) > 4096:
                _UNMERGED.clear()
            try:  # the lock's check asks what is staged next: one git process for both
                compared = self._against_tip()
            except GitError:
                compared = None
            listed = b"" if compared is not None else self.git("ls-files", "--unmerged", check=False)
            _UNMERGED[key] = compared[1] if compared is not None else bool(listed.strip())
        return _UNMERGED[key]

    def checked_out_elsewhere(self) -> str | None:
        """What HEAD holds when it is not the agent's branch ("branch 'x'", "a detached HEAD")."""
        return head.checked_out_elsewhere(self.git_dir, self.branch)

    def busy_reason(self, holds: Sequence[str] = ()) -> str | None:
        """Why evolve may not write now because of what a person is doing in git, or None.

        A git operation, another checkout, a work tree behind the branch; and with `holds`
        (paths, or folders), a file under them the person staged for their own commit.
        """
        return self._operation_reason() or self.index_reason(holds)

    def _operation_reason(self) -> str | None:
        what = self.operation_in_progress()
        if what:
            remedy = f"finish it or `{ABORT[what]}`" if what in ABORT else "resolve and commit them"
            return f"a git operation is in progress in {self.path} ({what}); {remedy}, then try again"
        elsewhere = self.checked_out_elsewhere()
        if elsewhere:
            return (
                f"{self.path} has {elsewhere} checked out, not {self.branch}; evolve writes only "
                f"while {self.branch} is checked out: `git switch {self.branch}`, then try again"
            )
        return None

    def index_reason(self, holds: Sequence[str] = ()) -> str | None:
        """The index left behind by a branch move, or (with `holds`) a staged file under them; or None.

        None while a killed evolve's journal is pending: its half-done write may be staged,
        and the next `locked()` recovers it before it asks again.
        """
        if (self.git_dir / JOURNAL).exists():
            return None
        tip, entries = self._staged()
        older = staging.left_behind(self, tip, entries) if tip is not None else None
        if older:
            return staging.behind_message(self, older)
        held = staging.under(entries, holds)
        return staging.staged_message(self, held[0]) if held else None

    def behind(self) -> bool:
        """Whether the index still holds an older commit's files (the branch moved without them)."""
        tip, entries = self._staged()
        return tip is not None and staging.left_behind(self, tip, entries) is not None

    def staged_paths(self) -> set[str]:
        """The paths a person staged (`git add`): the index holds them unlike the branch tip."""
        return set(self._staged()[1])

    def _staged(self) -> tuple[str | None, dict[str, Entry | None]]:
        """(the branch tip, what the index holds unlike it); the tip is None when nothing is staged.

        One git process in the usual case, nothing staged: the index is compared with the
        branch by name, and the tip is looked up only when something is (every write asks).
        A branch with no commit has no tip: all its index holds is staged.
        """
        entries = self._staged_entries()
        return (self.tip() if entries else None), entries

    def _staged_entries(self) -> dict[str, Entry | None]:
        """`staging.staged`, asked of git again only once the index or the branch tip changed."""
        compared = self._against_tip()
        return staging.staged(self) if compared is None else dict(compared[0])

    def _against_tip(self) -> tuple[dict[str, Entry | None], bool] | None:
        """`staging.against_tip`, remembered while the index and the branch tip stay as they are.

        A write asks three times (unmerged paths and staged files in the lock's check, then
        whether its own paths are staged), a sync more; what `git diff-index --cached` answers
        depends on nothing else. The index is known by its file's stat: git and evolve both
        replace it by rename. None where the tip is no ref file, or the index is missing.
        """
        try:
            st = (self.git_dir / "index").stat()
        except OSError:
            return None
        tip = head.branch_tip(self.git_dir, self.branch) if self._refs_in_files else None
        if tip is None:
            return None
        key = (tip, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if self._staged_memo is None or self._staged_memo[0] != key:
            compared = staging.against_tip(self)
            if compared is None:
                return None
            self._staged_memo = (key, compared)
        return self._staged_memo[1]

    def refuse_staged(self, paths: Iterable[str]) -> None:
        """Raise Busy when a person staged one of `paths`: evolve never writes over their coming commit."""
        held = staging.under(self.staged_paths(), list(paths))
        if held:
            raise Busy(staging.staged_message(self, held[0]))

    @contextmanager
    def locked(self, timeout: float = 60.0) -> Iterator[None]:
        """The per-agent writer lock (one evolve writer at a time); the one door every write takes.

        Raises Busy while a person's merge, revert, cherry-pick, rebase or bisect is not
        finished, paths are unmerged, another branch (or a detached HEAD) is checked out, or
        the branch moved without its work tree: nothing evolve does may commit then (it would
        commit that checkout's files to main, or undo the commit the branch moved to).
        """
        with FileLock(self.git_dir / LOCK, timeout=timeout):
            reason = self._operation_reason()
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
        also: Extra | None = None,
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
        write_worktree = write_worktree and on_checkout
        if write_worktree:
            for path in changes:
                self.safe_path(path)  # refuse a bad path before anything touches the disk
        # Committing the work tree as it is (a person's edits): their symlinks stay symlinks.
        links = frozenset(
            p for p in changes if on_checkout and not write_worktree and (self.path / p).is_symlink()
        )
        if write_worktree and expect:
            self._check_unchanged(expect)
        written = None
        try:
            if write_worktree:
                written = journal.write_journal(self, changes, journal_id, branch)
                for path, content in changes.items():
                    self._write_file(path, content)
            sha = self._commit_loop(changes, message, author, branch, on_checkout, when, links, also)
        except BaseException:
            if written is not None:
                journal.rollback(self, written)  # if this fails, the journal stays for recover()
                (self.git_dir / JOURNAL).unlink(missing_ok=True)
            raise
        if written is not None:
            (self.git_dir / JOURNAL).unlink(missing_ok=True)
        return sha

    def _check_unchanged(self, expect: Mapping[str, bytes | None]) -> None:
        for path, before in expect.items():
            target = self.path / path
            try:
                now = None if target.is_symlink() else target.read_bytes()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                now = None
            if now != before:
                raise EditedMeanwhile(
                    f"{target} changed while evolve was writing it; nothing was lost — run the command again"
                )

    def current_branch(self) -> str | None:
        """The branch checked out (None: a detached HEAD), read from `.git/HEAD` as the lock's check does."""
        name = head.checked_out(self.git_dir) if self._refs_in_files else None
        if name is None:
            ref = self.git("symbolic-ref", "-q", "HEAD", check=False).decode().strip()
            return ref.removeprefix("refs/heads/") or None
        return name or None

    def _blob_entries(self, changes: Mapping[str, bytes | None], links: frozenset[str] = frozenset()) -> str:
        """`git update-index --index-info` lines; the blobs are written to the odb."""
        written = sorted(path for path, content in changes.items() if content is not None)
        blobs = dict(zip(written, self._write_blobs([changes[p] or b"" for p in written]), strict=True))
        lines = []
        for path, content in sorted(changes.items()):
            if content is None:
                lines.append(f"0 {ZERO}\t{path}")
            else:
                mode = "120000" if path in links else "100755" if self._is_executable(path) else "100644"
                lines.append(f"{mode} {blobs[path]}\t{path}")
        return "".join(line + "\n" for line in lines)

    def _write_blobs(self, contents: Sequence[bytes]) -> list[str]:
        """Each content stored as a blob (as is: no filter), its id; one git process for them all."""
        if len(contents) <= 1:
            return [self.text("hash-object", "-w", "--stdin", input=data) for data in contents]
        with self._scratch("evolve-blobs-") as tmp:
            names = []
            for number, data in enumerate(contents):
                (Path(tmp) / str(number)).write_bytes(data)
                names.append(os.path.relpath(Path(tmp) / str(number), self.path))
            listed = "".join(name + "\n" for name in names).encode()
            return self.text("hash-object", "-w", "--no-filters", "--stdin-paths", input=listed).split()

    def _is_executable(self, path: str) -> bool:
        target = self.path / path
        return target.is_file() and os.access(target, os.X_OK)

    def _commit_loop(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        author: Identity,
        branch: str,
        on_checkout: bool,
        when: str | None,
        links: frozenset[str] = frozenset(),
        also: Extra | None = None,
    ) -> str:
        entries = self._blob_entries(changes, links)
        extra_entries = self._blob_entries(also.changes) if also is not None else ""
        for _attempt in range(50):
            old = self.tip(branch)
            base = old or (self.tip() if branch != self.branch else None)
            new = self._commit_tree(base, entries, message, author.env(when))
            refs = []
            if also is not None:
                also.sha = self._commit_tree(new, extra_entries, also.message, author.env(when))
                refs.append((f"refs/heads/{also.branch}", also.sha, ZERO))
            if self._swap(branch, new, old, entries if on_checkout else None, refs):
                return new
            if old and self._touched_since(old, branch, list(changes)):
                raise ConcurrentChange(
                    "someone committed changes to the same files while evolve was writing; "
                    "nothing was lost — run the command again"
                )
        raise EvolveError("could not update the branch after 50 attempts (constant concurrent commits)")

    def _commit_tree(self, base: str | None, entries: str, message: str, env: Mapping[str, str]) -> str:
        """A commit object: `base`'s tree with `entries` applied, `base` its parent."""
        with self._scratch("evolve-idx-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            if base:
                self.git("read-tree", base, env=index)
            if entries:
                self.git("update-index", "--index-info", input=_encode(entries), env=index)
            tree = self.text("write-tree", env=index)
        parents = ["-p", base] if base else []
        try:  # a message read with surrogateescape keeps its bytes
            data = message.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = message.encode("utf-8", "replace")
        return self.text("commit-tree", tree, *parents, input=data, env=env)

    def build_commit(
        self, base: str | None, entries: Mapping[str, Entry | None], message: str, env: Mapping[str, str]
    ) -> str:
        """A commit on `base` (nothing moves): its tree with `entries` (None deletes a path).

        `env` names the author and committer (GIT_AUTHOR_* / GIT_COMMITTER_*).
        """
        lines = "".join(
            f"{entry[0]} {entry[1]}\t{path}\n" if entry else f"0 {ZERO}\t{path}\n"
            for path, entry in sorted(entries.items())
        )
        return self._commit_tree(base, lines, message, env)

    def _touched_since(self, old: str, branch: str, paths: list[str]) -> bool:
        new = self.tip(branch)
        out = self.git("diff", "--name-only", old, new or old, "--", *paths, env=LITERAL)
        return bool(out.strip())

    def _swap(
        self,
        branch: str,
        new: str,
        old: str | None,
        index_entries: str | None,
        refs: Sequence[tuple[str, str, str]] = (),
    ) -> bool:
        """Move the branch old→new (and `refs`, in one transaction) under git's index.lock.

        The real index is refreshed too, so a person's next `git commit` starts from it, and
        it is refreshed first: `git commit` reads HEAD, then the index, and takes index.lock
        only after, so one that read the moved branch with the old index would drop evolve's
        change. When the branch does not move, the index is put back as it was (nobody else
        can write it while evolve holds index.lock).
        """
        fd = acquire_index_lock(self.git_dir)
        real = self.git_dir / "index"
        staged, before = False, None
        try:
            if index_entries is not None:
                before = real.read_bytes() if real.exists() else None
                self._index_file(before, index_entries).replace(real)
                staged = True
            moved = self.update_refs([(f"refs/heads/{branch}", new, old or ZERO), *refs])
            if moved or self.tip(branch) == new:
                staged = False
                return True
            return False
        finally:
            try:
                if staged and before is None:
                    real.unlink(missing_ok=True)
                elif staged:
                    self._index_file(before).replace(real)
            finally:
                os.close(fd)
                (self.git_dir / "index.lock").unlink(missing_ok=True)

    def entries_at(self, rev: str | None, paths: Sequence[str]) -> str:
        """`update-index --index-info` lines giving `paths` their entries at `rev` (absent: removed)."""
        found = {}
        listed = self.git("ls-tree", "-z", "--full-tree", rev, "--", *paths, env=LITERAL) if rev else b""
        for entry in filter(None, listed.split(b"\0")):
            meta, _, name = entry.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            found[name.decode("utf-8", "surrogateescape")] = f"{mode} {sha}"
        return "".join(f"{found.get(p, f'0 {ZERO}')}\t{p}\n" for p in paths)

    def _scratch(self, prefix: str) -> AbstractContextManager[str]:
        """A scratch folder inside .git (same filesystem as the index), removed after."""
        import tempfile  # here: a command that only reads never loads it

        return tempfile.TemporaryDirectory(dir=self.git_dir, prefix=prefix)

    def _index_file(self, data: bytes | None, entries: str = "") -> Path:
        """An index file beside the real one: `data` (None: empty) with `entries` applied, on disk.

        Call holding index.lock (one at a time); the caller renames it over the index.
        """
        ready = self.git_dir / "evolve-index"
        if data is None:
            ready.unlink(missing_ok=True)
        else:
            ready.write_bytes(data)
        if entries:
            env = {"GIT_INDEX_FILE": str(ready)}
            self.git("update-index", "--index-info", input=_encode(entries), env=env)
        fd = os.open(ready, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return ready

    def _write_file(self, path: str, content: bytes | None, mode: str | None = None) -> None:
        """Write (None: delete) one file; with a git `mode`, as a link or with that mode."""
        target = self.safe_path(path)
        if content is None:
            target.unlink(missing_ok=True)
            parent = target.parent
            while parent != self.path and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
        elif mode == LINK:
            atomic_symlink(target, content)
        else:
            atomic_write(target, content, executable=None if mode is None else mode == EXECUTABLE)

    def _current(self, path: str) -> bytes | None:
        """A work-tree file's bytes, a link's target (never followed), None when absent."""
        target = self.path / path
        try:
            if target.is_symlink():
                return os.fsencode(target.readlink())
            return target.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def safe_path(self, path: str) -> Path:
        """Refuse anything that is not a plain relative path inside the work tree."""
        target = self._plain_path(path)
        for parent in [target, *target.parents]:
            if parent == self.path:
                break
            if parent.is_symlink():
                raise PathRefused(f"refusing to write through a symlink: {path!r}")
        return target

    def _plain_path(self, path: str) -> Path:
        if refused_path(path):
            raise PathRefused(f"refusing to write outside the agent repository: {path!r}")
        return self.path.joinpath(*Path(path).parts)

    def check_out(self, rev: str) -> None:
        """Every file of `rev` written into an empty work tree, and the index made to match.

        For a fresh clone: evolve writes the files itself (links as links, no filters, no
        hooks), never `git checkout`.
        """
        entries = self.tree_entries(rev)
        blobs = self.read_blobs(sorted({blob for _mode, blob in entries.values()}))
        for path, (mode, blob) in sorted(entries.items()):
            self._write_file(path, blobs.get(blob) or b"", mode)
        self.git("read-tree", rev)
        self.git("update-index", "-q", "--refresh", check=False)

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


def _encode(entries: str) -> bytes:
    """`--index-info` lines → bytes; a non-UTF-8 file name (surrogate-escaped) keeps its bytes.

    git reads a path that starts with `"` as C-quoted: such a name is quoted, so `"q"` stays
    `"q"` and does not become `q`.
    """
    lines = []
    for line in entries.split("\n"):
        meta, tab, path = line.partition("\t")
        if tab and path.startswith('"'):
            path = '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'
        lines.append(meta + tab + path)
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def init_repo(path: Path, files: Mapping[str, bytes], message: str, author: Identity) -> Repo:
    """A new repository on branch main whose first commit holds `files`."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", head.BRANCH)
    repo = Repo(path)
    for name, content in files.items():
        repo._write_file(name, content)
    repo.git("add", "-A")
    tree = repo.text("write-tree")
    sha = repo.text("commit-tree", tree, input=message.encode(), env=author.env())
    repo.git("update-ref", "refs/heads/main", sha, ZERO)
    return repo


def person_identity(path: Path, fallback: Identity) -> Identity:
    """The person's configured git identity, else evolve's fallback."""
    found = config_values(path, "user.name", "user.email")
    name = found.get("user.name", b"").decode().strip()
    email = found.get("user.email", b"").decode().strip()
    return Identity(name, email) if name and email else fallback


__all__ = ["ConcurrentChange", "GitError", "Identity", "Repo", "init_repo", "person_identity"]
