"""Where evolve keeps its state: one overridable root, EVOLVE_HOME.

Light module (standard library only): agent hooks resolve the home on every turn.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from evolve.regular import read_regular

_MACHINE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class RealHomeForbidden(RuntimeError):
    """Raised when tests (EVOLVE_FORBID_HOME set) would touch the real home."""


def default_home() -> Path:
    """The platform's user data dir for evolve, as platformdirs would place it."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "evolve"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "evolve"


def guard_path(path: Path) -> Path:
    """Refuse paths inside the real home while tests run; return the path unchanged."""
    forbidden = os.environ.get("EVOLVE_FORBID_HOME")
    if forbidden:
        real = Path(forbidden).resolve()
        resolved = path.resolve()
        if resolved == real or real in resolved.parents:
            raise RealHomeForbidden(f"refusing to use {path}: it is inside the real home {real}")
    return path


@dataclass(frozen=True)
class Home:
    """The layout of an evolve home directory."""

    root: Path

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> Home:
        """--home wins, then EVOLVE_HOME, then the platform default."""
        raw = explicit or os.environ.get("EVOLVE_HOME") or default_home()
        return cls(guard_path(Path(raw).expanduser().absolute()))

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    @property
    def state_db(self) -> Path:
        return self.root / "state.db"

    @property
    def agents_dir(self) -> Path:
        return self.root / "agents"

    @property
    def archive_dir(self) -> Path:
        return self.root / "archive"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def spool_dir(self) -> Path:
        return self.root / "spool"

    @property
    def run_dir(self) -> Path:
        """Pidfiles and process locks."""
        return self.root / "run"

    @property
    def cache_dir(self) -> Path:
        """Caches evolve can always rebuild (skill index, rates, tokenizer files)."""
        return self.root / "cache"

    def agent_dir(self, name: str) -> Path:
        return self.agents_dir / name

    def local_config(self, name: str) -> Path:
        """The file of an agent's settings that stay on this machine once it syncs (never committed)."""
        return self.agents_dir / f"{name}.local.toml"

    @property
    def machine_file(self) -> Path:
        return self.root / "machine"

    def machine(self) -> str:
        """The machine name of this home (host name + a random tag, made once): branches and ids use it."""
        try:
            name = read_regular(self.machine_file).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            name = ""
        if not _MACHINE.fullmatch(name):
            import socket

            host = "-".join(re.findall(r"[a-z0-9]+", socket.gethostname().lower()))[:24] or "machine"
            name = f"{host}-{os.urandom(2).hex()}"
            self.root.mkdir(parents=True, exist_ok=True)
            self.machine_file.write_text(name + "\n", encoding="ascii")
        return name

    def skill_index_cache(self, agent: str) -> Path:
        """What the session-start hook read from each SKILL.md (`evolve.session.index`)."""
        return self.cache_dir / agent / "skills.json"

    def rates_cache(self, agent: str) -> Path:
        """The usage rates the session-start hook ranks skills by (`evolve.metrics.rates`)."""
        return self.cache_dir / agent / "rates.json"

    def waiting_cache(self, agent: str) -> Path:
        """The skills each pending proposal patches, by its tip (`evolve.session.waiting`)."""
        return self.cache_dir / agent / "waiting.json"

    def read_only(self) -> bool:
        """Whether evolve cannot write here (a read-only mount, or no write permission)."""
        if not self.root.exists():
            return False
        return any(
            path.exists() and not os.access(path, os.W_OK)
            for path in (self.root, self.state_db, self.agents_dir)
        )

    def ensure(self) -> Home:
        """Create the home's folders (idempotent); UserError, in one line, for one that is something else."""
        for folder in (self.root, self.agents_dir, self.logs_dir, self.spool_dir, self.run_dir):
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except FileExistsError:  # a link leading nowhere, a FIFO, a file
                from evolve.errors import UserError

                raise UserError(not_a_folder(folder)) from None
        return self


LAYOUT_FILE = "layout-version"  # its second line: the home's real path when last brought up to date
PLACES_FILE = "places"  # each path the home was named by or had (links resolved), one a line
# a places line: the path, then NUL and the device it was on (a path holds no NUL)
DEVICE_MARK = b"\0"


_ESCAPED = {b"\n": b"n", b"\r": b"r"}  # what splits a record's lines (bytes.splitlines), as escaped
_UNESCAPED = {value: key for key, value in _ESCAPED.items()}


