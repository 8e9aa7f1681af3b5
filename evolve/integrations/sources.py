"""Point an agent's `[sources]` at a harness's transcripts: a minimal edit of agent.toml.

agent.toml is a person's file: its comments and layout stay, only the one array grows
(`claude_code = [...]` globs, `codex = [...]` folders; tomlkit edits it in place), and
the change is committed in the agent's repository as evolve's own commit. Claude Code
globs are written with `~` so the repository does not carry one machine's home path.
"""

from __future__ import annotations

import glob
import re
import tomllib
from pathlib import Path

from evolve.errors import UserError
from evolve.store.files import atomic_write
from evolve.store.history import build_message
from evolve.workspace.agent import Agent

AGENT_TOML = "agent.toml"
MAX_DIR_NAME = 200  # Claude Code shortens longer project folder names (and adds a hash)
HARNESS_NAMES = {"claude_code": "Claude Code transcripts", "codex": "Codex rollouts"}


def project_folder(project: Path) -> str:
    """Claude Code's folder name for a project: every non-alphanumeric character → '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project))


def with_tilde(path: str) -> str:
    home = str(Path.home())
    if path == home or path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def transcripts_glob(claude_dir: Path, project: Path | None) -> str:
    """The glob of one project's transcripts (sessions and sub-agents), or of all projects."""
    projects = glob.escape(with_tilde(str(claude_dir / "projects")))
    if project is None:
        return f"{projects}/**/*.jsonl"
    folder = project_folder(project)
    if len(folder) > MAX_DIR_NAME:
        folder = folder[:MAX_DIR_NAME] + "*"
    return f"{projects}/{folder}/**/*.jsonl"


def add_to_sources(text: str, key: str, added: list[str]) -> str:
    """agent.toml's text with `added` appended to `[sources] <key>`; every other byte kept.

    tomlkit edits the document in place: a person's comments, the layout of a multi-line
    array and the file's line endings stay (tomllib still does every read).
    """
    import tomlkit  # lazily: only `evolve install` edits agent.toml

    doc = tomlkit.parse(text)
    sources = doc.get("sources")
    if sources is None:
        table = tomlkit.table()
        table.add(key, list(added))
        doc.add("sources", table)
    elif key not in sources:
        sources.add(key, list(added))
    else:
        array = sources[key]
        for pattern in added:
            array.append(pattern)
    return tomlkit.dumps(doc)


def add_sources(agent: Agent, key: str, patterns: list[str]) -> str | None:
    """Add `patterns` to the agent's `[sources] <key>`: the commit, or where it was written.

    None if already there. An agent that syncs through a remote keeps its sources on this
    machine (`Agent.local_config_path`, never committed): the file's path is returned then.
    """
    local = agent.local_config_path
    path = local if local.exists() else agent.path / AGENT_TOML
    with agent.repo.locked():
        agent.commit_human_edits_held()
        text = path.read_bytes().decode("utf-8") if path.exists() else ""  # CRLF kept as is
        try:
            current = tomllib.loads(text).get("sources", {}).get(key, [])
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"{path}: not valid TOML ({exc}); fix it, then install again") from None
        if not isinstance(current, list):
            raise UserError(f"{path}: sources.{key} must be a list of strings")
        missing = [p for p in patterns if p not in current]
        if not missing:
            return None
        wanted = [*current, *missing]
        new = add_to_sources(text, key, missing)
        if tomllib.loads(new).get("sources", {}).get(key) != wanted:
            raise UserError(f"{path}: could not add {missing} to [sources] {key}; add them by hand")
        if path == local:
            atomic_write(local, new.encode("utf-8"))
            return str(local)
        subject = f"install({agent.name}): read {HARNESS_NAMES[key]}"
        trailers = {"Evolve-Kind": "install", "Evolve-Sources": missing}
        return agent.repo.commit_changes(
            {AGENT_TOML: new.encode("utf-8")}, build_message(subject, trailers), agent.evolve_identity
        )
