"""A new agent for a test, copied from one `Agent.create` built earlier in this process.

`Agent.create` costs ~35 ms of CPU (seven git processes); a copy of the same repository,
its pre-commit hook and core.hooksPath rewritten for the test's home and its index refreshed,
~9 ms. Only where the copy cannot differ from what `Agent.create` would have built here:

- one agent of a name per test: a test's second agent of that name (two machines, say) is
  created for real, so two agents of one test never share an init commit;
- a home holding a config.toml (it names the identity of evolve's commits), or a git
  variable set: created for real; a git configuration, TZ or umask of its own: a template of its own.

The tests of `Agent.create` itself call it, not `make_agent`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from evolve.home import Home
from evolve.store import commit
from evolve.store.git import git
from evolve.store.repo import Repo
from evolve.workspace.agent import Agent
from evolve.workspace.template import hook_path, hooks_folder, precommit_hook_text

_ROOT: Path | None = None  # this process's homes of templates (removed at its exit)
_TEMPLATES: dict[tuple[str, str], Path] = {}  # (name, what shapes a new agent) → its repository
_HANDED: set[tuple[str, str]] = set()  # (test, name) given a copy: the next one is created for real


def new_agent(name: str, home: Home) -> Agent:
    """Agent `name` in `home`, as `Agent.create(name, home)` makes it."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" ")[0]  # "… (setup)" or "(call)"
    variables = {k for k in os.environ if k.startswith("GIT_")} - {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"}
    if not test or (test, name) in _HANDED or home.config_file.exists() or variables:
        return Agent.create(name, home)
    _HANDED.add((test, name))
    key = (name, _shape())
    if key not in _TEMPLATES:
        _TEMPLATES[key] = Agent.create(name, Home.resolve(str(_root() / str(len(_TEMPLATES))))).path
    template = _TEMPLATES[key]

    def build(target: Path) -> None:
        shutil.copytree(template, target, symlinks=True)
        hook_path(target).write_text(precommit_hook_text(home.root), encoding="utf-8")
        git(target, "config", "--local", "core.hooksPath", hooks_folder(home.agent_dir(name)))
        # the copies' inodes and change times differ: git would see every file as touched
        git(target, "update-index", "-q", "--refresh")
        repo = Repo(target)
        commit.remember_index(repo, repo.tip() or "", (repo.git_dir / "index").read_bytes())

    return Agent.build_aside(home, name, build)


def _shape() -> str:
    """What, besides the name, could make `Agent.create` build another repository."""
    umask = os.umask(0o22)
    os.umask(umask)
    config = os.environ.get("GIT_CONFIG_GLOBAL", "")
    text = Path(config).read_text(errors="replace") if config and Path(config).is_file() else ""
    return repr((text, os.environ.get("GIT_CONFIG_NOSYSTEM"), os.environ.get("TZ"), umask))


def _root() -> Path:
    global _ROOT
    if _ROOT is None:
        _ROOT = Path(tempfile.mkdtemp(prefix="evolve-agent-templates-"))
        atexit.register(shutil.rmtree, _ROOT, True)
    return _ROOT
