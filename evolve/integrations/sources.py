"""Point an agent's `[sources]` at a harness's transcripts: a minimal edit of agent.toml.

agent.toml is a person's file: its comments and layout stay, only the one array grows
(`claude_code = [...]` globs, `codex = [...]` folders; tomlkit edits it in place), and
the change is committed in the agent's repository as evolve's own commit. Uninstall takes
out again what install added (the install record says), nothing a person had there. Claude Code
globs are written with `~` so the repository does not carry one machine's home path.
"""

from __future__ import annotations

import glob
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home
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


@dataclass(frozen=True)
class Added:
    """What `add_sources` did: where (a commit, or this machine's own file), and whether the key is new."""

    where: str
    new_key: bool


def add_sources(agent: Agent, key: str, patterns: list[str]) -> Added | None:
    """Add `patterns` to the agent's `[sources] <key>`; None if they are all there already.

    An agent that syncs through a remote keeps its sources on this machine
    (`Agent.local_config_path`, never committed): `where` is that file's path then.
    """
    subject = f"install({agent.name}): read {HARNESS_NAMES[key]}"
    where, absent = _edit_sources(
        agent, key, lambda current: [*current, *(p for p in patterns if p not in current)], subject, "install"
    )
    return Added(where, absent) if where else None


def remove_sources(agent: Agent, key: str, patterns: list[str], drop_key: bool = False) -> str | None:
    """Take `patterns` out of the agent's `[sources] <key>` again: what an install added.

    The commit (evolve's own, like the install's), or this machine's file for a synced agent;
    None when none of them is there any more. `drop_key`: the install created the key, so an
    array left empty goes with it.
    """
    subject = f"uninstall({agent.name}): stop reading {HARNESS_NAMES[key]}"
    where, _absent = _edit_sources(
        agent, key, lambda current: [p for p in current if p not in patterns], subject, "uninstall", drop_key
    )
    return where


def sources_file(agent: Agent) -> Path:
    """Where the agent's `[sources]` are read from: this machine's own file once it syncs, else agent.toml."""
    local = agent.local_config_path
    return local if local.exists() else agent.path / AGENT_TOML


def _text(path: Path) -> str:
    """The file's text ("" when there is none); a FIFO or a link loop there is one line, never a wait."""
    from evolve.config import read_bytes

    return (read_bytes(path) or b"").decode("utf-8")


def _current(agent: Agent, key: str, text: str | None = None) -> list[str] | None:
    """`[sources] <key>` as the file holds it now (None: no such key)."""
    path = sources_file(agent)
    if text is None:
        text = _text(path)
    try:
        current = tomllib.loads(text).get("sources", {}).get(key)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc}); fix it, then try again") from None
    if current is not None and not isinstance(current, list):
        raise UserError(f"{path}: sources.{key} must be a list of strings")
    return current


def remove_from_sources(text: str, key: str, patterns: list[str], drop_key: bool) -> str:
    """agent.toml's text without `patterns` in `[sources] <key>`; every other byte kept."""
    import tomlkit  # lazily: only install and uninstall edit agent.toml

    doc = tomlkit.parse(text)
    sources = doc["sources"]
    array = sources[key]
    for index in reversed(range(len(array))):
        if array[index] in patterns:
            del array[index]
    if drop_key and not len(array):
        del sources[key]
        if not len(sources):
            del doc["sources"]
            return tomlkit.dumps(doc).rstrip("\n") + "\n"  # and the blank line the new table brought
    return tomlkit.dumps(doc)


def _edit_sources(
    agent: Agent,
    key: str,
    change: Callable[[list[str]], list[str]],
    subject: str,
    kind: str,
    drop_key: bool = False,
) -> tuple[str | None, bool]:
    """Make `[sources] <key>` hold `change(what it holds)`, as evolve's own commit.

    (the commit, or the path of a synced agent's own file, written and never committed;
    None when nothing changed — and whether the key was absent before). Read under the lock:
    a person's edit of the file is committed as theirs first and kept.
    """
    path = sources_file(agent)
    with agent.repo.locked():
        agent.commit_human_edits_held()
        text = _text(path)  # CRLF kept as is
        found = _current(agent, key, text)
        current = found or []
        wanted = change(current)
        if wanted == current:
            return None, found is None
        added = [p for p in wanted if p not in current]
        removed = [p for p in current if p not in wanted]
        new = remove_from_sources(text, key, removed, drop_key) if removed else text
        new = add_to_sources(new, key, added) if added else new
        if (_current(agent, key, new) or []) != wanted:
            raise UserError(f"{path}: could not change [sources] {key} to {wanted}; change it by hand")
        if path != agent.path / AGENT_TOML:
            atomic_write(path, new.encode("utf-8"))
            return str(path), found is None
        trailers = {"Evolve-Kind": kind, "Evolve-Sources": added or removed}
        sha = agent.repo.commit_changes(
            {AGENT_TOML: new.encode("utf-8")}, build_message(subject, trailers), agent.evolve_identity
        )
        return sha, found is None


def forget(home: Home, record: dict, key: str, pattern: str, release: bool) -> dict:
    """Uninstall's part in `[sources]`: what install added taken away (`release`), and what stays.

    (`sources_removed`: the commit, or a synced agent's own file; `sources_kept`: the file that
    still makes the agent read `pattern` — it was there before the install, or another install
    of the agent needs it.)
    """
    agent = Agent(home, str(record.get("agent")))
    if not (agent.path / ".git").is_dir():  # removed meanwhile: nothing of it reads anything
        return {"sources": pattern, "sources_removed": None, "sources_kept": None}
    removed = remove_sources(agent, key, [pattern], bool(record.get("sources_new_key"))) if release else None
    kept = pattern in (_current(agent, key) or [])
    return {
        "sources": pattern,
        "sources_removed": removed,
        "sources_kept": str(sources_file(agent)) if kept else None,
    }
