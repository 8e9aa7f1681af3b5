"""The real agent CLIs the conformance tests drive, installed with npm at pinned versions.

Each package goes to a version-keyed, git-ignored folder in the repository,
`.cache/agent-clis/<package>@<version>/` (npm's own cache beside it, in
`.cache/agent-clis/npm-cache/`), filled once and reused by every later run: a version bump is
one constant below. The install goes to a temporary folder renamed into place when it is
complete, so an interrupted install never looks like a finished one (a folder without its
binary, damaged by hand, is installed again).

When npm is missing or cannot reach the registry (refused, unresolved, timed out, a server
error, offline without a cache), `install` raises `Unavailable` (the tests skip with its
reason) and remembers it for OUTAGE_S in `.cache/agent-clis/unavailable`, so one run does not
wait on a dead registry once per test file; any other failure (a version that does not exist, a
binary that does not run) is an error, so a broken pin is never mistaken for a machine without
network.

Fill the cache ahead of a test run with `python tests/agent_clis.py` (`make agent-clis`).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.332")  # bump a version here, nowhere else
CODEX = ("@openai/codex", "0.171.0")

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "agent-clis"
INSTALL_TIMEOUT_S = 900
OUTAGE_S = 900  # a registry found unreachable is not asked again for this long
# npm's codes (and Node's) for "the registry could not be reached": also a server error (5xx),
# a proxy refusing (E407) and offline mode without the package in npm's cache
_NETWORK = re.compile(
    r"\b(ENOTFOUND|EAI_AGAIN|EAI_FAIL|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
    r"ESOCKETTIMEDOUT|ECONNABORTED|EPROTO|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|"
    r"SELF_SIGNED_CERT_IN_CHAIN|E5\d\d|E407|ENOTCACHED|network|socket hang up|getaddrinfo)\b",
    re.IGNORECASE,
)


class Unavailable(Exception):
    """npm is missing or the registry cannot be reached: the tests skip, they do not fail."""


def unreachable(npm_output: str) -> bool:
    """True when npm's output says the registry could not be reached (not another failure)."""
    return _NETWORK.search(npm_output) is not None


def install(package: str, version: str, binary: str, cache: Path = CACHE) -> Path:
    """The path of `binary` from `package@version`, installing it first if the cache lacks it."""
    target = cache / f"{package}@{version}"
    path = target / "node_modules" / ".bin" / binary
    if not path.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise Unavailable(f"npm is not installed: cannot install {package}@{version}")
        _recent_outage(cache)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not path.exists():  # damaged: a finished install appears whole
            shutil.rmtree(target, ignore_errors=True)
        for stale in target.parent.glob(f"{glob.escape(target.name)}.partial-*"):
            if time.time() - stale.stat().st_mtime > INSTALL_TIMEOUT_S:  # a killed install's
                shutil.rmtree(stale, ignore_errors=True)
        staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(staging),
                    "--no-save",
                    "--no-package-lock",
                    f"{package}@{version}",
                ],
                env={
                    "npm_config_fetch_timeout": "60000",  # a registry that never answers: minutes, not 15
                    "npm_config_fetch_retries": "2",
                    **os.environ,
                    "npm_config_cache": str(cache / "npm-cache"),
                    "npm_config_update_notifier": "false",
                    "npm_config_fund": "false",
                    "npm_config_audit": "false",
                },
                cwd=target.parent,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            shutil.rmtree(staging, ignore_errors=True)
            _outage(
                cache,
                f"npm install {package}@{version} took over {INSTALL_TIMEOUT_S} s "
                "(is the registry reachable?)",
            )
        if proc.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            output = (proc.stderr + proc.stdout).strip()
            if unreachable(output):
                _outage(
                    cache,
                    f"npm cannot reach the registry to install {package}@{version}: {_first_error(output)}",
                )
            raise RuntimeError(f"npm install {package}@{version} failed ({proc.returncode}):\n{output}")
        (cache / OUTAGE_FILE).unlink(missing_ok=True)
        try:
            staging.rename(target)
        except OSError:  # another run finished first: keep its folder
            shutil.rmtree(staging, ignore_errors=True)
        if not path.exists():
            raise RuntimeError(
                f"npm installed {package}@{version} without {binary}; delete {target} and run again"
            )
        print(
            f"installed {package}@{version} in {time.monotonic() - started:.1f} s: {target}", file=sys.stderr
        )
    check_version(path, version)
    return path


OUTAGE_FILE = "unavailable"


def _outage(cache: Path, reason: str) -> NoReturn:
    """Remember that the registry is out of reach (for OUTAGE_S), and say so."""
    (cache / OUTAGE_FILE).write_text(reason + "\n")
    raise Unavailable(reason)


def _recent_outage(cache: Path) -> None:
    """Unavailable again, at once, when the registry was out of reach a moment ago."""
    marker = cache / OUTAGE_FILE
    try:
        age = time.time() - marker.stat().st_mtime
        reason = marker.read_text().strip()
    except OSError:
        return
    if age < OUTAGE_S:
        raise Unavailable(f"{reason} ({age:.0f} s ago; delete {marker} to try again now)")


def check_version(path: Path, version: str) -> None:
    """The installed binary runs and says it is `version` (npm could leave a placeholder)."""
    with tempfile.TemporaryDirectory(prefix="agent-cli-home-") as home:  # nothing lands in the real home
        env = {
            **os.environ,
            "HOME": home,
            "CLAUDE_CONFIG_DIR": str(Path(home) / ".claude"),
            "CODEX_HOME": str(Path(home) / ".codex"),
            "DISABLE_AUTOUPDATER": "1",
        }
        proc = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=60, check=False, env=env
        )
    if proc.returncode != 0 or version not in proc.stdout:
        raise RuntimeError(
            f"{path} --version gave {proc.returncode}: {proc.stdout!r} {proc.stderr!r}; "
            f"delete {path.parents[2]} and run again"
        )


def claude_code() -> Path:
    """The pinned `claude` binary."""
    package, version = CLAUDE_CODE
    return install(package, version, "claude")


def codex() -> Path:
    """The pinned `codex` binary (npm installs its native build for this platform)."""
    package, version = CODEX
    return install(package, version, "codex")


def _first_error(npm_output: str) -> str:
    """The line of npm's output that names the network failure."""
    return next((line.strip() for line in npm_output.splitlines() if unreachable(line)), npm_output[:200])


if __name__ == "__main__":  # `make agent-clis`: fill the cache now
    try:
        print(claude_code())
        print(codex())
    except Unavailable as exc:  # not a failure: the conformance tests skip and say why
        print(f"skipped: {exc}", file=sys.stderr)
    except RuntimeError as exc:  # a broken pin or install: one clear error, not a traceback
        sys.exit(f"error: {exc}")
