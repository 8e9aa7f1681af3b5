"""One validated configuration: defaults here, `<home>/config.toml`, then `agent.toml`.

Keys are an interface (later stages add to them, never around them). Every problem is
reported as `file: section.key: problem`, and unknown keys are errors, so a typo never
silently falls back to a default.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from evolve.errors import ConfigError
from evolve.regular import NotRegular, read_regular
from evolve.signal_entries import without_refused

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any

BACKENDS = ("offline", "anthropic", "claude-cli")
SYNC_MODES = ("auto", "manual")


@dataclass(frozen=True)
class ModelConfig:
    backend: str = "offline"
    name: str = "claude-sonnet-5-5"
    base_url: str = ""
    max_tokens: int = 16000  # adaptive thinking (on by default in newer models) counts toward it
    timeout_s: float = 300.0
    max_retries: int = 2
    daily_token_budget: int = 500_000
    # Where the anthropic backend's key comes from (evolve.reflect.keys): a variable of the
    # process that reflects, or a file holding only the key, read at each call (it wins).
    api_key_env: str = "ANTHROPIC_API_KEY"
    api_key_file: str = ""


@dataclass(frozen=True)
class ScheduleConfig:
    cycle_hours: float = 12.0
    min_gap_hours: float = 4.0
    force_after_days: float = 7.0
    max_agents_per_cycle: int = 5
    # An agent that never reflected: the watcher's cycle comes this long after a run worth it.
    first_reflection_minutes: float = 5.0


@dataclass(frozen=True)
class SignalsConfig:
    threshold: float = 0.7
    complexity_tool_calls: int = 20
    weights: dict[str, float] = field(
        default_factory=lambda: {
            "user_correction": 0.9,
            "user_preference": 0.9,
            "lesson_ignored": 0.9,
            "skill_ineffective": 0.85,
            "error_recovered": 0.8,
            "known_weakness": 0.7,
            "complexity": 0.5,
        }
    )
    transient_patterns: list[str] = field(default_factory=list)
    correction_phrases: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class LimitsConfig:
    max_skills: int = 200
    memo_section_chars: int = 2000
    skill_body_tokens: int = 5000
    bundle_tokens: int = 12000
    prompt_chars: int = 8000
    retention_days: int = 180


@dataclass(frozen=True)
class WatchConfig:
    debounce_s: float = 2.0
    rescan_minutes: float = 10.0
    human_edit_quiet_s: float = 30.0


@dataclass(frozen=True)
class GitConfig:
    author_name: str = "evolve"
    author_email: str = "evolve@localhost"
    sync: str = "auto"  # with a remote: the watcher syncs ("auto"), or only `evolve sync` does


@dataclass(frozen=True)
class SourcesConfig:
    claude_code: list[str] = field(default_factory=list)
    generic: list[str] = field(default_factory=list)
    # Not globs: project folders whose Codex rollouts are the agent's, or "*" for every one
    # (Codex stores rollouts by date; each belongs to the folder its first line names).
    codex: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EvalConfig:
    # `evolve eval` runs this Claude Code binary's `claude plugin eval` ("": `claude` on PATH).
    # A path on this machine: read from config.toml only (an agent.toml may come from a server).
    claude: str = ""


@dataclass(frozen=True)
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    signals: SignalsConfig = field(default_factory=SignalsConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    watch: WatchConfig = field(default_factory=WatchConfig)
    git: GitConfig = field(default_factory=GitConfig)
    sources: SourcesConfig = field(default_factory=SourcesConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    review: bool = False
    warnings: tuple[str, ...] = ()  # settings that were read but do not apply where they stand


SECTIONS = {f.name: f.default_factory for f in fields(Config) if f.name not in ("review", "warnings")}
SECTION_KEYS = {name: {f.name for f in fields(getattr(Config(), name))} for name in SECTIONS}
AGENT_ONLY = {"sources", "review"}
# Read once per home (the watcher, the cycle): in agent.toml they are ignored with a warning.
HOME_ONLY = {
    "watch": None,
    "eval": None,
    "schedule": {"cycle_hours", "max_agents_per_cycle", "first_reflection_minutes"},
}
# Where data is read from and sent to: once an agent has a remote, this machine's own, in the
# file beside its repository (`Home.local_config`), never committed; agent.toml's are ignored.
MACHINE_LOCAL = ("sources", "model")
POSITIVE = {
    "max_tokens",
    "timeout_s",
    "cycle_hours",
    "max_agents_per_cycle",
    "max_skills",
    "memo_section_chars",
    "skill_body_tokens",
    "bundle_tokens",
    "prompt_chars",
    "retention_days",
    "complexity_tool_calls",
    "daily_token_budget",
    "debounce_s",
    "rescan_minutes",
}
# Sane ceilings: beyond them a timer overflows or the setting cannot be what was meant.
MAXIMUM = {
    "cycle_hours": 24 * 366,
    "min_gap_hours": 24 * 366,
    "force_after_days": 3660,
    "first_reflection_minutes": 24 * 60,
    "debounce_s": 3600,
    "rescan_minutes": 24 * 60,
    "human_edit_quiet_s": 86400,
    "timeout_s": 3600,
    "max_retries": 20,
    "retention_days": 36600,
}
IDENTITY = {"author_name", "author_email"}


def is_env_name(name: str) -> bool:
    """A POSIX environment variable's name: ASCII letters, digits and _, not starting with a digit."""
    first = name[:1]
    return name.isascii() and (first.isalpha() or first == "_") and name.replace("_", "a").isalnum()


