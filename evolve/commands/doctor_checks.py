"""The checks of `evolve doctor` beyond one agent's files: installs, git, the environment.

Each check calls `add(where, problem, level)` with a problem that ends in its remedy, and
`fix_leftovers` is what `evolve doctor --fix` does about the leftovers it reports.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

from evolve.config import Config, ModelConfig
from evolve.home import Home
from evolve.store.diagnosis import (
    damage_remedy,
    is_own_repository,
    no_repository_in,
    owned_by_another,
    refused_as_others,
    unreadable_settings,
)
from evolve.store.git import GitError, broken_branch_remedy, git_text
from evolve.store.head import BRANCH, broken_branch, shared_repository
from evolve.store.locks import is_locked
from evolve.store.repo import LOCK
from evolve.workspace import links
from evolve.workspace.template import hooks_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from evolve.watch.service import WatcherState
    from evolve.workspace.agent import Agent

Add = Callable[..., None]
STALE_S = 3600.0  # a staging folder of `evolve init` older than this has no live owner


def installs(home: Home, agents: list[str], add: Add) -> None:
    """Installs whose agent, interpreter or hook entries have gone away (every harness)."""
    import json

    from evolve.errors import UserError
    from evolve.integrations import hookfile

    for harness in links.HARNESSES:
        try:
            records = links.load_installs(home, harness)
        except links.UnreadableInstalls as exc:
            add(str(links.registry_file(home, harness)), str(exc).split(" cannot be read ", 1)[-1])
            continue
        stale_named: set[str] = set()
        by_hand_named: set[str] = set()
        for record in records:
            place = record.get("folder") or record.get("settings")  # Codex: its folder; Claude Code: its file
            where = f"{harness} install of {record.get('agent')} ({place})"
            if record.get("agent") not in agents:
                add(
                    where,
                    f"agent {record.get('agent')!r} no longer exists, so its hooks fail in every session "
                    f"and its skill links dangle; run `{uninstall_command(harness, record)}`",
                )
                continue
            python = record.get("python") or ""
            if python and not Path(python).exists():
                add(
                    where,
                    f"its hooks run {python}, which no longer exists; run "
                    f"`{uninstall_command(harness, record, 'install')}` again from the environment evolve "
                    "is installed in",
                )
            try:
                raw, settings = hookfile.read(Path(record.get("settings") or ""))
            except (OSError, UserError) as exc:  # not JSON, a FIFO: the person's file, left as it is
                why = (
                    f"the hooks file cannot be read ({exc.strerror})"
                    if isinstance(exc, OSError)
                    else str(exc)
                )
                add(where, why, "warning")
                continue
            if raw is None:
                again = uninstall_command(harness, record, "install")
                add(where, f"the hooks file is missing; run `{again}` again", "warning")
                continue
            stale = moved_from(settings, home, harness, record)
            if stale and record["settings"] not in stale_named:  # Codex: one file for its installs
                stale_named.add(record["settings"])
                add(
                    record["settings"],
                    f"{HARNESS_NAMES[harness]}'s hooks name {stale}, where this home's agents are not: run "
                    f"`evolve doctor --fix` (it points them and the skill links at {home.root})",
                )
            unmounted = None if stale else unmounted_from(settings, home, harness, record)
            if unmounted and record["settings"] not in stale_named:
                stale_named.add(record["settings"])
                add(
                    record["settings"],
                    f"{HARNESS_NAMES[harness]}'s hooks name {unmounted}, where this home was, on a disk not "
                    "mounted now: mount it and run `evolve doctor --fix` (hooks of a home moved from there "
                    "follow it; a copy's original there keeps its own), or remove them by hand",
                    "warning",
                )
            if "entries" in record:  # what evolve wrote is known: each entry a person changed, named
                if record["settings"] not in by_hand_named:  # Codex: one file for its installs
                    by_hand_named.add(record["settings"])
                    for event, why in _integration(harness).left_by_hand(home, record, settings).items():
                        add(
                            where,
                            f"evolve's {event} hook was {hookfile.said(why)}: left as it is; "
                            f"`{force_install_command(harness, record)}` puts evolve's back",
                            "warning",
                        )
            elif "evolve.hookmain" not in json.dumps(settings.get("hooks", {})):
                add(
                    where,
                    f"evolve's hook entries were removed from {record.get('settings')}; run "
                    f"`{force_install_command(harness, record)}` or `{uninstall_command(harness, record)}`",
                    "warning",
                )


HARNESS_NAMES = {"claude-code": "Claude Code", "codex": "Codex"}


def _integration(harness: str):
    """The module that installs into `harness`."""
    from evolve.integrations import claude_code, codex

    return codex if harness == "codex" else claude_code


def moved_from(settings: dict, home: Home, harness: str, record: dict) -> str | None:
    """The gone home an install's hook entries still name (the home was moved), or None."""
    from evolve.integrations import hookfile

    agent = record.get("agent") if harness == "claude-code" else None  # Codex's entries name no agent
    for _event, _matcher, hook in hookfile.entries_of(
        settings,
        lambda hook: isinstance(hook, dict) and hookfile.names_home(hook.get("command"), home, agent),
    ):
        named = (hookfile.owner(hook["command"]) or (None, None))[0]
        if named != str(home.root):
            return named
    return None


