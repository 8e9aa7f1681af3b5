"""Observing through state.db: real files, real SQLite, `observe.observe` end to end.

The reader's and adapters' own edge cases are tested at their level in tests/transcripts;
here each case goes through observe and is checked in the runs, cursors and invocations
stored in state.db (what every later stage reads).
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evolve import classify, ledger, observe, pending
from evolve.config import Config
from evolve.transcripts import parse_file

AGENT = "demo"
START = datetime(2026, 2, 10, 21, 0, tzinfo=UTC)


class Transcript:
    """Claude Code JSONL lines shaped like real ones (one content block per assistant line)."""

    def __init__(self, session: str = "5e55a0c1-0000-4000-8000-000000000001",
                 sidechain: bool = False, tag: str = "u"):
        self.session = session
        self.sidechain = sidechain
        self.tag = tag  # keeps uuids and ids unique across transcripts of one test
        self.lines: list[bytes] = []
        self.n = 0
        self.last: str | None = None

    # -- raw lines -------------------------------------------------------------------
    def add(self, obj: dict, parent: str | None | bool = True) -> str:
        self.n += 1
        uuid = f"{self.tag}-{self.n:05d}"
        head = {"parentUuid": self.last if parent is True else (parent or None),
                "isSidechain": self.sidechain, "userType": "external", "cwd": "/work/project",
                "sessionId": self.session, "version": "2.1.38"}
        stamp = (START + timedelta(seconds=self.n)).strftime("%Y-%m-%dT%H:%M:%S.123Z")
        line = {**head, **obj, "uuid": uuid, "timestamp": stamp}
        self.lines.append(json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode())
        self.last = uuid
        return uuid

    def raw(self, data: bytes) -> None:
        self.lines.append(data)

    # -- conversation ----------------------------------------------------------------
    def user(self, content, parent: str | None | bool = True, **extra) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content},
                         **extra}, parent)

    def text(self, text: str) -> str:
        msg = f"msg_{self.tag}{self.n:05d}"
        return self.add({"type": "assistant", "requestId": f"req_{self.tag}{self.n:05d}",
                         "message": {"id": msg, "type": "message", "role": "assistant",
                                     "model": "claude-x",
                                     "content": [{"type": "text", "text": text}]}})

    def tool(self, name: str, tool_input: dict) -> str:
        tool_id = f"toolu_{self.tag}{self.n + 1:05d}"
        self.add({"type": "assistant", "requestId": f"req_{self.tag}{self.n:05d}",
                  "message": {"id": f"msg_{self.tag}{self.n:05d}", "type": "message",
                              "role": "assistant", "model": "claude-x",
                              "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                           "input": tool_input}]}})
        return tool_id

    def result(self, tool_id: str, content: str, is_error: bool | None = None,
               tur=None) -> str:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        extra = {} if tur is None else {"toolUseResult": tur}
        return self.user([block], **extra)

    def call(self, name: str, tool_input: dict, output: str = "ok", error: bool = False) -> str:
        tool_id = self.tool(name, tool_input)
        if error:
            self.result(tool_id, output, is_error=True, tur=f"Error: {output}")
        else:
            self.result(tool_id, output)
        return tool_id

    def skill(self, name: str, error: bool = False) -> str:
        tool_id = self.tool("Skill", {"skill": name})
        if error:
            self.result(tool_id, f"Skill {name} failed to load", is_error=True)
        else:
            self.result(tool_id, f"Launching skill: {name}")
            self.user([{"type": "text", "text": f"# {name}\n\nthe skill body"}], isMeta=True)
        return tool_id

    def interrupt(self) -> str:
        return self.user([{"type": "text", "text": "[Request interrupted by user]"}])

    def api_error(self, attempt: int, status: int = 529, kind: str = "overloaded_error") -> str:
        return self.add({"type": "system", "subtype": "api_error", "level": "error",
                         "error": {"status": status, "error": {"type": "error", "error": {
                             "type": kind, "message": kind.replace("_", " ")}}},
                         "retryInMs": 1000, "retryAttempt": attempt, "maxRetries": 10})

    def synthetic(self, text: str) -> str:
        return self.add({"type": "assistant", "isApiErrorMessage": True, "message": {
            "id": f"synthetic-{self.n}", "type": "message", "role": "assistant",
            "model": "<synthetic>", "content": [{"type": "text", "text": text}]}})

    def run(self, request: str, answer: str = "Done.", parent: str | None | bool = True) -> str:
        """A whole simple run: request, one successful tool call, an answer."""
        self.user(request, parent)
        self.call("Bash", {"command": "ls"}, "a.txt")
        return self.text(answer)

    # -- files -----------------------------------------------------------------------
    def data(self, start: int = 0) -> bytes:
        return b"".join(line + b"\n" for line in self.lines[start:])

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path

    def append(self, path: Path, start: int) -> None:
        """Append the lines from index `start` on."""
        with path.open("ab") as handle:
            handle.write(self.data(start))


# -- helpers -----------------------------------------------------------------------------
@pytest.fixture
def conn(tmp_path):
    connection = ledger.connect(tmp_path / "state" / "state.db")
    yield connection
    connection.close()


@pytest.fixture(autouse=True)
def default_classifier():
    """observe(signals=...) configures the classifier process-wide: reset it afterwards."""
    yield
    classify.configure()


def observe_paths(conn, *paths: Path, fmt: str = "claude_code", **kwargs):
    return observe.observe(conn, AGENT, [(str(p), fmt) for p in paths], **kwargs)


def stored(conn, path: Path | None = None) -> list[dict]:
    """Stored runs (facts + columns), in index order."""
    query = "SELECT * FROM runs WHERE agent = ?"
    args: list = [AGENT]
    if path is not None:
        query += " AND path = ?"
        args.append(str(path))
    rows = conn.execute(query + " ORDER BY path, idx", args).fetchall()
    return [{**json.loads(r["facts"]), "_idx": r["idx"], "_superseded": r["superseded"],
             "_observed_at": r["observed_at"], "_complete": r["complete"],
             "_session": r["session"]} for r in rows]


def facts(runs: list[dict]) -> list[dict]:
    return [{k: v for k, v in run.items() if not k.startswith("_")} for run in runs]


def dirty(conn) -> bool:
    row = ledger.agent_row(conn, AGENT)
    return bool(row and row["dirty"])


def clean(conn) -> None:
    ledger.clear_dirty(conn, AGENT, started=1e12)
    assert not dirty(conn)


def cursor_row(conn, path: Path):
    return conn.execute("SELECT * FROM cursors WHERE agent = ? AND path = ?",
                        (AGENT, str(path))).fetchone()


def invocations(conn) -> list[tuple]:
    return [tuple(r) for r in conn.execute(
        "SELECT skill, session, run_idx, tool_use_id, source FROM invocations "
        "WHERE agent = ? ORDER BY id", (AGENT,)).fetchall()]


def two_runs() -> Transcript:
    t = Transcript()
    t.run("Fix the failing test in parser.py")
    t.run("Now add a changelog entry")
    return t


MANY_RUNS = "9e953218-585f-4692-89df-9e0747a31c68"  # 11 runs, 745 kB
REWOUND = "03eb5929-52b3-4b13-ada3-b93ae35806b8"  # 7 runs, 3 abandoned by a rewind


def real_file(claude_data: Path, session: str) -> Path:
    (path,) = claude_data.rglob(f"*__{session}.jsonl")
    return path


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


@pytest.mark.parametrize(("session", "batch"), [(MANY_RUNS, None), (REWOUND, None),
                                               (MANY_RUNS, 4096)])
def test_observing_in_pieces_equals_one_read(conn, claude_data, tmp_path, monkeypatch, session,
                                              batch):
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
    t = Transcript()
    t.run("Good request")
    good = t.data()
    bad_request = t.lines[0].replace(b"Good request", b"Bad \xff\xfe request")
    path = tmp_path / "s.jsonl"
    path.write_bytes(good + bad_request + b"\n" + b"\xc3\x28 not even json\n")
    t.run("Another good request", parent=t.last)
    t.append(path, 3)
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert result.bad_lines == 2 and not result.files[0].error
    assert cursor_row(conn, path)["skipped"] == 2
    assert [r["request"] for r in runs] == ["Good request", "Another good request"]
    again = observe_paths(conn, path)
    assert again.bad_lines == 0 and cursor_row(conn, path)["skipped"] == 2


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


# -- runs --------------------------------------------------------------------------------
def rewind_transcript() -> tuple[Transcript, int]:
    t = Transcript()
    t.run("Write the parser")
    branch = t.last  # the rewind goes back to here
    t.user("That's wrong, you forgot the header row")
    t.call("Bash", {"command": "pytest"}, "FAILED test_header - AssertionError", error=True)
    t.text("Fixed it.")
    mark = len(t.lines)
    t.user("Write the parser, and keep the header row", parent=branch)  # the edited request
    t.call("Bash", {"command": "pytest"}, "2 passed")
    t.text("Done.")
    return t, mark


@pytest.mark.parametrize("incremental", [False, True])
def test_rewind_marks_abandoned_runs_superseded(conn, tmp_path, incremental):
    t, mark = rewind_transcript()
    path = tmp_path / "s.jsonl"
    if incremental:  # the abandoned branch was stored before the rewind happened
        path.write_bytes(t.data()[: len(b"".join(x + b"\n" for x in t.lines[:mark]))])
        observe_paths(conn, path)
        assert [r["_superseded"] for r in stored(conn)] == [0, 0]
        clean(conn)
        with path.open("ab") as handle:
            handle.write(t.data(mark))
    else:
        path.write_bytes(t.data())
    result = observe_paths(conn, path)
    runs = stored(conn)
    assert [r["_superseded"] for r in runs] == [0, 1, 0]
    assert runs[1]["correction"] and runs[1]["errors"] == 1
    assert result.runs >= 1 and dirty(conn)
    scored = pending.scored_runs(conn, AGENT, Config(), "", all_runs=True)
    assert [s.run for s in scored] == [0, 2]
    assert all(not s.signals for s in scored)


def test_subagent_files_are_their_own_transcripts(conn, tmp_path):
    session = "5e55a0c1-0000-4000-8000-0000000000aa"
    main = Transcript(session=session)
    main.user("Research the codebase and summarise it")
    task = main.tool("Task", {"description": "explore", "prompt": "List the modules"})
    side = Transcript(session=session, sidechain=True, tag="side")  # inline, older versions
    side.user("List the modules")
    for i in range(4):
        side.call("Glob", {"pattern": f"src/{i}/*.py"}, "a.py")
    side.text("Modules: a, b")
    main.lines += side.lines
    main.result(task, "Modules: a, b")
    main.text("Summary: two modules.")
    main_path = main.write(tmp_path / "project" / f"{session}.jsonl")

    sub = Transcript(session=session, sidechain=True, tag="sub")
    sub.user("List the modules")
    for i in range(3):
        sub.call("Grep", {"pattern": f"def f{i}"}, "hit")
    sub.call("Read", {"file_path": "/x.py"}, "Error: file not found", error=True)
    sub.text("Done")
    sub_path = sub.write(tmp_path / "project" / session / "subagents" / "agent-a1b2c3.jsonl")

    observe_paths(conn, main_path, sub_path)
    (parent,) = stored(conn, main_path)
    (child,) = stored(conn, sub_path)
    assert parent["tool_calls"] == 1 and parent["errors"] == 0  # the Task call only
    assert child["tool_calls"] == 4 and child["errors"] == 1
    assert child["request"] == "List the modules"


# -- skill invocations -------------------------------------------------------------------
def test_skill_invocations_stored_once(conn, tmp_path):
    t = Transcript()
    t.user("Deploy the site")
    tool_id = t.skill("deploy")
    path = t.write(tmp_path / "s.jsonl")
    observe_paths(conn, path)
    for i in range(3):  # the open run is updated several times
        mark = len(t.lines)
        t.call("Bash", {"command": f"step {i}"}, "ok")
        t.append(path, mark)
        assert observe_paths(conn, path).runs == 1
    observe_paths(conn, path)  # and observed again with nothing new
    assert invocations(conn) == [("deploy", t.session, 0, tool_id, "transcript")]
    assert stored(conn)[0]["skills"] == [{"name": "deploy", "tool_use_id": tool_id}]


def test_hook_then_transcript_is_one_invocation(conn, tmp_path):
    t = Transcript()
    t.user("Deploy the site")
    tool_id = t.skill("deploy")
    path = t.write(tmp_path / "s.jsonl")
    with ledger.transaction(conn):
        assert observe.record_invocation(conn, AGENT, "deploy", None, None, tool_id, "hook")
    observe_paths(conn, path)
    assert invocations(conn) == [("deploy", t.session, 0, tool_id, "hook")]


def test_generic_skill_without_call_id_not_double_counted(conn, tmp_path):
    lines = [
        {"type": "user", "text": "Release version 2", "session": "g-1", "ts": 1760000000},
        {"type": "skill", "name": "release"},
        {"type": "tool_call", "tool": "Bash", "input": {"command": "make release"}},
    ]
    path = tmp_path / "agent.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert observe.guess_format(path) == "generic"
    observe_paths(conn, path, fmt="generic")
    observe_paths(conn, path, fmt="generic")
    with path.open("a") as handle:  # the open run grows: its facts change, stored again
        handle.write(json.dumps({"type": "tool_result", "tool": "Bash", "output": "ok"}) + "\n")
        handle.write(json.dumps({"type": "skill", "name": "notify"}) + "\n")
    observe_paths(conn, path, fmt="generic")
    observe_paths(conn, path, fmt="generic")
    got = invocations(conn)
    assert [(skill, session, run) for skill, session, run, _, _ in got] == [
        ("release", "g-1", 0), ("notify", "g-1", 0)]
    assert stored(conn)[0]["tool_calls"] == 1


# -- classification at observe time ------------------------------------------------------
def test_transient_patterns_extend_classification_at_observe_time(conn, tmp_path):
    from evolve.config import SignalsConfig

    def transcript(tag: str) -> Transcript:
        t = Transcript(tag=tag)
        t.user("Build the docs")
        t.call("Bash", {"command": "make docs"}, "flux capacitor overheated", error=True)
        t.call("Bash", {"command": "make docs"}, "built")
        t.text("Built.")
        return t

    before = transcript("a").write(tmp_path / "a.jsonl")
    observe_paths(conn, before)
    (run,) = stored(conn, before)
    assert (run["errors"], run["transient_errors"], run["recovered"]) == (1, 0, True)

    after = transcript("b").write(tmp_path / "b.jsonl")
    signals = SignalsConfig(transient_patterns=[r"flux capacitor (?:overheated|jammed)"])
    observe_paths(conn, after, signals=signals)
    (run,) = stored(conn, after)
    assert (run["errors"], run["transient_errors"], run["recovered"]) == (0, 1, False)


def test_observe_timestamps_and_now(conn, tmp_path):
    path = two_runs().write(tmp_path / "s.jsonl")
    observe_paths(conn, path, now=1_000.0)
    runs = stored(conn)
    assert {r["_observed_at"] for r in runs} == {1_000.0}
    assert runs[0]["started_at"] == "2026-02-10T21:00:01Z"
    assert ledger.agent_row(conn, AGENT)["dirty_at"] == 1_000.0
    assert Path(conn.execute("SELECT path FROM runs").fetchone()["path"]).is_absolute()