def _check_value(key: str, value: Any, default: Any) -> Any:
    """Coerce/validate one value against the type of its default; return it."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"must be a number, got {value!r}")
        if isinstance(default, int) and not isinstance(value, int):
            raise ValueError(f"must be a whole number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value!r}")
        if value < 0 or (key in POSITIVE and value == 0):
            raise ValueError(f"must be {'positive' if key in POSITIVE else 'zero or more'}")
        if key in MAXIMUM and value > MAXIMUM[key]:
            raise ValueError(f"must be at most {MAXIMUM[key]:g}, got {value!r}")
        return type(default)(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ValueError(f"must be a string, got {value!r}")
        if key in IDENTITY and (not value.strip() or any(c in value for c in "<>\n")):
            raise ValueError(f"must be a non-empty name without <, > or line breaks, got {value!r}")
        return value
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of strings")
        return list(value)
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise ValueError("must be a table")
        return value
    raise ValueError("unsupported value")  # pragma: no cover - every default is typed above


def _merge_section(current: Any, raw: Any, section: str, origin: str) -> tuple[Any, list[str]]:
    """`current` with `raw` applied, and warnings about values dropped on the way."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin}: {section}: must be a table like [{section}]")
    known = {f.name: getattr(current, f.name) for f in fields(current)}
    updates: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in raw.items():
        where = f"{origin}: {section}.{key}"
        if key not in known:
            raise ConfigError(
                f"{where}: unknown key (known: {', '.join(sorted(known))}){_misplaced_hint(section, key)}"
            )
        try:
            checked = _check_value(key, value, known[key])
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if section == "signals" and key == "weights":
            checked = _check_weights(known[key], checked, where)
        if section == "signals":
            checked, dropped = without_refused(key, checked, where)
            warnings += dropped
        if section == "sources" and key == "codex":
            wrong = [v for v in checked if v != "*" and not v.startswith(("/", "~"))]
            if wrong:
                raise ConfigError(f'{where}: {wrong[0]!r} is not "*" nor an absolute project folder')
        updates[key] = checked
    merged = replace(current, **updates)
    if section == "git" and merged.sync not in SYNC_MODES:
        raise ConfigError(f"{origin}: git.sync: must be one of {', '.join(SYNC_MODES)}, got {merged.sync!r}")
    if section == "model":
        merged = _check_model(merged, raw, origin)
    if (
        section == "eval"
        and merged.claude
        and (not merged.claude.startswith(("/", "~")) or _has_junk(merged.claude))
    ):
        raise ConfigError(
            f"{origin}: eval.claude: must be the absolute path of Claude Code's `claude` (or start with ~), "
            f"got {merged.claude!r}"
        )
    if section == "signals" and not 0 <= merged.threshold:
        raise ConfigError(f"{origin}: signals.threshold: must be zero or more")
    return merged, warnings