def unmounted_from(settings: dict, home: Home, harness: str, record: dict) -> str | None:
    """A place this home was at, on a disk not mounted now, that the install's hook entries name."""
    from evolve.home import on_a_disk_not_mounted
    from evolve.integrations import hookfile

    agent = record.get("agent") if harness == "claude-code" else None  # Codex's entries name no agent
    for _event, _matcher, hook in hookfile.entries_of(settings, lambda hook: isinstance(hook, dict)):
        named, named_agent = hookfile.owner(hook.get("command")) or (None, None)
        if named and named_agent == agent and named != str(home.root):
            if on_a_disk_not_mounted(home.root, named):
                return named
    return None


def uninstall_command(harness: str, record: dict, verb: str = "uninstall") -> str:
    """The `evolve uninstall` that removes exactly this install."""
    project = str(record.get("project"))
    where = "--scope user" if record.get("scope") == "user" else f"--project {shlex.quote(project)}"
    return f"evolve {verb} {harness} --agent {record.get('agent')} {where}"


def force_install_command(harness: str, record: dict) -> str:
    """The `evolve install … --force` that puts evolve's entries of exactly this install back."""
    return f"{uninstall_command(harness, record, 'install')} --force"


def global_hooks_path(home: Home, agents: list[str], add: Add) -> None:
    """A global core.hooksPath skips every repository's own hooks unless it sets its own."""
    configured = git_text(home.root, "config", "--global", "core.hooksPath", check=False)
    if not configured:
        return
    exposed = [
        name
        for name in agents
        if git_text(home.agent_dir(name), "config", "--local", "core.hooksPath", check=False)
        != hooks_folder(home.agent_dir(name))
    ]
    if exposed:
        add(
            "git: core.hooksPath",
            f"your global core.hooksPath ({configured}) bypasses the pre-commit hook of "
            f"{', '.join(exposed)}, so a broken skill can be committed; run `evolve doctor --fix` "
            "(it points each agent repository's own core.hooksPath at its hooks folder)",
        )


def guards(name: str, agent: Agent, add: Add) -> None:
    """guards.toml: each guard the PreToolUse hook leaves out (it fails open), and one broken file."""
    from evolve.errors import UserError
    from evolve.workspace import guarding

    try:
        text = guarding.text_of(agent)
    except UserError as exc:
        add(f"{name}: guards.toml", str(exc))
        return
    from evolve.workspace.guards import problems

    for problem in problems(text):
        add(f"{name}: guards.toml", problem.removeprefix("guards.toml "))


def repository(name: str, repo: Path, add: Add) -> bool:
    """Whether the agent's folder is its own git repository; if not, one finding saying so.

    An empty or damaged `.git` (or none) is not a repository, and git asked there answers
    for whatever repository encloses the folder, if any: no git check may run for it then.
    """
    if is_own_repository(repo):
        shared = shared_repository(repo)  # another folder's .git: each takes the other's files for edits
        if shared is not None:
            add(f"{name}: .git", shared)
            return False
        if broken_branch(repo / ".git") or _names_no_commit(repo):  # every git check would fail
            add(f"{name}: .git", broken_branch_remedy(repo, BRANCH))
            return False
        return True
    if refused_as_others(repo):  # sound, but owned by another user: git refuses it
        add(f"{name}: .git", owned_by_another(repo))
        return False
    add(f"{name}: .git", unreadable_settings(repo) or no_repository_in(repo))  # a bad line: no lost .git
    return False


