"""`evolve install claude-code` and `uninstall`: hook entries, skill links, transcript sources.

Project scope (the default) writes `<project>/.claude/settings.local.json`: the hook
commands hold this machine's absolute paths (python, home), so they belong in the personal,
uncommitted settings file, not in the team's `settings.json`; the lessons still stay with the
project, since its transcripts are the agent's sources. User scope writes
`$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude/settings.json`).

Every entry evolve adds is a separate matcher group whose command runs `evolve.hookmain`
with `--home` and `--agent`: that is how uninstall recognises exactly its own entries.
Each write keeps every other key and hook, backs the old file up under the home, and is
skipped when nothing changes (install is idempotent). The project's transcripts join the
agent's `[sources]`, and uninstall takes them out again when install put them there.
evolve never writes CLAUDE.md or Claude Code's auto-memory.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home
from evolve.integrations import hookfile, installing, sources
from evolve.integrations.sources import add_sources, transcripts_glob
from evolve.names import check_name
from evolve.workspace import guards, links
from evolve.workspace.agent import Agent

HARNESS = "claude-code"
# (Claude Code event, matcher or None, evolve's event name, timeout in seconds)
EVENTS: tuple[tuple[str, str | None, str, int], ...] = (
    ("SessionStart", "startup|resume|clear|compact", "session-start", 10),
    ("Stop", None, "stop", 5),
    ("SessionEnd", None, "session-end", 5),
    ("StopFailure", None, "stop-failure", 5),
    ("PostToolUse", "Skill", "post-tool-use", 5),
    ("PreToolUse", guards.MATCHER, "pre-tool-use", 5),
)


def claude_dir() -> Path:
    """Claude Code's config folder: $CLAUDE_CONFIG_DIR or ~/.claude."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser().absolute()


@dataclass(frozen=True)
class Target:
    scope: str
    project: Path | None
    settings: Path
    skills_dir: Path


def resolve_target(scope: str, project: str | os.PathLike[str] | None, must_exist: bool = True) -> Target:
    folder = installing.project_folder(scope, project, must_exist)
    if folder is None:
        base = claude_dir()
        return Target("user", None, base / "settings.json", base / "skills")
    return Target(
        "project", folder, folder / ".claude" / "settings.local.json", folder / ".claude" / "skills"
    )


# -- settings entries --------------------------------------------------------------------
def hook_command(python: str, home: Home, agent: str, event: str, linked: bool) -> str:
    extra = ["--agent", agent]
    if event == "pre-tool-use":  # no Python at all while the agent has no guard
        files = shlex.quote(str(home.agent_dir(agent) / guards.FILE))
        return hookfile.guard_command(python, HARNESS, home, files, *extra)
    if linked and event == "session-start":
        extra.append("--linked")  # Claude Code lists the skills itself: inject the memo only
    return hookfile.hook_command(python, HARNESS, event, home, *extra)


def _ours(home: Home, agent: str) -> hookfile.Ours:
    """Recognises this agent's entries (of this home, or of the place it was moved from)."""
    return lambda hook: isinstance(hook, dict) and hookfile.names_home(hook.get("command"), home, agent)


def remove_entries(settings: dict, home: Home, agent: str) -> dict:
    """A copy without this agent's hook entries; containers only we emptied go too."""
    return hookfile.remove_entries(settings, _ours(home, agent))


def wanted(home: Home, agent: str, python: str, linked: bool) -> list[list]:
    """The agent's entries as evolve writes them today ([event, matcher, hook])."""
    return hookfile.wanted_entries(
        [
            (event, matcher, hook_command(python, home, agent, name, linked), timeout)
            for event, matcher, name, timeout in EVENTS
        ]
    )


def left_by_hand(home: Home, record: dict, settings: dict) -> dict:
    """{event: "changed" or "removed"} of this install's entries a person edited (doctor names them)."""
    agent, python = str(record.get("agent")), str(record.get("python"))
    want = wanted(home, agent, python, record.get("skills_dir") is not None)
    return hookfile.by_hand(settings, _ours(home, agent), want, record.get("entries"), {python})


# -- install / uninstall -----------------------------------------------------------------
def _find(installs: list[dict], agent: str, settings: Path) -> dict | None:
    return next((i for i in installs if i.get("agent") == agent and i.get("settings") == str(settings)), None)