def place_bytes(path: str | os.PathLike[str]) -> bytes:
    """A path as the home's records name it, one line: a backslash, a line break, a carriage return escaped.

    A home path holding a line break split the layout record's line: it never matched the
    home again, and every command (the watcher a session starts too) checked every agent.
    The records are read by `splitlines`, which splits at a carriage return too.
    """
    escaped = os.fsencode(path).replace(b"\\", b"\\\\")
    for char, letter in _ESCAPED.items():
        escaped = escaped.replace(char, b"\\" + letter)
    return escaped


def path_of_place(place: bytes) -> Path:
    """The path a record's line names (`place_bytes` undone)."""
    return Path(os.fsdecode(re.sub(rb"\\(.)", lambda m: _UNESCAPED.get(m[1], m[1]), place)))


def place_line(line: bytes) -> tuple[bytes, int | None]:
    """(path, device or None when an older evolve recorded none) of one line of the places file."""
    path, _, device = line.partition(DEVICE_MARK)
    return path, int(device) if device.isdigit() else None


def moved_here_from(root: Path, named: str | os.PathLike[str] | None, agent: str | None) -> bool:
    """Whether `named` is a place the home at `root` was moved from, that no longer holds `agent`.

    A home moved with `mv` leaves its installs naming the old path; a copy (`cp -a`) leaves
    them naming the original, which still has its agents: only the first is this home's to
    take over (a stray `logs/` a hook made there is no home). A new home made at the old
    path later (`evolve init` in a shell without EVOLVE_HOME) holds other agents: entries
    naming one it lacks are still the moved home's. Codex's entries name no agent (None):
    any agents/ folder there keeps them. A gone path alone is not enough: another home
    sharing the hooks file would take the moved one's and leave it without hooks. Only a
    path this home recorded as its own is its former place; its links resolved too, for a
    home named through a linked parent that moved behind the link. Nor is a path gone
    because its disk is not mounted: the place counts only while the disk it was on is
    there (`_disk_still_there`), or else a copy would take the hooks of an original on an
    unplugged disk.
    """
    if named is None or Path(named, "agents", agent or "").is_dir():
        return False
    former = _former_place(root, named)
    return former is not None and _disk_still_there(*former)


def on_a_disk_not_mounted(root: Path, named: str) -> bool:
    """Whether `named` is a place the home at `root` was at, on a disk not mounted now.

    Its hooks left there are not taken (`moved_here_from`), yet they run against a home that
    is not there: doctor names them, and the way back (the disk mounted, `doctor --fix`).
    """
    former = _former_place(root, named)
    return former is not None and not _disk_still_there(*former)


def _former_place(root: Path, named: str | os.PathLike[str]) -> tuple[bytes, int | None] | None:
    """(place, its device) of `named`, when the home at `root` recorded it as its own; else None."""
    formerly: dict[bytes, int | None] = {}
    with contextlib.suppress(OSError):  # the record names where it was until the next command
        formerly.update(dict.fromkeys(read_regular(root / LAYOUT_FILE).splitlines()[1:2]))
    with contextlib.suppress(OSError):  # NotRegular too: a FIFO there is never waited on
        formerly.update(place_line(line) for line in read_regular(root / PLACES_FILE).splitlines())
    for place in (place_bytes(named), place_bytes(os.path.realpath(named))):
        if place in formerly:
            return place, formerly[place]
    return None


def _disk_still_there(place: bytes, device: int | None) -> bool:
    """Whether the disk that held `place` is mounted: the nearest folder above it that is there is on it.

    Unmounted, the path is gone as much as a moved one, but its mount point (or the folder
    above) is on another disk. A place an older evolve recorded without its disk: gone is all
    there is to go by.
    """
    if device is None:
        return True
    for folder in path_of_place(place).parents:
        try:
            return folder.stat().st_dev == device
        except OSError:
            continue
    return False


def not_a_folder(folder: Path) -> str:
    """The one line for a folder of the home that is something else: a link leading nowhere, or no folder."""
    if folder.is_symlink():
        return (
            f"{str(folder)!r} is a link to {str(folder.readlink())!r}, which leads nowhere (moved, deleted, "
            "or a loop of links): nothing in it is found; point the link at the folder again, or remove it"
        )
    return f"{str(folder)!r} is no folder: nothing in it is found; move it aside (evolve makes the folder)"
