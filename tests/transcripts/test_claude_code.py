"""Claude Code adapter + RunBuilder on hand-built transcripts shaped like real ones."""

from __future__ import annotations

import json

from evolve.transcripts import ADAPTERS, follow, parse_file
from evolve.transcripts.classify import BUILT_IN
from evolve.transcripts.claude_code import new_state, parse_line, parse_object
from evolve.transcripts.model import judged_transient
from evolve.transcripts.reader import loads_object, read_lines
from tests.observe_helpers import api_error_line, synthetic_line

SID = "0b6f8c1e-session"


class Transcript:
    """Builds Claude Code lines (compact JSON, one content block per assistant line)."""

    def __init__(self, sidechain: bool = False):
        self.lines: list[str] = []
        self.n = 0
        self.last: str | None = None
        self.sidechain = sidechain

    def add(self, obj: dict, parent: str | None | bool = True, raw: bool = False) -> str:
        self.n += 1
        uuid = f"u-{self.n:04d}"
        if not raw:
            head = {
                "parentUuid": self.last if parent is True else (parent or None),
                "isSidechain": self.sidechain,
                "userType": "external",
                "cwd": "/work/project",
                "sessionId": SID,
                "version": "2.1.38",
            }
            obj = {
                **head,
                **obj,
                "uuid": uuid,
                "timestamp": f"2026-02-10T21:{self.n // 60:02d}:{self.n % 60:02d}.123Z",
            }
            self.last = uuid
        self.lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
        return uuid

    def user(self, content, parent: str | None | bool = True, **extra) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra}, parent)

    def text(self, text: str, msg: str = "msg_1", req: str = "req_1") -> str:
        return self.add(
            {
                "type": "assistant",
                "requestId": req,
                "message": {
                    "id": msg,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [{"type": "text", "text": text}],
                },
            }
        )

    def tool(self, name: str, tool_input: dict, tool_id: str, msg: str = "msg_1", req: str = "req_1") -> str:
        return self.add(
            {
                "type": "assistant",
                "requestId": req,
                "message": {
                    "id": msg,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
                },
            }
        )

    def result(self, tool_id: str, content: str, is_error: bool | None = None, tur=None) -> str:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        extra = {} if tur is None else {"toolUseResult": tur}
        return self.user([block], **extra)

    def api_error(self, attempt: int, status: int = 529, kind: str = "overloaded_error") -> str:
        return self.add(api_error_line(attempt, status, kind))

    def synthetic(self, text: str) -> str:
        return self.add(synthetic_line(text, "synthetic-id"))

    def write(self, path):
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path


def events_of(path):
    state = new_state()
    out = []
    for offset, line in read_lines(path):
        out.extend(parse_line(line, offset, state))
    return out, state


def test_basic_runs_offsets_and_facts(tmp_path):
    t = Transcript()
    t.add({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}, raw=True)
    t.user("Fix the failing test")
    t.text("Looking.")
    t.tool("Bash", {"command": "pytest -q"}, "toolu_1")
    t.result("toolu_1", "Exit code 1\nFAILED test_x", is_error=True, tur="Error: Exit code 1")
    t.tool(
        "Edit",
        {"file_path": "/work/project/x.py", "old_string": "a", "new_string": "b"},
        "toolu_2",
        msg="msg_2",
        req="req_2",
    )
    t.result("toolu_2", "The file has been updated")
    t.tool("Bash", {"command": "pytest -q"}, "toolu_3", msg="msg_3", req="req_3")
    t.result("toolu_3", "1 passed")
    t.text("Fixed.", msg="msg_4", req="req_4")
    second = t.user([{"type": "text", "text": "Now commit it"}])
    path = t.write(tmp_path / "s.jsonl")
    runs = parse_file(path)
    assert len(runs) == 2
    first, last = runs
    assert first.request == "Fix the failing test" and first.cwd == "/work/project"
    assert first.session_id == SID and first.index == 0
    assert first.tool_calls == 3 and first.errors == 1 and first.transient_errors == 0
    assert first.recovered and not first.ended_in_error and not first.aborted
    assert first.files_written == ["/work/project/x.py"]
    assert first.error_texts == ["Exit code 1\nFAILED test_x"]
    assert "Bash: pytest -q" in first.tool_inputs_text
    assert first.started_at == "2026-02-10T21:00:02Z" and first.ended_at == "2026-02-10T21:00:10Z"
    assert first.complete and not last.complete
    raw = path.read_bytes()
    assert raw[first.start_offset :].startswith(t.lines[1].encode())
    assert first.end_offset == last.start_offset
    assert raw[last.start_offset :].startswith(t.lines[-1].encode())
    assert last.end_offset == len(raw)
    assert first.head_uuid == "u-0002" and first.tail_uuid == "u-0010"
    assert last.head_uuid == second == last.tail_uuid


