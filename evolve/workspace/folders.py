"""Which folders under agents/ are agents, and the ones a person should hear about that are not.

An agent is a folder holding a git repository under a name commands take. A link to another
agent's folder is a second name for it, a folder with an agent.toml but no .git has lost its
repository, and a folder named `My Agent` is one no command takes: status and doctor name each
of them, with what to do. Plain strings and scandir: every cycle lists all agents.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home, not_a_folder
from evolve.names import name_problem, suggested_name


def list_agents(home: Home, known: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Names of the agents in a home (folders holding a git repository).

    Plain strings and scandir: every cycle lists all agents, and pathlib costs ~5x more.
    `known`: names the caller knows to be agents already (the ledger's): their folder is
    enough, so a cycle over 1,000 agents makes no stat call per agent.
    """
    folders = _folders(home)
    links = _links(home, folders)
    return sorted(
        name
        for name, path, _link in folders
        if name not in links
        and (name in known or (os.path.isdir(path + "/.git") and name_problem(name) is None))  # noqa: PTH112 - hot
    )


def _folders(home: Home) -> list[tuple[str, str, bool]]:
    """(name, path, is a link) of each folder under agents/ (a link to a folder too), dot-folders left out."""
    try:
        with os.scandir(home.agents_dir) as entries:
            return [
                (e.name, e.path, e.is_symlink()) for e in entries if _is_dir(e) and not e.name.startswith(".")
            ]
    except FileNotFoundError:
        if not home.agents_dir.is_symlink():
            return []  # no agent yet
        raise UserError(not_a_folder(home.agents_dir)) from None
    except OSError:  # a loop of links, a FIFO, a file: "no agents" would hide every one of them
        raise UserError(not_a_folder(home.agents_dir)) from None


def _is_dir(entry: os.DirEntry) -> bool:
    """Whether the entry is a folder or a link to one; a link loop (`x -> y -> x`) is neither.

    scandir's is_dir() raises ELOOP where os.path.isdir says False: one looping link a person
    left under agents/ stopped status, doctor, sync and the cycle for every agent.
    """
    try:
        return entry.is_dir()
    except OSError:
        return False


def _links(home: Home, folders: list[tuple[str, str, bool]]) -> dict[str, str]:
    """Link name → the agent it leads to, for each link under agents/ to a folder another name holds.

    One repository reached under two names would be observed, reflected and synced twice,
    two writers of one branch: only one name is the agent — the folder itself, or, for links
    to a folder outside agents/, the first link by name. Only links cost a realpath.
    """
    if not any(link for _name, _path, link in folders):
        return {}
    inside = os.path.realpath(home.agents_dir)
    owners = {os.path.join(inside, name): name for name, _path, link in folders if not link}  # noqa: PTH118
    aliases: dict[str, str] = {}
    for name, path, link in sorted(folders):
        if link:
            real = os.path.realpath(path)
            if real in owners:
                aliases[name] = owners[real]
            else:
                owners[real] = name
    return aliases


@dataclass(frozen=True)
class LinkedFolder:
    """A link under agents/ to another agent's folder: a second name for that agent, not an agent."""

    folder: Path
    agent: str

    def said(self) -> str:
        """The one line a person reads (quoted: a name may hold a newline)."""
        return (
            f"{str(self.folder)!r} is a link to agent {self.agent!r}, not an agent of its own: nothing is "
            f"observed, reflected or synced through it; use {self.agent!r} (the link may be removed)"
        )

    def to_dict(self) -> dict:
        return {"folder": str(self.folder), "agent": self.agent, "problem": self.said()}


def linked_folders(home: Home) -> list[LinkedFolder]:
    """The links under agents/ that lead to another agent's folder, by name."""
    links = _links(home, _folders(home))
    return [LinkedFolder(home.agents_dir / name, agent) for name, agent in sorted(links.items())]


def linked_folder(home: Home, name: str) -> LinkedFolder | None:
    """The link `name` under agents/ if it leads to another agent's folder, else None."""
    return next((link for link in linked_folders(home) if link.folder.name == name), None)


@dataclass(frozen=True)
class BrokenLink:
    """A link under agents/ that leads nowhere: its target moved or deleted, or a loop."""

    folder: Path
    target: str

    def said(self) -> str:
        """The one line a person reads: the agent did not vanish in silence."""
        return (
            f"{str(self.folder)!r} is a link to {self.target!r}, which leads nowhere (moved, deleted, or a "
            "loop of links): nothing is observed, reflected or synced through it; point the link at the "
            "agent's folder again, or remove it"
        )

    def to_dict(self) -> dict:
        return {"folder": str(self.folder), "target": self.target, "problem": self.said()}