def _check_model(merged: ModelConfig, raw: dict[str, Any], origin: str) -> ModelConfig:
    """The backend is known and the key has one source: the file one table names, else the variable."""
    if merged.backend not in BACKENDS:
        raise ConfigError(
            f"{origin}: model.backend: must be one of {', '.join(BACKENDS)}, got {merged.backend!r}"
        )
    if not is_env_name(merged.api_key_env):
        raise ConfigError(
            f"{origin}: model.api_key_env: must name an environment variable (letters, digits, _), "
            f"got {merged.api_key_env!r}"
        )
    if merged.api_key_file and not merged.api_key_file.startswith(("/", "~")):
        raise ConfigError(
            f"{origin}: model.api_key_file: must be an absolute path or start with ~, "
            f"got {merged.api_key_file!r}"
        )
    if "name" in raw and (not merged.name.strip() or _has_junk(merged.name)):
        raise ConfigError(f"{origin}: model.name: must be a model's name on one line, got {merged.name!r}")
    if "base_url" in raw and merged.base_url:
        problem = _url_problem(merged.base_url)
        if problem:
            raise ConfigError(f"{origin}: model.base_url: {problem}, got {merged.base_url!r}")
    if raw.get("api_key_env") and raw.get("api_key_file"):
        raise ConfigError(f"{origin}: model: set api_key_env or api_key_file, not both")
    if "api_key_env" in raw:  # a later file naming a variable takes the key from it again
        merged = replace(merged, api_key_file="")
    return merged


def _has_junk(text: str) -> bool:
    """Whether `text` holds whitespace other than single spaces, or a control character."""
    return any(c.isspace() and c != " " or ord(c) < 32 or ord(c) == 127 for c in text)


def _url_problem(url: str) -> str:
    """Why `url` cannot be where reflections are sent ("" when it can): http(s) to a host."""
    from urllib.parse import urlsplit  # lazily: only a config that names a base_url pays

    if url != url.strip() or _has_junk(url) or " " in url:
        return "must be a URL without spaces or line breaks"
    try:
        parts = urlsplit(url)
        port = parts.port  # a port that is not a number raises
    except ValueError:
        return "must be an http:// or https:// URL with a host"
    if parts.scheme not in ("http", "https"):
        return "must be an http:// or https:// URL (or empty: the Anthropic API)"
    if not parts.hostname or port == 0:
        return "must be an http:// or https:// URL with a host"
    return ""


def _misplaced_hint(section: str, key: str) -> str:
    """Why a key landed in the wrong table: after `[x]`, TOML files every key under x."""
    if key == "review":
        home = "review = ... goes above the first [table] of agent.toml"
    else:
        owners = [name for name, keys in SECTION_KEYS.items() if name != section and key in keys]
        if not owners:
            return ""
        home = f"{key} belongs in [{owners[0]}]"
    return f"; {home} (every key after a [table] header belongs to that table)"


def _check_weights(defaults: dict[str, float], raw: dict[str, Any], where: str) -> dict:
    merged = dict(defaults)
    for name, weight in raw.items():
        if name not in defaults:
            raise ConfigError(f"{where}.{name}: unknown signal (known: {', '.join(defaults)})")
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or not math.isfinite(weight)
            or weight < 0
        ):
            raise ConfigError(f"{where}.{name}: must be a finite number >= 0")
        merged[name] = float(weight)
    return merged


def merge(
    config: Config, raw: dict[str, Any], origin: str, *, agent: bool, shared: Path | None = None
) -> Config:
    """Apply one parsed TOML document on top of `config`.

    `shared`: the agent has a remote and this machine's own settings file; agent.toml's
    MACHINE_LOCAL sections (they arrive from other machines) are ignored with a warning.
    """
    updates: dict[str, Any] = {}
    warnings: list[str] = []
    for section, value in raw.items():
        if shared is not None and section in MACHINE_LOCAL:
            warnings.append(
                f"{origin}: [{section}] is ignored: this agent syncs through a remote, so its "
                f"[{section}] is this machine's own, in {shared}"
            )
            continue
        if section == "review":
            if not agent:
                raise ConfigError(f"{origin}: review: only allowed in agent.toml")
            if not isinstance(value, bool):
                raise ConfigError(f"{origin}: review: must be true or false")
            updates["review"] = value
            continue
        if section == "agent" and agent:
            # descriptive table (name, created) kept by `evolve init`; the template writes
            # `review` inside it too, so it is honoured there (TOML puts it in [agent]).
            if not isinstance(value, dict):
                raise ConfigError(f"{origin}: agent: must be a table like [agent]")
            for key, item in value.items():
                if key == "review":
                    if not isinstance(item, bool):
                        raise ConfigError(f"{origin}: agent.review: must be true or false")
                    updates["review"] = item
                elif key == "name" and item != Path(origin).parent.name:
                    warnings.append(
                        f"{origin}: agent.name: {item!r} is not this agent's name "
                        f"({Path(origin).parent.name!r}: its folder); only the folder names an agent"
                    )
                elif key not in ("name", "created"):
                    raise ConfigError(f"{origin}: agent.{key}: unknown key (known: created, name, review)")
            continue
        if section not in SECTIONS:
            raise ConfigError(f"{origin}: {section}: unknown section (known: {', '.join(SECTIONS)})")
        if section in AGENT_ONLY and not agent:
            raise ConfigError(f"{origin}: {section}: only allowed in an agent's agent.toml")
        merged, dropped = _merge_section(
            updates.get(section, getattr(config, section)), value, section, origin
        )
        warnings += dropped
        if agent and section in HOME_ONLY:
            merged, ignored = _home_only(getattr(config, section), merged, section)
            warnings.extend(
                f"{origin}: {section}.{key}: applies to the whole home, not one agent; "
                f"ignored here (set it in config.toml)"
                for key in ignored
            )
        updates[section] = merged
    if warnings:
        updates["warnings"] = config.warnings + tuple(warnings)
    return replace(config, **updates)


