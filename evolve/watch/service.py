"""The watcher as a process: its lock, pidfile, log, detaching, stopping, service files.

`<home>/run/watch.lock` (flock) is the truth about whether a watcher runs: the kernel frees
it when the process dies, so a crash never leaves a stale lock. The pidfile
`<home>/run/watch.pid` is for people and tools; one naming a dead process is ignored.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from evolve import launch
from evolve.errors import LockBusy, UserError
from evolve.home import Home
from evolve.store.locks import FileLock, holder, is_locked

TYPE_CHECKING = False
if TYPE_CHECKING:
    from evolve.config import ModelConfig

LOG_BYTES = 1_000_000
LOG_BACKUPS = 3


def lock_path(home: Home) -> Path:
    return home.run_dir / "watch.lock"


def pid_path(home: Home) -> Path:
    return home.run_dir / "watch.pid"


def log_path(home: Home) -> Path:
    return home.logs_dir / "watch.log"


def published_path(home: Home) -> Path:
    return home.run_dir / "watch.json"


def publish(home: Home, data: dict) -> None:
    """What this watcher follows (watch.settings), for `evolve status` and `evolve doctor`."""
    import json

    from evolve.store.files import atomic_write

    atomic_write(published_path(home), json.dumps({"pid": os.getpid(), **data}).encode())


def published(home: Home, pid: int | None) -> dict | None:
    """What watcher `pid` published, or None (nothing yet, or another process's)."""
    import json

    try:
        data = json.loads(published_path(home).read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and pid is not None and data.get("pid") == pid else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


@dataclass
class WatcherState:
    running: bool
    pid: int | None
    since: float | None

    def to_dict(self, home: Home) -> dict:
        return {
            "running": self.running,
            "pid": self.pid,
            "since": self.since,
            "pidfile": str(pid_path(home)),
            "log": str(log_path(home)),
        }


def read_pidfile(home: Home) -> int | None:
    """The pid in the pidfile when that process is alive; a dead one's pidfile is ignored."""
    try:
        text = pid_path(home).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() and pid_alive(int(text)) else None


def state(home: Home) -> WatcherState:
    """Whether a watcher holds this home's lock, and its pid."""
    if not is_locked(lock_path(home)):
        return WatcherState(False, None, None)
    pid = read_pidfile(home)
    if pid is None:
        who = holder(lock_path(home)) or ""
        pid = int(who.split()[-1]) if who.split() and who.split()[-1].isdigit() else None
    try:
        since = pid_path(home).stat().st_mtime if pid is not None else None
    except OSError:
        since = None
    return WatcherState(True, pid, since)


def acquire(home: Home) -> FileLock:
    """Take the home's watcher lock and write the pidfile, or say who holds it."""
    home.ensure()
    lock = FileLock(lock_path(home), timeout=0)
    try:
        lock.acquire()
    except LockBusy:
        pid = state(home).pid
        raise UserError(
            f"evolve watch is already running for {home.root}"
            f"{f' (pid {pid})' if pid else ''}; see `evolve watch --status`, "
            f"stop it with `evolve watch --stop`"
        ) from None
    pid_path(home).write_text(f"{os.getpid()}\n")
    return lock


def release(home: Home, lock: FileLock) -> None:
    try:
        if pid_path(home).read_text().strip() == str(os.getpid()):
            pid_path(home).unlink()
        if published(home, os.getpid()) is not None:
            published_path(home).unlink()
    except OSError:
        pass
    lock.release()


def setup_logging(home: Home, log_file: bool, verbose: bool = False) -> None:
    """Foreground: stderr. Detached: `<home>/logs/watch.log`, rotated (1 MB × 3)."""
    logger = logging.getLogger("evolve.watch")
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    for old in list(logger.handlers):
        logger.removeHandler(old)
    handler: logging.Handler
    if log_file:
        home.logs_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            log_path(home), maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s evolve watch: %(levelname)s %(message)s"))
    logger.addHandler(handler)


def spawn_detached(home: Home, wait_s: float = 10.0) -> int:
    """Start `evolve watch` in its own session, logging to the home; return its pid."""
    import subprocess

    home.ensure()
    errors = home.logs_dir / "watch.stderr"
    # isolated and cwd=/: nothing of the caller's folder or variables runs, the folder is not kept busy
    argv = launch.argv(sys.executable, launch.CLI, "--home", str(home.root), "watch", "--log-file")
    with errors.open("wb") as err:
        child = subprocess.Popen(
            argv,
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        code = child.poll()
        if code is not None:
            detail = errors.read_text(errors="replace").strip().splitlines()
            raise UserError(
                detail[-1].removeprefix("evolve: error: ")
                if detail
                else f"evolve watch exited with code {code}; see {log_path(home)}"
            )
        if read_pidfile(home) == child.pid and is_locked(lock_path(home)):
            return child.pid
        time.sleep(0.05)
    return child.pid  # still starting (a big home); `--status` will tell


def stop(home: Home, wait_s: float = 15.0) -> int | None:
    """SIGTERM the running watcher and wait for it to let go; its pid, or None if none ran."""
    current = state(home)
    if not current.running:
        if pid_path(home).exists() and read_pidfile(home) is None:
            pid_path(home).unlink(missing_ok=True)  # a dead watcher's pidfile
        return None
    if current.pid is None:
        raise UserError(f"a watcher holds {lock_path(home)} but its pid is unknown; stop it by hand")
    os.kill(current.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:  # stopped means gone: the lock let go and the process ended
        if not is_locked(lock_path(home)) and not _alive(current.pid):
            return current.pid
        time.sleep(0.05)
    raise UserError(
        f"evolve watch (pid {current.pid}) did not stop within {wait_s:g} s; "
        f"`kill {current.pid}` again, or `kill -9 {current.pid}` (nothing is lost)"
    )


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(") ", 1)[-1][:1] != "Z"
    except OSError:  # no /proc (macOS): signal 0 answered, so it runs
        return True


# -- service files ---------------------------------------------------------------------
def _systemd_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


def env_file(home: Home) -> Path:
    """Where the systemd unit reads variables from (the person writes it; evolve never does)."""
    return home.root / "watch.env"


@dataclass(frozen=True)
class Needs:
    """What a watcher started by the service manager needs to reflect: keys, `claude` on PATH."""

    variables: tuple[str, ...] = ()  # [model] api_key_env of an anthropic backend without a key file
    key_files: tuple[str, ...] = ()
    claude_dir: str | None = None  # the folder of `claude` (backend claude-cli), for PATH

    @classmethod
    def of(cls, models: Iterable[ModelConfig]) -> Needs:
        import shutil

        keyed = [m for m in models if m.backend == "anthropic"]
        claude = shutil.which("claude") if any(m.backend == "claude-cli" for m in models) else None
        return cls(
            tuple(sorted({m.api_key_env for m in keyed if not m.api_key_file})),
            tuple(sorted({m.api_key_file for m in keyed if m.api_key_file})),
            str(Path(claude).parent) if claude else None,
        )

    def to_dict(self, home: Home) -> dict:
        return {
            "environment_file": str(env_file(home)) if self.variables else None,
            "variables": list(self.variables),
            "key_files": list(self.key_files),
            "path": self.path,
        }

    @property
    def path(self) -> str | None:
        return f"{self.claude_dir}:/usr/local/bin:/usr/bin:/bin" if self.claude_dir else None


def _systemd_environment(home: Home, needs: Needs) -> str:
    """The unit's lines that carry the key's source (never its value) and `claude`'s folder."""
    lines = [
        f"# The model's API key is read from {f} at each call ([model] api_key_file)."
        for f in needs.key_files
    ]
    if needs.variables:
        names = ", ".join(f"${name}" for name in needs.variables)
        lines += [
            f"# The model's API key comes from {names} ([model] api_key_env), and systemd starts the",
            f"# watcher without your shell's variables: put {needs.variables[0]}=<the key> in the file",
            "# below (chmod 600), or read the key from a file: `evolve model anthropic --key-file PATH`.",
            f"EnvironmentFile=-{str(env_file(home)).replace('%', '%%')}",
        ]
    if needs.path:
        lines += [
            "# backend claude-cli runs `claude`: its folder on PATH",
            f"Environment={_systemd_quote('PATH=' + needs.path)}",
        ]
    return "\n".join(lines) + "\n" if lines else ""


def _launchd_environment(needs: Needs) -> str:
    """The plist's PATH for `claude`, and a word on a key launchd cannot pass (no value inlined)."""
    from xml.sax.saxutils import escape

    lines = [
        f"  <!-- The model's API key is read from {escape(f)} at each call ([model] api_key_file). -->"
        for f in needs.key_files
    ]
    if needs.variables:  # "--" may not appear in an XML comment
        names = ", ".join(f"${name}" for name in needs.variables)
        lines.append(
            f"  <!-- The model's API key comes from {names} ([model] api_key_env), which launchd does not "
            "pass: read it from a file instead (`evolve model anthropic`, option key-file PATH). -->"
        )
    if needs.path:
        lines += [
            "  <key>EnvironmentVariables</key>",
            "  <dict>",
            "    <key>PATH</key>",
            f"    <string>{escape(needs.path)}</string>",
            "  </dict>",
        ]
    return "\n".join(lines) + "\n" if lines else ""


def render_service(
    home: Home, platform: str | None = None, models: Iterable[ModelConfig] = ()
) -> tuple[str, str]:
    """(file name, text) of the service file for this platform, placeholders filled.

    `models`: every [model] the watcher reflects with, so the unit carries where their keys
    come from (a file, or an EnvironmentFile= for a variable — never a key's value).
    """
    from xml.sax.saxutils import escape

    platform = platform or sys.platform
    needs = Needs.of(list(models))
    fill: Callable[[str], str]
    if platform == "darwin":
        name, fill, environment = (
            "org.evolve.watch.plist",
            lambda text: escape(text),
            _launchd_environment(needs),
        )
    elif platform.startswith("linux"):
        name, fill, environment = "evolve-watch.service", _systemd_quote, _systemd_environment(home, needs)
    else:
        raise UserError(f"no service file for {platform}; run `evolve watch --detach` at login")
    text = (resources.files("evolve.hooks") / name).read_text(encoding="utf-8")
    for key, value in {
        "python": sys.executable,
        "code": launch.code(launch.CLI),
        "home": str(home.root),
        "log": str(home.logs_dir / "watch.stderr"),
    }.items():
        text = text.replace("{{" + key + "}}", fill(value))
    return name, text.replace("{{environment}}\n", environment)


def install_hint(name: str) -> str:
    if name.endswith(".plist"):
        return f"save as ~/Library/LaunchAgents/{name}, then `launchctl load ~/Library/LaunchAgents/{name}`"
    return (
        f"save as ~/.config/systemd/user/{name}, then "
        f"`systemctl --user daemon-reload && systemctl --user enable --now {name}`"
    )
