"""The documented generic JSONL format gives the same facts as Claude Code."""

from __future__ import annotations

import json

from evolve.transcripts import ADAPTERS, follow, parse_file


def write(path, records, tail: bytes = b""):
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


def test_generic_run_facts(tmp_path):
    path = write(
        tmp_path / "agent.jsonl",
        [
            {
                "type": "user",
                "text": "Deploy the site",
                "ts": "2026-03-01T10:00:00+02:00",
                "session": "s1",
                "cwd": "/srv",
                "id": "1",
            },
            {"type": "assistant", "text": "Deploying.", "id": "2", "parent": "1"},
            {
                "type": "tool_call",
                "tool": "shell",
                "call_id": "c1",
                "input": {"cmd": "make deploy"},
                "id": "3",
            },
            {"type": "tool_result", "call_id": "c1", "error": True, "output": "make: no rule", "id": "4"},
            {"type": "tool_call", "tool": "Write", "call_id": "c2", "input": {"file_path": "/srv/Makefile"}},
            {"type": "tool_result", "call_id": "c2"},
            {"type": "skill", "name": "deploy-checklist", "call_id": "c3"},
            {"type": "tool_result", "call_id": "c4", "error": True, "output": "connection reset"},
            {"type": "api_error", "text": "503 Service Unavailable", "attempt": 1},
            {"type": "something-else", "id": "5"},
            {
                "type": "user",
                "text": "No, use the staging target",
                "ts": 1772359200,
                "id": "6",
                "parent": "5",
            },
            {"type": "interrupt"},
        ],
    )
    first, second = parse_file(path, "generic")
    assert first.request == "Deploy the site" and first.session_id == "s1"
    assert first.started_at == "2026-03-01T08:00:00Z" and first.cwd == "/srv"
    assert first.tool_calls == 2 and first.errors == 1 and first.transient_errors == 2
    # the Makefile was written, but `make deploy` never ran again: no fix is known
    assert not first.recovered and not first.ended_in_error
    assert first.files_written == ["/srv/Makefile"]
    assert first.skills == [{"name": "deploy-checklist", "tool_use_id": "c3"}]
    assert first.tail_uuid == "5" and first.complete
    assert second.started_at == "2026-03-01T10:00:00Z" and second.aborted
    assert not second.complete


def test_generic_rejection_rewind_and_overrides(tmp_path):
    path = write(
        tmp_path / "agent.jsonl",
        [
            {"type": "human", "text": "one", "id": "a"},
            {"type": "tool_result", "call_id": "x", "error": True, "rejected": True},
            {"type": "tool_result", "call_id": "y", "error": True, "output": "odd", "transient": True},
            {"type": "api_error", "text": "timeout", "transient": False},
            {"type": "human", "text": "two", "id": "b", "parent": "a"},
            {"type": "human", "text": "two again", "id": "c", "parent": "a"},
        ],
    )
    one, two, again = parse_file(path, "generic")
    assert one.aborted and one.transient_errors == 1 and one.errors == 1 and one.ended_in_error
    assert two.superseded and again.superseded_from == 1


def test_generic_bad_lines_and_session_default(tmp_path):
    path = write(
        tmp_path / "sess-7.jsonl",
        [{"type": "user", "text": "hi"}],
        tail=b"not json\n[1]\n\n" + json.dumps({"type": "user", "text": "  "}).encode() + b"\n",
    )
    update = follow(path, None, "generic")
    assert update.bad_lines == 2
    assert update.open_run.session_id == "sess-7" and update.open_run.request == "hi"


def test_generic_adapter_in_registry():
    adapter = ADAPTERS["generic"]
    state = adapter.new_state("s")
    events = adapter.parse_line(b'{"type":"tool_call","tool":"Bash","call_id":"1"}', 0, state)
    assert [e.kind for e in events] == ["tool_call"]
    assert json.loads(json.dumps(state)) == state
