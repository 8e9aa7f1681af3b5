"""Small helpers shared by the tests: agents in the test home, skill folders, plain git.

Import as `from tests.helpers import ...`: pytest's importlib mode registers the
`tests` folder as a namespace package, so this works without a `tests/__init__.py`
and without touching sys.path.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evolve.cli import main
from evolve.home import Home
from evolve.integrations import upgrade
from evolve.store import ledger
from evolve.store.history import build_message
from evolve.store.identity import Identity
from evolve.workspace.agent import Agent
from tests.agent_template import new_agent

EVOLVE = Identity("evolve", "evolve@localhost")
ROOT = Path(__file__).resolve().parents[1]
# what a wheel is never built from: caches (.cache holds the agent CLIs: GBs), builds, the tests
NOT_SOURCE = (
    ".venv",
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".hypothesis",
    ".cache",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "tests",
)


def copy_source_tree(dest: Path, *also_left_out: str) -> Path:
    """The repository's source as a wheel is built from it (`NOT_SOURCE` left out), at `dest`.

    `also_left_out`: top-level folders (`examples`, not `evolve/examples`: a package's data).
    """
    not_source = shutil.ignore_patterns(*NOT_SOURCE)

    def ignored(folder: str, names: list[str]) -> set[str]:
        top = {name for name in names if name in also_left_out} if Path(folder) == ROOT else set()
        return set(not_source(folder, names)) | top

    shutil.copytree(ROOT, dest, ignore=ignored)
    return dest


def build_wheel(work: Path, *also_left_out: str) -> Path:
    """The wheel of evolve, built offline from a copy of the source under `work` (pip writes only there).

    What the build said (the backend's warnings too) is kept in `work/build.log`.
    """
    import sys

    source = copy_source_tree(work / "src", *also_left_out)
    home = work / "pip-home"  # pip (and the rustc it asks for its version) write nothing in the real home
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "PIP_NO_CACHE_DIR": "1"}
    dist = work / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--verbose", "--no-build-isolation", "--no-deps", "--no-index"]
        + ["-w", str(dist), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    (work / "build.log").write_text(built.stdout + built.stderr)
    return next(dist.glob("evolve_skills-*.whl"))


def make_agent(name: str = "demo", home: Path | None = None) -> Agent:
    """A new agent in `home` (default: the test's EVOLVE_HOME), as `evolve init` makes it.

    Copied from one built earlier in this process where the copy cannot differ
    (tests.agent_template). A home it begins, or finds up to date, records today's layout with
    the new agent, as `evolve init` does: its commands need no upgrade check
    (tests/test_upgrade.py removes the record to have one).
    """
    resolved = Home.resolve(home)
    current = upgrade.holds_nothing_older(resolved) or upgrade.applied(resolved) >= upgrade.LAYOUT
    made = new_agent(name, resolved)
    if current:
        upgrade.record_current(resolved)
    return made


@pytest.fixture
def agent(evolve_home) -> Agent:
    """Agent `demo` in the test's home; a module takes it as `agent = helpers.agent`."""
    return make_agent("demo")


def bundle_of(agent: Agent, now: float | None = None):
    """The reflection bundle evolve builds for `agent` now (on a connection of its own)."""
    from evolve.reflect.bundle import build_bundle

    with ledger.opened(agent.home.state_db) as conn:
        return build_bundle(conn, agent, now=now)


def skill_text(name: str, description: str = "Use when testing things.", body: str = "- step one\n") -> str:
    """A valid SKILL.md with simple frontmatter."""
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}"


def write_skill(
    root: Path,
    name: str,
    description: str = "Use when testing things.",
    body: str = "- step one\n",
    *,
    text: str | bytes | None = None,
) -> Path:
    """Write `root/skills/<name>/SKILL.md` (valid unless `text` says otherwise)."""
    path = root / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    content = skill_text(name, description, body) if text is None else text
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def git(
    repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run git in `repo` like a person would (their config, their hooks).

    Without `env`, git inherits this process's environment as it is: a copy of os.environ
    decoded and encoded again cost ~0.1 ms of CPU per command.
    """
    full_env = {**os.environ, **env} if env else None
    proc = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, env=full_env, input=input, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def git_out(repo: Path, *args: str) -> str:
    """Stdout of a git command, stripped."""
    return git(repo, *args).stdout.strip()


def commit_all(
    repo: Path, message: str = "my edit", *, no_verify: bool = False, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`git add -A && git commit -m message`, as a person does it."""
    git(repo, "add", "-A")
    args = ["commit", "-q", "-m", message] + (["--no-verify"] if no_verify else [])
    return git(repo, *args, check=check)


def head(repo: Path) -> str:
    return git_out(repo, "rev-parse", "HEAD")


def parsed_trailers(repo: Path, rev: str = "HEAD") -> dict[str, str]:
    """The commit's trailers as `git interpret-trailers --parse` reads them (repeats joined by ', ')."""
    result: dict[str, str] = {}
    for key, values in trailer_lines(repo, rev).items():
        result[key] = ", ".join(values)
    return result


def trailer_lines(repo: Path, rev: str = "HEAD") -> dict[str, list[str]]:
    """Every trailer line of the commit, by key, as git parses them."""
    message = git_out(repo, "log", "-1", "--format=%B", rev)
    out = git(repo, "interpret-trailers", "--parse", input=message + "\n").stdout
    result: dict[str, list[str]] = {}
    for line in out.splitlines():
        key, _, value = line.partition(": ")
        result.setdefault(key, []).append(value)
    return result


def evolve_commit(
    agent: Agent,
    changes: dict[str, bytes | None],
    subject: str = "reflect(demo): test",
    trailers: dict[str, object] | None = None,
) -> str:
    """One evolve commit through the real write path (lock, journal, CAS)."""
    message = build_message(subject, trailers or {"Evolve-Kind": "reflection"})
    with agent.repo.locked():
        return agent.repo.commit_changes(changes, message, EVOLVE)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`evolve ARGS` through the console script's entry point, in this process.

    Its exit code, stdout and stderr, as a subprocess's would be, without a fresh Python (~0.1 s
    of CPU each) where the process boundary is not what the test is about.
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
    return subprocess.CompletedProcess(["evolve", *args], code, out.getvalue(), err.getvalue())


def damage(agent_path: Path, how: str) -> None:
    """Break an agent's repository as a full disk or a sync tool does: objects lost, index cut, .git gone."""
    dot = agent_path / ".git"
    if how == "objects":
        shutil.rmtree(dot / "objects")
        (dot / "objects").mkdir()
    elif how == "index":
        (dot / "index").write_bytes(b"DIRC cut short")
    else:  # emptied
        shutil.rmtree(dot)
        dot.mkdir()
