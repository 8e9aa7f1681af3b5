"""`evolve install claude-code` and `uninstall`: hook entries, skill links, transcript sources.

Project scope (the default) writes `<project>/.claude/settings.local.json`: the hook
commands hold this machine's absolute paths (python, home), so they belong in the personal,
uncommitted settings file, not in the team's `settings.json`; the lessons still stay with the
project, since its transcripts are the agent's sources. User scope writes
`$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude/settings.json`).

Every entry evolve adds is a separate matcher group whose command runs `evolve.hookmain`
with `--home` and `--agent`: that is how uninstall recognises exactly its own entries.
Each write keeps every other key and hook, backs the old file up under the home, and is
skipped when nothing changes (install is idempotent). evolve never writes CLAUDE.md or
Claude Code's auto-memory.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home
from evolve.integrations.sources import add_claude_sources, transcripts_glob
from evolve.names import check_name
from evolve.store.files import atomic_write
from evolve.workspace import links
from evolve.workspace.agent import Agent

# (Claude Code event, matcher or None, evolve's event name, timeout in seconds)
EVENTS: tuple[tuple[str, str | None, str, int], ...] = (
    ("SessionStart", "startup|resume|clear|compact", "session-start", 10),
    ("Stop", None, "stop", 5),
    ("SessionEnd", None, "session-end", 5),
    ("StopFailure", None, "stop-failure", 5),
    ("PostToolUse", "Skill", "post-tool-use", 5),
)
MARK = "evolve.hookmain"
# `-c` rather than `-m`: runpy alone costs about half a bare interpreter start.
# `-P`: the session's cwd (a user's project) never shadows a module.
HOOK_CODE = "import evolve.hookmain as h; h.run()"
SCOPES = ("project", "user")


def claude_dir() -> Path:
    """Claude Code's config folder: $CLAUDE_CONFIG_DIR or ~/.claude."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser().absolute()


@dataclass(frozen=True)
class Target:
    scope: str
    project: Path | None
    settings: Path
    skills_dir: Path
    worktree: Path | None = None
    exclude: Path | None = None


def git_exclude(project: Path) -> tuple[Path, Path] | None:
    """(work tree root, its info/exclude file) of the repository holding `project`."""
    for folder in (project, *project.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return folder, dot / "info" / "exclude"
        if dot.is_file():  # a linked worktree or submodule: `gitdir: <path>`
            text = dot.read_text(errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = folder / text[len("gitdir:") :].strip()
            common = gitdir / "commondir"
            if common.is_file():
                gitdir = gitdir / common.read_text().strip()
            return folder, gitdir.resolve() / "info" / "exclude"
    return None


def resolve_target(scope: str, project: str | os.PathLike[str] | None, must_exist: bool = True) -> Target:
    if scope not in SCOPES:
        raise UserError(f"unknown scope {scope!r}; use --scope project or --scope user")
    if scope == "user":
        base = claude_dir()
        return Target("user", None, base / "settings.json", base / "skills")
    folder = Path(project or Path.cwd()).expanduser().resolve()
    if must_exist and not folder.is_dir():
        raise UserError(f"{folder} is not a folder; pass the project with --project DIR")
    found = git_exclude(folder)
    return Target(
        "project",
        folder,
        folder / ".claude" / "settings.local.json",
        folder / ".claude" / "skills",
        *(found or (None, None)),
    )


# -- settings entries --------------------------------------------------------------------
def hook_command(python: str, home: Home, agent: str, event: str, linked: bool) -> str:
    argv = [python, "-P", "-c", HOOK_CODE, "claude-code", event, "--home", str(home.root), "--agent", agent]
    if linked and event == "session-start":
        argv.append("--linked")  # Claude Code lists the skills itself: inject the memo only
    return shlex.join(argv)


def owner(command: object) -> tuple[str | None, str | None] | None:
    """(home, agent) of one of evolve's hook commands; None for anyone else's."""
    if not isinstance(command, str) or MARK not in command:
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    found: dict[str, str] = {}
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag in ("--home", "--agent"):
            found.setdefault(flag, value)
    return found.get("--home"), found.get("--agent")


def _is_ours(hook: object, home: Home, agent: str) -> bool:
    return isinstance(hook, dict) and owner(hook.get("command")) == (str(home.root), agent)


def remove_entries(settings: dict, home: Home, agent: str) -> dict:
    """A copy without this agent's hook entries; containers only we emptied go too."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_is_ours(h, home, agent) for h in inner):
                rest = [h for h in inner if not _is_ours(h, home, agent)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            kept.append(group)
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del result["hooks"]
    return result


def add_entries(settings: dict, home: Home, agent: str, python: str, linked: bool) -> dict:
    """A copy with this agent's entries (replacing older ones of the same home and agent)."""
    result = remove_entries(settings, home, agent)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UserError('the settings file\'s "hooks" is not an object; fix it, then install again')
    for event, matcher, name, timeout in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise UserError(f"the settings file's hooks.{event} is not a list; fix it, then install again")
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [
            {
                "type": "command",
                "command": hook_command(python, home, agent, name, linked),
                "timeout": timeout,
            }
        ]
        groups.append(group)
    return result


# -- the settings file -------------------------------------------------------------------
def _read(path: Path) -> tuple[bytes | None, dict]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    try:
        doc = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc}); fix it, then run evolve again") from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: expected a JSON object; fix it, then run evolve again")
    return raw, doc