def _home_only(before: Any, merged: Any, section: str) -> tuple[Any, list[str]]:
    """`merged` with the home-only keys of `section` put back as they were, and their names."""
    keys = HOME_ONLY[section]
    ignored = [
        f.name
        for f in fields(before)
        if (keys is None or f.name in keys) and getattr(merged, f.name) != getattr(before, f.name)
    ]
    return replace(merged, **{k: getattr(before, k) for k in ignored}), ignored


def read_bytes(path: Path) -> bytes | None:
    """A settings file's bytes (None: there is none); ConfigError, in one line, when it cannot be read."""
    try:
        return read_regular(path)  # a FIFO would hold every command, the watcher and the hooks
    except FileNotFoundError:
        return None
    except NotRegular:
        raise ConfigError(f"{path}: is not a regular file (a FIFO, socket, device or folder)") from None
    except OSError as exc:  # a link loop, a link through a file, no permission: the file's, not evolve's
        reason = exc.strerror or exc
        raise ConfigError(f"{path}: cannot be read ({reason}); fix the file or delete it") from None


def read_toml(path: Path, *, follow_links: bool = True) -> dict[str, Any]:
    """Parse a TOML file; a missing file is an empty document.

    An agent's files are read with `follow_links=False`: a link (it may have come from a
    remote) could lead anywhere on the machine.
    """
    import tomllib  # lazily: the skill index and `evolve prompt` use the defaults without it

    if not follow_links and path.is_symlink():
        raise ConfigError(f"{path}: is a symbolic link; evolve never reads an agent's settings through one")
    data = read_bytes(path)
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8-sig"))  # an editor's byte-order mark is no error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix the file or delete it") from None


def load(
    home_config: Path | None = None, agent_config: Path | None = None, local_config: Path | None = None
) -> Config:
    """Defaults, then the home's config.toml, then agent.toml, then this machine's file, then env.

    `local_config` (beside an agent repository that syncs through a remote): its [sources]
    and [model] apply, agent.toml's are ignored. Nothing else belongs in it.
    """
    config = Config()
    if home_config is not None:
        config = merge(config, read_toml(home_config), str(home_config), agent=False)
    shared = local_config if local_config is not None and local_config.exists() else None
    if agent_config is not None:
        raw = read_toml(agent_config, follow_links=False)
        config = merge(config, raw, str(agent_config), agent=True, shared=shared)
    if shared is not None:
        raw = read_toml(shared, follow_links=False)
        other = sorted(set(raw) - set(MACHINE_LOCAL))
        if other:
            raise ConfigError(
                f"{shared}: {other[0]}: only [sources] and [model] belong in this machine's file; "
                "move it to agent.toml"
            )
        config = merge(config, raw, str(shared), agent=True)
    backend = os.environ.get("EVOLVE_MODEL_BACKEND")
    if backend:
        config = merge(config, {"model": {"backend": backend}}, "EVOLVE_MODEL_BACKEND", agent=False)
    return config


def expand_globs(patterns: list[str]) -> list[str]:
    """Expand `~` in source globs (stored with `~` so repos stay portable)."""
    return [str(Path(p).expanduser()) for p in patterns]
