"""Observing through state.db: real files, real SQLite, `observe.observe` end to end.

The reader's and adapters' own edge cases are tested at their level in tests/transcripts;
here each case goes through observe and is checked in the runs, cursors and invocations
stored in state.db (what every later stage reads).
"""

# ruff: noqa: F811 - the fixtures imported from tests.observe_helpers are parameters here
from __future__ import annotations

import json
import random
import shutil

import pytest

from evolve.observe import ingest as observe
from evolve.transcripts import parse_file
from tests.observe_helpers import (  # noqa: F401 - fixtures
    AGENT,
    MANY_RUNS,
    REWOUND,
    Transcript,
    clean,
    conn,
    cursor_row,
    dirty,
    facts,
    invocations,
    observe_paths,
    real_file,
    stored,
    two_runs,
)


# -- incremental observing ---------------------------------------------------------------
def test_real_transcript_observed_then_nothing_then_one_more_run(conn, claude_data, tmp_path):
    source = real_file(claude_data, MANY_RUNS)
    path = tmp_path / "session.jsonl"
    shutil.copyfile(source, path)
    expected = parse_file(source)
    assert len(expected) >= 5

    first = observe_paths(conn, path)
    runs = stored(conn)
    assert first.runs == len(expected) == len(runs)
    assert first.bad_lines == 0 and not first.files[0].error
    assert [r["request"] for r in runs] == [r.request for r in expected]
    assert [r["tool_calls"] for r in runs] == [r.tool_calls for r in expected]
    assert [r["_superseded"] for r in runs] == [int(r.superseded) for r in expected]
    assert dirty(conn)
    assert cursor_row(conn, path)["adapter"] == "claude_code"
    assert json.loads(cursor_row(conn, path)["cursor"])["offset"] == path.stat().st_size

    clean(conn)
    cursor_before = cursor_row(conn, path)["cursor"]
    again = observe_paths(conn, path)
    assert again.runs == 0 and again.bad_lines == 0
    assert stored(conn) == runs  # same facts, same observed_at
    assert not dirty(conn)
    assert cursor_row(conn, path)["cursor"] == cursor_before

    # one more run, continuing the conversation from the last run's last line
    tail = runs[-1]["tail_uuid"]
    t = Transcript(session=runs[-1]["session_id"])
    t.user("Please also run the linter", parent=tail)
    t.call("Bash", {"command": "ruff check"}, "All checks passed!")
    t.text("Lint is clean.")
    t.append(path, 0)
    more = observe_paths(conn, path)
    after = stored(conn)
    assert more.runs == 2  # the previously open run is now complete + the new run
    assert len(after) == len(runs) + 1
    assert after[:-2] == runs[:-1]  # untouched: same facts, same observed_at
    assert after[-2]["_complete"] == 1 and runs[-1]["_complete"] == 0
    assert after[-1]["request"] == "Please also run the linter"
    assert after[-1]["tool_calls"] == 1 and after[-1]["_idx"] == len(runs)
    assert dirty(conn)


@pytest.mark.parametrize(("session", "batch"), [(MANY_RUNS, None), (REWOUND, None), (MANY_RUNS, 4096)])
def test_observing_in_pieces_equals_one_read(conn, claude_data, tmp_path, monkeypatch, session, batch):
    """Appends cut at arbitrary bytes (mid-line included), in small transactions or not."""
    if batch:
        monkeypatch.setattr(observe, "BATCH_BYTES", batch)
    source = real_file(claude_data, session)
    data = source.read_bytes()
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"")
    rng = random.Random(3)
    cuts = sorted(rng.sample(range(1, len(data)), 12)) + [len(data)]
    done = 0
    for cut in cuts:
        with path.open("ab") as handle:
            handle.write(data[done:cut])
        done = cut
        result = observe_paths(conn, path)
        assert not result.files[0].reset and result.bad_lines == 0
    whole = tmp_path / "whole.jsonl"
    shutil.copyfile(source, whole)
    observe_paths(conn, whole)
    pieces, once = stored(conn, path), stored(conn, whole)
    assert facts(pieces) == facts(once)
    assert [r["_superseded"] for r in pieces] == [r["_superseded"] for r in once]
    assert cursor_row(conn, path)["skipped"] == 0


