"""`evolve init` and `evolve agents`."""

from __future__ import annotations

from evolve.commands.output import emit_json, say, table
from evolve.home import Home
from evolve.workspace.agent import Agent, list_agents


def init(home: Home, name: str, as_json: bool = False) -> int:
    agent = Agent.create(name, home)
    if as_json:
        emit_json({"name": agent.name, "path": str(agent.path), "head": agent.repo.tip()})
    else:
        say(f"created agent {name!r} at {agent.path}")
        say(
            f"next: point it at transcripts in {agent.path / 'agent.toml'} [sources], "
            f"or run `evolve install claude-code --agent {name}`"
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
