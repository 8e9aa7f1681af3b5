"""What the conformance tests of every agent CLI share: a proxy port, evolve, spool, snapshots.

A closed local port for the proxies, evolve's CLI (in-process), the hooks' spool, and
the person's project as bytes (for byte-for-byte uninstalls).

The fixtures `closed_port` and `watcher_reaper` are shared through tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from evolve.home import Home
from tests.helpers import run_cli


@pytest.fixture
def closed_port():
    """A local port nothing listens on (kept bound, so nobody else takes it): the proxy."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def installed(install: Callable[[], Path], pin: tuple[str, str]) -> Path:
    """The pinned CLI's binary (tests/agent_clis.py); the test skips when npm cannot get it."""
    from tests import agent_clis

    try:
        return install()
    except agent_clis.Unavailable as exc:
        pytest.skip(f"{pin[0]}@{pin[1]} is not available: {exc}")


def cli_env(proxy_port: int, watcher: bool, **extra: str) -> dict[str, str]:
    """An agent CLI's environment: the test's HOME (conftest), proxies at a closed port.

    The hooks start no watcher (EVOLVE_NO_WATCHER=1; the test stands in for it) unless
    `watcher`.
    """
    proxy = f"http://127.0.0.1:{proxy_port}"
    env = {
        **os.environ,
        **extra,
        "HTTPS_PROXY": proxy,
        "HTTP_PROXY": proxy,
        "https_proxy": proxy,
        "http_proxy": proxy,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "npm_config_update_notifier": "false",
    }
    if not watcher:
        env["EVOLVE_NO_WATCHER"] = "1"
    return env


def evolve_cli(*args: str) -> str:
    """`evolve ARGS`, in this process (tests/helpers.py: `run_cli`); its stdout.

    What these tests check is the agent CLI and the hooks it starts, and those run as
    processes; the commands a person types around them need no fresh Python each.
    """
    proc = run_cli(*args)
    assert proc.returncode == 0, f"evolve {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
    return proc.stdout


def spool_records(home: Home) -> list[dict]:
    """What the hooks appended to the spool so far (nothing drains it in these tests)."""
    path = home.spool_dir / "hooks.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def snapshot(project: Path) -> dict[str, bytes | str]:
    """The person's files: each file's bytes, symlink's target and folder in the project.

    Outside `.git`, that is, plus `.git/info/exclude`.
    """
    found: dict[str, bytes | str] = {}
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project)
        if rel.parts[0] == ".git" and rel != Path(".git/info/exclude"):
            continue
        if path.is_symlink():
            found[str(rel)] = f"symlink to {path.readlink()}"
        elif path.is_dir():
            found[str(rel)] = "folder"
        else:
            found[str(rel)] = path.read_bytes()
    return found


@pytest.fixture
def watcher_reaper(evolve_home):
    """Kills a watcher a test's session started, should the test fail before uninstall stops it."""
    yield
    for name in ("watch.spawned", "watch.pid"):
        try:
            pid = int((evolve_home / "run" / name).read_text())
        except (OSError, ValueError):
            continue
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone too: the watcher is not our child, so its parent reaps it
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True