def _indent(raw: bytes | None) -> int | str:
    for line in (raw or b"").decode("utf-8", "replace").split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _backup(home: Home, path: Path, raw: bytes) -> Path:
    folder = home.root / "backups" / "claude-code"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    slug = "".join(c if c.isalnum() else "-" for c in str(path)).strip("-")[-120:]
    target = folder / f"{stamp}-{time.monotonic_ns() % 10**6:06d}-{slug}"
    target.write_bytes(raw)
    return target


def _write_settings(home: Home, record: dict, path: Path, raw: bytes | None, new: bytes | None) -> None:
    """Replace the file (None deletes it), backing up what was there."""
    if raw is not None:
        backup = _backup(home, path, raw)
        record.setdefault("backup", str(backup))  # the file as it was before the first install
    record.setdefault("settings_created", raw is None)
    if new is None:
        path.unlink(missing_ok=True)
        return
    links._make_dirs(path.parent, record)
    atomic_write(path, new)


def _dumps(doc: dict, raw: bytes | None) -> bytes:
    text = json.dumps(doc, indent=_indent(raw), ensure_ascii=False)
    return (text + "\n").encode("utf-8")


# -- install / uninstall -----------------------------------------------------------------
def _exclude_fields(target: Target) -> dict:
    where = None
    if target.worktree and target.project:
        where = str(target.project.relative_to(target.worktree)) if target.project != target.worktree else "."
    return {
        "worktree": str(target.worktree) if target.worktree else None,
        "exclude": str(target.exclude) if target.exclude else None,
        "exclude_where": where,
    }


def _find(installs: list[dict], agent: str, settings: Path) -> dict | None:
    return next((i for i in installs if i.get("agent") == agent and i.get("settings") == str(settings)), None)


def install(
    home: Home,
    agent_name: str,
    scope: str = "project",
    project: str | None = None,
    link: bool = True,
    python: str | None = None,
) -> dict:
    """Install (or refresh) the integration; returns what was done, for the command to print."""
    agent = Agent.open(agent_name, home)
    target = resolve_target(scope, project)
    python = python or str(Path(sys.executable).absolute())  # not resolved: a venv's python is a link
    pattern = transcripts_glob(claude_dir(), target.project)
    sources_commit = add_claude_sources(agent, [pattern])
    with links.registry_lock(home):
        installs = links.load_installs(home)
        record = _find(installs, agent.name, target.settings)
        if record is None:
            record = {
                "agent": agent.name,
                "scope": target.scope,
                "settings": str(target.settings),
                "project": str(target.project) if target.project else None,
            }
            peer = next((i for i in installs if i.get("settings") == record["settings"]), None)
            if peer is not None:  # the file as it was before evolve's first install, not ours
                record.update(backup=peer.get("backup"), settings_created=peer.get("settings_created"))
            installs.append(record)
        record.update(
            _exclude_fields(target), python=python, skills_dir=str(target.skills_dir) if link else None
        )
        raw, doc = _read(target.settings)
        new = add_entries(doc, home, agent.name, python, link)
        changed = new != doc or raw is None
        if changed:
            _write_settings(home, record, target.settings, raw, _dumps(new, raw))
        if not link:
            links.remove_links({"skills_dir": str(target.skills_dir)}, agent.skills_dir)
            record["links"] = []
        report = (
            links.sync_install(record, agent.skills_dir)
            if link
            else {"added": [], "removed": [], "conflicts": []}
        )
        if record.get("exclude") and not link:
            links.write_exclude(record)
        links.save_installs(home, installs)
    return {
        "agent": agent.name,
        "scope": target.scope,
        "settings": str(target.settings),
        "settings_changed": changed,
        "settings_created": changed and raw is None,
        "skills_dir": record["skills_dir"],
        "links": record.get("links", []),
        "conflicts": report["conflicts"],
        "exclude": record.get("exclude"),
        "sources": pattern,
        "sources_commit": sources_commit,
        "backup": record.get("backup"),
    }


