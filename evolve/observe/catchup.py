"""Before a command judges an agent: what its sessions wrote since, read now.

`score`, `reflect` and `cycle` would otherwise judge stale runs whenever no watcher is
reading (the README's first steps run none): they drain the hooks' spool, and — only when
no watcher runs, since a running one already reads every source live and two readers of
one file would race on its cursor — observe the agents' `[sources]` (only new bytes).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from evolve.errors import ConfigError
from evolve.home import Home
from evolve.observe.ingest import observe, source_files
from evolve.observe.records import drain_pending
from evolve.transcripts.classify import for_signals
from evolve.workspace.agent import Agent


@dataclass
class CaughtUp:
    runs: int = 0  # runs added or changed by reading the sources
    problems: list[str] = field(default_factory=list)  # one line each: a file or agent not read


def catch_up(conn: sqlite3.Connection, home: Home, names: list[str], *, sources: bool) -> CaughtUp:
    """Drain the spool; with `sources`, observe each agent's transcripts (a failure stops none)."""
    drain_pending(conn, home)
    result = CaughtUp()
    for name in names if sources else ():
        try:
            config = Agent(home, name).config
        except ConfigError as exc:  # the gate reports the broken agent.toml itself
            result.problems.append(f"{name}: not observed: {exc}")
            continue
        observed = observe(conn, name, source_files(config.sources), classifier=for_signals(config.signals))
        result.runs += observed.runs
        result.problems += [f"{name}: {f.path}: {f.error}" for f in observed.files if f.error]
    return result
