"""`evolve model`: which model reflects and where its API key comes from — shown, or chosen.

Choosing edits only the keys of the [model] table of `<home>/config.toml`, line by line
(evolve.tomledit): the person's comments and other keys stay byte for byte. A choice that
could not reflect from this shell (no key, no `claude` on PATH) is refused, nothing written.
The key itself is never read into the file, printed or stored: only where it comes from.
"""

from __future__ import annotations

import os
from pathlib import Path

from evolve import config as config_mod
from evolve import tomledit
from evolve.commands.output import emit_json, say, warn
from evolve.errors import UserError
from evolve.home import Home
from evolve.reflect import keys
from evolve.watch import service
from evolve.workspace.agent import Agent
from evolve.workspace.folders import list_agents

OFFLINE = "no model is called: a correction you type becomes a memo rule, in your words"
CHOOSE = (
    "to use a model: `evolve model anthropic` (a key in $ANTHROPIC_API_KEY or --key-file PATH; "
    "--base-url URL for a local server) or `evolve model claude-cli` (Claude Code's own login)"
)
READINESS = ("backend", "base_url", "api_key_env", "api_key_file")  # what a change must still reach


def model(
    home: Home,
    backend: str | None = None,
    base_url: str | None = None,
    model_name: str | None = None,
    key_env: str | None = None,
    key_file: str | None = None,
    as_json: bool = False,
) -> int:
    changes = _changes(home, backend, base_url, model_name, key_env, key_file)
    written = _write(home, changes) if changes else False
    view = _view(home)
    if as_json:
        emit_json({**view, "changed": written})
        return 0
    if changes:
        parts = [f"{k} = {tomledit.quoted(v)}" for k, v in changes.items() if v is not None]
        parts += [f"no {k}" for k, v in changes.items() if v is None]
        say(f"{'set' if written else 'already'}: [model] {', '.join(parts)} in {view['config_file']}")
    _print(view, changed=written)
    return 0


def _changes(
    home: Home,
    backend: str | None,
    base_url: str | None,
    model_name: str | None,
    key_env: str | None,
    key_file: str | None,
) -> dict[str, str | None]:
    """The [model] keys to set (None: remove the line, so the default applies)."""
    changes: dict[str, str | None] = {}
    if backend is not None:
        changes["backend"] = backend
    if model_name is not None:
        if not model_name.strip():
            raise UserError("--model is empty; give a model name such as claude-sonnet-5-5")
        changes["name"] = model_name
    if base_url is not None:
        changes["base_url"] = base_url or None
    if key_env is not None:
        changes.update(api_key_env=key_env, api_key_file=None)
    if key_file is not None:
        path = Path(key_file).expanduser().absolute()
        if path == home.agents_dir or home.agents_dir in path.parents:
            raise UserError(
                f"{path} is inside an agent's repository, where it could be committed and pushed; "
                "keep the key outside the evolve home's agents/ (e.g. ~/.config/evolve/anthropic.key)"
            )
        changes.update(api_key_file=str(path), api_key_env=None)
    return changes


def _write(home: Home, changes: dict[str, str | None]) -> bool:
    """Edit config.toml's [model] as asked; False when it already says so. Checked before writing."""
    from evolve.store.files import atomic_write

    path = home.config_file
    raw = config_mod.read_bytes(path) or b""  # never a plain read: a FIFO there held the command forever
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: is not UTF-8 text; fix the file first") from None
    edited = tomledit.set_keys(text, "model", changes)
    if edited == text:
        return False
    try:
        parsed = tomledit.checked(text, edited, "model", changes)
    except tomledit.EditError as exc:
        raise UserError(f"{path}: {exc}") from None
    chosen = config_mod.merge(config_mod.Config(), parsed, str(path), agent=False).model
    problem = keys.problem(chosen) if any(key in changes for key in READINESS) else None
    if problem:
        raise UserError(f"backend {chosen.backend} cannot reflect from here: {problem}; nothing was changed")
    if chosen.api_key_file and Path(chosen.api_key_file).expanduser().stat().st_mode & 0o077:
        warn(f"{chosen.api_key_file} can be read by other users; `chmod 600 {chosen.api_key_file}`")
    atomic_write(path, edited.encode("utf-8"))
    return True


def _view(home: Home) -> dict:
    """The backend as evolve uses it here, where its key comes from, and what the watcher lacks."""
    settings = config_mod.load(home.config_file)
    chosen = settings.model
    watcher = service.state(home)
    follows = service.published(home, watcher.pid) if watcher.running else None
    agents = {}
    for name in list_agents(home):
        own = Agent(home, name).lenient_config.model
        if own != chosen:
            agents[name] = {"backend": own.backend, "model": own.name, "base_url": own.base_url}
    return {
        "config_file": str(home.config_file),
        "backend": chosen.backend,
        "model": chosen.name,
        "base_url": keys.base_url(chosen, os.environ),
        "key": keys.source(chosen).to_dict() if chosen.backend == "anthropic" else None,
        "key_needed": chosen.backend == "anthropic" and keys.is_anthropic(keys.base_url(chosen, os.environ)),
        "problem": keys.problem(chosen),  # in this shell
        "override": os.environ.get("EVOLVE_MODEL_BACKEND") or None,
        "watcher": {
            "running": watcher.running,
            "pid": watcher.pid,
            "cannot_reflect": (follows or {}).get("model_problems", {}),
        },
        "agents": agents,
    }


def _print(view: dict, *, changed: bool) -> None:
    backend = view["backend"]
    where = f" (EVOLVE_MODEL_BACKEND={view['override']} in this shell)" if view["override"] else ""
    if backend == "offline":
        say(f"model: offline{where} — {OFFLINE}")
        say(CHOOSE)
    elif backend == "claude-cli":
        say(f"model: claude-cli{where} — `claude -p` with {view['model']}, on Claude Code's own login")
    else:
        server = view["base_url"] or "Anthropic's API"
        say(f"model: anthropic{where} — {view['model']} at {server}")
        say(f"API key: {_key_line(view)}")
    if view["problem"]:
        say(f"problem: reflections from this shell fail: {view['problem']}")
    watcher = view["watcher"]
    for name, why in sorted(watcher["cannot_reflect"].items()):
        say(f"watcher (pid {watcher['pid']}): cannot reflect {name}: {why}")
    for name, own in sorted(view["agents"].items()):
        say(f"agent {name}: its own [model] wins for it: {own['backend']} ({own['model']})")
    if changed:
        applies = "the running watcher applies it within seconds" if watcher["running"] else "the watcher"
        say(
            f"next: `evolve reflect NAME --dry-run` shows what would be sent; {applies}"
            + ("" if watcher["running"] else " uses it from its start")
        )


def _key_line(view: dict) -> str:
    key = view["key"]
    if key["kind"] == "file":
        return f"read from {key['name']} at each call, whoever starts the watcher"
    variable = f"${key['name']}"
    if not view["key_needed"] and view["problem"] is None and key["name"] not in os.environ:
        return f"none needed for this server (${key['name']} is sent when set)"
    here = "set in this shell" if os.environ.get(key["name"], "").strip() else "not set in this shell"
    return (
        f"{variable} ({here}); a watcher has only the variables it was started with — "
        "a key file does not depend on that: `evolve model anthropic --key-file PATH`"
    )
