"""`evolve install` / `evolve uninstall` (Claude Code, Codex) and `evolve hook` (agent hooks)."""

from __future__ import annotations

import shlex

from evolve.commands.output import emit_json, say, warn
from evolve.home import Home


def _integration(target: str):
    if target == "codex":
        from evolve.integrations import codex

        return codex
    from evolve.integrations import claude_code

    return claude_code


def install(
    home: Home,
    target: str,
    agent: str,
    scope: str = "project",
    project: str | None = None,
    no_link: bool = False,
    as_json: bool = False,
    force: bool = False,
) -> int:
    result = _integration(target).install(home, agent, scope, project, link=not no_link, force=force)
    if as_json:
        emit_json(result)
        return 0
    codex = target == "codex"
    hooks = (
        "evolve's Codex hooks (one command for every project)"
        if codex
        else f"evolve's hooks for agent {agent}"
    )
    done = "updated" if result["settings_changed"] else "already in place"
    done = "created" if result.get("settings_created") else done  # a first install makes the file
    say(f"{done}: {hooks} in {result['settings']}")
    if result["backup"]:
        say(f"the file as it was before: {result['backup']}")
    where = "--scope user" if scope == "user" else f"--project {shlex.quote(result['project'])}"
    again = f"evolve install {target} --agent {agent} {where} --force"
    for line in by_hand_lines(result["by_hand"], result["settings"], again):
        say(line)
    if result["skills_dir"]:
        say(
            f"{len(result['links'])} skill link(s) in {result['skills_dir']}"
            + (f" (listed in {result['exclude']})" if result["exclude"] else "")
        )
    for name in result["conflicts"]:
        warn(f"skill {name!r} is not linked: {result['skills_dir']}/{name} is someone else's")
    if result["sources_commit"]:
        what = f"the Codex rollouts of {result['sources']}" if codex else result["sources"]
        where = result["sources_commit"]  # a commit, or this machine's own file (a synced agent)
        shown = f"in {where}, this machine's own" if "/" in where else f"commit {where[:12]}"
        say(f"agent {agent} now reads {what} ({shown})")
    if codex and result["trusted"]:
        say("the hooks are the ones Codex already runs: nothing to trust again")
    elif codex:
        from evolve.integrations.codex import TRUST_HINT

        say(f"the hooks wait for your trust: {TRUST_HINT}; `evolve status` says once they run")
        say("/hooks lists each as an unnamed hook with its command (Codex gives hooks no name):")
        for event, command in result["commands"].items():
            say(f"  {event}: {command}")
    harness = "Codex" if codex else "Claude Code"
    say(f"the watcher starts with the next {harness} session (or now: `evolve watch --detach`)")
    for line in learning_now(home, agent):
        say(line)
    return 0


def by_hand_lines(left: dict[str, str], settings: str, again: str) -> list[str]:
    """One line per hook entry of evolve's a person changed or removed, and how to get evolve's back."""
    from evolve.integrations import hookfile

    return [
        f"evolve's {event} hook in {settings} was {hookfile.said(why)}: left as it is; "
        f"`{again}` puts evolve's back"
        for event, why in left.items()
    ]


def learning_now(home: Home, agent: str) -> list[str]:
    """How to learn now, when the next cycle runs, which model: what a newcomer asks next."""
    from evolve.store import ledger
    from evolve.workspace.agent import Agent

    config = Agent(home, agent).lenient_config
    with ledger.opened(home.state_db) as conn:
        reflected = ledger.last_reflection_at(conn, agent) is not None
    when = (
        f"every {config.schedule.cycle_hours:g} h"
        if reflected
        else f"its first reflection comes {config.schedule.first_reflection_minutes:g} min after a "
        "run worth learning from"
    )
    chosen = config.model
    model = (
        "model: offline — no model is called, a correction you type becomes a memo rule; choose one "
        "with `evolve model anthropic` or `evolve model claude-cli`"
        if chosen.backend == "offline"
        else f"model: {chosen.backend} ({chosen.name}); `evolve model` shows where its key comes from"
    )
    return [
        f"after a session: `evolve reflect {agent}` learns now; `evolve status` shows when the next "
        f"cycle runs ({when})",
        model,
    ]


def uninstall(
    home: Home,
    target: str,
    agent: str,
    scope: str = "project",
    project: str | None = None,
    as_json: bool = False,
) -> int:
    result = _integration(target).uninstall(home, agent, scope, project)
    if as_json:
        emit_json(result)
        return 0
    if result["entries_removed"] or target != "codex":
        say(
            f"{'removed' if result['entries_removed'] else 'no'} evolve hooks for agent {agent} "
            f"{'from' if result['entries_removed'] else 'in'} {result['settings']}"
        )
    else:
        say(f"evolve's Codex hooks stay in {result['settings']}: other installs of this home use them")
    if result["links_removed"]:
        say(f"removed {len(result['links_removed'])} skill link(s)")
    if result["watcher_stopped"]:
        say(f"stopped the watcher a session had started (pid {result['watcher_stopped']})")
    what = f"the Codex rollouts of {result['sources']}" if target == "codex" else result["sources"]
    removed, kept = result["sources_removed"], result["sources_kept"]
    if removed:  # a commit, or this machine's own file (a synced agent)
        shown = f"in {removed}, this machine's own" if "/" in removed else f"commit {removed[:12]}"
        say(f"agent {agent} no longer reads {what} ({shown})")
    if kept:
        say(
            f"agent {agent} still reads {what}: it was in [sources] before the install (or another "
            f"install needs it); remove it from {kept} to stop"
        )
    if not removed:
        say(f"the agent's repository is unchanged; `evolve remove {agent}` archives it")
    return 0


def hook(home: Home, args: list[str]) -> int:
    """`evolve [--home H] hook claude-code|codex EVENT ...`: always 0, problems go to the hook log."""
    from evolve.hookmain import main

    given = any(arg == "--home" or arg.startswith("--home=") for arg in args)
    return main(args if given else [*args, "--home", str(home.root)])
