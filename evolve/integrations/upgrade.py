"""Bring what older evolve versions wrote outside the package up to date, once per layout.

Installed files name evolve's code and interpreter: each agent repository's pre-commit
hook (and its local `core.hooksPath`), and the hook commands in Claude Code's settings and
Codex's hooks.json (Codex runs a changed command only once the person trusts it again: the
note says so, and `evolve status` shows those installs waiting for trust).
When evolve changes how they must look, LAYOUT goes up; `ensure_current` rewrites what is
evolve's (never a person's hook or entry) and records the layout in `<home>/layout-version`,
so the check costs one small read when nothing is due (a home `evolve init` begins is recorded
at once: it holds nothing older). Every writing command, the watcher and `evolve doctor` call
it: nobody has to reinstall after an upgrade.

Layouts: 1 the first; 2 hooks run their interpreter with -P, each agent repository sets
core.hooksPath itself; 3 agent repositories store files byte for byte (no line-ending
conversion: a checkout under a global core.autocrlf must not make evolve rewrite, and
claim, every line), and files a checkout already converted get git's bytes back; 4 every
command runs its interpreter isolated (-I: no PYTHONPATH, PYTHONHOME, user site … of a
project's), naming evolve's own folder when an isolated interpreter would not find it;
5 every agent repository is a Claude Code and Codex plugin (`integrations.plugin`: the files
an agent lacks, as one commit of evolve's; an agent busy now is tried again by the next command);
6 the PreToolUse entry that enforces guards.toml joins every install of Claude Code and Codex,
and the plugin's hooks.json gains it too; 7 the plugin's launcher (hooks/evolve-hook) starts
evolve for a guard's table written after blanks too, as the installed hook does; 8 the
pre-commit hook says that evolve's check failed, where it said evolve was not installed; 9 each
agent repository's core.hooksPath names its hooks folder whole (`.git/hooks` ran no hook in a
linked worktree). The record names the home and each agent's repository too: a home moved
elsewhere, an agent folder renamed, or a repository cloned into agents/ by hand is checked
again by the next command, so its hooks (which name the home and their folder) follow it.
"""

from __future__ import annotations

from evolve.home import DEVICE_MARK, LAYOUT_FILE, PLACES_FILE, Home, path_of_place, place_bytes, place_line
from evolve.regular import read_regular
from evolve.store.files import atomic_write
from evolve.store.locks import FileLock

LAYOUT = 9
VERSION_FILE = LAYOUT_FILE


class Unfinished(str):
    """A note on what was left as it was (it failed, or is a person's): doctor warns, never "fixed"."""


def applied(home: Home) -> int:
    """The layout last brought up to date in this home (0: never, or its home or agents changed since)."""
    try:
        layout, _, rest = read_regular(home.root / VERSION_FILE).partition(b"\n")  # a FIFO: no wait
        where, _, repositories = rest.rstrip(b"\n").partition(b"\n")
        if where and (where != _where(home) or repositories != _repositories(home)):
            return 0
        return int(layout.strip() or 0)
    except (OSError, ValueError):
        return 0


def _moved(home: Home) -> bool:
    """Whether the layout record names another place than the home's own (it was moved since)."""
    try:
        where = read_regular(home.root / VERSION_FILE).split(b"\n")[1]
    except (OSError, IndexError):
        return False
    return bool(where) and where != _where(home)


def _where(home: Home) -> bytes:
    """The home's own path, links resolved, as the layout record names it."""
    import os

    return place_bytes(os.path.realpath(home.root))


def _repositories(home: Home) -> bytes:
    """Each agent's name, its repository's inode and whether a pre-commit hook is there, as recorded.

    core.hooksPath names an agent's hooks folder whole, so a folder renamed by hand, a
    repository cloned into agents/ (under a new name or an old one) ran no pre-commit hook:
    any of them changes this, and the next command sets it up. A clone has no hook (a folder
    made again at once may get the inode just freed); a hook a person rewrote is theirs to
    keep until `doctor --fix`, so its content is not looked at. Two stats per agent.
    """
    import os

    from evolve.errors import UserError
    from evolve.workspace.folders import list_agents

    try:
        names = list_agents(home)
    except UserError:  # agents/ is no folder: nothing to set up (ensure_current checks first)
        return b""
    found = []
    for name in names:
        repository = os.path.join(home.agent_dir(name), ".git")  # noqa: PTH118 - every command
        try:
            inode = os.stat(repository).st_ino  # noqa: PTH116 - a string path, as above
        except OSError:
            inode = 0
        hook = os.path.lexists(os.path.join(repository, "hooks", "pre-commit"))  # noqa: PTH118 - template.hook_path
        found.append(f"{name}:{inode}:{'hook' if hook else 'none'}")
    return " ".join(found).encode("ascii")


