"""The watcher syncs an agent that has a remote: after each commit and at each rescan.

An unreachable server is retried quietly and shown in `evolve status`; with
`[git] sync = "manual"` only `evolve sync` does it.
"""

from __future__ import annotations

import logging

from evolve.watch import syncing
from tests.git_servers import GitDaemon
from tests.sync_helpers import SELF
from tests.watch_helpers import new_watcher, pump, settle


def test_the_watcher_syncs_after_each_commit_and_at_each_rescan(machines, git_daemon):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    watcher = new_watcher(a.home)
    try:
        a.person_rule("- Alice's rule, pushed by the watcher.")
        pump(watcher, lambda: git_daemon.git("agent", "rev-parse", "main") == a.head())
        b.person_rule("- Bob's rule, pulled at the next rescan.", SELF)
        assert b.sync()[0] == 0
        watcher.reconcile()  # what the watcher does every rescan_minutes
        pump(watcher, lambda: "Bob's rule" in a.read("memo.md"))
        assert a.head() == git_daemon.git("agent", "rev-parse", "main")
    finally:
        watcher.close()
    a.fsck()


def test_an_unreachable_server_is_retried_quietly_and_shown_in_status(machines, tmp_path, caplog):
    a, _b = machines
    server = GitDaemon(tmp_path / "server")
    server.start()
    a.create(server.url())
    server.stop()  # the server goes away: every sync now fails to connect
    now = [1000.0]
    watcher = new_watcher(a.home, clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="evolve.watch")
    try:
        a.person_rule("- Written while offline.")
        for _ in range(40):  # ten seconds of ticks: one attempt, then the wait
            now[0] += 0.25
            watcher.tick()
        attempts = [r for r in caplog.records if "offline" in r.getMessage()]
        assert len(attempts) == 1 and attempts[0].levelno == logging.WARNING
        code, status, _err = a.evolve("status")
        assert "a: remote git://127.0.0.1:" in status and "offline (1 attempt(s) in a row" in status
        server.start()  # back on the same port
        now[0] += syncing.FIRST_RETRY_S
        pump(watcher, lambda: server.git("agent", "rev-parse", "main") == a.head())
        assert any("after 1 failed attempt(s)" in r.getMessage() for r in caplog.records)
        code, status, _err = a.evolve("status")
        assert "a: remote git://127.0.0.1:" in status and ": synced " in status
    finally:
        watcher.close()
        server.stop()


def test_with_sync_manual_only_evolve_sync_syncs(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    a.write("agent.toml", a.read("agent.toml") + '\n[git]\nsync = "manual"\n')
    a.commit("I sync by hand")
    watcher = new_watcher(a.home)
    try:
        a.person_rule("- Only pushed by hand.")
        watcher.reconcile()
        settle(watcher, 0.5)
        assert git_daemon.git("agent", "rev-parse", "main") != a.head()
        code, status, _err = a.evolve("status")
        assert "sync = manual" in status
    finally:
        watcher.close()
    assert a.sync()[0] == 0 and git_daemon.git("agent", "rev-parse", "main") == a.head()
