"""A read-only home (B3): reading commands work, writing ones refuse in one line, doctor says so.

A real read-only bind mount of the home (root only; skipped with the reason otherwise):
`chmod` cannot stand in for it here, because root writes through any mode bits.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest

from evolve import cli
from evolve.errors import EXIT_OK, EXIT_USER
from evolve.home import Home
from evolve.store import ledger
from tests.helpers import make_agent
from tests.reflect.scenarios import corrected_session


@pytest.fixture
def read_only_home(evolve_home, tmp_path, capsys):
    """A home with an agent, observed runs and one reflection, then remounted read-only."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    make_agent("a")
    assert cli.main(["observe", "a", str(corrected_session(tmp_path))]) == 0
    assert cli.main(["reflect", "a"]) == 0
    capsys.readouterr()
    root = str(evolve_home)
    steps = (["mount", "--bind", root, root], ["mount", "-o", "remount,ro,bind", root])
    for step in steps:
        proc = subprocess.run(step, capture_output=True, text=True)
        if proc.returncode != 0:
            subprocess.run(["umount", root], check=False)
            pytest.skip(f"cannot bind-mount read-only here: {proc.stderr.strip()}")
    try:
        yield evolve_home
    finally:
        subprocess.run(["umount", "-l", root], check=True)  # lazily: a failed test may hold a file


READING = [
    ["agents"],
    ["status"],
    ["skills", "a"],
    ["lessons", "a"],
    ["log", "a"],
    ["review", "a", "HEAD"],
    ["score", "a", "--all"],
    ["proposals", "a"],
    ["prompt", "a"],
    ["report", "a"],
    ["watch", "--status"],
    ["model"],
]
WRITING = [
    ["init", "b"],
    ["observe", "a"],
    ["reflect", "a", "--force"],
    ["cycle", "--now"],
    ["pause", "a"],
    ["model", "offline"],
]


def test_reading_commands_work_and_writing_ones_refuse_in_one_line(read_only_home, capsys):
    for argv in READING:
        code = cli.main(argv)
        out, err = capsys.readouterr()
        assert code == EXIT_OK, (argv, err)
        assert err == "", (argv, err)
    for argv in WRITING:
        code = cli.main(argv)
        err = capsys.readouterr().err
        assert code == EXIT_USER, (argv, err)
        assert err.startswith(f"evolve: error: the evolve home is read-only: {read_only_home}"), err
        assert err.count("\n") == 1
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert code == EXIT_USER and "the evolve home is read-only" in out
    assert not (read_only_home / "logs" / "crash.log").exists()


def test_the_ledger_opens_read_only_and_a_write_is_refused(read_only_home):
    home = Home.resolve()
    with ledger.opened(home.state_db) as conn:
        assert ledger.read_only(conn)
        assert conn.execute("SELECT count(*) FROM runs WHERE agent = 'a'").fetchone()[0] > 0
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("UPDATE agents SET paused = 1")
