"""When the watcher syncs an agent that has a remote (`[git] sync = "auto"`).

After each commit on the agent's main — evolve's or a person's — once it has been quiet
for `debounce_s` (the branch's ref file is checked on every tick: a stat, no git), pushing
first; and at every rescan, a full sync that brings the server's news. A sync that fails
is transient for the watcher: tried again later, the wait doubling from 30 s up to the
rescan interval, one warning when it starts failing and one line when it works again —
never an error storm. Only one sync runs per tick, so observing
and committing a person's edits never wait long behind the network.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evolve.watch.debounce import Debouncer

log = logging.getLogger("evolve.watch")
Done = tuple[bool, bool, str]  # one sync: it worked, a failure is transient, its line for the log
Sync = Callable[[str, bool], Done]  # (agent, full: fetch first rather than push first)
FIRST_RETRY_S = 30.0


@dataclass
class Synced:
    """One agent the watcher syncs: its main ref's signature and how its last syncs went."""

    path: Path
    seen: tuple[int, ...] | None = None
    failures: int = 0
    retry_at: float = 0.0


def ref_signature(repo: Path, branch: str = "main") -> tuple[int, ...]:
    """What changes whenever the branch moves: its loose ref file, else the packed refs."""
    sig: tuple[int, ...] = ()
    for path in (repo / ".git" / "refs" / "heads" / branch, repo / ".git" / "packed-refs"):
        try:
            st = os.stat(path)  # noqa: PTH116 - every tick, for every agent: a plain stat
        except OSError:
            sig += (0, 0)
            continue
        sig += (st.st_mtime_ns, st.st_ino)
    return sig


class SyncSchedule:
    """Which agents are due for a sync; `sync(name, full) -> (ok, transient, line)` does one."""

    def __init__(self, debounce_s: float, ceiling_s: float, sync: Sync) -> None:
        self.agents: dict[str, Synced] = {}
        self._full: set[str] = set()  # due for a full sync (a rescan, a retry), not a push
        self._due = Debouncer(debounce_s)
        self._ceiling = max(ceiling_s, FIRST_RETRY_S)
        self._sync = sync

    def retime(self, debounce_s: float, ceiling_s: float) -> None:
        """New timings from a changed config.toml; what is due stays due."""
        self._due.delay = debounce_s
        self._ceiling = max(ceiling_s, FIRST_RETRY_S)

    def update(self, synced: dict[str, Path]) -> None:
        """The agents with a remote and `sync = "auto"` now (others are forgotten)."""
        for gone in set(self.agents) - set(synced):
            del self.agents[gone]
            self._due.discard(gone)
        for name, path in synced.items():
            if name not in self.agents:
                self.agents[name] = Synced(path, ref_signature(path))

    def everyone(self, now: float) -> None:
        """A rescan: every agent is due (those waiting to retry, once their wait is over)."""
        for name in self.agents:
            self._due.hint(name, now - self._due.delay)
            self._full.add(name)

    def poll(self, now: float) -> None:
        """Agents whose main moved since the last look become due after a quiet delay."""
        for name, agent in self.agents.items():
            sig = ref_signature(agent.path)
            if sig != agent.seen:
                agent.seen = sig
                self._due.hint(name, now)

    def run_one(self, now: float) -> bool:
        """Sync the first due agent whose retry wait is over; True when more are due now."""
        ready = [n for n in self._due.due(now) if n in self.agents]
        for name in ready[1:]:
            self._due.hint(name, now - self._due.delay)  # the next ticks take them, one each
        if not ready:
            return False
        name = ready[0]
        agent = self.agents[name]
        if now < agent.retry_at:
            self._due.hint(name, agent.retry_at - self._due.delay)
            return len(ready) > 1
        full = name in self._full or agent.failures > 0
        self._full.discard(name)
        ok, transient, line = self._sync(name, full)
        agent.seen = ref_signature(agent.path)  # the sync's own move of main is no new commit
        if ok:
            if agent.failures:
                log.info("%s (after %d failed attempt(s))", line, agent.failures)
            elif "synced" in line and "up to date" not in line:
                log.info("%s", line)
            agent.failures, agent.retry_at = 0, 0.0
        else:
            if agent.failures == 0:
                log.warning("%s%s", line, "; evolve tries again later" if transient else "")
            agent.failures += 1
            agent.retry_at = now + min(FIRST_RETRY_S * 2 ** (agent.failures - 1), self._ceiling)
            self._due.hint(name, agent.retry_at - self._due.delay)
        return len(ready) > 1

    def next_deadline(self) -> float | None:
        return self._due.next_deadline()
