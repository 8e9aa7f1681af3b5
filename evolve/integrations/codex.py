"""`evolve install codex` and `uninstall`: hooks in the person's Codex config, skill links, sources.

Hooks go to `$CODEX_HOME/hooks.json` (default `~/.codex/hooks.json`), never to the
project: Codex has no personal project-level hook file, and a project's `.codex/` is what
a team commits (and loads only for trusted projects), while the command holds this
machine's paths. The command is one frozen form for every project and agent (evolve's
interpreter, isolated, the home: `… -I -c 'import evolve.hookmain as h; h.run()' codex
EVENT --home H`); the hook finds the agents from the session's folder in
`<home>/integrations/codex.json`. Codex runs a hook only once the person trusted its exact
definition (by hash), so installing another project or agent never changes the command
and never silently switches learning off; the install (and an upgrade that rewrites the
command, evolve.integrations.upgrade) says when the hooks wait for trust.
The entries leave hooks.json with the last install of this home that uses the file.

Skills: one symlink per skill in `<project>/.agents/skills/` (listed in the project's
`.git/info/exclude`) or, user scope, `~/.agents/skills/`. Sources: `[sources] codex` gains
the project folder (user scope: `"*"`). Nothing is committed into the person's project and
AGENTS.md is never written.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home
from evolve.integrations import hookfile, installing, sources
from evolve.integrations.sources import add_sources
from evolve.names import check_name
from evolve.store import codex_rollouts
from evolve.workspace import guards, links
from evolve.workspace.agent import Agent

HARNESS = "codex"
# (Codex event, matcher or None, evolve's event name, timeout in seconds)
EVENTS: tuple[tuple[str, str | None, str, int], ...] = (
    ("SessionStart", "startup|resume|clear|compact", "session-start", 10),
    ("Stop", None, "stop", 5),
    ("PreToolUse", guards.MATCHER, "pre-tool-use", 5),
)
TRUST_HINT = (
    "Codex runs a new or changed hook only after you trust it: start `codex` in the project "
    "and approve evolve's hooks in /hooks"
)


@dataclass(frozen=True)
class Target:
    scope: str
    project: Path | None
    folder: str  # the `[sources] codex` rule: the resolved project folder, or "*"
    skills_dir: Path


def hooks_file() -> Path:
    return Path(codex_rollouts.codex_home()) / "hooks.json"


def resolve_target(scope: str, project: str | os.PathLike[str] | None, must_exist: bool = True) -> Target:
    folder = installing.project_folder(scope, project, must_exist)
    if folder is None:
        return Target("user", None, codex_rollouts.ANY, Path.home() / ".agents" / "skills")
    return Target("project", folder, str(folder), folder / ".agents" / "skills")


def hook_command(python: str, home: Home, event: str) -> str:
    """The same for every project and agent of this home: Codex's trust of it never lapses."""
    if event == "pre-tool-use":  # no Python at all while no agent of the home has a guard
        files = shlex.quote(f"{home.agents_dir}{os.sep}") + "*/" + guards.FILE
        return hookfile.guard_command(python, HARNESS, home, files)
    return hookfile.hook_command(python, HARNESS, event, home)


def _ours(home: Home) -> hookfile.Ours:
    """Recognises this home's entries (they name no agent), or those of the place it was moved from."""
    return lambda hook: isinstance(hook, dict) and hookfile.names_home(hook.get("command"), home, None)


def _entries(home: Home, python: str) -> list[hookfile.Entry]:
    return [
        (event, matcher, hook_command(python, home, name), timeout)
        for event, matcher, name, timeout in EVENTS
    ]


def _written(installs: list[dict], settings: str) -> list | None:
    """What evolve last wrote into a hooks file (every install of the file records it), or None."""
    return next((i["entries"] for i in installs if i.get("settings") == settings and "entries" in i), None)


