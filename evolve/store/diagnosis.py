"""Why git fails in an agent's repository, in the person's words, with what to do about it.

Asked once a command failed (`repository_problem`), and by status, doctor and sync for each
agent: a repository that is not the folder's own, owned by another user, with settings git
cannot read, or damaged (git's own check fails there) each has its own remedy; one git finds
sound is evolve's bug.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from evolve.regular import open_regular
from evolve.store.git import PLAIN_CONFIG, GitError, RepositoryDamaged, git, git_text


def is_own_repository(folder: Path, env: Mapping[str, str] | None = None) -> bool:
    """Whether `folder` is a git repository of its own (its `.git` is what git finds there).

    A missing, empty or damaged `.git` is not, and git asked there would answer for
    whatever repository encloses the folder, if any. `env`: PLAIN_CONFIG asks it without
    the person's global and system settings.
    """
    found = git_text(folder, "rev-parse", "--absolute-git-dir", check=False, env=env)
    return bool(found) and os.path.realpath(found) == os.path.realpath(folder / ".git")


def refused_as_others(folder: Path) -> bool:
    """Whether git refuses the repository at `folder` because another user owns it (safe.directory)."""
    try:
        git(folder, "rev-parse", "--absolute-git-dir")
    except GitError as exc:
        return "dubious ownership" in exc.stderr
    return False


def not_a_repository(why: str = "missing, empty or damaged") -> str:
    """What a person reads about an agent folder whose `.git` git does not take for a repository."""
    return (
        f"is not a git repository ({why}): nothing is committed, observed or synced for this "
        "agent; restore its .git from a backup, or clone the agent's remote into a new folder "
        "and move its files there"
    )


NOT_A_REPOSITORY = not_a_repository()


def no_repository_in(folder: Path) -> str:
    """Why an agent folder holds no repository of its own, in words.

    A `.git` file (a linked worktree's or a submodule's: the repository kept elsewhere) is
    named as what it is; anything else is NOT_A_REPOSITORY.
    """
    try:
        with open_regular(folder / ".git") as handle:  # a FIFO there held status and doctor forever
            first = handle.read(4096).split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    except OSError:  # a folder, a FIFO, or nothing at all
        return NOT_A_REPOSITORY
    if not first.startswith("gitdir:"):
        return NOT_A_REPOSITORY
    return (
        f"is a file naming a repository kept elsewhere (`{first[:200]}`; a linked worktree or a "
        "submodule): evolve keeps each agent in a repository of its own, so nothing is committed, "
        "observed or synced for this agent; move the folder aside and clone that repository in its "
        f"place (`git clone <that repository> {folder}`), then copy back any file it lacks"
    )


def repository_problem(exc: BaseException, check_s: float | None = None) -> str | None:
    """What the person reads when git failed for a reason of theirs; None: evolve's own bug.

    Asked only once a command failed. A damaged repository (lost objects, a corrupt index, an
    emptied `.git`: git's own check fails there), a repository git refuses because another
    user owns it, a git setting of the person's that does not parse: each is theirs to
    repair, and each has its own remedy (restoring a `.git` from a backup would lose what a
    sound one holds). A repository git finds sound is not, whatever the failure was.
    `check_s`: how long git's check may take (FSCK_TIMEOUT_S; a command over every agent
    gives each QUICK_CHECK_S, so that a few big damaged repositories do not hold it for minutes).
    """
    if isinstance(exc, RepositoryDamaged):  # named already (a broken branch file, a packed-refs git skips)
        return exc.problem
    if isinstance(exc, GitError) and exc.code < 0 and not exc.timed_out:  # killed from outside
        return (
            f"git was stopped by signal {-exc.code} (the system short of memory, a closed terminal, "
            "a kill): nothing of the repository is known to be wrong; run the command again"
        )
    if not isinstance(exc, GitError):  # any other failure is evolve's own
        return None
    repo = exc.cwd
    if repo is None or exc.timed_out:  # git never said
        return None
    if not is_own_repository(repo):
        if refused_as_others(repo):
            return owned_by_another(repo)
        if is_own_repository(repo, env=PLAIN_CONFIG):
            return _your_settings(_said(exc))
        if _settings_unreadable(repo):
            return settings_unreadable(repo, _said(exc))
        return not_a_repository(_said(exc))  # no repository there for git's fsck to check
    check_s = FSCK_TIMEOUT_S if check_s is None else check_s
    try:
        git(repo, "fsck", "--connectivity-only", "--no-dangling", "--no-progress", timeout=check_s)
    except GitError as again:
        if again.timed_out or again.code < 0:  # too big to check now, or stopped: the check to run
            stopped = f"in {check_s:g} s" if again.timed_out else f"(stopped by signal {-again.code})"
            return (
                f"git fails in this repository ({_said(exc)}), and git's own check did not finish "
                f"{stopped}: run `git -C {repo} fsck`; if it finds nothing wrong, this is "
                "evolve's bug: please report it"
            )
        return damage_remedy(repo, exc)
    return None


def repository_problems(failures: Sequence[BaseException], check_s: float) -> list[str | None]:
    """`repository_problem` of each failure, git's checks run side by side.

    A command over every agent waits for the slowest check, not for their sum: three big
    damaged repositories took three QUICK_CHECK_S one after another.
    """
    if len(failures) < 2:
        return [repository_problem(exc, check_s) for exc in failures]
    from concurrent.futures import ThreadPoolExecutor  # lazily: only a command over damaged agents

    with ThreadPoolExecutor(max_workers=min(MAX_CHECKS_AT_ONCE, len(failures))) as pool:
        return list(pool.map(lambda exc: repository_problem(exc, check_s), failures))


FSCK_TIMEOUT_S = 60  # `fsck --connectivity-only` of 5,000 commits and 2,000 skills: 1.4 s
QUICK_CHECK_S = 5  # each agent's check in `status` and `sync` over every agent
MAX_CHECKS_AT_ONCE = 4  # git's checks of damaged repositories run side by side, this many at once


def owned_by_another(repo: Path) -> str:
    """What a person reads about a sound repository git refuses: another user owns it."""
    return (
        "git refuses this repository: it is owned by another user (safe.directory); nothing "
        "is committed, observed or synced for this agent; run evolve as the folder's owner, or "
        "`chown -R` the folder to this user, or "
        f"`git config --global --add safe.directory {repo}`"
    )


def damage_remedy(repo: Path, exc: GitError) -> str:
    """What a person reads about a repository git cannot read: what git said and what to do."""
    return (
        f"git fails in this repository ({_said(exc)}): nothing is committed, observed or synced for "
        f"this agent; run `git -C {repo} fsck` and repair it, or restore its .git from a backup"
    )


def settings_unreadable(repo: Path, said: str) -> str:
    """What a person reads about a repository whose `.git/config` (or a file it includes) does not parse."""
    if (repo / ".git" / "config").is_dir():
        return (
            f"git cannot read this repository's settings ({said}): {repo}/.git/config is a folder, where "
            "git keeps a file; nothing is committed, observed or synced for this agent; move the folder "
            "aside (git then reads the repository's default settings; set its remote again with "
            "`evolve remote`)"
        )
    return (
        f"git cannot read this repository's settings ({said}): nothing is committed, observed "
        f"or synced for this agent; fix or remove the line git names in {repo}/.git/config or a file "
        "it includes (nothing else of the repository is known to be wrong)"
    )


def unreadable_settings(repo: Path) -> str | None:
    """Why git reads no repository for a setting that does not parse (yours or its own); else None.

    Doctor asks it for a folder git takes for no repository: a bad line is no lost `.git`.
    """
    try:
        git(repo, "rev-parse", "--absolute-git-dir")
    except GitError as exc:
        if is_own_repository(repo, env=PLAIN_CONFIG):
            return _your_settings(_said(exc))
        if _settings_unreadable(repo):
            return settings_unreadable(repo, _said(exc))
    return None


def _your_settings(said: str) -> str:
    return (
        f"git fails with your git settings ({said}): nothing is committed, observed "
        "or synced for this agent; repair or remove the setting git names (the repository is sound)"
    )


def _settings_unreadable(repo: Path) -> bool:
    """Whether the repository's own `.git/config` does not parse: one bad line, not a lost repository."""
    config = repo / ".git" / "config"
    if config.is_dir():  # git reads it as "unknown error occurred while reading the configuration files"
        return True
    if not config.is_file():
        return False
    try:
        git(repo, "config", "--file", str(config), "--list", timeout=10)
    except GitError:
        return True
    return False


def _said(exc: GitError) -> str:
    """The last line git printed: the one that names what failed."""
    return exc.stderr.splitlines()[-1] if exc.stderr else str(exc)
