"""`evolve watch` and `evolve cycle`: learning in the background, on a rhythm."""

from __future__ import annotations

import signal
import sys
import time

from evolve.clock import stamp
from evolve.commands.output import emit_json, say, table, warn
from evolve.errors import EXIT_USER, LockBusy, UserError
from evolve.home import Home
from evolve.schedule.rules import HOUR, ago
from evolve.watch import service


def watch(
    home: Home,
    detach: bool = False,
    status: bool = False,
    stop: bool = False,
    print_service: bool = False,
    log_file: bool = False,
    verbose: bool = False,
    as_json: bool = False,
) -> int:
    if print_service:
        return _print_service(home, as_json)
    if status:
        return _watch_status(home, as_json)
    if stop:
        pid = service.stop(home)
        say(f"stopped evolve watch (pid {pid})" if pid else "evolve watch is not running")
        return 0
    if detach:
        current = service.state(home)
        if current.running:
            raise UserError(f"evolve watch is already running for {home.root} (pid {current.pid})")
        pid = service.spawn_detached(home)
        say(f"evolve watch runs in the background (pid {pid}); log: {service.log_path(home)}")
        return 0
    return _run(home, log_file, verbose)


def _print_service(home: Home, as_json: bool) -> int:
    """The unit for this platform, carrying where the keys of every agent's [model] come from."""
    from evolve import config as config_mod
    from evolve.workspace.agent import Agent
    from evolve.workspace.folders import list_agents

    models = [config_mod.load(home.config_file).model]
    models += [Agent(home, name).lenient_config.model for name in list_agents(home)]
    name, text = service.render_service(home, models=models)
    needs = service.Needs.of(models)
    if as_json:
        emit_json(
            {"name": name, "text": text, "install": service.install_hint(name), "needs": needs.to_dict(home)}
        )
        return 0
    sys.stdout.write(text)
    warn(service.install_hint(name))
    if needs.variables:
        names = ", ".join(f"${variable}" for variable in needs.variables)
        where = (
            "launchd does not pass it"
            if name.endswith(".plist")
            else f"put {needs.variables[0]}=<the key> in {service.env_file(home)} (chmod 600)"
        )
        warn(f"the model's API key comes from {names}: {where}, or `evolve model anthropic --key-file PATH`")
    return 0


def _watch_status(home: Home, as_json: bool) -> int:
    current = service.state(home)
    if as_json:
        emit_json(current.to_dict(home))
    elif current.running:
        say(f"evolve watch is running (pid {current.pid or '?'}); log: {service.log_path(home)}")
    else:
        say("evolve watch is not running; start it with `evolve watch --detach`")
    return 0


def _run(home: Home, log_file: bool, verbose: bool) -> int:
    """The foreground watcher: SIGTERM/SIGINT stop it after the current unit of work."""
    import os

    from evolve.watch.loop import Watcher

    service.setup_logging(home, log_file, verbose)
    requested: list[int] = []
    watchers: list[Watcher] = []

    def on_signal(signum, frame) -> None:
        if requested:  # a second Ctrl-C: stop now (open transactions roll back)
            raise KeyboardInterrupt
        requested.append(signum)
        for watcher in watchers:
            watcher.stop()

    # handlers first: a SIGTERM right after the pidfile appears must not kill us mid-start
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        # every path is absolute: keep no folder of the caller's busy (or importable), from
        # before the pidfile says the watcher runs
        os.chdir("/")
        lock = service.acquire(home)
        try:
            watchers.append(Watcher(home))
            if requested:
                watchers[0].stop()
            watchers[0].run()
        finally:
            service.release(home, lock)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _name_broken_configs(home: Home, plan) -> None:
    """An agent with nothing new is still told apart when its agent.toml does not load.

    The plan itself never reads a clean agent's files (cost follows the dirty agents); a
    person running `evolve cycle` is shown why such an agent would not reflect anyway.
    """
    from evolve.schedule.rules import NOTHING_NEW
    from evolve.workspace.agent import Agent

    for name, reason in plan.skipped.items():
        if reason == NOTHING_NEW and (problem := Agent(home, name).config_problem()):
            plan.skipped[name] = f"{NOTHING_NEW}; cannot read its configuration: {problem}"


def cycle(home: Home, now: bool = False, dry_run: bool = False, as_json: bool = False) -> int:
    from evolve import config as config_mod
    from evolve.schedule import cycle as cycle_mod
    from evolve.store import ledger
    from evolve.store.locks import FileLock, holder

    schedule = config_mod.load(home.config_file).schedule
    wall = time.time()
    with ledger.opened(home.state_db) as conn:
        last = ledger.last_cycle_at(conn)
        due, why = cycle_mod.next_cycle(
            conn, home, schedule.cycle_hours * HOUR, schedule.first_reflection_minutes * 60, wall
        )
    if not (now or dry_run) and last is not None and wall < due:
        if as_json:
            emit_json(
                {
                    "selected": [],
                    "skipped": {},
                    "ran": False,
                    "last_cycle_at": stamp(last),
                    "next_cycle_at": stamp(due),
                }
            )
        else:
            say(
                f"the last cycle ran {ago(wall - last)} ago; the next is due in {ago(due - wall)} "
                f"({why}); `evolve cycle --now` runs one now"
            )
        return 0
    from evolve.commands.observing import catch_up
    from evolve.watch.loop import reflector
    from evolve.workspace.folders import list_agents

    home.ensure()
    catch_up(home, list_agents(home))
    lock_file = home.run_dir / "cycle.lock"
    try:
        with FileLock(lock_file, timeout=0):
            result = cycle_mod.run_cycle(home, dry_run=dry_run, reflect=None if dry_run else reflector(home))
    except LockBusy:
        raise UserError(
            f"a cycle is already running ({holder(lock_file) or 'another process'}); wait for it to finish"
        ) from None
    _name_broken_configs(home, result.plan)
    if as_json:
        emit_json(result.to_dict())
        return EXIT_USER if result.failed else 0
    plan = result.plan
    rows = [
        [
            name,
            "selected" + (" (forced: waited long)" if name in plan.forced else ""),
            result.outcomes[name].describe() if name in result.outcomes else "",
        ]
        for name in plan.selected
    ]
    rows += [[name, "skipped", reason] for name, reason in sorted(plan.skipped.items())]
    if rows:
        say(table(rows, ["AGENT", "DECISION", "WHY / OUTCOME"]))
    say(
        f"{'dry run: ' if dry_run else ''}{len(plan.selected)} agent(s) selected, "
        f"{len(plan.skipped)} skipped" + (f", {len(result.failed)} failed" if result.failed else "")
    )
    return EXIT_USER if result.failed else 0
