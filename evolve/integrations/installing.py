"""What an install records of its project, shared by every harness: the folder, links, sources.

The project's folder and its repository's exclude (so nobody commits the links), the
agent's skills linked in, the `[sources]` entry an install added (uninstall takes only
that), what a new record of a settings file inherits, and uninstall's common part — down
to the watcher a session's hook started, stopped once no install is left.
"""

from __future__ import annotations

import os
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home
from evolve.workspace import links

TYPE_CHECKING = False  # typing's own flag without importing typing
if TYPE_CHECKING:
    from evolve.integrations.sources import Added

SCOPES = ("project", "user")


def project_folder(scope: str, project: str | os.PathLike[str] | None, must_exist: bool) -> Path | None:
    """The resolved project folder (the current one by default); None for user scope."""
    if scope not in SCOPES:
        raise UserError(f"unknown scope {scope!r}; use --scope project or --scope user")
    if scope == "user":
        return None
    folder = Path(project or Path.cwd()).expanduser().resolve()
    if must_exist and not folder.is_dir():
        raise UserError(f"{folder} is not a folder; pass the project with --project DIR")
    return folder


def exclude_fields(project: Path | None) -> dict:
    """Where a project install lists its links so nobody commits them (its repository's exclude)."""
    worktree, exclude = (links.git_exclude(project) if project else None) or (None, None)
    where = None
    if worktree and project:
        where = str(project.relative_to(worktree)) if project != worktree else "."
    return {
        "worktree": str(worktree) if worktree else None,
        "exclude": str(exclude) if exclude else None,
        "exclude_where": where,
    }


def place_links(record: dict, skills: Path, target: Path, link: bool) -> dict[str, list[str]]:
    """The agent's skills linked into `target`, or (`link` False) every link of ours removed."""
    if link:
        return links.sync_install(record, skills)
    links.remove_links({"skills_dir": str(target)}, skills)
    record["links"] = []
    if record.get("exclude"):
        links.write_exclude(record)
    return {"added": [], "removed": [], "conflicts": []}


def install_report(record: dict, changed: bool, report: dict, sources: str, commit: str | None) -> dict:
    """What an install did, as the command prints it (and `--json` shows it)."""
    return {
        "agent": record["agent"],
        "scope": record["scope"],
        "project": record.get("project"),
        "settings": record["settings"],
        "settings_changed": changed,
        "skills_dir": record["skills_dir"],
        "links": record.get("links", []),
        "conflicts": report["conflicts"],
        "exclude": record.get("exclude"),
        "sources": sources,
        "sources_commit": commit,
        "backup": record.get("backup"),
    }


def mark_sources(record: dict, pattern: str, added: Added | None) -> None:
    """Remember the install's `[sources]` entry, and whether the install added it (uninstall's to take)."""
    record["sources"] = pattern
    if added is not None:
        record.update(sources_added=True, sources_new_key=added.new_key)


def release_sources(record: dict, installs: list[dict]) -> bool:
    """Whether uninstall takes the record's `[sources]` entry away.

    Only what its install added, and not while another install of the agent reads the same
    (that one then holds it, and takes it away in turn).
    """
    if not record.get("sources_added"):
        return False
    heir = next(
        (
            peer
            for peer in installs
            if peer is not record
            and peer.get("agent") == record.get("agent")
            and peer.get("sources") == record.get("sources")
        ),
        None,
    )
    if heir is None:
        return True
    heir.update(sources_added=True, sources_new_key=record.get("sources_new_key"))
    return False


def forget(record: dict, installs: list[dict], target: Path, skills: Path) -> list[str]:
    """Uninstall's common part: links, exclude block and created folders gone, the record out.

    What cannot be removed yet (a folder a peer still uses) is handed to the installs
    sharing it; returns the names of the links removed.
    """
    gone = links.remove_links({"skills_dir": str(target)}, skills)
    links.remove_exclude(record)
    links.remove_created_dirs(record)
    if record in installs:
        installs.remove(record)
    links.hand_over(record, installs)
    return gone


def first_backup(installs: list[dict], settings: str) -> dict:
    """What a new record of `settings` inherits: the file as it was before evolve's first install."""
    peer = next((i for i in installs if i.get("settings") == settings), None)
    return {"backup": peer.get("backup"), "settings_created": peer.get("settings_created")} if peer else {}


def stop_spawned_watcher(home: Home) -> int | None:
    """Stop the watcher a SessionStart hook started, once no install of any harness is left."""
    from evolve.watch import service

    if any(links.load_installs(home, harness) for harness in links.HARNESSES):
        return None
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