def test_batches_store_each_run_once_and_count_it_once(conn, tmp_path, monkeypatch):
    monkeypatch.setattr(observe, "BATCH_BYTES", 2048)
    t = Transcript()
    for i in range(30):
        t.run(f"Task number {i}: " + "details " * 40)
    path = t.write(tmp_path / "s.jsonl")
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert result.runs == 30 == len(runs)
    assert [r["_idx"] for r in runs] == list(range(30))
    assert all(r["tool_calls"] == 1 for r in runs)
    assert [r["_complete"] for r in runs] == [1] * 29 + [0]


def test_partial_line_split_across_two_appends(conn, tmp_path):
    t = Transcript()
    t.user("Run the tests")
    tool_id = t.tool("Bash", {"command": "pytest"})
    t.result(tool_id, "FAILED tests/test_x.py::test_y - AssertionError", is_error=True)
    data = t.data()
    path = tmp_path / "s.jsonl"
    cut = len(data) - 40  # inside the error result line
    path.write_bytes(data[:cut])

    observe_paths(conn, path)
    (run,) = stored(conn)
    assert run["tool_calls"] == 1 and run["errors"] == 0
    offset = json.loads(cursor_row(conn, path)["cursor"])["offset"]
    assert offset == data.rindex(b"\n", 0, cut) + 1  # the partial line waits

    with path.open("ab") as handle:
        handle.write(data[cut:])
    result = observe_paths(conn, path)
    (run,) = stored(conn)
    assert result.runs == 1 and not result.files[0].reset
    assert run["errors"] == 1 and run["ended_in_error"]
    assert json.loads(cursor_row(conn, path)["cursor"])["offset"] == len(data)


def test_line_straddling_4096_bytes(conn, tmp_path):
    def build(pad: int) -> Transcript:
        t = Transcript()
        t.user("Summarise the log")
        t.call("Read", {"file_path": "/work/project/log.txt"}, "x" * pad)
        t.call("Read", {"file_path": "/work/project/log2.txt"}, "y" * 3000)  # crosses 4096
        t.text("The log is fine.")
        return t

    probe = build(0).data()
    t = build(3600 - probe.index(b'"y'))  # the y-result line starts near byte 3600
    data = t.data()
    straddler = data.rindex(b"\n", 0, data.index(b"y" * 100)) + 1
    assert 3000 < straddler < 4096 < data.index(b"\n", straddler)
    path = tmp_path / "s.jsonl"
    cut = 4100  # mid-line, just past the boundary
    path.write_bytes(data[:cut])
    observe_paths(conn, path)
    assert stored(conn)[0]["tool_calls"] == 2
    with path.open("ab") as handle:
        handle.write(data[cut:])
    result = observe_paths(conn, path)
    assert not result.files[0].reset
    t2 = Transcript(tag="v")
    t2.run("And the next one", parent=t.last)
    t2.append(path, 0)
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert not result.files[0].reset and result.runs == 2
    assert [r["tool_calls"] for r in runs] == [2, 1]
    assert runs[0]["ended_at"] == t.lines[-1].decode().split('"timestamp":"')[1][:19] + "Z"


def test_truncation_to_zero_then_new_content(conn, tmp_path):
    old = Transcript(tag="old")
    old.run("Old request one")
    old.skill("deploy")
    old.run("Old request two")
    old.run("Old request three")
    old.raw(b"{corrupt")
    path = old.write(tmp_path / "s.jsonl")
    first = observe_paths(conn, path)
    assert len(stored(conn)) == 3 and first.bad_lines == 1
    assert cursor_row(conn, path)["skipped"] == 1
    inode = path.stat().st_ino

    with path.open("r+b") as handle:  # truncated in place
        handle.truncate(0)
    emptied = observe_paths(conn, path)
    assert emptied.files[0].reset and stored(conn) == []
    assert cursor_row(conn, path)["skipped"] == 0

    new = Transcript(tag="new")
    new.run("New request one")
    new.run("New request two")
    with path.open("ab") as handle:
        handle.write(new.data())
    assert path.stat().st_ino == inode
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert not result.files[0].reset and result.runs == 2
    assert [r["request"] for r in runs] == ["New request one", "New request two"]
    assert [r["_idx"] for r in runs] == [0, 1]


