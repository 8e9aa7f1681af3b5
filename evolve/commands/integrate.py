"""`evolve install` / `evolve uninstall` (Claude Code) and `evolve hook` (agent hooks)."""

from __future__ import annotations

from evolve.commands.output import emit_json, say, warn
from evolve.home import Home


def install(
    home: Home,
    target: str,
    agent: str,
    scope: str = "project",
    project: str | None = None,
    no_link: bool = False,
    as_json: bool = False,
) -> int:
    from evolve.integrations.claude_code import install as do_install

    result = do_install(home, agent, scope, project, link=not no_link)
    if as_json:
        emit_json(result)
        return 0
    done = "updated" if result["settings_changed"] else "already in place"
    done = "created" if result["settings_created"] else done  # a first install makes the file
    say(f"{done}: evolve's hooks for agent {agent} in {result['settings']}")
    if result["backup"]:
        say(f"the settings file as it was before: {result['backup']}")
    if result["skills_dir"]:
        say(
            f"{len(result['links'])} skill link(s) in {result['skills_dir']}"
            + (f" (listed in {result['exclude']})" if result["exclude"] else "")
        )
    for name in result["conflicts"]:
        warn(f"skill {name!r} is not linked: {result['skills_dir']}/{name} is someone else's")
    if result["sources_commit"]:
        say(f"agent {agent} now reads {result['sources']} (commit {result['sources_commit'][:12]})")
    say("the watcher starts with the next Claude Code session (or now: `evolve watch --detach`)")
    return 0


def uninstall(
    home: Home,
    target: str,
    agent: str,
    scope: str = "project",
    project: str | None = None,
    as_json: bool = False,
) -> int:
    from evolve.integrations.claude_code import uninstall as do_uninstall

    result = do_uninstall(home, agent, scope, project)
    if as_json:
        emit_json(result)
        return 0
    say(
        f"{'removed' if result['entries_removed'] else 'no'} evolve hooks for agent {agent} "
        f"{'from' if result['entries_removed'] else 'in'} {result['settings']}"
    )
    if result["links_removed"]:
        say(f"removed {len(result['links_removed'])} skill link(s)")
    if result["watcher_stopped"]:
        say(f"stopped the watcher a session had started (pid {result['watcher_stopped']})")
    say(f"the agent's repository is unchanged; `evolve remove {agent}` archives it")
    return 0


def hook(home: Home, args: list[str]) -> int:
    """`evolve [--home H] hook claude-code EVENT ...`: always 0, problems go to the hook log."""
    from evolve.hookmain import main

    given = any(arg == "--home" or arg.startswith("--home=") for arg in args)
    return main(args if given else [*args, "--home", str(home.root)])
