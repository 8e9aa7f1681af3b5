"""The library API: an `Agent` opened from a home and a name. The CLI only wraps it."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from evolve.errors import Busy, ConfigError, UserError
from evolve.home import Home
from evolve.names import check_name
from evolve.regular import NotRegular, read_regular
from evolve.store.commit import ConcurrentChange
from evolve.store.diagnosis import no_repository_in
from evolve.store.history import Commit, build_message
from evolve.store.identity import Identity, person_identity
from evolve.store.repo import Repo, init_repo
from evolve.workspace import conflicts
from evolve.workspace import memo as memo_mod
from evolve.workspace.folders import BrokenLink, linked_folder

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve import config as config_mod
    from evolve.workspace import skills as skills_mod


LEARNED = (memo_mod.MEMO_FILE, "skills")  # where reflections write: a file staged there holds them


@dataclass
class Agent:
    """One agent: its repository, configuration, skills and memo."""

    home: Home
    name: str

    @classmethod
    def open(cls, name: str, home: Home | str | None = None) -> Agent:
        home = home if isinstance(home, Home) else Home.resolve(home)
        check_name(name, "agent")
        agent = cls(home, name)
        if agent.path.is_symlink() and (link := linked_folder(home, name)) is not None:
            raise UserError(link.said())  # one repository under two names would be two agents
        if not (agent.path / ".git").is_dir():
            if (agent.path / "agent.toml").is_file():  # an agent's folder whose repository is lost
                raise UserError(f"agent {name!r} at {agent.path}: .git {no_repository_in(agent.path)}")
            raise UserError(f"no agent {name!r} in {home.root}; create it with `evolve init {name}`")
        return agent

    @classmethod
    def create(cls, name: str, home: Home | str | None = None) -> Agent:
        home = home if isinstance(home, Home) else Home.resolve(home)
        check_name(name, "agent")
        identity = cls(home, name).evolve_identity
        message = build_message(f"init({name}): new agent", {"Evolve-Kind": "init"})

        def build(target: Path) -> None:
            from evolve.workspace.template import install_precommit_hook, template_files  # only here

            init_repo(target, template_files(name), message, identity)
            install_precommit_hook(target, home.root, checked_out=False, lives_at=home.agent_dir(name))

        return cls.build_aside(home, name, build)

    @classmethod
    def build_aside(cls, home: Home, name: str, build: Callable[[Path], None]) -> Agent:
        """A new agent whose repository `build(path)` makes aside, then renamed into place.

        An agent appears whole or not at all, and a concurrent `evolve init` of the same
        name can never delete the other's agent.
        """
        check_name(name, "agent")
        home.ensure()
        agent = cls(home, name)
        if agent.path.exists():
            raise UserError(f"agent {name!r} already exists at {agent.path}; pick another name")
        if agent.path.is_symlink():  # a link leading nowhere: the agent it named may be moved, not gone
            raise UserError(BrokenLink(agent.path, str(agent.path.readlink())).said())
        _refuse_removed(home, name)
        import shutil  # here: only creating an agent needs them
        import tempfile

        staging = Path(tempfile.mkdtemp(dir=home.agents_dir, prefix=f".new-{name}-"))
        try:
            build(staging / name)
            try:
                (staging / name).rename(agent.path)
            except OSError:
                raise UserError(f"agent {name!r} already exists at {agent.path}; pick another name") from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return agent

    # -- places ----------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.home.agent_dir(self.name)

    @property
    def skills_dir(self) -> Path:
        return self.path / "skills"

    @property
    def memo_path(self) -> Path:
        return self.path / memo_mod.MEMO_FILE

    @cached_property
    def repo(self) -> Repo:
        return Repo(self.path)

    @property
    def local_config_path(self) -> Path:
        """Where [sources] and [model] live once the agent syncs through a remote (this machine's)."""
        return self.home.local_config(self.name)

    @cached_property
    def config(self) -> config_mod.Config:
        from evolve import config as config_mod  # here: a sync with nothing to do never loads it

        return config_mod.load(self.home.config_file, self.path / "agent.toml", self.local_config_path)

    @property
    def shared(self) -> bool:
        """Whether the agent syncs through a remote (a decision of one machine then waits for review)."""
        return self.repo.remote_url() is not None

    @property
    def lenient_config(self) -> config_mod.Config:
        """`config`, or what still loads when a file is broken: a person's work never waits on it.

        agent.toml over config.toml, else config.toml alone, else the defaults; the problem
        itself is what `config_problem()` reports (status, cycle, doctor, the edit's trailer).
        Before the agent exists, config.toml alone (nothing is cached for it).
        """
        from evolve import config as config_mod

        if self.path.exists():
            try:
                return self.config
            except ConfigError:
                pass
        try:
            return config_mod.load(self.home.config_file)
        except ConfigError:
            return config_mod.Config()

    def config_problem(self) -> str | None:
        """Why this agent's configuration does not load (`file: section.key: problem`), or None."""
        try:
            _ = self.config
        except ConfigError as exc:
            return str(exc)
        return None

    @property
    def evolve_identity(self) -> Identity:
        cfg = self.lenient_config
        return Identity(cfg.git.author_name, cfg.git.author_email)

    @cached_property
    def evolve_emails(self) -> frozenset[str]:
        """Whose commits are evolve's (`authorship.made_by_evolve`), by e-mail.

        Its e-mail now, its default, and each one this machine wrote a reflection's note with —
        never the person's own (`[git] author_email` set to theirs, by them or by a synced
        agent.toml, would make a reflection they amended evolve's again): fails closed.
        """
        from evolve.workspace.authorship import evolve_emails

        person = person_identity(self.path, local_person()).email
        return evolve_emails(self.evolve_identity.email, self.repo.note_emails()) - {person}

    # -- content ---------------------------------------------------------------------
    def skills(self) -> list[skills_mod.Skill]:
        from evolve.workspace import skills as skills_mod

        return skills_mod.list_skills(self.skills_dir, self.config.limits.skill_body_tokens)

    def skill(self, name: str) -> skills_mod.Skill:
        from evolve.workspace import skills as skills_mod

        check_name(name, "skill")
        folder = self.skills_dir / name
        if not folder.exists():
            raise UserError(f"agent {self.name!r} has no skill {name!r}; see `evolve skills {self.name}`")
        return skills_mod.load_skill(folder, self.config.limits.skill_body_tokens)

    def memo_text(self) -> str:
        """memo.md's text; "" when absent, a symbolic link (never followed) or not a file."""
        if self.memo_path.is_symlink():
            return ""
        try:
            return read_regular(self.memo_path).decode("utf-8")  # its line endings as they are
        except (FileNotFoundError, NotRegular, NotADirectoryError):
            return ""

    def memo_to_parse(self) -> str:
        """memo.md's text for what parses its sections: "" over MEMO_CAP (a log: doctor says so)."""
        return "" if self.memo_oversized() else self.memo_text()

    def memo_oversized(self) -> int | None:
        """memo.md's size when it is over MEMO_CAP (what reads it bounds itself by this), else None.

        A log appended to the memo by mistake (300 MB) held doctor 30 s and lessons 18 s in
        parsing and blaming it; sessions already leave it out.
        """
        try:
            size = self.memo_path.lstat().st_size
        except OSError:
            return None
        return size if size > memo_mod.MEMO_CAP else None

    def memo_problems(self, section_chars: int | None = None) -> list[str]:
        """memo.md's problems, its conflict markers by its own conflict-marker-size."""
        path = self.memo_path
        if path.is_symlink():  # never read: doctor's one line says so, not sections a link cannot have
            return []
        size = self.memo_oversized()
        if size is not None:  # not parsed: one line
            return [
                f"{memo_mod.over_cap(size)} (a log appended by mistake?): sessions leave it out and nothing "
                "reads it further; "
                f"cut it back (`git -C {self.path} log --stat -- {memo_mod.MEMO_FILE}` shows where it grew)"
            ]
        if path.exists() and not path.is_file():  # memo_text reads it as ""
            return [
                f"{memo_mod.MEMO_FILE} is not a regular file (a folder, FIFO, socket or device): "
                f"move it aside and restore the memo (`git -C {self.path} checkout -- {memo_mod.MEMO_FILE}`)"
            ]
        text = self.memo_text()
        if section_chars is None:
            section_chars = self.config.limits.memo_section_chars
        size = conflicts.smallest_markers(self.path, {memo_mod.MEMO_FILE: text})[memo_mod.MEMO_FILE]
        return memo_mod.problems(text, section_chars, size)

    def skill_records(self) -> list[dict]:
        """Every skill with its validity and git-derived history, for `evolve skills`."""
        history = self.repo.skill_history()
        records = []
        for skill in self.skills():
            entry = history.get(skill.name)
            records.append(
                {
                    "name": skill.name,
                    "description": skill.description,
                    "valid": skill.valid,
                    "problems": skill.problems,
                    "pinned": skill.pinned,
                    "path": str(skill.path),
                    "created_at": entry.created_at if entry else None,
                    "updated_at": entry.updated_at if entry else None,
                    "patch_count": entry.patch_count if entry else 0,
                }
            )
        return records

    def sync_links(self, paths: Iterable[str] | None = None) -> None:
        """Keep Claude Code's links in step after a commit that may have changed skills."""
        if paths is not None and not any(str(p).startswith("skills/") for p in paths):
            return
        from evolve.workspace.links import sync_links

        sync_links(self.home, self.name)

    # -- history ---------------------------------------------------------------------
    def log(self, limit: int | None = None) -> list[Commit]:
        return self.repo.log(limit=limit)

    def commit_human_edits(self) -> str | None:
        """Commit what a person left uncommitted, as their own commit. Never discards."""
        with self.repo.locked():
            return self.commit_human_edits_held()

    def commit_human_edits_held(self, writing: Collection[str] = ()) -> str | None:
        """Commit the person's uncommitted edits, except what they staged for their own commit.

        A path staged exactly as it is on disk (`git add X`, and `git commit` is next) is the
        person's coming commit, with their message: it is left to them, and evolve's own
        writes refuse to touch it (`Repo.refuse_staged`). A path edited again after staging
        is committed as it is on disk, like any other edit. So is a staged path in `writing`
        (a sync bringing the server's change of it): it is the person's edit all the same,
        and waiting for them would hold every machine's lessons back.
        """
        paths = self.repo.dirty_paths()
        texts = {path: text for path in paths if (text := _text_of(self.path / path)) is not None}
        marked = conflicts.conflicted(self.path, texts)  # by each file's own conflict-marker-size
        conflicted = [p for p in paths if p in marked]
        if conflicted:  # e.g. a stash pop's conflict marked resolved with `git add` alone
            raise Busy(
                f"{self.path / conflicted[0]} holds merge conflict markers (<<<<<<< ======= >>>>>>>); "
                "resolve them, then try again"
            )
        if not paths:
            return None
        staged = self.repo.staged_against_head()
        if staged:
            edited = set(self.repo.text("diff", "--name-only", "-z", "--no-renames").split("\0"))
            paths = [p for p in paths if p not in staged or p in edited or p in writing]
        # a submodule (or a nested repository) is the person's: never committed, above all never
        # as a deletion of its entry (a staged update of it stays staged for their own commit)
        paths = [p for p in paths if not _is_repository(self.path / p)]
        if not paths:
            return None
        stand_in = next((found for p in paths if (found := _stand_in(self.path, p)) is not None), None)
        if stand_in:  # git cannot carry it: committed, it would be a deletion pushed to every machine
            raise Busy(
                f"{self.path / stand_in} is not a regular file (a FIFO, socket, device or folder where "
                "a file was); evolve never commits it as a deletion: move it aside and put the file back "
                f"(`git -C {self.path} checkout -- {stand_in}`), then try again"
            )
        changes: dict[str, bytes | None] = {}
        for path in paths:
            target = self.path / path
            if target.is_symlink():  # committed as a link, never the content it points at
                changes[path] = os.fsencode(target.readlink())
            else:
                changes[path] = target.read_bytes() if target.is_file() else None
        message = self.human_edit_message(paths, self._problems_in(paths))
        person = person_identity(self.path, local_person())
        try:
            sha = self.repo.commit_changes(changes, message, person, write_worktree=False)
        except ConcurrentChange:
            return None  # the person committed those files themselves meanwhile
        self.sync_links(paths)
        return sha

    def human_edit_message(self, paths: Sequence[str], problems: Sequence[str] = ()) -> str:
        """The message of a person's edit evolve commits for them (`Evolve-Kind: human_edit`)."""
        trailers = {"Evolve-Kind": "human_edit", "Evolve-Source": "human"}
        if problems:
            trailers["Evolve-Problems"] = "; ".join(problems)
        subject = f"edit({self.name}): {', '.join(paths[:3])}" + (" …" if len(paths) > 3 else "")
        return build_message(subject, trailers)

    def _problems_in(self, paths: list[str]) -> list[str]:
        from evolve.workspace import skills as skills_mod

        found = []
        limits = self.lenient_config.limits
        for name in sorted({p.split("/")[1] for p in paths if p.startswith("skills/") and p.count("/") >= 2}):
            folder = self.skills_dir / name
            if folder.exists():
                found += [
                    f"skills/{name}: {p}"
                    for p in skills_mod.load_skill(folder, limits.skill_body_tokens).problems
                ]
        if memo_mod.MEMO_FILE in paths:
            found += self.memo_problems(limits.memo_section_chars)
        if "guards.toml" in paths:
            from evolve.workspace import guards

            try:
                found += guards.problems(read_regular(self.path / guards.FILE).decode("utf-8"))
            except (OSError, UnicodeDecodeError):
                pass  # removed, or not text: nothing for the hook to apply
        problem = self.config_problem() if "agent.toml" in paths else None
        if problem and problem.startswith(f"{self.path / 'agent.toml'}:"):
            found.append(problem.replace(f"{self.path}/", "", 1))
        return found

    def revert(self, rev: str) -> str:
        """Undo one commit as a new commit with `Evolve-Reverts: <sha>`."""
        with self.repo.locked():
            self.commit_human_edits_held()
            sha = self.repo.resolve(rev)
            commit = self.repo.log(sha, limit=1)[0]
            if not commit.parents:
                raise UserError("the first commit of an agent cannot be reverted; use `evolve remove`")
            if len(commit.parents) > 1:
                raise UserError(f"{sha[:12]} is a merge; revert the commits it merged instead")
            changes = self.repo.reverse_changes(sha)
            trailers = {"Evolve-Kind": "revert", "Evolve-Reverts": sha}
            message = build_message(f'revert({self.name}): "{commit.subject}"', trailers)
            sha = self.repo.commit_changes(changes, message, self.evolve_identity)
        self.sync_links(changes)
        return sha


def local_person() -> Identity:
    """Who is at this machine when git has no identity configured, as git itself would guess.

    The login's full name (else its name) at the host: a person's edit is never authored as
    evolve, whose commits are the reflections.
    """
    import pwd
    import socket

    try:
        entry = pwd.getpwuid(os.getuid())
        login, full = entry.pw_name, entry.pw_gecos.split(",")[0].strip()
    except KeyError:  # a uid without a passwd entry (containers)
        login, full = os.environ.get("USER") or os.environ.get("LOGNAME") or "person", ""
    return Identity(full or login, f"{login}@{socket.gethostname() or 'localhost'}")


def _is_repository(path: Path) -> bool:
    """A work tree of its own at `path`: a submodule's (a `.git` file) or a nested clone's."""
    return not path.is_symlink() and path.is_dir() and (path / ".git").exists()


def _stand_in(root: Path, path: str) -> str | None:
    """Where something git cannot carry stands in for `path` (a file git saw), or None.

    A folder, FIFO, socket or device where the file was; or a FIFO, socket or device where one
    of its folders was (git sees every file under it deleted: a skill's folder made a FIFO).
    """
    target = root / path
    if not target.is_symlink() and target.exists() and not target.is_file():
        return path
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        try:
            mode = os.lstat(root.joinpath(*parts[:depth])).st_mode
        except OSError:
            continue
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            return "/".join(parts[:depth])
    return None


def _text_of(path: Path) -> str | None:
    """A person's text file that could hold a merge's conflict markers, decoded; else None (no link read)."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 4 << 20:
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    return raw.decode("utf-8", "replace") if conflicts.may_hold(raw) else None


def _refuse_removed(home: Home, name: str) -> None:
    """A removed agent's state is kept until purged: a new agent must not inherit it."""
    if not home.state_db.exists():
        return
    from evolve.store import ledger

    with ledger.opened(home.state_db) as conn:
        row = ledger.agent_row(conn, name)
    if row is not None and row["removed_at"]:
        raise UserError(
            f"an agent named {name!r} was removed and its state is kept; run "
            f"`evolve remove {name} --purge` first, or pick another name"
        )