def ensure_current(home: Home, *, force: bool = False) -> list[str]:
    """Rewrite what is out of date; one line per change. `force`: check even when recorded.

    What it rewrites is imported only then: every writing command calls this first.
    """
    if not home.agents_dir.is_dir() or (applied(home) >= LAYOUT and not force):
        return []
    from evolve.store.diagnosis import is_own_repository
    from evolve.workspace import links
    from evolve.workspace.folders import list_agents

    # an agent whose .git is missing or damaged is left alone (doctor names it): git set up
    # there would be done in whatever repository encloses its folder
    agents = [name for name in list_agents(home) if is_own_repository(home.agent_dir(name))]
    with FileLock(home.run_dir / "upgrade.lock", timeout=30):
        notes, hooks_done = _agent_hooks(home, agents, take_hooks_path=force)
        plugins, done = _plugins(home, agents)
        notes += plugins
        done = done and hooks_done
        for name in agents:  # links into the place a moved home was at follow it (links.is_our_link)
            links.sync_links(home, name)
        for harness, refresh in (("Claude Code", _claude_code_hooks), ("Codex", _codex_hooks)):
            try:
                notes += refresh(home)
            except links.UnreadableInstalls as exc:  # left as it is; tried again by the next command
                notes.append(Unfinished(f"{harness} hook commands not checked: {exc}"))
                done = False
        if done:
            record_current(home)
    return notes


def mend_agents_git(home: Home) -> list[str]:
    """A reading command's part of the check: after a move, each agent repository's git set up again.

    core.hooksPath and the pre-commit hook name the home's old place, so a commit made by
    hand ran no check until the next writing command. Only the agents' own `.git` is written
    here, never waiting on a writing command's check (it does the same): the hook commands
    in the harnesses' files and the layout record are the next writing command's. A
    person's own core.hooksPath stays, as in any upgrade.
    """
    if not home.agents_dir.is_dir() or not _moved(home) or home.read_only():
        return []
    from evolve.store.diagnosis import is_own_repository
    from evolve.store.locks import LockBusy
    from evolve.workspace.folders import list_agents

    agents = [name for name in list_agents(home) if is_own_repository(home.agent_dir(name))]
    try:
        with FileLock(home.run_dir / "upgrade.lock", timeout=0):
            return _agent_hooks(home, agents, take_hooks_path=False)[0]
    except (LockBusy, OSError):  # a writing command is at it, or the run folder cannot be made
        return []


def holds_nothing_older(home: Home) -> bool:
    """Whether `home` holds nothing an older evolve may have made: no agent, no project's install.

    A person starting over may remove the agents folder, not the hook commands it installed.
    """
    from evolve.workspace import links

    return not home.agents_dir.is_dir() and not links.registry_dir(home).exists()


def record_current(home: Home) -> None:
    """Record that what this home holds is in today's layout (a home this version made is).

    A record that cannot be written (a folder in its place, say) only costs the next command a check.
    """
    try:
        where = _where(home)
        _remember_places(home, where)
        record = b"\n".join((str(LAYOUT).encode("ascii"), where, _repositories(home)))
        atomic_write(home.root / VERSION_FILE, record + b"\n")
    except OSError:
        pass


def _remember_places(home: Home, where: bytes) -> None:
    """Add the home's path (as named, and links resolved) and the one the record named before.

    Installs name the home by the path it had when they were made; after a move, what the
    move left behind (a hooks file unreadable that day, say) is this home's to take back
    later (`home.moved_here_from`), when the layout record names only the new place.
    """
    try:
        before = read_regular(home.root / VERSION_FILE).splitlines()[1:2]
    except OSError:
        before = []
    path = home.root / PLACES_FILE
    try:
        known = dict(place_line(line) for line in read_regular(path).splitlines())
    except OSError:
        known = {}
    places = dict(known)
    for place in [*before, where, place_bytes(home.root)]:
        if place and places.get(place) is None:  # the disk it is on, while it is there to ask
            try:  # a link's own (the folder holding it): its target may sit on another disk
                places[place] = path_of_place(place).lstat().st_dev
            except OSError:
                places[place] = None
    if places != known:
        lines = (
            p + (DEVICE_MARK + str(d).encode("ascii") if d is not None else b"") for p, d in places.items()
        )
        atomic_write(path, b"".join(line + b"\n" for line in lines))