def test_ended_in_error_survives_closing_text(tmp_path):
    t = Transcript()
    t.user("run it")
    t.tool("Bash", {"command": "make"}, "toolu_1")
    t.result("toolu_1", "make: *** [all] Error 2", is_error=True)
    t.text("The build fails; I could not fix it.", msg="msg_2")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.ended_in_error and not run.recovered and run.errors == 1


def test_transient_tool_error_is_not_an_error(tmp_path):
    t = Transcript()
    t.user("fetch the page")
    t.tool("WebFetch", {"url": "https://example.test"}, "toolu_1")
    t.result(
        "toolu_1",
        "Request failed with status code 504",
        is_error=True,
        tur="Error: Request failed with status code 504",
    )
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 0 and run.transient_errors == 1 and not run.ended_in_error


def test_error_flag_from_tool_use_result_string(tmp_path):
    t = Transcript()
    t.user("read it")
    t.tool("Read", {"file_path": "/nope"}, "toolu_1")
    t.result("toolu_1", "File does not exist.", tur="Error: File does not exist.")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 1 and run.ended_in_error


def test_api_error_retries_are_one_transient_incident(tmp_path):
    t = Transcript()
    t.user("hello")
    for attempt in (1, 2, 3):
        t.api_error(attempt)
    t.synthetic('API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}')
    path = t.write(tmp_path / "s.jsonl")
    (run,) = parse_file(path)
    assert run.transient_errors == 1 and run.errors == 0 and not run.ended_in_error
    events, _ = events_of(path)
    incidents = [e for e in events if e.kind == "api_error" and not e.continued]
    assert len(incidents) == 1 and judged_transient(incidents[0], BUILT_IN) and incidents[0].attempt == 1


def test_retries_that_succeed_and_a_second_sequence(tmp_path):
    t = Transcript()
    t.user("hello")
    t.api_error(1)
    t.api_error(2)
    t.text("Hi!")
    t.api_error(1, status=500, kind="api_error")
    t.text("More.", msg="msg_2")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.transient_errors == 2 and run.errors == 0


def test_non_transient_api_error_is_a_real_error(tmp_path):
    t = Transcript()
    t.user("hello")
    t.synthetic(
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"prompt is too long"}}'
    )
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 1 and run.transient_errors == 0 and run.ended_in_error
    assert run.error_texts and "prompt is too long" in run.error_texts[0]


def test_retried_incident_ending_in_auth_error_counts_once_as_real(tmp_path):
    t = Transcript()
    t.user("hello")
    t.api_error(1, status=401, kind="authentication_error")
    t.api_error(2, status=401, kind="authentication_error")
    t.synthetic("API Error: 401 authentication_error invalid x-api-key")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 1 and run.transient_errors == 0 and run.ended_in_error


