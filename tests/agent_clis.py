"""The real agent CLIs the conformance tests drive, installed with npm at pinned versions.

Each package goes to a version-keyed, git-ignored folder in the repository,
`.cache/agent-clis/<package>@<version>/` (npm's own cache beside it, in
`.cache/agent-clis/npm-cache/`), filled once and reused by every later run: a version bump is
one constant below. The install goes to a temporary folder renamed into place when it is
complete, so an interrupted install never looks like a finished one.

When npm is missing or cannot reach the registry, `install` raises `Unavailable` (the tests
skip with its reason); any other failure (a version that does not exist, a binary that does
not run) is an error, so a broken pin is never mistaken for a machine without network.

Fill the cache ahead of a test run with `python tests/agent_clis.py` (`make agent-clis`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLAUDE_CODE = ("@anthropic-ai/claude-code", "2.1.332")  # bump a version here, nowhere else
CODEX = ("@openai/codex", "0.171.0")

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "agent-clis"
INSTALL_TIMEOUT_S = 900
# npm's codes (and Node's) for "the registry could not be reached"
_NETWORK = re.compile(
    r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
    r"ESOCKETTIMEDOUT|ECONNABORTED|EPROTO|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|"
    r"SELF_SIGNED_CERT_IN_CHAIN|network|socket hang up|getaddrinfo)\b",
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
        target.parent.mkdir(parents=True, exist_ok=True)
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
            raise Unavailable(
                f"npm install {package}@{version} took over {INSTALL_TIMEOUT_S} s "
                "(is the registry reachable?)"
            ) from None
        if proc.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            output = (proc.stderr + proc.stdout).strip()
            if unreachable(output):
                raise Unavailable(
                    f"npm cannot reach the registry to install {package}@{version}: {_first_error(output)}"
                )
            raise RuntimeError(f"npm install {package}@{version} failed ({proc.returncode}):\n{output}")
        try:
            staging.rename(target)
        except OSError:  # another run finished first: keep its folder
            shutil.rmtree(staging, ignore_errors=True)
        print(
            f"installed {package}@{version} in {time.monotonic() - started:.1f} s: {target}", file=sys.stderr
        )
    check_version(path, version)
    return path


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
