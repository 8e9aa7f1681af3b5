"""`evolve init` and `evolve agents`."""

from __future__ import annotations

from evolve.commands.output import emit_json, say, table
from evolve.errors import ConfigError
from evolve.home import Home
from evolve.integrations import upgrade
from evolve.workspace.agent import Agent
from evolve.workspace.folders import list_agents


def init(home: Home, name: str, from_url: str | None = None, as_json: bool = False) -> int:
    # a home this version began, or one up to date: the new agent is set up as it is made, so the
    # record (which names each agent) names it too and the next command checks nothing
    current = upgrade.holds_nothing_older(home) or upgrade.applied(home) >= upgrade.LAYOUT
    if from_url is not None:
        code = _join(home, name, from_url, as_json)
    else:
        code = _create(home, name, as_json)
    if current:
        upgrade.record_current(home)
    return code


def _create(home: Home, name: str, as_json: bool) -> int:
    agent = Agent.create(name, home)
    if as_json:
        emit_json({"name": agent.name, "path": str(agent.path), "head": agent.repo.tip()})
    else:
        say(f"created agent {name!r} at {agent.path}")
        say(
            f"next, in your project folder: `evolve install claude-code --agent {name}` or "
            f"`evolve install codex --agent {name}` (or point [sources] in {agent.path / 'agent.toml'} "
            "at transcripts)"
        )
    return 0


def agents(home: Home, as_json: bool = False) -> int:
    names = list_agents(home)
    rows = []
    for name in names:
        agent = Agent(home, name)
        skills = agent.skills()
        rows.append(
            {
                "name": name,
                "path": str(agent.path),
                "skills": len(skills),
                "broken_skills": sum(not s.valid for s in skills),
            }
        )
    if as_json:
        emit_json(rows)
    elif not rows:
        say(f"no agents in {home.root}; create one with `evolve init NAME`")
    else:
        say(
            table(
                [[str(r["name"]), str(r["skills"]), str(r["path"])] for r in rows], ["NAME", "SKILLS", "PATH"]
            )
        )
    return 0


def _join(home: Home, name: str, url: str, as_json: bool) -> int:
    from evolve.sync.join import join
    from evolve.sync.remote import redact

    agent = join(home, name, url)
    if as_json:
        emit_json({"name": name, "path": str(agent.path), "head": agent.repo.tip(), "url": redact(url)})
        return 0
    say(f"joined agent {name!r} from {redact(url)} at {agent.path} ({len(agent.log())} commits)")
    try:
        warnings = agent.config.warnings
    except ConfigError as exc:  # the server's agent.toml is broken: said once, fixed there or here
        warnings = (str(exc),)
    for warning in warnings:
        say(f"note: {warning}")
    say(
        f"next: this machine's transcripts and model go in {agent.local_config_path} ([sources], "
        f"[model]; never committed), or run `evolve install claude-code --agent {name}` or "
        f"`evolve install codex --agent {name}`"
    )
    return 0