def broken_links(home: Home) -> list[BrokenLink]:
    """The links under agents/ (dot-names aside) that lead nowhere, by name.

    A link to a file is no agent and no loss (a person's `a.local.toml` kept in their dotfiles).
    """
    try:
        with os.scandir(home.agents_dir) as entries:
            found = [
                e
                for e in entries
                if e.is_symlink() and not os.path.exists(e.path) and not e.name.startswith(".")  # noqa: PTH110
            ]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [BrokenLink(Path(e.path), _target(Path(e.path))) for e in sorted(found, key=lambda e: e.name)]


def _target(link: Path) -> str:
    try:
        return str(link.readlink())
    except OSError:  # removed meanwhile
        return ""


def agent_named(home: Home, name: str) -> str | None:
    """The agent `name` stands for: its own folder's, the agent its link leads to, or None (no agent).

    Hooks installed under a name that later became a link (two agents merged, the old name
    kept as a link) still name it: their sessions are that agent's, never a ledger of a name
    nothing observes or reflects.
    """
    path = home.agent_dir(name)
    if not (path / ".git").is_dir():
        return None
    linked = linked_folder(home, name) if path.is_symlink() else None
    return linked.agent if linked else name


def lost_agents(home: Home) -> list[str]:
    """Agent folders (an agent.toml) whose `.git` is gone or is no folder: `list_agents` skips them.

    No command takes them for agents and `evolve init` refuses their names: status and doctor
    name them, so the person learns the repository is lost.
    """
    if not home.agents_dir.is_dir():
        return []
    found = {p.parent.name for p in home.agents_dir.glob("*/agent.toml") if not p.parent.name.startswith(".")}
    links = _links(home, _folders(home))
    return sorted(
        name
        for name in found - links.keys()
        if not (home.agent_dir(name) / ".git").is_dir()
        and name_problem(name) is None
        and not _worktree_of_an_agent(home, name)
    )


def _worktree_of_an_agent(home: Home, name: str) -> bool:
    """Whether agents/<name> is a linked worktree of an agent here (`git worktree add ../<name>` in it).

    The person's checkout of that agent's branch, not an agent whose repository is lost: cloning
    one in its place, as a lost agent's remedy says, would make a second agent of that history.
    """
    from evolve.regular import open_regular  # here: only a folder without a .git folder is read

    folder = home.agent_dir(name)
    try:
        with open_regular(folder / ".git") as handle:  # never a FIFO's wait
            first = handle.read(4096).split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
    except OSError:
        return False
    gitdir = Path(os.path.realpath(folder / first.removeprefix("gitdir:").strip()))
    owner = gitdir.parent.parent.parent  # of <agent>/.git/worktrees/<id>
    return (
        first.startswith("gitdir:")
        and gitdir.parent.name == "worktrees"
        and gitdir.parent.parent.name == ".git"
        and str(owner.parent) == os.path.realpath(home.agents_dir)
    )


@dataclass(frozen=True)
class MisnamedFolder:
    """An agent folder (a `.git` or an agent.toml) whose name no command takes, and a free name for it."""

    folder: Path
    rename_to: Path

    def said(self) -> str:
        """The one line a person reads (quoted: a name may hold a newline)."""
        return (
            f"{str(self.folder)!r} is no agent: its name {name_problem(self.folder.name)}, so no command "
            "takes it and nothing is observed, reflected or synced there; rename the folder, e.g. to "
            f"{str(self.rename_to)!r}"
        )

    def to_dict(self) -> dict:
        return {"folder": str(self.folder), "rename_to": str(self.rename_to), "problem": self.said()}


def misnamed_agents(home: Home) -> list[MisnamedFolder]:
    """Agent folders whose name no command takes: `list_agents` and `lost_agents` skip them.

    A repository cloned or copied in by hand as `My Agent` was listed, and every command on it
    refused its name; status and doctor name it instead, with a name it could have.
    """
    try:
        with os.scandir(home.agents_dir) as entries:
            listed = [(e.name, _is_dir(e)) for e in entries]
    except (FileNotFoundError, NotADirectoryError):
        return []
    taken = [name for name, _ in listed]  # and each name offered: two folders are never offered one
    links = _links(home, _folders(home))  # a second name for an agent: no agent to rename
    found = []
    listed = [(name, is_dir) for name, is_dir in listed if name not in links]
    for folder in sorted(home.agents_dir / name for name, is_dir in listed if is_dir and name[0] != "."):
        if name_problem(folder.name) and ((folder / ".git").exists() or (folder / "agent.toml").exists()):
            offered = suggested_name(folder.name, [name for name in taken if name != folder.name])
            taken.append(offered)
            found.append(MisnamedFolder(folder, folder.with_name(offered)))
    return found
