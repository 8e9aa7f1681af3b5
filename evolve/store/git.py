"""Running the git command line: the one door for every git write.

Writes go through the CLI (not GitPython's index/commit path, which moves branches
without checking HEAD). The environment is scrubbed of GIT_DIR/GIT_INDEX_FILE & co. so
running inside a git hook cannot redirect evolve's commands to the wrong repository, and of
the variables that hand git configuration or programs to run (GIT_CONFIG_COUNT and its
GIT_CONFIG_KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH, GIT_EXTERNAL_DIFF …): a
project that sets them (a .envrc, "env" in a committed .claude/settings.json, inherited by
the watcher a session starts) would otherwise run a command of its own in every git call
evolve makes (`core.fsmonitor` runs at each read of the index).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from evolve.errors import Busy, EvolveError, UserError

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any

_SCRUB = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_EDITOR",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_TEMPLATE_DIR",
)
_SCRUB_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
ZERO = "0" * 40


TIMED_OUT = -1000  # a GitError's code when evolve stopped git at its timeout: no exit status, no signal


class GitError(EvolveError):
    """A git command failed; carries its stderr (and stdout: `git push --porcelain` reports there).

    `code` is git's exit status, minus the signal that killed it, or TIMED_OUT.
    """

    def __init__(
        self, args: Sequence[str], code: int, stderr: str, stdout: str = "", cwd: Path | None = None
    ) -> None:
        self.code = code
        self.stderr = stderr.strip()
        self.stdout = stdout
        self.cwd = cwd  # where it ran: `damaged` asks git about that repository
        super().__init__(f"git {' '.join(args[:3])} failed ({code}): {self.stderr[:500]}")

    @property
    def timed_out(self) -> bool:
        """Stopped by evolve at its timeout (a git killed by a signal, say a hang-up, is not)."""
        return self.code == TIMED_OUT


class RepositoryDamaged(UserError):
    """A repository evolve found damaged itself, before any git failed: `problem` says what and the repair."""

    def __init__(self, repo: Path, problem: str) -> None:
        self.problem = problem
        super().__init__(f"{repo}: {problem}")


# For reading history as it is: a person's global and system settings (blame.ignoreRevsFile,
# diff.noprefix, diff.external, …) must not change who wrote a line or what a commit removed.
PLAIN_CONFIG = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


# (the process environment's raw bytes when last scrubbed, the scrubbed copy): one tuple, so a
# thread never pairs one environment's bytes with another's copy
_scrubbed: tuple[dict[bytes, bytes] | None, dict[str, str]] = (None, {})


def _scrubbed_environment() -> dict[str, str]:
    """os.environ without the variables in _SCRUB, built again only when the environment changed.

    Decoding and filtering every variable cost ~0.15 ms of CPU per git command (a tenth of the
    command's whole cost; a sync runs ~190): comparing the raw bytes CPython keeps the
    environment in (`os.environ._data`, bytes on POSIX) costs a few microseconds. Without
    that mapping the copy is built each time.
    """
    global _scrubbed
    raw = getattr(os.environ, "_data", None)
    seen, env = _scrubbed
    if raw is None or raw != seen:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)}
        if isinstance(raw, dict):
            _scrubbed = (dict(raw), env)
    return env


def git_env(extra: Mapping[str, str] | None = None, *, keep_index: bool = False) -> dict[str, str]:
    env = dict(_scrubbed_environment())
    if keep_index and "GIT_INDEX_FILE" in os.environ:
        env["GIT_INDEX_FILE"] = os.environ["GIT_INDEX_FILE"]
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
    if extra:
        env.update(extra)
    return env


def git(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    keep_index: bool = False,
    timeout: float | None = None,
    own: bool = False,
) -> bytes:
    """Run `git -C cwd args…`; return stdout bytes; raise GitError on failure.

    `timeout` (network commands): the process is killed after that many seconds and the
    failure is a GitError whose stderr says it timed out. `own`: cwd's own `.git` is the
    repository, and git never looks above cwd for another (an emptied `.git` in a home kept
    inside a person's repository would have git answer for theirs).
    """
    if own:
        env = {**(env or {}), "GIT_CEILING_DIRECTORIES": str(Path(os.path.realpath(cwd)).parent)}
    try:
        proc = subprocess.run(
            _argv(args),
            cwd=cwd,
            input=input,
            capture_output=True,
            env=git_env(env, keep_index=keep_index),
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise GitError(args, TIMED_OUT, f"timed out after {timeout:g} s") from None
    return _result(args, proc.returncode, proc.stdout, proc.stderr, check, cwd)


def update_lines(updates: Sequence[tuple[str, str, str | None]]) -> list[str]:
    """`update-ref --stdin` lines moving each (ref, new, old); ZERO as new deletes, as old creates.

    An `old` of None moves the ref whatever it holds.
    """
    return [f"update {ref} {to} {was or ''}".rstrip() for ref, to, was in updates]


class RefTransaction:
    """`git update-ref --stdin` driven a line at a time: refs held locked between `prepare` and `commit`.

    Once `prepare` answers, every ref named is locked and at its old value (and HEAD is
    locked too when it names one of them: git writes its reflog in the same transaction),
    so what the caller does before `commit` (show its index) cannot meet a person's move of
    that branch or a `git checkout -b`. Each answer is awaited alone, within `timeout`; a
    process that does not answer is ended (SIGTERM: git removes its lock files), and one
    whose stdin closes before `commit` aborts: nothing moves. One git process, as before.
    """

    def __init__(self, cwd: Path, updates: Sequence[str], reason: str, timeout: float = 30.0) -> None:
        self.args, self.timeout = ("update-ref", "-m", reason, "--stdin"), timeout
        self.script = "start\n" + "".join(line + "\n" for line in updates) + "prepare\n"
        self.error = ""
        self._buffer, self._stderr = b"", b""
        self.proc = spawn(cwd, self.args, subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._open = {self.proc.stdout.fileno(), self.proc.stderr.fileno()}

    def prepare(self) -> bool:
        """Lock the refs and compare their old values: False (and ended) when git refuses.

        GitError when git does not answer within the timeout (it is ended: nothing moved).
        """
        if self._ask(self.script, ("start: ok", "prepare: ok")):
            return True
        self.close()
        return False

    def commit(self) -> bool:
        """Move the prepared refs; False when git did not say it did (ask the ref what it holds)."""
        try:
            done = self._ask("commit\n", ("commit: ok",))
        except GitError:
            done = False
        self.close()
        return done and self.proc.returncode == 0

    def close(self) -> None:
        """End the process: stdin closed before `commit` aborts the transaction; ended if it hangs."""
        if self.proc.returncode is not None:
            return
        assert self.proc.stdin is not None and self.proc.stderr is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        deadline = time.monotonic() + self.timeout
        while self._open and self.proc.poll() is None:
            if time.monotonic() >= deadline:
                self._end()
                return
            self._read(min(deadline, time.monotonic() + 0.05))
        # what it printed before it ended; not up to EOF: a hook's background child may hold the pipe
        while self._open and time.monotonic() < deadline and self._read(time.monotonic()):
            pass
        self.proc.wait()
        self.error = self._stderr.decode("utf-8", "replace").strip()
        self._streams_closed()

    def _ask(self, lines: str, answers: Sequence[str]) -> bool:
        """Send `lines`, then read one line per expected answer; False at the first other line or EOF."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(lines.encode("utf-8", "surrogateescape"))
            self.proc.stdin.flush()
        except OSError:  # git ended already: its stderr says why
            return False
        return all(self._line() == answer for answer in answers)

    def _line(self) -> str | None:
        """The next line git prints (None at EOF); GitError, the process ended, past the timeout."""
        assert self.proc.stdout is not None
        out = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            if out not in self._open:
                return None
            if time.monotonic() >= deadline or not self._read(deadline):
                self._end()
                raise GitError(self.args, TIMED_OUT, f"timed out after {self.timeout:g} s")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace")

    def _read(self, deadline: float) -> bool:
        """Read what git (or a hook it runs) printed on stdout or stderr; False: nothing by `deadline`.

        Both pipes are read as they fill: a `reference-transaction` hook's output goes to
        git's stderr, and a full stderr pipe nobody reads would stall git until the timeout.
        Only stderr's last 64 KiB are kept (`error`: git's own reason comes after a hook's output).
        """
        import select

        assert self.proc.stdout is not None
        left = max(0.0, deadline - time.monotonic())  # 0: only what is there already
        ready = select.select(sorted(self._open), [], [], left)[0]
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                self._open.discard(fd)
            elif fd == self.proc.stdout.fileno():
                self._buffer += chunk
            else:
                self._stderr = (self._stderr + chunk)[-65536:]
        return bool(ready)

    def _end(self) -> None:
        """SIGTERM (git's handler removes its lock files), SIGKILL if that is not enough."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._streams_closed()

    def _streams_closed(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def spawn(cwd: Path, args: Sequence[str], stdin: int, *, keep_index: bool = False) -> subprocess.Popen[bytes]:
    """A git process running beside evolve, its stdout and stderr piped back."""
    return subprocess.Popen(
        _argv(args),
        cwd=cwd,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_env(keep_index=keep_index),
    )


def _argv(args: Sequence[str]) -> list[str]:
    return ["git", "-c", "core.quotepath=off", *args]


def _result(
    args: Sequence[str], code: int, stdout: bytes, stderr: bytes, check: bool, cwd: Path | None = None
) -> bytes:
    if check and code != 0:
        raise GitError(args, code, stderr.decode("utf-8", "replace"), stdout.decode("utf-8", "replace"), cwd)
    return stdout


def git_text(cwd: Path, *args: str, **kwargs: Any) -> str:
    return git(cwd, *args, **kwargs).decode("utf-8", "replace").strip()


def broken_branch_remedy(repo: Path, branch: str) -> str:
    """What a person reads about a branch whose ref file names no commit (`head.broken_branch`)."""
    return (
        f"refs/heads/{branch} names no commit (its file is damaged or gone): nothing is committed, "
        f"observed or synced for this agent; remove the file and point the branch at its last commit (the "
        f"last line of .git/logs/refs/heads/{branch} names it: `rm -f {repo}/.git/refs/heads/{branch} && "
        f"git -C {repo} update-ref refs/heads/{branch} COMMIT`), or restore its .git from a backup"
    )


class BrokenBranch(RepositoryDamaged):
    """A branch whose ref file names no commit: the person's to repair, `problem` says how."""

    def __init__(self, repo: Path, branch: str) -> None:
        super().__init__(repo, broken_branch_remedy(repo, branch))


def config_values(cwd: Path, *keys: str, local: bool = False) -> dict[str, bytes]:
    """Each of `keys` that is set → its value as `git config KEY` prints it (the last one set).

    One `git config --get-regexp` for all of them, where each key asked alone is a process.
    """
    import re

    pattern = "^(" + "|".join(re.escape(key.lower()) for key in keys) + ")$"
    out = git(cwd, "config", *(["--local"] if local else []), "-z", "--get-regexp", pattern, check=False)
    found: dict[str, bytes] = {}
    for item in out.split(b"\0"):
        if item:
            key, _, value = item.partition(b"\n")  # a key set without `=` has no value
            found[key.decode("utf-8", "replace")] = value
    return found


LOCK_MARK = b"evolve-index-lock pid="


def acquire_index_lock(git_dir: Path, timeout: float = 30.0) -> int:
    """Take git's own `index.lock` (O_EXCL), waiting while a person's git holds it.

    Never deletes a lock another process may hold. The lock evolve creates carries its pid
    (the new index is written beside it and renamed over the index), so a lock left by a
    killed evolve process is recognised (its pid is dead) and recovered.
    """
    path = git_dir / "index.lock"
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if _stale_evolve_lock(path):
                path.unlink(missing_ok=True)
                continue
            if time.monotonic() >= deadline:  # a person's git at work, or one killed: not evolve's bug
                raise Busy(
                    f"{path} exists for over {timeout:.0f}s; if no git process is running, "
                    "remove it by hand and retry"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
            continue
        os.write(fd, LOCK_MARK + str(os.getpid()).encode() + b"\n")
        return fd


def _stale_evolve_lock(path: Path) -> bool:
    """An index.lock evolve created whose process is gone."""
    try:
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    if not head.startswith(LOCK_MARK):
        return False
    digits = head[len(LOCK_MARK) :].split(b"\n", 1)[0]
    if not digits.isdigit():
        return False
    pid = int(digits)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
