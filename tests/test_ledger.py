"""state.db: WAL, a versioned schema upgraded by migrations, short transactions, dirty marks."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from evolve.store import ledger


def tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {r[0] for r in rows}


def version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def test_new_db_is_wal_and_at_the_latest_version(tmp_path):
    conn = ledger.connect(tmp_path / "deep" / "state.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert version(conn) == len(ledger.MIGRATIONS) >= 1
    assert {
        "agents",
        "cursors",
        "runs",
        "events",
        "impressions",
        "invocations",
        "reflections",
        "cycles",
    } <= tables(conn)
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    conn.close()
    raw = sqlite3.connect(tmp_path / "deep" / "state.db")  # WAL is persistent in the file
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_connecting_twice_does_not_rerun_migrations(tmp_path, monkeypatch):
    counting = "CREATE TABLE applied (n INTEGER); INSERT INTO applied VALUES (1)"
    monkeypatch.setattr(ledger, "MIGRATIONS", [*ledger.MIGRATIONS, counting])
    path = tmp_path / "state.db"
    first = ledger.connect(path)
    ledger.ensure_agent(first, "demo", now=1.0)
    first.close()
    for _ in range(2):
        again = ledger.connect(path)  # would fail on CREATE TABLE if migrations re-ran
        assert version(again) == len(ledger.MIGRATIONS)
        assert again.execute("SELECT COUNT(*) FROM applied").fetchone()[0] == 1
        assert ledger.agent_row(again, "demo")["created_at"] == 1.0
        again.close()


def test_version_zero_db_is_upgraded(tmp_path):
    path = tmp_path / "state.db"
    old = sqlite3.connect(path)  # a db no migration has touched: user_version 0
    old.execute("CREATE TABLE unrelated (x INTEGER)")
    old.execute("INSERT INTO unrelated VALUES (7)")
    old.commit()
    assert version(old) == 0
    old.close()
    conn = ledger.connect(path)
    assert version(conn) == len(ledger.MIGRATIONS)
    assert "runs" in tables(conn)
    assert conn.execute("SELECT x FROM unrelated").fetchone()[0] == 7
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_older_version_gets_only_the_newer_migrations(tmp_path, monkeypatch):
    path = tmp_path / "state.db"
    conn = ledger.connect(path)  # at the shipped version, with data
    ledger.mark_dirty(conn, "demo", now=5.0)
    conn.close()
    newer = "ALTER TABLE agents ADD COLUMN note TEXT; UPDATE agents SET note = 'upgraded'"
    monkeypatch.setattr(ledger, "MIGRATIONS", [*ledger.MIGRATIONS, newer])
    conn = ledger.connect(path)
    assert version(conn) == len(ledger.MIGRATIONS)
    row = ledger.agent_row(conn, "demo")
    assert row["note"] == "upgraded" and row["dirty"] == 1 and row["dirty_at"] == 5.0


def test_a_failing_migration_leaves_the_db_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "state.db"
    ledger.connect(path).close()
    broken = "CREATE TABLE half_done (x INTEGER); SELECT * FROM no_such_table"
    monkeypatch.setattr(ledger, "MIGRATIONS", [*ledger.MIGRATIONS, broken])
    with pytest.raises(sqlite3.OperationalError):
        ledger.connect(path)
    raw = sqlite3.connect(path)
    assert version(raw) == len(ledger.MIGRATIONS) - 1
    assert "half_done" not in tables(raw)
    raw.close()


def test_transaction_commits_or_rolls_back(tmp_path):
    conn = ledger.connect(tmp_path / "state.db")
    with ledger.transaction(conn):
        ledger.ensure_agent(conn, "kept")
    with pytest.raises(RuntimeError), ledger.transaction(conn):
        ledger.ensure_agent(conn, "dropped")
        raise RuntimeError("boom")
    assert ledger.agent_row(conn, "kept") is not None
    assert ledger.agent_row(conn, "dropped") is None
    assert not conn.in_transaction


def test_readers_do_not_wait_for_a_writer(tmp_path):
    path = tmp_path / "state.db"
    writer = ledger.connect(path)
    ledger.ensure_agent(writer, "demo")
    reader = ledger.connect(path, timeout_s=0.2)
    with ledger.transaction(writer):
        ledger.mark_dirty(writer, "demo")
        assert ledger.agent_row(reader, "demo")["dirty"] == 0  # the last committed state
    assert ledger.agent_row(reader, "demo")["dirty"] == 1


def test_a_second_writer_queues_instead_of_failing(tmp_path):
    path = tmp_path / "state.db"
    first = ledger.connect(path)
    second = ledger.connect(path, timeout_s=5.0)
    done = threading.Event()

    def write():
        with ledger.transaction(second):
            ledger.ensure_agent(second, "later")
        done.set()

    with ledger.transaction(first):
        ledger.ensure_agent(first, "first")
        thread = threading.Thread(target=write)
        thread.start()
        assert not done.wait(0.2)  # waiting on the busy timeout, not failing
    thread.join(5)
    assert done.is_set()
    assert ledger.agent_row(first, "later") is not None


def test_dirty_marks(tmp_path):
    conn = ledger.connect(tmp_path / "state.db")
    ledger.mark_dirty(conn, "demo", now=10.0)
    ledger.mark_dirty(conn, "demo", now=20.0)
    row = ledger.agent_row(conn, "demo")
    assert (row["dirty"], row["dirty_at"], row["activity_at"]) == (1, 10.0, 20.0)
    ledger.clear_dirty(conn, "demo", started=15.0)  # something arrived during the reflection
    assert ledger.agent_row(conn, "demo")["dirty"] == 1
    ledger.clear_dirty(conn, "demo", started=25.0)
    row = ledger.agent_row(conn, "demo")
    assert (row["dirty"], row["dirty_at"]) == (0, None)


def test_events(tmp_path):
    conn = ledger.connect(tmp_path / "state.db")
    ledger.add_event(conn, "demo", "human_edit", {"path": "memo.md"}, now=1.0)
    ledger.add_event(conn, "demo", "revert", {"sha": "abc"}, now=2.0, dirty=False)
    assert ledger.events_since(conn, "demo", None) == [
        {"kind": "human_edit", "at": 1.0, "path": "memo.md"},
        {"kind": "revert", "at": 2.0, "sha": "abc"},
    ]
    assert [e["kind"] for e in ledger.events_since(conn, "demo", 1.0)] == ["revert"]
    assert ledger.agent_row(conn, "demo")["activity_at"] == 1.0


def test_a_version_2_db_gains_the_lesson_tables_and_its_runs_are_to_be_judged(tmp_path, monkeypatch):
    path = tmp_path / "state.db"
    monkeypatch.setattr(ledger, "MIGRATIONS", ledger.MIGRATIONS[:2])
    old = ledger.connect(path)
    old.execute(
        "INSERT INTO runs (agent, path, session, idx, facts, observed_at) VALUES ('a', 'p', 's', 0, '{}', 1)"
    )
    old.close()
    monkeypatch.undo()
    conn = ledger.connect(path)
    assert version(conn) == len(ledger.MIGRATIONS) == 4
    assert {"session_starts", "memo_impressions", "ignored"} <= tables(conn)
    assert [tuple(r) for r in conn.execute("SELECT idx, judged FROM runs")] == [(0, 0)]
    ledger.add_context(conn, "a", "s", 2.0, None, {"self": ["0123456789ab"]})
    assert conn.execute("SELECT lesson, section FROM memo_impressions").fetchall()[0][:] == (
        "0123456789ab",
        "self",
    )
    conn.close()
