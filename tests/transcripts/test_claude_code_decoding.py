"""Claude Code adapter on hand-built transcripts: rewinds, corrupt lines and the decoders.

A rewind supersedes the runs it abandons; corrupt lines are skipped and counted; the
prefilter never takes a nested "type" for the line's own; the schema decoder gives the
events json.loads gives, on lines made to trip it.
"""

from __future__ import annotations

from evolve.transcripts import follow, parse_file
from evolve.transcripts.claude_code import new_state, parse_line, parse_object
from evolve.transcripts.reader import loads_object, read_lines
from tests.transcripts.claude_code_lines import Transcript


def test_rewind_supersedes_abandoned_runs(tmp_path):
    t = Transcript()
    t.user("one")
    t.text("1")
    tail0 = t.add({"type": "system", "subtype": "stop_hook_summary", "hookCount": 1})
    t.user("two")
    t.text("2", msg="m2")
    t.user("three")
    t.tool("Bash", {"command": "x"}, "toolu_3", msg="m3")
    t.result("toolu_3", "ok")
    path = t.write(tmp_path / "s.jsonl")
    first = follow(path)
    assert [r.index for r in first.runs] == [0, 1] and first.open_run.index == 2
    t.add({"type": "file-history-snapshot", "messageId": "y", "snapshot": {}}, raw=True)
    t.user("two, differently", parent=tail0)
    t.text("2b", msg="m4")
    t.user("four")
    t.write(path)
    second = follow(path, first.cursor)
    assert second.superseded == [1, 2]
    assert [(r.index, r.superseded, r.superseded_from) for r in second.runs] == [
        (2, True, None),
        (3, False, 1),
    ]
    runs = parse_file(path)
    assert [(r.request, r.superseded) for r in runs] == [
        ("one", False),
        ("two", True),
        ("three", True),
        ("two, differently", False),
        ("four", False),
    ]


def test_rewind_to_a_progress_line(tmp_path):
    t = Transcript()
    t.user("one")
    t.text("1")
    tail0 = t.add(
        {
            "type": "progress",
            "data": {"type": "hook_progress", "hookEvent": "Stop"},
            "parentToolUseID": "p",
            "toolUseID": "p",
        }
    )
    t.user("two")
    t.user("two again", parent=tail0)
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.superseded for r in runs] == [False, True, False]


def test_unknown_parent_is_a_plain_continuation(tmp_path):
    t = Transcript()
    t.user("one")
    t.user("two", parent="never-seen")
    t.user("three", parent=None)
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.superseded for r in runs] == [False, False, False]


def test_corrupt_lines_are_skipped_and_counted(tmp_path):
    t = Transcript()
    t.user("hello")
    path = t.write(tmp_path / "s.jsonl")
    with path.open("ab") as handle:
        handle.write(b'{"type":"user","message":\n')  # cut short
        handle.write(b"\xff\xfe\xfd\n")
        handle.write(b"[1,2,3]\nnull\n\n")
        handle.write(b'{"type":"assistant","message":"not a dict"}\n')
        handle.write(b'{"type":"user","message":{"content":[1,null,{"type":"tool_result"}]}}\n')
    update = follow(path)
    assert update.bad_lines == 4
    assert update.open_run.request == "hello"


def test_prefilter_is_conservative(tmp_path):
    t = Transcript()
    # "type" after a nested object: the first "type" key is not the top-level one.
    t.add({"message": {"role": "user", "content": [{"type": "text", "text": "first"}]}, "type": "user"})
    # A progress line whose nested data holds a user message: never a request.
    t.add(
        {
            "type": "progress",
            "data": {
                "message": {"type": "user", "message": {"role": "user", "content": "nested prompt"}},
                "type": "agent_progress",
            },
        }
    )
    # A user line whose text mentions the progress type.
    t.user('look at {"type":"progress"} lines')
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.request for r in runs] == ["first", 'look at {"type":"progress"} lines']
    assert runs[0].tail_uuid == "u-0002"


def _full_events(path):
    state = new_state(path.stem)
    out = []
    for offset, line in read_lines(path):
        obj = loads_object(line)
        if obj is not None:
            out.extend(parse_object(obj, offset, offset + len(line) + 1, state))
    return out


def _key(event):
    if event.kind == "marker":
        return ("marker", event.offset, event.uuid)
    return (
        event.kind,
        event.timestamp,
        event.offset,
        event.uuid,
        event.parent_uuid,
        event.text,
        event.name,
        event.tool_use_id,
        event.input,
        event.is_error,
        event.rejected,
    )


def test_schema_decoding_agrees_with_json_on_tricky_lines(tmp_path):
    t = Transcript()
    t.user("tricky")
    # Tool input with keys that look like top-level ones.
    t.tool(
        "mcp__x",
        {"uuid": "in-input", "requestId": "r", "timestamp": "t", "content": [1, {"type": "text"}]},
        "toolu_1",
    )
    # A successful result whose toolUseResult nests error-looking keys and a uuid.
    t.user(
        [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "fine"}],
        toolUseResult={"uuid": "nested", "is_error": True, "timestamp": "2020-01-01T00:00Z"},
    )
    # Two results in one line, one of them an error.
    t.tool("Read", {"file_path": "/a"}, "toolu_2", msg="m2")
    t.tool("Read", {"file_path": "/b"}, "toolu_3", msg="m2")
    t.user(
        [
            {"tool_use_id": "toolu_2", "type": "tool_result", "content": "ok"},
            {"tool_use_id": "toolu_3", "type": "tool_result", "content": "nope", "is_error": True},
        ]
    )
    # Assistant content as a plain string, and a key order with "type" first.
    t.add(
        {"type": "assistant", "message": {"id": "m3", "role": "assistant", "content": "plain string answer"}}
    )
    # A progress line whose nested data holds a uuid after the top-level one.
    t.add({"type": "progress", "data": {"type": "agent_progress", "message": {"uuid": "x"}}})
    t.text("image next", msg="m4")
    t.user(
        [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 20000}},
            {"type": "text", "text": "what is in this picture?"},
        ]
    )
    path = t.write(tmp_path / "s.jsonl")
    with path.open("ab") as handle:
        handle.write(b"   " + t.lines[1].encode() + b"\r\n")  # leading spaces, CRLF
    state = new_state(path.stem)
    decoded = [e for off, line in read_lines(path) for e in parse_line(line, off, state)]
    assert [_key(e) for e in decoded] == [_key(e) for e in _full_events(path)]
    runs = parse_file(path)
    assert [r.request for r in runs] == ["tricky", "what is in this picture?"]
    assert runs[0].tool_calls == 3 and runs[0].errors == 1