def test_rejected_tool_is_an_abort_not_an_error(tmp_path):
    t = Transcript()
    t.user("delete the build dir")
    t.tool("Bash", {"command": "rm -rf build"}, "toolu_1")
    t.result(
        "toolu_1",
        "The user doesn't want to proceed with this tool use. The tool use was "
        "rejected (eg. if it was a file edit, the new_string was NOT written to the file). "
        "STOP what you are doing and wait for the user to tell you how to proceed.",
        is_error=True,
        tur="User rejected tool use",
    )
    t.user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    path = t.write(tmp_path / "s.jsonl")
    (run,) = parse_file(path)
    assert run.aborted and run.errors == 0 and not run.ended_in_error
    kinds = [e.kind for e in events_of(path)[0]]
    assert kinds.count("interrupt") == 1 and "human" in kinds and kinds.count("human") == 1


def test_plain_interrupt_marks_the_run_aborted(tmp_path):
    t = Transcript()
    t.user("long task")
    t.tool("Bash", {"command": "sleep 100"}, "toolu_1")
    t.result("toolu_1", "ok")
    t.user([{"type": "text", "text": "[Request interrupted by user]"}])
    t.user("something else")
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.aborted for r in runs] == [True, False]


def test_lines_that_are_not_human_input(tmp_path):
    t = Transcript()
    t.user("real request")
    t.text("ok")
    t.user("Caveat: The messages below were generated by the user while running local commands.", isMeta=True)
    t.user([{"type": "text", "text": "Base directory for this skill: /x"}], isMeta=True)
    t.user("Stop hook feedback:\nplease run tests", isMeta=True)
    t.user("<system-reminder>Remember the rules.</system-reminder>")
    t.user("<task-notification><task-id>1</task-id></task-notification>")
    t.user("<bash-input>ls</bash-input>")
    t.user("<bash-stdout>a b</bash-stdout><bash-stderr></bash-stderr>")
    t.add(
        {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["evolve memo"]}}
    )
    t.add({"type": "summary", "summary": "Old session", "leafUuid": "u-0001"}, raw=True)
    t.add({"type": "progress", "data": {"type": "hook_progress", "hookEvent": "Stop"}, "toolUseID": "x"})
    t.add({"type": "queue-operation", "operation": "enqueue", "content": "hi"}, raw=True)
    t.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"})
    t.user(
        "This session is being continued from a previous conversation...",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    t.user([{"type": "text", "text": "<ide_opened_file>The user opened x.py</ide_opened_file>"}])
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.request for r in runs] == ["real request"]
    assert runs[0].tail_uuid == f"u-{t.n:04d}"


def test_ide_context_is_stripped_from_the_request(tmp_path):
    t = Transcript()
    t.user(
        [
            {"type": "text", "text": "<ide_opened_file>The user opened a.py</ide_opened_file>"},
            {"type": "text", "text": "Please tidy this file"},
        ]
    )
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.request == "Please tidy this file"


def test_slash_commands(tmp_path):
    t = Transcript()
    t.user(
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
        "<command-args></command-args>"
    )
    t.user("<local-command-stdout></local-command-stdout>")
    t.user("first request")
    t.text("done")
    t.user("<command-name>/model</command-name>\n<command-message>model</command-message>")
    t.user("<local-command-stdout>Kept model</local-command-stdout>")
    cmd = t.user(
        "<command-message>init is analyzing your codebase…</command-message>\n"
        "<command-name>/init</command-name>\n<command-args>fast</command-args>"
    )
    t.user([{"type": "text", "text": "Please analyze this codebase"}], isMeta=True)
    t.tool("Write", {"file_path": "/work/project/CLAUDE.md", "content": "x"}, "toolu_9", msg="msg_9")
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.request for r in runs] == ["first request", "/init fast"]
    assert runs[1].head_uuid == cmd and runs[1].tool_calls == 1
    assert runs[1].files_written == ["/work/project/CLAUDE.md"]
    assert runs[0].tail_uuid == "u-0006"  # the /model output stayed with the previous run
    raw = (tmp_path / "s.jsonl").read_bytes()
    assert raw[runs[1].start_offset :].startswith(t.lines[6].encode())