def _names_no_commit(repo: Path) -> bool:
    """Whether the branch file names a tag, a tree or a blob: git reads through a tag, commits on none."""
    kind = git_text(repo, "cat-file", "-t", f"refs/heads/{BRANCH}", check=False)
    return kind not in ("", "commit")


def git_failure(name: str, repo: Path, exc: GitError, add: Add) -> None:
    """A repository git finds but cannot read (a damaged index, lost objects): one error."""
    add(f"{name}: .git", damage_remedy(repo, exc))


def symlinks(name: str, repo: Path, add: Add) -> None:
    """Links as memo.md or among a skill's files: what they point at would be read (and sent).

    A linked skill folder or SKILL.md is the skill's own problem (`evolve skills` says it).
    """
    found = [repo / "memo.md"] if (repo / "memo.md").is_symlink() else []
    skills = repo / "skills"
    if skills.is_dir():
        for root, dirs, files in os.walk(skills):
            depth = len(Path(root).relative_to(skills).parts)
            for entry in [*dirs, *files]:
                own = depth == 0 or (depth == 1 and entry == "SKILL.md")  # reported as the skill's
                if not own and Path(root, entry).is_symlink():
                    found.append(Path(root, entry))
            dirs[:] = [d for d in dirs if not Path(root, d).is_symlink()]
    for path in found:
        skill = path.parent != repo and " (its skill is not linked for the harnesses until then)"
        add(
            f"{name}: {path.relative_to(repo)}",
            f"is a symlink to {path.readlink()}: evolve would read what it points at{skill or ''}; "
            "replace it with a real file or folder (e.g. `cp -rL` the target over it)",
        )


def leftovers(home: Home, agents: list[str]) -> list[Path]:
    """The temp files and staging folders of evolve processes that no longer live, and stale git ref locks."""
    found: list[Path] = []
    now = time.time()
    gits = live_git_folders()
    try:
        staging = [p for p in home.agents_dir.iterdir() if p.name.startswith(".new-")]
    except OSError:
        staging = []
    found += [p for p in staging if now - p.stat().st_mtime > STALE_S]
    for name in agents:
        repo = home.agent_dir(name)
        if is_locked(repo / ".git" / LOCK):  # a writer is at work: its files are not leftovers
            continue
        found += sorted(p for p in (repo / ".git").glob("evolve-idx-*") if p.is_dir())
        for root, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git"]
            found += [Path(root, f) for f in files if f.endswith(".evolve-tmp")]
        found += stale_ref_locks(repo / ".git", now, gits)
    return found


def stale_ref_locks(git_dir: Path, now: float, gits: list[str]) -> list[Path]:
    """HEAD's, packed-refs' and the refs' lock files older than STALE_S: a killed git's.

    git holds these for the moment of a ref's move, so an hour-old one has no live owner,
    and it stops every move of that ref, evolve's and the person's. index.lock is not among
    them: a person's `git commit` holds it while their editor is open. A symlinked agent
    folder, `.git`, refs folder or lock is never followed: `--fix` deletes only in the home.
    `gits`: the folders live gits run in (`live_git_folders`); none of a repo's locks is
    stale while one of them runs in it.
    """
    repo = git_dir.parent
    if repo.is_symlink() or git_dir.is_symlink() or not git_dir.is_dir():
        return []
    top = os.path.realpath(repo)
    if any(cwd == top or cwd.startswith(top + os.sep) for cwd in gits):
        return []
    candidates = [git_dir / "HEAD.lock", git_dir / "packed-refs.lock"]
    refs = git_dir / "refs"
    if not refs.is_symlink():
        for root, _dirs, files in os.walk(refs):  # a symlinked folder is listed, never entered
            candidates += [Path(root, f) for f in files if f.endswith(".lock")]
    found = []
    for path in sorted(candidates):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and now - info.st_mtime > STALE_S:
            found.append(path)
    return found