def install(
    home: Home,
    agent_name: str,
    scope: str = "project",
    project: str | None = None,
    link: bool = True,
    python: str | None = None,
    force: bool = False,
) -> dict:
    """Install (or refresh) the integration; returns what was done, for the command to print.

    An entry the person changed or removed stays as they left it (`left_by_hand`) unless `force`.
    """
    agent = Agent.open(agent_name, home)
    target = resolve_target(scope, project)
    python = python or str(Path(sys.executable).absolute())  # not resolved: a venv's python is a link
    pattern = transcripts_glob(claude_dir(), target.project)
    added = add_sources(agent, "claude_code", [pattern])
    with links.registry_lock(home, HARNESS):
        installs = links.load_installs(home, HARNESS)
        record = _find(installs, agent.name, target.settings)
        if record is None:
            record = {
                "agent": agent.name,
                "scope": target.scope,
                "settings": str(target.settings),
                "project": str(target.project) if target.project else None,
            }
            record.update(installing.first_backup(installs, record["settings"]))
            installs.append(record)
        pythons = {python, str(record.get("python"))}  # an older record's entries name the one before
        record.update(
            installing.exclude_fields(target.project),
            python=python,
            skills_dir=str(target.skills_dir) if link else None,
        )
        installing.mark_sources(record, pattern, added)
        raw, doc = hookfile.read(target.settings)
        want = wanted(home, agent.name, python, link)
        ours = _ours(home, agent.name)
        written = record.get("entries") if raw is not None else None  # a file deleted whole: made anew
        new, left = hookfile.refresh(doc, ours, want, written, pythons, home, force)
        record["entries"] = want
        changed = new != doc or raw is None
        if changed:
            hookfile.write(home, HARNESS, record, target.settings, raw, hookfile.dumps(new, raw))
        report = installing.place_links(record, agent.skills_dir, target.skills_dir, link)
        links.save_installs(home, HARNESS, installs)
    result = installing.install_report(record, changed, report, pattern, added.where if added else None)
    created = changed and raw is None  # "created:", not "updated:"
    return {**result, "settings_created": created, "by_hand": left}


def refresh_entries(home: Home, record: dict) -> bool:
    """Rewrite this install's hook entries in the current form, if any are there and differ.

    Entries a person changed or removed stay as they are (doctor says so); the record learns
    what evolve writes now. The caller holds the registry lock and saves the record.
    """
    agent, settings, python = record.get("agent"), record.get("settings"), record.get("python")
    if not (isinstance(agent, str) and isinstance(settings, str) and isinstance(python, str)):
        return False
    path = Path(settings)
    try:
        raw, doc = hookfile.read(path)
    except UserError:
        return False  # not JSON any more: the person's to fix (doctor says so)
    ours = _ours(home, agent)
    if not hookfile.entries_of(doc, ours) and not hookfile.wrote_here(record.get("entries"), ours):
        return False  # an older install whose entries the person removed, or a copy's original's
    want = wanted(home, agent, python, linked=record.get("skills_dir") is not None)
    new, _left = hookfile.refresh(doc, ours, want, record.get("entries"), {python}, home, force=False)
    changed = hookfile.entries_of(new, ours) != hookfile.entries_of(doc, ours)
    if changed:
        try:
            hookfile.write(home, HARNESS, record, path, raw, hookfile.dumps(new, raw))
        except UserError:
            return False  # over the bound with them: left as it was, and as the record says
    record["entries"] = want
    return changed


def uninstall(
    home: Home,
    agent_name: str,
    scope: str = "project",
    project: str | None = None,
    *,
    sources_too: bool = True,
) -> dict:
    """Remove exactly what install added, the `[sources]` glob too; what the person had there stays.

    `sources_too` is off when the agent itself goes (`evolve remove`): its repository is archived as it is.
    """
    check_name(agent_name, "agent")
    target = resolve_target(scope, project, must_exist=False)  # a deleted project: forget it
    skills_dir = home.agent_dir(agent_name) / "skills"
    with links.registry_lock(home, HARNESS):
        installs = links.load_installs(home, HARNESS)
        record = _find(installs, agent_name, target.settings) or {
            "agent": agent_name,
            "settings": str(target.settings),
            **installing.exclude_fields(target.project),
        }
        raw, doc = hookfile.read(target.settings)
        cleaned = remove_entries(doc, home, agent_name)
        removed_entries = cleaned != doc
        if removed_entries:
            hookfile.write(home, HARNESS, {}, target.settings, raw, hookfile.restored(record, cleaned, raw))
        gone = installing.forget(record, installs, target.skills_dir, skills_dir)
        release = installing.release_sources(record, installs)
        links.save_installs(home, HARNESS, installs)
    stopped = installing.stop_spawned_watcher(home)
    pattern = record.get("sources") or transcripts_glob(claude_dir(), target.project)
    return {
        "agent": agent_name,
        "scope": target.scope,
        "settings": str(target.settings),
        "entries_removed": removed_entries,
        "links_removed": gone,
        "watcher_stopped": stopped,
        **(sources.forget(home, record, "claude_code", pattern, release) if sources_too else {}),
    }