def test_slash_command_confirmed_in_a_later_read(tmp_path):
    t = Transcript()
    t.user("first")
    t.text("ok")
    t.user("<command-name>/review</command-name>\n<command-message>review</command-message>")
    t.user([{"type": "text", "text": "Review the diff"}], isMeta=True)
    path = t.write(tmp_path / "s.jsonl")
    update = follow(path)
    assert update.runs == [] and update.open_run.request == "first"
    t.tool("Bash", {"command": "git diff"}, "toolu_1", msg="msg_2")
    t.write(path)
    update = follow(path, update.cursor)
    assert [r.request for r in update.runs] == ["first"]
    assert update.open_run.request == "/review" and update.open_run.tool_calls == 1


def test_sidechain_lines_are_skipped_in_a_main_file(tmp_path):
    t = Transcript()
    t.user("use a subagent")
    t.tool("Task", {"description": "look", "prompt": "find it", "subagent_type": "x"}, "toolu_1")
    t.sidechain = True
    t.user("find it", parent=None)
    t.tool("Bash", {"command": "grep -r x"}, "toolu_s1", msg="msg_s")
    t.result("toolu_s1", "boom", is_error=True)
    t.sidechain = False
    t.result("toolu_1", "found it")
    t.tool("Agent", {"description": "more", "prompt": "again"}, "toolu_2", msg="msg_2")
    t.result("toolu_2", "done")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.tool_calls == 2 and run.errors == 0 and run.request == "use a subagent"


def test_subagent_file_is_its_own_transcript(tmp_path):
    t = Transcript(sidechain=True)
    t.user("Warmup", parent=None)
    t.text("ready")
    t.tool("Bash", {"command": "ls"}, "toolu_1", msg="msg_2")
    t.result("toolu_1", "ls: cannot access", is_error=True)
    (run,) = parse_file(t.write(tmp_path / "agent-abc.jsonl"))
    assert run.request == "Warmup" and run.tool_calls == 1 and run.errors == 1


def test_skill_call(tmp_path):
    t = Transcript()
    t.user("make a pdf")
    t.tool("Skill", {"skill": "pdf", "args": "x"}, "toolu_1")
    t.result("toolu_1", "Launching skill: pdf")
    t.user([{"type": "text", "text": "Base directory for this skill: ..."}], isMeta=True)
    t.tool("Skill", {"skill": "broken"}, "toolu_2", msg="msg_2")
    t.result("toolu_2", "Unknown skill: broken", is_error=True)
    path = t.write(tmp_path / "s.jsonl")
    (run,) = parse_file(path)
    assert run.tool_calls == 2 and run.errors == 1
    assert run.skills == [
        {"name": "pdf", "tool_use_id": "toolu_1"},
        {"name": "broken", "tool_use_id": "toolu_2"},
    ]
    failed = [e for e in events_of(path)[0] if e.kind == "tool_result" and e.is_error]
    assert failed[0].name == "Skill"


def test_message_id_dedupe(tmp_path):
    t = Transcript()
    t.user("two tools")
    t.text("Running both.", msg="msg_1", req="req_1")
    t.tool("Read", {"file_path": "/a"}, "toolu_a", msg="msg_1", req="req_1")
    t.tool("Read", {"file_path": "/b"}, "toolu_b", msg="msg_1", req="req_1")
    t.lines.append(t.lines[-1])  # the same block logged twice
    t.lines.append(t.lines[-3])
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.tool_calls == 2


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


def test_registry_and_state_are_json(tmp_path):
    adapter = ADAPTERS["claude_code"]
    state = adapter.new_state("sid")
    t = Transcript()
    t.user("hello")
    t.tool("Bash", {"command": "ls"}, "toolu_1")
    for line in t.lines:
        adapter.parse_line(line.encode(), 0, state)
    assert json.loads(json.dumps(state)) == state
    assert state["tools"] == {"toolu_1": "Bash"}


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