def _agent_hooks(home: Home, agents: list[str], *, take_hooks_path: bool) -> tuple[list[str], bool]:
    """Each agent's hook and git setup brought up to date; and whether every one could be.

    One that cannot be written (a hooks folder a person made read-only, a folder where the
    hook goes, a locked .git/config) is one line, and the next command tries again: it
    stopped every writing command, and doctor itself, with an internal error. A person's own
    core.hooksPath (husky's) stays unless `take_hooks_path` (`doctor --fix`): an upgrade
    pointed it back at evolve's folder, and their hooks stopped running without a word.
    """
    from evolve.store.git import GitError
    from evolve.workspace.template import (
        hooks_path,
        hooks_problems,
        install_precommit_hook,
        persons_hooks_path,
    )

    notes: list[str] = []
    done = True
    for name in agents:
        path = home.agent_dir(name)
        problems = hooks_problems(path, home.root)
        configured = hooks_path(path)
        kept = not take_hooks_path and persons_hooks_path(configured)
        if kept:  # said once: the layout is recorded, and doctor names it
            problems = [p for p in problems if "core.hooksPath" not in p]
            notes.append(
                Unfinished(
                    f"{name}: core.hooksPath {configured} is yours: kept, so evolve's pre-commit "
                    "check does not run on commits; `evolve doctor --fix` points it at the "
                    "repository's hooks folder"
                )
            )
        if not problems:
            continue
        try:
            install_precommit_hook(path, home.root, keep_persons_path=kept)
        except (OSError, GitError) as exc:
            notes.append(
                Unfinished(f"{name}: git setup not brought up to date ({'; '.join(problems)}): {exc}")
            )
            done = False
        else:
            notes.append(f"{name}: git setup brought up to date ({'; '.join(problems)})")
    return notes, done


def _plugins(home: Home, agents: list[str]) -> tuple[list[str], bool]:
    """Each agent a plugin (the files it lacks, one commit); and whether none was busy."""
    from evolve.errors import Busy, UserError
    from evolve.integrations.plugin import add_plugin
    from evolve.store.git import GitError
    from evolve.workspace.agent import Agent

    notes: list[str] = []
    done = True
    for name in agents:
        try:
            notes += add_plugin(Agent(home, name))
        except Busy:  # a reflection or a person's git work: the next command tries again
            done = False
        except (UserError, GitError) as exc:  # GitError: a damaged index or lost objects (doctor names it)
            notes.append(Unfinished(f"{name}: plugin files not added ({exc})"))
            done = False
    return notes, done


def _claude_code_hooks(home: Home) -> list[str]:
    from evolve.integrations import claude_code
    from evolve.workspace import links

    notes = []
    with links.registry_lock(home, claude_code.HARNESS):
        installs = links.load_installs(home, claude_code.HARNESS)
        before = repr(installs)
        for record in installs:
            if claude_code.refresh_entries(home, record):
                notes.append(
                    f"{record.get('agent')}: Claude Code hook commands in "
                    f"{record.get('settings')} brought up to date"
                )
        if repr(installs) != before:  # what evolve wrote, its backup: the next refresh compares with it
            links.save_installs(home, claude_code.HARNESS, installs)
    return notes


def _codex_hooks(home: Home) -> list[str]:
    from evolve.integrations import codex
    from evolve.workspace import links

    with links.registry_lock(home, codex.HARNESS):
        installs = links.load_installs(home, codex.HARNESS)
        before = repr(installs)
        rewritten = codex.refresh_entries(home, installs)
        if repr(installs) != before:
            links.save_installs(home, codex.HARNESS, installs)
    return [f"codex: hook commands in {path} brought up to date; {codex.TRUST_HINT}" for path in rewritten]
