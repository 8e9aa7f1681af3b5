"""Observing through state.db: runs (rewinds, subagents), skill invocations, classification."""

# ruff: noqa: F811 - the fixtures imported from tests.observe_helpers are parameters here
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.config import Config
from evolve.observe import ingest as observe
from evolve.schedule import pending
from evolve.store import ledger
from evolve.transcripts import classify
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
        assert ledger.record_invocation(conn, AGENT, "deploy", None, None, tool_id, "hook")
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
        ("release", "g-1", 0),
        ("notify", "g-1", 0),
    ]
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
    observe_paths(conn, after, classifier=classify.for_signals(signals))
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