def live_git_folders() -> list[str]:
    """The folders live gits run in (Linux's /proc; elsewhere none, and the hour alone decides).

    A lock's mtime is its creation: a reference-transaction hook that waits, or a person's
    `git update-ref --stdin` left prepared, holds an hour-old lock it will still commit.
    git runs in the work tree's top folder, and while its hooks run it waits there.
    """
    try:
        pids = [entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    except OSError:
        return []
    folders = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as comm:
                if not comm.read().startswith("git"):
                    continue
            folders.append(str(Path(f"/proc/{pid}/cwd").readlink()))
        except OSError:  # ended meanwhile, or another user's
            continue
    return folders


def _shown(path: Path | str) -> str:
    """A path on one line of valid UTF-8: a file's name may hold a newline or undecodable bytes."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _is_git_lock(path: Path) -> bool:
    return path.name.endswith(".lock") and ".git" in path.parts


def report_leftovers(home: Home, found: list[Path], add: Add) -> None:
    for path in found:
        if _is_git_lock(path):  # it stops work, so it is an error
            problem = (
                "a git lock left by a git that was killed over an hour ago: no commit can move that ref, "
                "evolve's or yours; `evolve doctor --fix` deletes it"
            )
            add(_shown(path.relative_to(home.root)), problem, "error")
        else:
            problem = "left behind by an evolve process that was killed; `evolve doctor --fix` deletes it"
            add(_shown(path.relative_to(home.root)), problem, "warning")


def fix_leftovers(found: list[Path]) -> list[str]:
    """Delete the leftovers `leftovers` found; one note per path."""
    notes = []
    for path in found:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        killed = "git" if _is_git_lock(path) else "evolve process"
        notes.append(f"{_shown(path)}: deleted (left behind by a killed {killed})")
    return notes


def environment(home: Home, agents: list[str], configs: dict[str, Config], add: Add) -> None:
    """What makes evolve quietly do nothing: no transcripts, no watcher, no `claude` to call."""
    from evolve.watch import service

    watcher = service.state(home)
    follows = service.published(home, watcher.pid) if watcher.running else None
    registered = set()
    for harness in links.HARNESSES:
        try:
            registered |= {record.get("agent") for record in links.load_installs(home, harness)}
        except links.UnreadableInstalls:  # reported by `installs`
            continue
    for name in agents:
        config = configs.get(name)
        if config is None:
            continue
        api_transcripts = home.root / "transcripts" / name
        sources = config.sources
        if not (sources.claude_code or sources.codex or sources.generic or name in registered) and not (
            api_transcripts.is_dir() and any(api_transcripts.iterdir())
        ):
            local = home.local_config(name)  # a synced agent's [sources] are this machine's, there
            where = local if local.exists() else home.agent_dir(name) / "agent.toml"
            add(
                f"{name}: {where.name}",
                f"no transcripts reach this agent, so it never learns; add globs under [sources] in {where}, "
                f"run `evolve install claude-code --agent {name}` or `evolve install codex --agent {name}`, "
                "or record runs with the Python API",
                "hint",
            )
        model(name, config.model, watcher, follows, add)
    if agents and not watcher.running:
        add(
            "watcher",
            "not running: transcripts are observed and reflected only when you run a command; "
            "start it with `evolve watch --detach` (a Claude Code session starts it too)",
            "hint",
        )


def model(name: str, chosen: ModelConfig, watcher: WatcherState, follows: dict | None, add: Add) -> None:
    """Whether the agent's backend can reflect where it will: in the running watcher.

    The watcher's own variables and PATH count, as it published them; without a watcher,
    this shell's (what a watcher started from here would have).
    """
    from evolve.reflect import keys
    from evolve.watch.settings import cannot_reflect

    if follows is not None:
        problem = cannot_reflect(follows, name, chosen)
        if problem:
            add(
                f"{name}: model",
                f"the watcher (pid {watcher.pid}) cannot reflect it: {problem} (a watcher has only the "
                "variables and PATH it was started with: restart it from a shell that has them, "
                "`evolve watch --stop && evolve watch --detach`)",
            )
        return
    problem = keys.problem(chosen)
    if problem:
        add(f"{name}: model", f"reflections started from this shell fail: {problem}")
