"""What `evolve init` lays down in a new agent repository: the skeleton and its git setup.

The skeleton comes from `evolve/template_workspace/` and the hook from `evolve/hooks/pre-commit`
(both package data); the skeleton makes the repository a Claude Code and Codex plugin too
(`PLUGIN_FILES`, evolve.integrations.plugin). The hook runs this interpreter isolated (`-I`,
evolve.launch), so neither a folder named `evolve` in the repository nor a PYTHON* variable
of the person's shell runs in evolve's place, and the repository's own `core.hooksPath`
points at its hooks folder, so a person's global `core.hooksPath` cannot silently switch the
checks off.
Files are stored byte for byte (`core.autocrlf=false`, and `.git/info/attributes` turns
off line-ending conversion and filters): a checkout never rewrites a line, so whoever
wrote it stays its author.
"""

from __future__ import annotations

import os
import shlex
import sys
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from evolve import launch
from evolve.regular import read_regular
from evolve.store.git import config_values, git

HOOK_MARKER = "evolve-managed-hook: pre-commit"
_HOME_LINE = "export EVOLVE_HOME="  # the line of the hook that names its home
CONFIG = ("core.hooksPath", "core.autocrlf")  # the repository's own settings evolve makes
# The files that make an agent repository a Claude Code and Codex plugin (evolve.integrations.plugin)
PLUGIN_FILES = (
    ".claude-plugin/plugin.json",
    ".claude-plugin/marketplace.json",
    ".codex-plugin/plugin.json",
    "hooks/hooks.json",
    "hooks/evolve-hook",
)
# What can make a harness run a command wherever the agent is loaded as a plugin: its manifests
# (which may declare hooks and servers inline), hooks, MCP/LSP/app servers, executables, settings
PLUGIN_PARTS = (
    ".claude-plugin",
    ".codex-plugin",
    "hooks",
    ".mcp.json",
    ".lsp.json",
    ".app.json",
    "bin",
    "monitors",
    "settings.json",
)
# Package data cannot hold a name starting with a dot: the template's top-level names for them
DOTTED = {"gitignore": ".gitignore", "claude-plugin": ".claude-plugin", "codex-plugin": ".codex-plugin"}
BYTE_EXACT = (
    "# evolve: an agent's files are stored byte for byte (no line-ending conversion, no filters)\n"
    "* -text -filter -ident -working-tree-encoding\n"
)


def template_files(name: str) -> dict[str, bytes]:
    """The skeleton of a new agent repository, with the agent's name filled in."""
    files: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for entry in node.iterdir():
            if entry.name in ("__pycache__", "__init__.py"):  # the package's, not the template's
                continue
            target = DOTTED.get(entry.name, entry.name) if prefix == "" else entry.name
            if entry.is_dir():
                walk(entry, f"{prefix}{target}/")
                continue
            files[prefix + target] = entry.read_bytes().replace(b"{{name}}", name.encode())

    walk(resources.files("evolve.template_workspace"), "")
    return files


def plugin_files(name: str) -> dict[str, bytes]:
    """The plugin's files as evolve writes them for agent `name`."""
    template = template_files(name)
    return {path: template[path] for path in PLUGIN_FILES}


def precommit_hook_text(home: Path, python: str | None = None) -> str:
    """The hook as evolve installs it: this interpreter and this home, shell-quoted."""
    text = (resources.files("evolve.hooks") / "pre-commit").read_text(encoding="utf-8")
    # shell-quoted: a home or interpreter path holding a quote must not break every commit
    python = python or sys.executable
    text = text.replace("'{{python}}'", shlex.quote(python))
    text = text.replace("'{{code}}'", shlex.quote(launch.code(launch.PRECOMMIT, python)))
    return text.replace("if [ -x", f"{_HOME_LINE}{shlex.quote(str(home))}\nif [ -x", 1)


def hook_path(repo_path: Path) -> Path:
    return repo_path / ".git" / "hooks" / "pre-commit"


def hooks_folder(repo_path: Path) -> str:
    """The repository's own hooks folder as core.hooksPath names it: whole, links resolved.

    Not `.git/hooks`: git resolves a relative path at the top of the work tree it commits in,
    and in a linked worktree (`git worktree add`) `.git` is a file, so no hook ran there. A
    moved home is set up again by the next command (integrations.upgrade records the home).
    """
    return os.path.join(os.path.realpath(repo_path / ".git"), "hooks")  # noqa: PTH118 - a config value


def hooks_path(repo_path: Path) -> str:
    """The repository's own core.hooksPath ("" when unset)."""
    value = config_values(repo_path, "core.hooksPath", local=True).get("core.hookspath", b"")
    return value.decode("utf-8", "replace").strip()


def persons_hooks_path(value: str) -> bool:
    """Whether a core.hooksPath is a person's own (husky's `.husky`, say), not one evolve wrote.

    Evolve wrote none (layout 1), `.git/hooks` (2-8) or a repository's hooks folder whole (9;
    a moved home's or renamed folder's old one too).
    """
    return value not in ("", ".git/hooks") and not value.replace("\\", "/").rstrip("/").endswith(
        "/.git/hooks"
    )


