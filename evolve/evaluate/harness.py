"""The one door to Claude Code's eval harness: `claude plugin eval`, found, checked, run, stopped.

`claude` comes from `[eval] claude` in config.toml, else PATH. The harness runs as the person
(their own credential: the environment as it is, never printed) in its own process group, so a
Ctrl-C or a SIGTERM reaches it once, from evolve: it then stops the run in flight and still
writes what it has (`partial`), which evolve records as such.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evolve.errors import UserError

HELP_TIMEOUT_S = 60
INSTALL = "install Claude Code (https://code.claude.com/docs/en/setup)"


def find_claude(configured: str) -> Path:
    """The `claude` binary: `[eval] claude`, else the first on PATH; UserError when there is none."""
    if configured:
        path = Path(configured).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise UserError(
                f"[eval] claude = {configured!r} in config.toml is not a program; fix the path or remove "
                "the line to use `claude` from PATH"
            )
        return path
    found = shutil.which("claude")
    if found is None:
        raise UserError(
            f"Claude Code is not installed (no `claude` on PATH): {INSTALL}, or set "
            '[eval] claude = "/path/to/claude" in config.toml'
        )
    return Path(found)


def eval_help(claude: Path, env: dict[str, str]) -> str:
    """`claude plugin eval --help`; UserError when this Claude Code has no such command."""
    try:
        proc = subprocess.run(
            [str(claude), "plugin", "eval", "--help"],
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT_S,
            check=False,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"{claude} did not run ({exc}); reinstall Claude Code or fix [eval] claude") from None
    if proc.returncode != 0 or "--trust-plugin" not in proc.stdout:
        raise UserError(
            f"{claude} has no `claude plugin eval` command (an older Claude Code?); update Claude Code "
            "(2.1.332 or later runs plugin evals)"
        )
    return proc.stdout


@dataclass(frozen=True)
class Finished:
    """How the harness ended: its exit code, what it wrote on stderr, and whether evolve stopped it."""

    code: int
    stderr: str
    interrupted: bool


def run(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> Finished:
    """Run the harness to its end; SIGINT/SIGTERM to evolve stop it once, cleanly (SIGINT to it).

    A second signal ends its whole process group (SIGTERM), as does a stop once it has
    exited: nothing it started (a hung tool, a child of its own) outlives `evolve eval`.

    Its stdout and stderr go to `log` (progress for a person who wants it; stdout stays evolve's).
    """
    stopped: list[int] = []
    proc: subprocess.Popen[bytes] | None = None

    def stop(signum: int, _frame: object) -> None:
        if proc is not None and proc.poll() is None:  # first: it finishes up, writes a partial result
            if stopped:
                _end_group(proc.pid)
            else:
                proc.send_signal(signal.SIGINT)
        stopped.append(signum)

    with log.open("w+", encoding="utf-8", errors="replace") as out:
        # caught before the harness starts: a Ctrl-C while it starts is its too, never a traceback
        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
            if len(stopped) == 1:  # asked to stop while it started: it is told now
                proc.send_signal(signal.SIGINT)
            elif stopped:
                _end_group(proc.pid)
            code = proc.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if stopped:  # what it started and left behind (a tool's process, a hung child) stops too
            _end_group(proc.pid)
        out.seek(0)
        return Finished(code, out.read(), bool(stopped))


def _end_group(group: int) -> None:
    """SIGTERM to every process left in the harness's own process group (its session)."""
    try:
        os.killpg(group, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass  # none left
