"""The one door to watchdog: folders watched natively, with a polling fallback per folder.

watchdog is imported inside functions only, so importing evolve's watcher modules stays
cheap. File events become `FsEvent`s handed to a sink; they are hints the watcher re-reads
files for, never counted. Opening and reading files is not asked for (the watcher's own
reads would wake it up again).
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("evolve.watch")

# errno from inotify -> (what ran out, the sysctl that raises it)
LIMITS = {
    errno.ENOSPC: ("watch", "fs.inotify.max_user_watches"),
    errno.EMFILE: ("instance", "fs.inotify.max_user_instances"),
}


@dataclass(frozen=True)
class FsEvent:
    at: float
    path: str
    dest: str | None = None


def limit_message(exc: OSError, path: str) -> str | None:
    """A clear message for an inotify limit error, or None for any other error."""
    if exc.errno not in LIMITS:
        return None
    what, sysctl = LIMITS[exc.errno]
    try:
        current = Path(f"/proc/sys/{sysctl.replace('.', '/')}").read_text().strip()
    except OSError:
        current = "?"
    return (
        f"the inotify {what} limit is reached ({sysctl} = {current}); watching {path} by "
        f"polling instead (slower to notice, more CPU). Raise it with "
        f"`sudo sysctl {sysctl}=<higher>` and persist it in /etc/sysctl.d/, then restart "
        f"`evolve watch`"
    )


def _event_filter() -> list:
    from watchdog import events as ev

    return [
        ev.FileCreatedEvent,
        ev.FileModifiedEvent,
        ev.FileMovedEvent,
        ev.FileDeletedEvent,
        ev.FileClosedEvent,
        ev.DirCreatedEvent,
        ev.DirMovedEvent,
        ev.DirDeletedEvent,
    ]


def _make_handler(deliver: Callable[[object], None]):
    from watchdog.events import FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event) -> None:
            deliver(event)

    return Handler()


class Watches:
    """The set of watched folders; `sync` adds and removes, `healthy`/`restart` recover."""

    def __init__(
        self,
        sink: Callable[[FsEvent], None],
        clock: Callable[[], float],
        *,
        poll_s: float = 5.0,
        force_polling: bool = False,
    ) -> None:
        self._sink = sink
        self._clock = clock
        self._poll_s = poll_s
        self._force_polling = force_polling
        self._handler: Any = None
        self._native: Any = None
        self._polling: Any = None
        self._filter: list | None = None
        self._watches: dict[tuple[str, bool], tuple[Any, Any]] = {}
        self.polled: set[tuple[str, bool]] = set()
        self.running = False

    # -- events ----------------------------------------------------------------------
    def _deliver(self, event) -> None:
        dest = os.fsdecode(getattr(event, "dest_path", "") or "") or None
        self._sink(FsEvent(self._clock(), os.fsdecode(event.src_path), dest))

    # -- observers -------------------------------------------------------------------
    def start(self) -> None:
        self._filter = _event_filter()
        self._handler = _make_handler(lambda event: self._deliver(event))
        self._native = None if self._force_polling else self._start_native()
        self.running = True

    def _start_native(self):
        from watchdog.observers import Observer

        try:
            observer = Observer()
            observer.start()
        except OSError as exc:
            message = limit_message(exc, "every folder")
            if message is None:
                raise
            log.warning(message)
            return None
        return observer

    def _poller(self):
        if self._polling is None or not self._polling.is_alive():
            from watchdog.observers.polling import PollingObserver

            self._polling = PollingObserver(timeout=self._poll_s)
            self._polling.start()
        return self._polling

    def sync(self, wanted: set[tuple[str, bool]]) -> None:
        """Watch exactly these (folder, recursive) pairs; missing folders are skipped."""
        if not self.running:
            return
        alive = {
            w
            for o in (self._native, self._polling)
            if o is not None
            for w in (e.watch for e in o.emitters if e.is_alive())
        }
        for key, (_, watch) in list(self._watches.items()):
            # a deleted folder stops its emitter: watch it again once it is back
            if key not in wanted or watch not in alive or not Path(key[0]).is_dir():
                self._remove(key)
        for key in sorted(wanted - set(self._watches)):
            self._add(*key)

    @property
    def watched(self) -> set[tuple[str, bool]]:
        return set(self._watches)

    def _add(self, path: str, recursive: bool) -> None:
        if not Path(path).is_dir():
            return
        observer = self._native
        if observer is None:
            observer = self._poller()
            self.polled.add((path, recursive))
        try:
            watch = observer.schedule(self._handler, path, recursive=recursive, event_filter=self._filter)
        except OSError as exc:
            message = limit_message(exc, path)
            if message is None:  # the folder vanished or is unreadable: the next rescan retries
                log.debug("cannot watch %s: %s", path, exc)
                return
            log.warning(message)
            observer = self._poller()
            self.polled.add((path, recursive))
            watch = observer.schedule(self._handler, path, recursive=recursive, event_filter=self._filter)
        self._watches[(path, recursive)] = (observer, watch)

    def _remove(self, key: tuple[str, bool]) -> None:
        observer, watch = self._watches.pop(key)
        self.polled.discard(key)
        try:
            observer.unschedule(watch)
        except (KeyError, OSError):  # already gone with its folder
            pass

    def healthy(self) -> bool:
        """False when an observer thread died (an exception in it, a stopped emitter)."""
        observers = [o for o in (self._native, self._polling) if o is not None]
        return all(o.is_alive() for o in observers)

    def restart(self) -> None:
        """New observers with the same watches (events in between are found by a rescan)."""
        wanted = set(self._watches)
        self.stop()
        self.start()
        self.sync(wanted)

    def stop(self) -> None:
        self.running = False
        for observer in (self._native, self._polling):
            if observer is None:
                continue
            try:
                observer.stop()
                if observer.is_alive():
                    observer.join(timeout=5)
            except Exception:  # a dead observer may fail to stop; it is dropped anyway
                log.debug("stopping an observer failed", exc_info=True)
        self._native = self._polling = None
        self._watches.clear()
        self.polled.clear()