def hooks_problems(repo_path: Path, home: Path) -> list[str]:
    """What differs from the hook setup evolve installs (empty: current)."""
    found = []
    hook = hook_path(repo_path)
    try:
        current = _text_of(hook)
    except OSError:
        current = ""
    if HOOK_MARKER not in current:
        found.append("evolve's pre-commit hook is missing")
    elif current != precommit_hook_text(home) and not _another_homes_hook(repo_path, home, current):
        found.append("evolve's pre-commit hook is from an older evolve or another interpreter")
    config = {
        k: v.decode("utf-8", "replace").strip()
        for k, v in config_values(repo_path, *CONFIG, local=True).items()
    }
    configured = config.get("core.hookspath", "")
    if configured != hooks_folder(repo_path):
        found.append(
            f"the repository's core.hooksPath is {configured or 'unset'}, not {hooks_folder(repo_path)}"
        )
    if config.get("core.autocrlf", "") != "false":
        found.append("the repository may convert line endings (core.autocrlf is not false)")
    try:
        attributes = _text_of(repo_path / ".git" / "info" / "attributes")
    except OSError:
        attributes = ""
    if BYTE_EXACT not in attributes:
        found.append(".git/info/attributes does not keep files byte for byte")
    return found


def _text_of(path: Path) -> str:
    """A file of evolve's in .git ("" when absent); NotRegular for a FIFO or folder in its place.

    Never a plain open: a FIFO where the hook or the attributes go held every writing command
    and doctor forever, waiting for a writer.
    """
    try:
        return read_regular(path).decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _another_homes_hook(repo_path: Path, home: Path, hook: str) -> bool:
    """Whether `hook` is the one of another evolve home, whose agents/ folder holds the repository.

    An agent a link under this home's agents/ reaches: each home wrote its own hook over the
    other's and said the other's was from an older evolve. It is the holding home's to keep,
    while the interpreter it runs is there (an evolve uninstalled there checks nothing).
    """
    named, python = _hook_value(hook, _HOME_LINE), _hook_value(hook, "EVOLVE_PYTHON=")
    if not named or not python or not os.access(python, os.X_OK):
        return False
    if os.path.realpath(named) == os.path.realpath(home):
        return False
    holder = os.path.dirname(os.path.realpath(repo_path))  # noqa: PTH120 - paths as strings
    return holder == os.path.realpath(os.path.join(named, "agents"))  # noqa: PTH118


def _hook_value(hook: str, prefix: str) -> str | None:
    """The one shell word a line of the hook starting with `prefix` sets, or None."""
    line = next((line for line in hook.splitlines() if line.startswith(prefix)), "")
    try:
        words = shlex.split(line.removeprefix(prefix))
    except ValueError:  # an unbalanced quote: a hook a person edited, not a home's
        return None
    return words[0] if len(words) == 1 else None


def install_precommit_hook(
    repo_path: Path,
    home: Path,
    *,
    checked_out: bool = True,
    lives_at: Path | None = None,
    keep_persons_path: bool = False,
) -> Path:
    """Write the agent repo's pre-commit hook (a person's own hook is kept aside) and git setup.

    `checked_out=False`: evolve wrote every file itself (a new agent), so no checkout can have
    converted one and there is nothing to undo. `lives_at`: the folder a repository built
    aside is renamed to (core.hooksPath names that one). `keep_persons_path`: a core.hooksPath
    that is a person's own stays (an upgrade's; `doctor --fix` takes it when asked).
    """
    target = hook_path(repo_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    current = _text_of(target)
    if current and HOOK_MARKER not in current:
        target.replace(target.with_name("pre-commit.before-evolve"))
    if not _another_homes_hook(repo_path, home, current):  # else that home keeps it current
        target.write_text(precommit_hook_text(home), encoding="utf-8")
        target.chmod(0o755)
    if not (keep_persons_path and persons_hooks_path(hooks_path(repo_path))):
        git(repo_path, "config", "--local", "core.hooksPath", hooks_folder(lives_at or repo_path))
    git(repo_path, "config", "--local", "core.autocrlf", "false")
    info = repo_path / ".git" / "info" / "attributes"
    info.parent.mkdir(parents=True, exist_ok=True)
    current = _text_of(info)
    if BYTE_EXACT not in current:
        info.write_text(current + ("\n" if current and not current.endswith("\n") else "") + BYTE_EXACT)
    if checked_out:
        _undo_checkout_conversions(repo_path)
    return target


def _undo_checkout_conversions(repo_path: Path) -> None:
    """Files a checkout converted (CRLF on disk, LF in git) get git's bytes back.

    Only where the difference is exactly that conversion: a person's real edit is never
    touched (it is committed as theirs, as always).
    """
    listed = git(repo_path, "ls-files", "-s", "-z").decode("utf-8", "surrogateescape")
    for item in listed.split("\0"):
        if not item or "\t" not in item:
            continue
        meta, path = item.split("\t", 1)
        mode, blob = meta.split()[:2]
        target = repo_path / path
        if mode != "100644" or target.is_symlink() or not target.is_file():
            continue
        disk = target.read_bytes()
        if b"\r\n" not in disk:
            continue
        stored = git(repo_path, "cat-file", "blob", blob)
        if disk != stored and disk.replace(b"\r\n", b"\n") == stored:
            target.write_bytes(stored)
