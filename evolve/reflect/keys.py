"""Where a reflection's credentials come from, and whether they are there — never the key itself.

The anthropic backend's key comes from `[model] api_key_file` (a file holding only the key,
read at each call, so a watcher reflects the same whoever started it) or else the variable
`[model] api_key_env` (ANTHROPIC_API_KEY by default) of the process that reflects. The key
is handed to the SDK and nowhere else: what is shown, logged and stored is where it comes
from. A server that is not Anthropic's (a local model) needs no key. `problem` says why a
backend cannot reflect in a given process (its variables, its PATH); the watcher asks it of
its own and publishes the answers, so `evolve status` can tell what the watcher lacks.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from evolve.regular import NotRegular, TooLarge, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from evolve.config import ModelConfig

FILE_HINT = "keep the key in a file: `evolve model anthropic --key-file PATH`"
NO_CLAUDE = (
    "`claude` is not on PATH; install Claude Code (npm install -g @anthropic-ai/claude-code) "
    "or choose another backend"
)
MAX_KEY_BYTES = 4096  # a key is a line; anything longer is not the file meant


@dataclass(frozen=True)
class KeySource:
    """A variable's name or a file's path, as configured."""

    kind: str  # "env" | "file"
    name: str

    def __str__(self) -> str:
        return f"${self.name}" if self.kind == "env" else self.name

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name}


def source(model: ModelConfig) -> KeySource:
    if model.api_key_file:
        return KeySource("file", model.api_key_file)
    return KeySource("env", model.api_key_env)


def base_url(model: ModelConfig, environ: Mapping[str, str]) -> str:
    """The server reflections go to: `[model] base_url`, else ANTHROPIC_BASE_URL, else Anthropic's."""
    return model.base_url or environ.get("ANTHROPIC_BASE_URL", "")


def is_anthropic(url: str) -> bool:
    """Whether `url` (empty: the SDK's default) is Anthropic's API, which wants a real key."""
    host = (urlsplit(url).hostname or "").lower() if url else "api.anthropic.com"
    return host == "anthropic.com" or host.endswith(".anthropic.com")


def missing_env(name: str) -> str:
    return f"{name} is not set; export it, {FILE_HINT}, or choose another backend"


def read(model: ModelConfig, environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """(the key or "", why there is none): the file when one is named, else the variable.

    An empty variable is no key (the caller decides whether one is needed); a named file
    that cannot give a key is a problem whatever the server.
    """
    environ = os.environ if environ is None else environ
    where = source(model)
    if where.kind == "env":
        key = environ.get(where.name, "").strip()
        return key, None if key else missing_env(where.name)
    path = Path(where.name).expanduser()
    shown = f"model.api_key_file {where.name}"
    try:
        data = read_regular(path, MAX_KEY_BYTES)  # /proc/…: never read to its end
    except TooLarge:
        return "", f"{shown}: is over {MAX_KEY_BYTES:,} bytes; it must hold only the key, on one line"
    except FileNotFoundError:
        return "", f"{shown}: no such file; write the key into it (chmod 600) or name another file"
    except (IsADirectoryError, NotRegular):  # a FIFO: refused, never waited on
        kind = "a folder" if path.is_dir() else "not a regular file (a FIFO or a device?)"
        return "", f"{shown}: is {kind}; name the file that holds the key"
    except OSError as exc:
        return "", f"{shown}: cannot be read ({exc.strerror}); fix its permissions"
    key = data.decode("utf-8", "replace").strip()
    if not (key.isascii() and key.isprintable()) or " " in key:
        return "", f"{shown}: must hold only the key, on one line"  # never quoted: it may be a secret
    return key, None if key else f"{shown}: is empty; write the key into it"


def problem(
    model: ModelConfig,
    environ: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> str | None:
    """Why a reflection with `model` cannot run in a process with `environ` and this PATH, or None."""
    environ = os.environ if environ is None else environ
    if model.backend == "claude-cli":
        return NO_CLAUDE if which("claude") is None else None
    if model.backend != "anthropic":
        return None
    url = base_url(model, environ)
    if url and urlsplit(url).scheme not in ("http", "https"):
        return f"model.base_url must be an http:// or https:// URL, got {url!r}"
    key, why = read(model, environ)
    if key or (model.api_key_file == "" and not is_anthropic(url)):
        return None  # a local server without a key gets a placeholder
    return why
