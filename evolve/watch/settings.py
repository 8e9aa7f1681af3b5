"""What the watcher follows from config.toml, applied again when the file changes, and published.

config.toml is stat'ed on every tick (parsed only when it changed). A changed file that
loads is applied at once — `[watch]` timers, `cycle_hours`, `first_reflection_minutes` —
and the agents are read again; one that does not load leaves every setting as it was, with
one warning in the log. What the watcher follows — its schedule, the config it applied (or
the error that kept the old one), and why a backend cannot reflect in *its* environment (a
variable it was started without, `claude` missing from its PATH) — is published in
`<home>/run/watch.json` (service.publish), so `evolve status` shows the watcher's schedule,
never one computed from a file the watcher has not read. Values a caller passes (tests)
stay as passed.
"""

from __future__ import annotations

import logging
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from evolve import config as config_mod
from evolve.errors import ConfigError
from evolve.home import Home
from evolve.reflect import keys
from evolve.schedule.rules import ago
from evolve.watch import service

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from evolve.config import ModelConfig

log = logging.getLogger("evolve.watch")


@dataclass(frozen=True)
class Timings:
    debounce_s: float
    quiet_s: float
    rescan_s: float
    cycle_s: float | None  # None: no cycles (a test drives them)
    first_s: float  # a never-reflected agent's cycle comes this long after a run worth it

    @classmethod
    def of(cls, settings: config_mod.Config, fixed: dict[str, Any]) -> Timings:
        found = cls(
            settings.watch.debounce_s,
            settings.watch.human_edit_quiet_s,
            settings.watch.rescan_minutes * 60,
            settings.schedule.cycle_hours * 3600,
            settings.schedule.first_reflection_minutes * 60,
        )
        return replace(found, **fixed)

    def describe(self) -> str:
        cycle = "no cycles" if self.cycle_s is None else f"a cycle every {self.cycle_s / 3600:g} h"
        return (
            f"{cycle}, a first reflection {ago(self.first_s)} after a run worth it, "
            f"a rescan every {ago(self.rescan_s)}"
        )


def signature(path: Path) -> list[int] | None:
    """What changes when the file is saved (any editor's way): None when there is none."""
    try:
        st = os.stat(path)  # noqa: PTH116 - every tick: a plain stat
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


class Settings:
    """The watcher's timings, from config.toml as last applied, and what it publishes."""

    def __init__(self, home: Home, fixed: dict[str, Any]) -> None:
        self.home, self.fixed = home, fixed
        self.seen = signature(home.config_file)
        self.timings = Timings.of(config_mod.load(home.config_file), fixed)  # broken: the watcher exits
        self.error: str | None = None
        self.problems: dict[str, str] = {}
        self._published: dict | None = None

    def reload_if_changed(self) -> bool | None:
        """Apply config.toml when it changed: True (applied), False (it does not load), None (same)."""
        now = signature(self.home.config_file)
        if now == self.seen:
            return None
        self.seen = now
        try:
            loaded = config_mod.load(self.home.config_file)
        except ConfigError as exc:
            if str(exc) != self.error:
                log.warning("%s; the watcher keeps the settings it had until the file loads", exc)
            self.error = str(exc)
            return False
        self.error = None
        self.timings = Timings.of(loaded, self.fixed)
        log.info("config.toml changed: applied (%s)", self.timings.describe())
        return True

    def check_models(self, models: dict[str, ModelConfig]) -> None:
        """Why each agent's backend cannot reflect in this process; each new reason logged once."""
        problems = {name: why for name, model in models.items() if (why := keys.problem(model))}
        for name, why in sorted(problems.items()):
            if self.problems.get(name) != why:
                log.warning("%s: background reflections cannot run: %s", name, why)
        self.problems = problems

    def publish(self, next_cycle_at: float | None, why: str) -> None:
        """Write what the watcher follows now, when it changed since the last time."""
        data = {
            "config": {"signature": self.seen, "error": self.error},
            "timings": asdict(self.timings),
            "next_cycle_at": next_cycle_at,
            "next_cycle_why": why,
            "model_problems": self.problems,
        }
        if data != self._published:
            service.publish(self.home, data)
            self._published = data


def cannot_reflect(follows: dict | None, name: str, model: ModelConfig) -> str | None:
    """Why the running watcher cannot reflect agent `name`, as it published (its variables, PATH).

    A key file is the same for every process of this user: read again here, so one written
    since the watcher last looked is no problem any more.
    """
    problem = (follows or {}).get("model_problems", {}).get(name)
    if problem and model.api_key_file and keys.problem(model) is None:
        return None
    return problem