def test_truncation_and_rewrite_seen_in_one_observe(conn, tmp_path):
    old = Transcript(tag="old")
    for i in range(3):
        old.run(f"Old request {i}")
    path = old.write(tmp_path / "s.jsonl")
    observe_paths(conn, path)
    new = Transcript(tag="new")
    new.run("Only request of the new content, long enough to pass the old offset " * 40)
    path.write_bytes(new.data())  # truncated and refilled before evolve looked again
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert result.files[0].reset
    assert len(runs) == 1 and runs[0]["request"].startswith("Only request")


def test_rename_and_new_file_at_the_same_path(conn, tmp_path):
    t = Transcript()
    t.run("First request")
    t.skill("deploy")
    t.run("Second request")
    path = t.write(tmp_path / "s.jsonl")
    observe_paths(conn, path, now=100.0)
    before = stored(conn)
    assert len(before) == 2
    assert len(invocations(conn)) == 1
    clean(conn)

    # replaced by a file with the very same lines (an atomic rewrite): nothing is new
    path.rename(tmp_path / "s.jsonl.0")
    t.write(path)
    result = observe_paths(conn, path, now=200.0)
    assert result.files[0].reset and result.runs == 0
    assert stored(conn) == before and not dirty(conn)

    # rotated: a new file holding the same lines and one more run appears at the path
    path.rename(tmp_path / "s.jsonl.1")
    t.run("Third request")
    t.write(path)
    result = observe_paths(conn, path, now=300.0)
    runs = stored(conn)
    assert result.files[0].reset and result.runs == 2  # the open run completed + a new one
    assert [r["request"] for r in runs] == ["First request", "Second request", "Third request"]
    assert [r["_idx"] for r in runs] == [0, 1, 2]
    assert [r["_observed_at"] for r in runs] == [100.0, 300.0, 300.0]
    assert len(invocations(conn)) == 1  # the same Skill call, not counted twice

    # replaced by a different conversation
    path.rename(tmp_path / "s.jsonl.2")
    other = Transcript(tag="w")
    other.run("Unrelated request")
    other.write(path)
    result = observe_paths(conn, path)
    assert result.files[0].reset
    assert [r["request"] for r in stored(conn)] == ["Unrelated request"]


def test_facts_stored_by_an_older_encoding_are_the_same_facts(conn, tmp_path):
    """Rows written with json.dumps (before msgspec) neither count as new nor get rewritten."""
    t = Transcript()
    t.run("First request")
    t.run("Second request")
    path = t.write(tmp_path / "s.jsonl")
    observe_paths(conn, path, now=100.0)
    for row in conn.execute("SELECT id, facts FROM runs").fetchall():
        older = json.dumps(json.loads(row["facts"]), ensure_ascii=False, sort_keys=True)
        conn.execute("UPDATE runs SET facts = ? WHERE id = ?", (older, row["id"]))
    assert '": ' in conn.execute("SELECT facts FROM runs").fetchone()["facts"]
    before = stored(conn)
    clean(conn)

    with path.open("a") as handle:  # a line without events: the open run is stored again
        handle.write('{"type":"summary","summary":"s","leafUuid":"x"}\n')
    assert observe_paths(conn, path, now=200.0).runs == 0
    assert stored(conn) == before and not dirty(conn)
    lines = path.read_text()
    path.rename(tmp_path / "s.jsonl.0")  # an atomic rewrite with the same lines
    path.write_text(lines)
    result = observe_paths(conn, path, now=300.0)
    assert result.files[0].reset and result.runs == 0
    assert stored(conn) == before and not dirty(conn)


