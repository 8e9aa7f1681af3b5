"""What `evolve install` did for each harness, and the skill links it keeps in step with the agent.

Claude Code finds skills in `.claude/skills/<name>/`, Codex in `.agents/skills/<name>/` (a
symlink to a folder elsewhere works for both), so each of the agent's skills is one
symlink into the agent repository, listed in the project's `.git/info/exclude` between
marker lines so nobody commits it. The records `<home>/integrations/<harness>.json` say
where each install linked and what it created: `sync_links` follows skills as they are
created, retired, evicted or restored, and uninstall removes exactly what install added.
A name already taken by anything that is not our link (a person's own skill, a link
elsewhere) is never touched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from evolve.errors import UserError
from evolve.home import Home, moved_here_from
from evolve.names import name_problem
from evolve.regular import NotRegular, read_regular
from evolve.store.files import atomic_write
from evolve.store.locks import FileLock

HARNESSES = ("claude-code", "codex")
LABELS = {"claude-code": "Claude Code", "codex": "Codex"}


# -- the record of installs ----------------------------------------------------------
def registry_dir(home: Home) -> Path:
    return home.root / "integrations"


def registry_file(home: Home, harness: str) -> Path:
    return registry_dir(home) / f"{harness}.json"


def registry_lock(home: Home, harness: str) -> FileLock:
    """Installs, uninstalls and link syncs of one harness in one home take turns."""
    return FileLock(registry_dir(home) / f"{harness}.lock", timeout=60)


class UnreadableInstalls(UserError):
    """The install record file cannot be read: evolve never overwrites it (that would lose it)."""


def load_installs(home: Home, harness: str) -> list[dict]:
    """The harness's install records; [] when none was made. Raises UnreadableInstalls."""
    path = registry_file(home, harness)
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise UnreadableInstalls(_unreadable(path, f"{type(exc).__name__}: {exc}", harness)) from None
    installs = data.get("installs") if isinstance(data, dict) else None
    if not isinstance(installs, list):
        raise UnreadableInstalls(_unreadable(path, 'no "installs" list', harness))
    return [i for i in installs if isinstance(i, dict)]


def _unreadable(path: Path, why: str, harness: str) -> str:
    return (
        f"{path} cannot be read ({why}); evolve leaves it as it is: repair it, or move it aside "
        f"and run `evolve install {harness}` again"
    )


def save_installs(home: Home, harness: str, installs: list[dict]) -> None:
    """Atomic: a crash leaves the old record or the new one, never half of one."""
    folder = registry_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(registry_file(home, harness), (json.dumps({"installs": installs}, indent=2) + "\n").encode())