def left_by_hand(home: Home, record: dict, settings: dict) -> dict:
    """{event: "changed" or "removed"} of this home's entries a person edited (doctor names them)."""
    written = record.get("entries")
    python = _python_written(written) or str(record.get("python"))
    want = hookfile.wanted_entries(_entries(home, python))
    return hookfile.by_hand(settings, _ours(home), want, written, {python})


def _python_written(written: list | None) -> str | None:
    """The interpreter of the entries evolve last wrote (they stay on it until an install)."""
    try:
        return hookfile.python_of(written[0][2]["command"]) if written else None
    except (ValueError, LookupError, TypeError):
        return None


def _find(installs: list[dict], agent: str, folder: str, settings: Path) -> dict | None:
    """The record of this agent and folder for this hooks file (another CODEX_HOME: another record)."""
    return next(
        (
            i
            for i in installs
            if i.get("agent") == agent and i.get("folder") == folder and i.get("settings") == str(settings)
        ),
        None,
    )


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
    settings = hooks_file()
    added = add_sources(agent, "codex", [target.folder])
    now = time.time()
    with links.registry_lock(home, HARNESS):
        installs = links.load_installs(home, HARNESS)
        record = _find(installs, agent.name, target.folder, settings)
        if record is None:
            record = {
                "harness": HARNESS,
                "agent": agent.name,
                "scope": target.scope,
                "folder": target.folder,
                "project": str(target.project) if target.project else None,
                "settings": str(settings),
                "installed_at": now,
                "hook_seen_at": None,
            }
            record.update(installing.first_backup(installs, record["settings"]))
            installs.append(record)
        record.update(
            installing.exclude_fields(target.project),
            python=python,
            linked=link,
            skills_dir=str(target.skills_dir) if link else None,
        )
        installing.mark_sources(record, target.folder, added)
        raw, doc = hookfile.read(settings)
        peers = [peer for peer in installs if peer.get("settings") == str(settings)]
        pythons = {python, *(str(peer.get("python")) for peer in peers)}
        want = hookfile.wanted_entries(_entries(home, python))
        written = _written(installs, str(settings)) if raw is not None else None  # deleted whole: made anew
        new, left = hookfile.refresh(doc, _ours(home), want, written, pythons, home, force)
        changed = new != doc or raw is None
        if changed:
            hookfile.write(home, HARNESS, record, settings, raw, hookfile.dumps(new, raw))
        for peer in peers:
            peer["entries"] = want
            if changed:  # a new or changed command waits for the person's trust again
                peer.update(hooks_changed_at=now, hook_seen_at=None)
        report = installing.place_links(record, agent.skills_dir, target.skills_dir, link)
        links.save_installs(home, HARNESS, installs)
    result = installing.install_report(record, changed, report, target.folder, added.where if added else None)
    created = changed and raw is None  # "created:", as for Claude Code, not "updated:"
    return {
        **result,
        "settings_created": created,
        "trusted": record.get("hook_seen_at") is not None,
        "by_hand": left,
        "commands": {event: command for event, _matcher, command, _timeout in _entries(home, python)},
    }


def refresh_entries(home: Home, installs: list[dict]) -> list[str]:
    """Rewrite this home's entries in each hooks file of `installs` in the current form.

    The interpreter stays the one evolve last wrote; entries a person changed or removed
    stay as they are (doctor says so). Codex trusts the exact command, so each install of a
    rewritten file waits for the person's trust again (`evolve status` says so). Returns the
    files rewritten; the caller holds the registry lock and saves `installs`.
    """
    rewritten = []
    for settings in dict.fromkeys(i["settings"] for i in installs if isinstance(i.get("settings"), str)):
        path = Path(settings)
        try:
            raw, doc = hookfile.read(path)
        except UserError:
            continue  # not JSON any more: the person's to fix (doctor says so)
        present = hookfile.entries_of(doc, _ours(home))
        written = _written(installs, settings)
        peers = [i for i in installs if i.get("settings") == settings]
        if not present and not hookfile.wrote_here(written, _ours(home)):
            continue  # an older install whose entries the person removed, or a copy's original's
        python = _python_written(written) or str(peers[0].get("python"))
        want = hookfile.wanted_entries(_entries(home, python))
        new, _left = hookfile.refresh(doc, _ours(home), want, written, {python}, home, force=False)
        if hookfile.entries_of(new, _ours(home)) != present:
            try:
                hookfile.write(home, HARNESS, peers[0], path, raw, hookfile.dumps(new, raw))
            except UserError:
                continue  # over the bound with them: left as it was, and as the records say
            for peer in peers:
                peer.update(hooks_changed_at=time.time(), hook_seen_at=None)
            rewritten.append(settings)
        for peer in peers:
            peer["entries"] = want
    return rewritten