def refresh_entries(home: Home, record: dict) -> bool:
    """Rewrite this install's hook entries in the current form, if any are there and differ.

    Entries a person removed stay removed (doctor says so); the caller holds the registry lock.
    """
    agent, settings, python = record.get("agent"), record.get("settings"), record.get("python")
    if not (isinstance(agent, str) and isinstance(settings, str) and isinstance(python, str)):
        return False
    path = Path(settings)
    try:
        raw, doc = _read(path)
    except UserError:
        return False  # not JSON any more: the person's to fix (doctor says so)
    if remove_entries(doc, home, agent) == doc:
        return False
    new = add_entries(doc, home, agent, python, linked=record.get("skills_dir") is not None)
    if _entries(new, home, agent) == _entries(doc, home, agent):
        return False
    _write_settings(home, record, path, raw, _dumps(new, raw))
    return True


def _entries(settings: dict, home: Home, agent: str) -> list:
    """The agent's hook entries, in order (to compare two versions of a settings file)."""
    found = settings.get("hooks")
    hooks: dict = found if isinstance(found, dict) else {}
    return [
        (event, group.get("matcher"), hook)
        for event, groups in hooks.items()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
        if _is_ours(hook, home, agent)
    ]


def uninstall(home: Home, agent_name: str, scope: str = "project", project: str | None = None) -> dict:
    """Remove exactly what install added; the agent's repository (and sources) stay as they are."""
    check_name(agent_name, "agent")
    target = resolve_target(scope, project, must_exist=False)  # a deleted project: forget it
    skills_dir = home.agent_dir(agent_name) / "skills"
    with links.registry_lock(home):
        installs = links.load_installs(home)
        record = _find(installs, agent_name, target.settings) or {
            "agent": agent_name,
            "settings": str(target.settings),
            **_exclude_fields(target),
        }
        raw, doc = _read(target.settings)
        cleaned = remove_entries(doc, home, agent_name)
        removed_entries = cleaned != doc
        if removed_entries:
            _write_settings(home, {}, target.settings, raw, _restored(record, cleaned, raw))
        gone = links.remove_links({"skills_dir": str(target.skills_dir)}, skills_dir)
        links.remove_exclude(record)
        links.remove_created_dirs(record)
        if record in installs:
            installs.remove(record)
        links.hand_over(record, installs)
        links.save_installs(home, installs)
    stopped = stop_spawned_watcher(home) if not installs else None
    return {
        "agent": agent_name,
        "scope": target.scope,
        "settings": str(target.settings),
        "entries_removed": removed_entries,
        "links_removed": gone,
        "watcher_stopped": stopped,
    }


def _restored(record: dict, cleaned: dict, raw: bytes | None) -> bytes | None:
    """The settings file's new bytes: the original ones when nothing else changed since."""
    backup = record.get("backup")
    if backup:
        try:
            before = Path(backup).read_bytes()
            if (json.loads(before) if before.strip() else {}) == cleaned:
                return before
        except (OSError, ValueError):
            pass
    if record.get("settings_created") and cleaned == {}:
        return None
    return _dumps(cleaned, raw)


def stop_spawned_watcher(home: Home) -> int | None:
    """Stop the watcher a SessionStart hook started, once no integration is left."""
    from evolve.watch import service

    marker = home.run_dir / "watch.spawned"
    try:
        spawned = int(marker.read_text().strip())
    except (OSError, ValueError):
        return None
    marker.unlink(missing_ok=True)
    current = service.state(home)
    if current.running and current.pid == spawned:
        return service.stop(home)
    return None