def git_exclude(project: Path) -> tuple[Path, Path] | None:
    """(work tree root, its info/exclude file) of the repository holding `project`."""
    for folder in (project, *project.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return folder, dot / "info" / "exclude"
        if dot.is_file():  # a linked worktree or submodule: `gitdir: <path>`
            text = dot.read_text(errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = folder / text[len("gitdir:") :].strip()
            common = gitdir / "commondir"
            if common.is_file():
                gitdir = gitdir / common.read_text().strip()
            return folder, gitdir.resolve() / "info" / "exclude"
    return None


# -- links ---------------------------------------------------------------------------
def skill_names(skills_dir: Path) -> list[str]:
    """The agent's skill folders (with a valid name and a SKILL.md): what gets linked.

    A skills folder, a skill folder or any file in one that is a symlink (`scripts/key ->
    ~/.ssh/id_rsa`) is never linked, whatever put it there: the harness would follow it out
    of the repository whenever the skill says "read scripts/key". `evolve doctor` names it.
    """
    if skills_dir.is_symlink():
        return []
    try:
        entries = list(os.scandir(skills_dir))
    except OSError:
        return []
    return sorted(
        e.name
        for e in entries
        if name_problem(e.name) is None
        and e.is_dir(follow_symlinks=False)
        and (Path(e.path) / "SKILL.md").is_file()
        and not links_inside(Path(e.path))
    )


def links_inside(folder: Path) -> list[Path]:
    """The symbolic links anywhere in `folder` (never followed), in walk order."""
    found = []
    for root, dirs, files in os.walk(folder):  # os.walk never descends into a linked folder
        found += [Path(root, name) for name in [*dirs, *files] if Path(root, name).is_symlink()]
    return found


def is_our_link(link: Path, skills_dir: Path) -> bool:
    """A symlink whose target is a folder directly inside the agent's skills folder.

    Or inside the same agent's skills folder of the place its home was moved from (where no
    home is any more): the next sync points it at the home as it is now.
    """
    try:
        target = link.readlink()
    except OSError:
        return False
    if target.parent == skills_dir:
        return True
    old_home = target.parent.parent.parent.parent
    same_agent = target.parent.parts[-3:] == skills_dir.parts[-3:] and target.is_absolute()
    return same_agent and moved_here_from(skills_dir.parents[2], old_home, skills_dir.parent.name)


def make_dirs(folder: Path, install: dict) -> None:
    """Create `folder` and its parents, remembering each one created (uninstall removes it if empty)."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        path.mkdir()
        created = install.setdefault("created_dirs", [])
        if str(path) not in created:
            created.append(str(path))


def sync_install(install: dict, skills_dir: Path) -> dict[str, list[str]]:
    """Make the links of one install match the skills; update its exclude block."""
    target = Path(install["skills_dir"])
    wanted = set(skill_names(skills_dir))
    report: dict[str, list[str]] = {"added": [], "removed": [], "conflicts": []}
    if target.is_dir():
        for entry in sorted(target.iterdir()):
            if is_our_link(entry, skills_dir) and entry.name not in wanted:
                entry.unlink()
                report["removed"].append(entry.name)
    for name in sorted(wanted):
        link = target / name
        if is_our_link(link, skills_dir):
            if link.readlink() == skills_dir / name:
                continue
            link.unlink()  # into the place the home was moved from: pointed at it as it is now
        elif link.exists() or link.is_symlink():
            report["conflicts"].append(name)
            continue
        make_dirs(target, install)
        link.symlink_to(skills_dir / name, target_is_directory=True)
        report["added"].append(name)
    install["links"] = sorted(n for n in wanted if is_our_link(target / n, skills_dir))
    install["conflicts"] = report["conflicts"]
    if install.get("exclude"):
        write_exclude(install)
    return report


def remove_links(install: dict, skills_dir: Path) -> list[str]:
    """Delete this install's links (only links into the agent's skills folder)."""
    target = Path(install["skills_dir"])
    removed = []
    if target.is_dir():
        for entry in sorted(target.iterdir()):
            if is_our_link(entry, skills_dir):
                entry.unlink()
                removed.append(entry.name)
    return removed


def remove_created_dirs(install: dict) -> None:
    """The folders install created, deepest first, if nothing else lives in them now."""
    for folder in sorted(install.get("created_dirs", []), key=len, reverse=True):
        try:
            Path(folder).rmdir()
        except OSError:
            pass  # not empty (someone's file) or already gone: leave it


def hand_over(gone: dict, installs: list[dict]) -> None:
    """What an uninstalled record created but could not remove yet, to installs sharing it."""
    for peer in installs:
        if peer.get("settings") == gone.get("settings") or (
            gone.get("skills_dir") and peer.get("skills_dir") == gone.get("skills_dir")
        ):
            dirs = peer.setdefault("created_dirs", [])
            dirs += [d for d in gone.get("created_dirs", []) if d not in dirs and Path(d).exists()]
        if gone.get("exclude") and peer.get("exclude") == gone.get("exclude"):
            for key in ("exclude_created", "exclude_newline"):
                peer[key] = bool(peer.get(key) or gone.get(key))


def sync_links(home: Home, agent: str) -> dict[str, list[str]]:
    """Bring every install of `agent` (every harness) in step with its skills; call after skills change.

    Cheap when nothing is installed (a stat per harness), so every commit that creates,
    retires, evicts or restores a skill can call it.
    """
    total: dict[str, list[str]] = {"added": [], "removed": [], "conflicts": []}
    for harness in HARNESSES:
        if not registry_file(home, harness).exists():
            continue
        with registry_lock(home, harness):
            try:
                installs = load_installs(home, harness)
            except UnreadableInstalls as exc:  # a commit never fails for it; the links wait
                total["conflicts"].append(str(exc))
                continue
            changed = False
            for install in installs:
                if install.get("agent") != agent or not install.get("skills_dir"):
                    continue
                if install.get("project") and not Path(install["project"]).is_dir():
                    continue  # the project is gone: never recreate folders in its place
                try:
                    report = sync_install(install, home.agent_dir(agent) / "skills")
                except OSError as exc:  # one unwritable project never stops the others (or a commit)
                    total["conflicts"].append(f"{install['skills_dir']}: {exc.strerror or exc}")
                    continue
                for key, names in report.items():
                    total[key] += names
                changed = True
            if changed:
                save_installs(home, harness, installs)
    return total


# -- .git/info/exclude ----------------------------------------------------------------
def _read(path: Path) -> str:
    """Every byte kept (CRLF, bytes that are not UTF-8): uninstall restores them exactly."""
    try:
        return read_regular(path).decode("utf-8", "surrogateescape")
    except NotRegular:
        if path.is_dir():  # no exclude file recorded ("."), or a folder in its place: as open() says
            raise IsADirectoryError(21, "Is a directory", str(path)) from None
        raise UserError(
            f"{path} is not a regular file (a FIFO or a device?); put the file back, then run evolve again"
        ) from None


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", "surrogateescape"))


def _harness(install: dict) -> str:
    return install.get("harness") or "claude-code"  # records from before Codex have none


def _markers(install: dict) -> tuple[str, str]:
    where = install.get("exclude_where") or "."
    agent, harness = install["agent"], _harness(install)
    close = f"# <<< evolve: agent {agent} in {where} <<<"
    if harness != "claude-code":  # Claude Code's block keeps the words it always had
        close = f"# <<< evolve: {LABELS[harness]}, agent {agent} in {where} <<<"
    return (
        f"# >>> evolve: {LABELS[harness]} files of agent {agent} in {where} "
        f"(`evolve uninstall {harness} --agent {agent}` removes them) >>>",
        close,
    )


def _escape(pattern: str) -> str:
    """A path as a literal gitignore pattern."""
    out = "".join("\\" + c if c in "\\*?[" else c for c in pattern)
    return out[:-1] + "\\ " if out.endswith(" ") else out


def exclude_lines(install: dict) -> list[str]:
    root = install["worktree"]
    # Claude Code's personal settings file lives in the project; Codex's hooks never do.
    in_project = install.get("scope") == "project" and _harness(install) == "claude-code"
    paths = [install["settings"]] if in_project else []
    paths += [str(Path(install["skills_dir"]) / name) for name in install.get("links", [])]
    return ["/" + _escape(os.path.relpath(p, root)) for p in paths if os.path.commonpath([p, root]) == root]


def _split_block(text: str, install: dict) -> tuple[str, str] | None:
    begin, end = _markers(install)
    start = text.find(begin + "\n")
    if start < 0 or (start and text[start - 1] != "\n"):
        return None
    stop = text.find(end + "\n", start)
    if stop < 0:
        return None
    return text[:start], text[stop + len(end) + 1 :]


def write_exclude(install: dict) -> None:
    """Put (or replace) this install's block of lines in the exclude file."""
    path = Path(install["exclude"])
    try:
        text: str | None = _read(path)
    except FileNotFoundError:
        text = None
    begin, end = _markers(install)
    block = "\n".join([begin, *exclude_lines(install), end]) + "\n"
    if text is None:
        make_dirs(path.parent, install)
        install["exclude_created"] = True
        _write(path, block)
        return
    parts = _split_block(text, install)
    if parts is not None:
        new = parts[0] + block + parts[1]
    else:
        newline = bool(text) and not text.endswith("\n")
        install["exclude_newline"] = newline
        new = text + ("\n" if newline else "") + block
    if new != text:
        _write(path, new)


def remove_exclude(install: dict) -> None:
    """Take this install's block out, leaving the file as it was before install."""
    path = Path(install.get("exclude") or "")
    try:
        text = _read(path)
    except (FileNotFoundError, IsADirectoryError):
        return
    parts = _split_block(text, install)
    if parts is None:
        return
    before, after = parts
    if install.get("exclude_newline") and not after and before.endswith("\n"):
        before = before[:-1]
    new = before + after
    if not new and install.get("exclude_created"):
        path.unlink()
    else:
        _write(path, new)
