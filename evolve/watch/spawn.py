"""Start the watcher from a SessionStart hook when none runs: fully detached, no subprocess.

Light on purpose (it runs inside the hook): `os.posix_spawn` with a new session and stdio
on /dev/null and the log, so Claude Code neither waits for it nor kills it with the hook.
`<home>/run/watch.spawned` names the process started this way, so a second session
starting at once does not start another, and uninstall can stop exactly the one it caused.
"""

# pathlib costs more than the hook's budget: os.path it is.
# ruff: noqa: PTH103, PTH116, PTH118, PTH208
import os
import sys
import time

RESPAWN_S = 30.0  # a watcher started this recently is still starting up: do not start another


def _alive(pid_file: str, younger_than: float | None = None) -> bool:
    try:
        with open(pid_file, "rb") as handle:
            pid = int(handle.read().strip() or b"0")
        if younger_than is not None and time.time() - os.stat(pid_file).st_mtime > younger_than:
            return False
        if pid <= 0:
            return False
        os.kill(pid, 0)
    except PermissionError:
        return True  # alive, another user's
    except (OSError, ValueError):
        return False
    return True


def ensure_watcher(home: str) -> int | None:
    """Start `evolve watch` fully detached unless one runs (or is starting); its pid."""
    if os.environ.get("EVOLVE_NO_WATCHER") == "1" or os.environ.get("EVOLVE_DISABLE_HOOKS") == "1":
        return None
    run_dir = os.path.join(home, "run")
    if _alive(os.path.join(run_dir, "watch.pid")) or _alive(
        os.path.join(run_dir, "watch.spawned"), younger_than=RESPAWN_S
    ):
        return None
    os.makedirs(run_dir, exist_ok=True)
    os.makedirs(os.path.join(home, "logs"), exist_ok=True)
    actions: list[tuple] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (
            os.POSIX_SPAWN_OPEN,
            2,
            os.path.join(home, "logs", "watch.stderr"),
            os.O_WRONLY | os.O_CREAT | os.O_APPEND,
            0o600,
        ),
    ]
    for name in os.listdir("/dev/fd"):  # nothing Claude Code gave the hook outlives it
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                actions.append((os.POSIX_SPAWN_CLOSE, fd))
        except OSError:
            pass
    from evolve import launch  # here: a watcher runs at almost every session start

    # isolated like the hook: the session's folder and variables reach the watcher's Python nowhere
    argv = launch.argv(sys.executable, launch.CLI, "--home", home, "watch", "--log-file")
    try:  # its own session: Claude Code ending the hook's process group leaves it alone
        pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=actions, setsid=True)
    except NotImplementedError:  # a libc without POSIX_SPAWN_SETSID: its own process group
        pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=actions, setpgroup=0)
    with open(os.path.join(run_dir, "watch.spawned"), "w") as handle:
        handle.write(f"{pid}\n")
    return pid