def test_ten_megabyte_single_line(conn, tmp_path):
    t = Transcript()
    t.user("Print the big file")
    tool_id = t.tool("Bash", {"command": "cat big.log"})
    t.result(tool_id, "Traceback (most recent call last):\n" + "z" * (10 << 20), is_error=True)
    t.text("The file is huge.")
    data = t.data()
    assert max(len(line) for line in t.lines) > 10 << 20
    path = tmp_path / "s.jsonl"
    half = len(data) // 2  # the 10 MB line arrives in two appends
    path.write_bytes(data[:half])
    observe_paths(conn, path)
    assert stored(conn)[0]["errors"] == 0
    with path.open("ab") as handle:
        handle.write(data[half:])
    result = observe_paths(conn, path)
    (run,) = stored(conn)
    assert result.bad_lines == 0
    assert run["errors"] == 1 and run["tool_calls"] == 1
    assert all(len(text) <= 500 for text in run["error_texts"])
    row = conn.execute("SELECT length(facts) AS n FROM runs").fetchone()
    assert row["n"] < 20_000  # facts are capped, never the raw output


def test_invalid_utf8(conn, tmp_path):
    """C16: a stray non-UTF-8 byte becomes U+FFFD and keeps its line (and the run's request)."""
    t = Transcript()
    t.run("Good request")
    good = t.data()
    path = tmp_path / "s.jsonl"
    path.write_bytes(good + b"\xc3\x28 not even json\n")
    start = len(t.lines)
    t.run("Caf\u00e9 request", parent=t.last)
    t.lines[start] = t.lines[start].replace("Café".encode(), b"Caf\xe9")  # Latin-1, not UTF-8
    t.append(path, start)
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert result.bad_lines == 1 and not result.files[0].error
    assert cursor_row(conn, path)["skipped"] == 1
    assert [r["request"] for r in runs] == ["Good request", "Caf\ufffd request"]
    again = observe_paths(conn, path)
    assert again.bad_lines == 0 and cursor_row(conn, path)["skipped"] == 1


def test_empty_file(conn, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result = observe_paths(conn, path)
    assert result.runs == 0 and result.bad_lines == 0 and not result.files[0].error
    assert stored(conn) == [] and not dirty(conn)
    assert json.loads(cursor_row(conn, path)["cursor"])["offset"] == 0
    assert not observe_paths(conn, path).files[0].reset
    t = Transcript()
    t.run("First request")
    t.write(path)
    result = observe_paths(conn, path)
    assert result.runs == 1 and not result.files[0].reset and dirty(conn)


def test_corrupt_lines_are_counted_once(conn, tmp_path):
    t = Transcript()
    t.run("A request")
    t.raw(b'{"type":"user","message":')  # cut short, then a newline: corrupt
    t.raw(b"[1, 2, 3]")  # JSON, not an object
    t.run("Another request", parent=t.last)
    path = t.write(tmp_path / "s.jsonl")
    result = observe_paths(conn, path)
    assert result.bad_lines == 2 and cursor_row(conn, path)["skipped"] == 2
    assert len(stored(conn)) == 2
    assert observe_paths(conn, path).bad_lines == 0
    with path.open("ab") as handle:
        handle.write(b"not json at all\n")
    assert observe_paths(conn, path).bad_lines == 1
    assert cursor_row(conn, path)["skipped"] == 3
    assert observe_paths(conn, path).to_dict()["bad_lines"] == 0


def test_missing_file_is_reported_and_others_still_observed(conn, tmp_path):
    t = Transcript()
    t.run("A request")
    good = t.write(tmp_path / "good.jsonl")
    result = observe_paths(conn, tmp_path / "gone.jsonl", good)
    assert result.files[0].error == "file disappeared"
    assert result.runs == 1 and len(stored(conn)) == 1
