"""`evolve watch`: the process beside the agents that keeps state.db current and runs cycles.

One thread does all the work (state.db, git, observing); watchdog's threads only hand
file events over. Events are hints: after `debounce_s` the named transcript is observed
from its cursor, an agent repo quiet for `human_edit_quiet_s` gets its human edits
committed, and a reconciliation scan every `rescan_minutes` (sizes and mtimes) catches
whatever events missed. Clocks are injectable and `tick()` can be driven by hand, so
tests never sleep long. A stop request (SIGTERM/SIGINT) is a flag checked between units
of work: the current transaction or commit always finishes.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from evolve import config as config_mod
from evolve.config import ModelConfig, SourcesConfig
from evolve.errors import ConfigError, LockBusy
from evolve.home import Home
from evolve.observe import ingest as observe
from evolve.schedule.cycle import Reflector
from evolve.store import ledger, spool
from evolve.store.diagnosis import repository_problem
from evolve.store.repo import Repo
from evolve.transcripts import classify
from evolve.transcripts.classify import BUILT_IN
from evolve.watch import humanedits
from evolve.watch.debounce import Debouncer
from evolve.watch.fs import FsEvent, Watches
from evolve.watch.settings import Settings
from evolve.watch.sources import AgentWatch, glob_match, minimal_watches, mtime, stat_sig, watch_root
from evolve.watch.syncing import SyncSchedule
from evolve.watch.wakeup import Wakeup

log = logging.getLogger("evolve.watch")
DEFAULT = object()
IDLE_S = 2.0  # longest sleep between ticks (spool check, observer health)
RETRY_S = 300.0  # a cycle that failed or found another running is tried again this much later


def reflector(home: Home) -> Reflector:
    """Reflect one agent of `home` for the cycle (the real reflection)."""
    from evolve.reflect.run import reflect_for_cycle

    return lambda name, now: reflect_for_cycle(home, name, now)


class Watcher:
    """Watches transcripts and agent repos of one home; `run()` until `stop()`."""

    def __init__(
        self,
        home: Home,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        debounce_s: float | None = None,
        quiet_s: float | None = None,
        rescan_s: float | None = None,
        cycle_s: object = DEFAULT,
        first_s: float | None = None,
        reflect: object = DEFAULT,
        force_polling: bool = False,
        poll_s: float | None = None,
    ) -> None:
        given = {"debounce_s": debounce_s, "quiet_s": quiet_s, "rescan_s": rescan_s, "first_s": first_s}
        fixed = {key: value for key, value in given.items() if value is not None}
        if cycle_s is not DEFAULT:
            fixed["cycle_s"] = cycle_s  # type: ignore[assignment]
        self.settings = Settings(home, fixed)
        self.home = home
        self.clock, self.wall = clock, wall
        self.reflect = reflector(home) if reflect is DEFAULT else reflect
        timings = self.settings.timings
        poll_s = poll_s or max(2.0, timings.debounce_s)
        self.fs = Watches(self._on_event, clock, poll_s=poll_s, force_polling=force_polling)
        self.agents: dict[str, AgentWatch] = {}
        self._models: dict[str, ModelConfig] = {}  # each agent's [model], for settings.check_models
        self._replan = False  # runs were added: a first reflection may be due sooner
        self._conn: sqlite3.Connection | None = None
        self._events: queue.SimpleQueue[FsEvent] = queue.SimpleQueue()
        self._sources = Debouncer(timings.debounce_s, max_wait=5 * timings.debounce_s)
        self._edits = Debouncer(timings.quiet_s)
        self._syncs = SyncSchedule(timings.debounce_s, timings.rescan_s, self._sync_agent)
        self._more_syncs = False
        self._refresh = Debouncer(timings.debounce_s)
        self._seen: dict[tuple[str, str], tuple[int, int]] = {}
        self._repo_seen: dict[str, dict] = {}
        self._matches: dict[str, list[tuple[str, str]]] = {}
        self._spool_hint = True
        self._next_rescan = 0.0
        self.next_cycle_at: float | None = None
        self.next_cycle_why = ""
        self.files_read = 0  # observe passes over transcript files (for logs and tests)
        self._stopping = False
        self._wakeup = Wakeup()
        self._agents_dir = str(home.agents_dir)
        self._spool_dir = str(home.spool_dir)

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> None:
        self.home.ensure()
        self._conn = ledger.connect(self.home.state_db)
        self.fs.start()
        self._seed_seen()
        self.reconcile()
        now = self.clock()
        for name in self.agents:  # edits made while no watcher ran, after one quiet period
            self._edits.hint(name, now)
        log.info(
            "ready: watching %d agent(s) in %d folder(s)%s",
            len(self.agents),
            len(self.fs.watched),
            f", {len(self.fs.polled)} by polling" if self.fs.polled else "",
        )

    def run(self) -> None:
        """start(), then tick until stop() (from a signal handler or another thread)."""
        try:
            if not self._stopping:
                self.start()
            while not self._stopping:
                self._wakeup.clear()
                timeout = self.tick()
                if not self._stopping:
                    self._wakeup.wait(timeout)
        finally:
            self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        """state.db, open between start() and close() (used by this thread only)."""
        assert self._conn is not None, "the watcher is not started"
        return self._conn

    @property
    def stopping(self) -> bool:
        return self._stopping

    def stop(self) -> None:
        """Ask the loop to stop after the current unit of work (async-signal-safe)."""
        self._stopping = True
        self._wakeup.wake()

    def close(self) -> None:
        self.fs.stop()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._wakeup.close()
        log.info("stopped")

    # -- events (observer threads) ---------------------------------------------------
    def _on_event(self, event: FsEvent) -> None:
        self._events.put(event)
        self._wakeup.wake()

    def _route(self, event: FsEvent) -> None:
        for path in (event.path, event.dest):
            if not path:
                continue
            folder, _, base = path.rpartition(os.sep)
            if folder == self._spool_dir:  # only the hooks' file: drain.lock is our own write
                self._spool_hint = self._spool_hint or base == spool.SPOOL
                continue
            where = humanedits.repo_path(self._agents_dir, path)
            if where is not None:
                name, rel = where
                if rel == "agent.toml":
                    self._refresh.hint("agents", event.at)
                if name in self.agents and humanedits.counts_as_edit(rel):
                    self._edits.hint(name, event.at)
                continue
            if folder == self._agents_dir:
                self._refresh.hint("agents", event.at)
            elif not path.startswith(self._agents_dir + os.sep) and self._sources_for(path):
                self._sources.hint(path, event.at)

    def _sources_for(self, path: str) -> list[tuple[str, str]]:
        """(agent, format) of every agent whose source globs may cover `path`."""
        found = self._matches.get(path)
        if found is None:
            found, known = [], True
            for info in self.agents.values():
                for fmt, pattern in info.patterns:
                    owns = info.owns(fmt, path) if glob_match(pattern, path) else False
                    known = known and owns is not None  # a rollout's first line may still be coming
                    if owns:
                        found.append((info.name, fmt))
            if len(self._matches) > 10_000:
                self._matches.clear()
            if known:
                self._matches[path] = found
        return found

    # -- the loop --------------------------------------------------------------------
    def tick(self) -> float:
        """Do whatever is due; return the seconds until something may be due again."""
        while True:
            try:
                self._route(self._events.get_nowait())
            except queue.Empty:
                break
        now = self.clock()
        if self.fs.running and not self.fs.healthy():
            log.warning("a file-watching thread died; restarting it and rescanning")
            self.fs.restart()
            self._next_rescan = now
        if self._refresh.due(now):
            self._next_rescan = now
        for step in (
            self._reload_settings,
            self._rescan_if_due,
            self._observe_due,
            self._commit_due_edits,
            self._sync_due,
            self._drain_spool,
            self._cycle_if_due,
        ):
            if self._stopping:
                break
            try:
                step()
            except Exception:  # one failing step never stops the watcher
                log.exception("%s failed", step.__name__.strip("_"))
        return self._timeout()

    def _timeout(self) -> float:
        now = self.clock()
        deadlines = [
            d
            for d in (
                self._sources.next_deadline(),
                self._edits.next_deadline(),
                self._refresh.next_deadline(),
                self._syncs.next_deadline(),
                self._next_rescan,
            )
            if d is not None
        ]
        if self._more_syncs:
            return 0.0
        timeout = min([IDLE_S, *(d - now for d in deadlines)])
        if self.next_cycle_at is not None:
            timeout = min(timeout, self.next_cycle_at - self.wall())
        return max(0.0, timeout)

    def _reload_settings(self) -> None:
        """config.toml changed: its timings now, the agents read again at the rescan that follows."""
        applied = self.settings.reload_if_changed()
        if applied is None:
            return
        if not applied:  # the file does not load: status says so
            self.settings.publish(self.next_cycle_at, self.next_cycle_why)
            return
        timings = self.settings.timings
        self._sources.delay, self._sources.max_wait = timings.debounce_s, 5 * timings.debounce_s
        self._edits.delay = timings.quiet_s
        self._refresh.delay = timings.debounce_s
        self._syncs.retime(timings.debounce_s, timings.rescan_s)
        self._next_rescan = self.clock()

    def _rescan_if_due(self) -> None:
        if self.clock() >= self._next_rescan:
            self.reconcile()

    def _observe_due(self) -> None:
        for path in self._sources.due(self.clock()):
            for name, fmt in self._sources_for(path):
                if self._stopping:
                    return
                self._observe(name, path, fmt)

    def _observe(self, name: str, path: str, fmt: str, sig: tuple[int, int] | None = None) -> None:
        sig = sig or stat_sig(path)
        if sig is None:
            return
        info = self.agents.get(name)
        result = observe.observe_file(
            self.conn,
            name,
            Path(path),
            fmt,
            now=self.wall(),
            classifier=info.classifier if info else BUILT_IN,
        )
        self.files_read += 1
        self._seen[(name, path)] = sig
        self._replan = self._replan or bool(result.runs)
        if result.runs or result.error:
            log.info("%s: %s %s", name, path, result.error or f"{result.runs} run(s) added or updated")

    def _commit_due_edits(self) -> None:
        for name in self._edits.due(self.clock()):  # forgotten once due: each is tried here
            info = self.agents.get(name)
            if info is None or self._stopping:
                continue
            try:
                self._commit_edits_of(name, info.path)
            except Exception as exc:  # one agent's failure (a damaged repository) never drops the next ones'
                problem = repository_problem(exc)
                if problem is None:
                    log.exception("%s: committing human edits failed", name)
                else:
                    log.warning("%s: human edits are not committed: %s", name, problem)

    def _commit_edits_of(self, name: str, path: Path) -> None:
        if not humanedits.uncommitted(path):
            return  # the files equal the branch: nothing to commit, nothing to wait for
        if humanedits.commit_or_wait(self.conn, self.home, name, path, now=self.wall()):
            self._repo_seen[name] = humanedits.repo_signature(path)
        else:
            self._edits.postpone(name, self.clock())

    def _sync_due(self) -> None:
        self._syncs.poll(self.clock())
        self._more_syncs = self._syncs.run_one(self.clock())

    def _sync_agent(self, name: str, full: bool) -> tuple[bool, bool, str]:
        """One sync for the schedule: (it worked, the failure is transient, its line for the log)."""
        from evolve.sync.run import sync
        from evolve.workspace.agent import Agent

        outcome = sync(Agent(self.home, name), push_first=not full)
        return outcome.ok, outcome.state in ("offline", "busy"), outcome.line()

    def _drain_spool(self) -> None:
        if not (self._spool_hint or (self.home.spool_dir / spool.SPOOL).exists()):
            return
        from evolve.observe.records import apply_hook_records

        self._spool_hint = False
        with spool.drain(self.home.spool_dir) as records:
            if records:
                counts = apply_hook_records(self.conn, self.home, records)
                self._replan = True
                log.info("hook records: %s", ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))

    # -- reconciliation ------------------------------------------------------------
    def _seed_seen(self) -> None:
        """Files that did not change since their cursor was saved are not read again at start."""
        for agent, path, _adapter, raw in ledger.cursor_rows(self.conn):
            try:
                cursor = json.loads(raw)
                st = Path(path).stat()
            except (ValueError, OSError):
                continue
            if st.st_size == cursor.get("size") and st.st_ino == cursor.get("inode"):
                self._seen[(agent, path)] = (st.st_size, st.st_mtime_ns)

    def reconcile(self) -> int:
        """Re-read agents and sources; observe every file whose size or mtime changed."""
        self._next_rescan = self.clock() + self.settings.timings.rescan_s
        self._load_agents()
        self._sync_watches()
        now, observed = self.clock(), 0
        for info in list(self.agents.values()):
            for path, fmt in observe.source_files(info.sources):
                if self._stopping:
                    return observed
                sig = stat_sig(path)
                if sig is not None and self._seen.get((info.name, path)) != sig:
                    self._observe(info.name, path, fmt, sig)
                    observed += 1
            signature = humanedits.repo_signature(info.path)
            old = self._repo_seen.get(info.name)
            if old is not None and old != signature:
                self._edits.hint(info.name, now)
            self._repo_seen[info.name] = signature
        self._spool_hint = True
        self._syncs.everyone(self.clock())
        self._next_rescan = self.clock() + self.settings.timings.rescan_s
        self.settings.check_models(self._models)
        self._plan_next_cycle()
        return observed

    def _load_agents(self) -> None:
        from evolve.workspace.folders import list_agents

        names = list_agents(self.home)
        for gone in set(self.agents) - set(names):
            del self.agents[gone]
            self._models.pop(gone, None)
            self._edits.discard(gone)
            self._repo_seen.pop(gone, None)
            self._seen = {k: v for k, v in self._seen.items() if k[0] != gone}
        new = [n for n in names if n not in self.agents]
        for name in names:
            path = self.home.agent_dir(name)
            local = self.home.local_config(name)
            stamp = tuple(
                mtime(p) for p in (self.home.config_file, path / "agent.toml", local, path / ".git/config")
            )
            if name in self.agents and self.agents[name].stamp == stamp:
                continue
            auto = True
            try:
                settings = config_mod.load(self.home.config_file, path / "agent.toml", local)
                sources, classifier = settings.sources, classify.for_signals(settings.signals)
                auto = settings.git.sync == "auto"
                self._models[name] = settings.model
                for warning in settings.warnings:
                    log.warning("%s", warning)
            except ConfigError as exc:
                log.warning("%s (its transcripts are not watched until this is fixed)", exc)
                sources, classifier = SourcesConfig(), BUILT_IN
                self._models.pop(name, None)
            synced = auto and Repo(path).remote_url() is not None
            self.agents[name] = AgentWatch(name, path, sources, stamp, classifier, synced)
        if new:
            with ledger.transaction(self.conn):
                for name in new:
                    ledger.ensure_agent(self.conn, name, self.wall())
        self._matches.clear()
        self._syncs.update({name: info.path for name, info in self.agents.items() if info.synced})

    def _sync_watches(self) -> None:
        wanted = {(self._agents_dir, False), (self._spool_dir, False)}
        for info in self.agents.values():
            wanted |= {(str(info.path), False), (str(info.path / "skills"), True)}
            wanted |= {watch_root(pattern) for _, pattern in info.patterns}
        self.fs.sync(minimal_watches(wanted))

    # -- the cycle -------------------------------------------------------------------
    def _plan_next_cycle(self) -> None:
        from evolve.schedule.cycle import next_cycle

        timings = self.settings.timings
        if timings.cycle_s is None:
            self._next_cycle(None, "no cycles")
        else:
            self._next_cycle(*next_cycle(self.conn, self.home, timings.cycle_s, timings.first_s, self.wall()))

    def _next_cycle(self, at: float | None, why: str) -> None:
        self.next_cycle_at, self.next_cycle_why = at, why
        self.settings.publish(at, why)

    def _cycle_if_due(self) -> None:
        if self._replan:
            self._replan = False
            self._plan_next_cycle()
        if self.next_cycle_at is not None and self.wall() >= self.next_cycle_at:
            self.run_cycle()

    def run_cycle(self) -> dict | None:
        """One cycle, unless another process runs one right now."""
        from evolve.schedule.cycle import AgentOutcome, run_cycle
        from evolve.store.locks import FileLock

        reflect = self.reflect

        def guarded(name: str, now: float) -> AgentOutcome:
            if self._stopping:
                return AgentOutcome("skipped", "the watcher is stopping")
            return reflect(name, now)  # type: ignore[operator]

        try:
            with FileLock(self.home.run_dir / "cycle.lock", timeout=0):
                result = run_cycle(self.home, now=self.wall(), reflect=guarded if reflect else None)
        except LockBusy:
            log.info("another cycle is running; this one is skipped")
            self._next_cycle(self.wall() + RETRY_S, "another cycle was running")
            return None
        except Exception:
            self._next_cycle(self.wall() + RETRY_S, "the last cycle failed")  # never a hot loop
            raise
        self._plan_next_cycle()
        log.info("cycle: selected %s", ", ".join(result.plan.selected) or "nobody")
        for name, outcome in result.outcomes.items():
            if outcome.status == "failed":
                log.warning("%s: the reflection failed: %s", name, outcome.reason)
            else:
                log.info("%s: %s", name, outcome.describe())
        return result.to_dict()