def uninstall(
    home: Home,
    agent_name: str,
    scope: str = "project",
    project: str | None = None,
    *,
    sources_too: bool = True,
) -> dict:
    """Remove exactly what install added, the `[sources] codex` folder too; what the person had stays.

    The hook entries go with the file's last install. `sources_too` is off when the agent itself
    goes (`evolve remove`): its repository is archived as it is.
    """
    check_name(agent_name, "agent")
    target = resolve_target(scope, project, must_exist=False)  # a deleted project: forget it
    skills_dir = home.agent_dir(agent_name) / "skills"
    with links.registry_lock(home, HARNESS):
        installs = links.load_installs(home, HARNESS)
        record = _find(installs, agent_name, target.folder, hooks_file()) or {
            "harness": HARNESS,
            "agent": agent_name,
            "settings": str(hooks_file()),
            **installing.exclude_fields(target.project),
        }
        peers = [peer for peer in installs if peer is not record]
        settings = Path(record["settings"])
        removed_entries = False
        if not any(peer.get("settings") == str(settings) for peer in peers):
            raw, doc = hookfile.read(settings)
            cleaned = hookfile.remove_entries(doc, _ours(home))
            removed_entries = cleaned != doc
            if removed_entries:
                hookfile.write(home, HARNESS, {}, settings, raw, hookfile.restored(record, cleaned, raw))
        gone = installing.forget(record, installs, target.skills_dir, skills_dir)
        release = installing.release_sources(record, installs)
        links.save_installs(home, HARNESS, installs)
    stopped = installing.stop_spawned_watcher(home)
    pattern = record.get("sources") or target.folder
    return {
        "agent": agent_name,
        "scope": target.scope,
        "settings": str(settings),
        "entries_removed": removed_entries,
        "links_removed": gone,
        "watcher_stopped": stopped,
        **(sources.forget(home, record, "codex", pattern, release) if sources_too else {}),
    }


# -- is it working? --------------------------------------------------------------------------
WORKING = "working"
WAITING = "installed, waiting for trust"
IDLE = "installed, no Codex session in this folder since"


def install_states(home: Home) -> list[dict]:
    """Each Codex install and whether its hooks run (drain the spool first: its records say).

    "working" once a hook record from it arrived after the hooks last changed; "waiting for
    trust" when Codex wrote a rollout for the folder since then but no record came (Codex
    skips an untrusted hook in silence); otherwise no session has happened there yet.
    """
    states = []
    for install in links.load_installs(home, HARNESS):
        folder = install.get("folder") or ""
        state = WORKING if install.get("hook_seen_at") is not None else IDLE
        if state == IDLE:
            since = max(install.get("installed_at") or 0, install.get("hooks_changed_at") or 0)
            codex_home = str(Path(install.get("settings") or hooks_file()).parent)  # the install's own
            rule = [codex_rollouts.rule_folder(folder)] if folder else []
            if any(codex_rollouts.belongs(path, rule) for path in codex_rollouts.rollouts(codex_home, since)):
                state = WAITING
        states.append(
            {
                "harness": HARNESS,
                "agent": install.get("agent"),
                "scope": install.get("scope"),
                "folder": folder,
                "settings": install.get("settings"),
                "python": install.get("python"),
                "state": state,
            }
        )
    return states
