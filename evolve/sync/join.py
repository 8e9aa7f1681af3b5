"""Setting an agent's server, leaving it, and joining an agent that lives elsewhere.

A remote makes `[sources]` and `[model]` this machine's own: they move from agent.toml
(one commit, before anything is pushed) to the file beside the repository
(`<home>/agents/<name>.local.toml`), which is never committed. Joining clones the server's
repository aside, checks it out through evolve's own writer (no git checkout: no filters,
no hooks, links written as links), gives it evolve's pre-commit hook and `core.hooksPath`
(nothing of the server's configuration or hooks is taken), and renames it into place.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from evolve.config import MACHINE_LOCAL
from evolve.errors import UserError
from evolve.home import Home
from evolve.store import ledger
from evolve.store.files import atomic_write
from evolve.store.history import PROPOSALS, build_message
from evolve.store.repo import Repo
from evolve.sync import refs, remote
from evolve.sync.integrate import check_tree
from evolve.sync.refs import Refused
from evolve.workspace.agent import Agent
from evolve.workspace.template import install_precommit_hook

AGENT_TOML = "agent.toml"
_TABLE = re.compile(r"^\s*\[(?!\[)\s*([^\]]+?)\s*\]")
LOCAL_HEADER = (
    "# This machine's settings of the evolve agent {name!r}: it syncs through a remote, so\n"
    "# [sources] (which transcripts are read) and [model] (where reflections are sent) are\n"
    "# kept here, never committed. Nothing else belongs in this file.\n"
)


def set_remote(agent: Agent, raw_url: str) -> str:
    """Point the agent at `raw_url` (checked); [sources] and [model] become this machine's."""
    url = remote.check_url(raw_url)
    with agent.repo.locked():
        agent.commit_human_edits_held()
        keep_machine_local(agent)
        if agent.repo.remote_url(remote.REMOTE) is None:
            agent.repo.git("remote", "add", remote.REMOTE, "--", url)
        else:
            agent.repo.git("remote", "set-url", remote.REMOTE, "--", url)
    return url


def remove_remote(agent: Agent) -> str | None:
    """Forget the server (its branches here stay); the machine's own settings stay its own."""
    url = agent.repo.remote_url(remote.REMOTE)
    if url is not None:
        agent.repo.git("remote", "remove", remote.REMOTE)
    refs.forget(agent.repo)
    with ledger.opened(agent.home.state_db) as conn, ledger.transaction(conn):
        ledger.forget_sync(
            conn, agent.name
        )  # else `evolve sync` takes the agent for one whose remote was lost
    return url


def keep_machine_local(agent: Agent) -> str | None:
    """Move agent.toml's [sources] and [model] to this machine's file (one commit); None: nothing moved.

    Call under the agent's lock. Done once: the file's existence says the agent syncs.
    """
    local = agent.local_config_path
    if local.exists():
        return None
    path = agent.path / AGENT_TOML
    text = path.read_bytes().decode("utf-8") if path.is_file() and not path.is_symlink() else ""
    kept, moved = split_machine_local(text)
    atomic_write(local, (LOCAL_HEADER.format(name=agent.name) + ("\n" + moved if moved else "")).encode())
    if not moved:
        return None
    message = build_message(
        f"remote({agent.name}): [sources] and [model] stay on each machine",
        {"Evolve-Kind": "local-settings", "Evolve-Moved-To": str(local.name)},
    )
    return agent.repo.commit_changes({AGENT_TOML: kept.encode("utf-8")}, message, agent.evolve_identity)


def split_machine_local(text: str) -> tuple[str, str]:
    """(agent.toml without its [sources] and [model] tables, those tables), every other byte kept."""
    keep: list[str] = []
    moved: list[str] = []
    moving = False
    for line in text.splitlines(keepends=True):
        table = _TABLE.match(line)
        if table:
            moving = table.group(1).split(".")[0].strip().strip("\"'") in MACHINE_LOCAL
        (moved if moving else keep).append(line)
    kept_text, moved_text = "".join(keep), "".join(moved)
    try:
        before, after, taken = (tomllib.loads(t) for t in (text, kept_text, moved_text))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"agent.toml is not valid TOML ({exc}); fix it, then set the remote again") from None
    wanted = {k: v for k, v in before.items() if k in MACHINE_LOCAL}
    if taken != wanted or after != {k: v for k, v in before.items() if k not in MACHINE_LOCAL}:
        raise UserError(
            "agent.toml sets [sources] or [model] in a form evolve cannot move (dotted keys or inline "
            "tables); move them by hand into a [sources] / [model] table, then set the remote again"
        )
    return kept_text, moved_text


def join(home: Home, name: str, raw_url: str) -> Agent:
    """`evolve init NAME --from URL`: the server's agent, with its whole history, as agent `name`."""
    url = remote.check_url(raw_url)

    def build(target: Path) -> None:
        remote.clone(url, target)
        repo = Repo(target)
        cloned = {
            ref.removeprefix(f"refs/remotes/{remote.REMOTE}/"): sha
            for ref, sha in repo.refs(f"refs/remotes/{remote.REMOTE}/").items()
            if ref.endswith("/main") or f"/{PROPOSALS}" in ref
        }
        tip = cloned.get("main")
        if tip is None:
            raise UserError(
                f"{remote.redact(url)} has no main branch; create the agent with `evolve init {name}`, then "
                f"`evolve remote {name} URL` fills an empty server"
            )
        check_tree(repo, tip)
        if set(repo.tree_entries(tip, [AGENT_TOML, "memo.md"])) != {AGENT_TOML, "memo.md"}:
            raise Refused(f"{remote.redact(url)} holds no evolve agent (no agent.toml and memo.md on main)")
        updates = [
            (prefix + branch, sha, None)
            for branch, sha in cloned.items()
            for prefix in (refs.HEADS, remote.FETCHED, refs.SYNCED)
        ]
        repo.update_refs(updates, "evolve: joined")  # main, and every proposal waiting on the server
        repo.git("symbolic-ref", "HEAD", "refs/heads/main")
        repo.check_out(tip)
        install_precommit_hook(target, home.root, lives_at=home.agent_dir(name))

    agent = Agent.build_aside(home, name, build)
    atomic_write(agent.local_config_path, LOCAL_HEADER.format(name=name).encode())
    with ledger.opened(home.state_db) as conn:
        with ledger.transaction(conn):
            ledger.ensure_agent(conn, name)
    agent.sync_links()
    return agent
