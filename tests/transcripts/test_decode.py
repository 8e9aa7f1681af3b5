"""Lines decoded against the schema (msgspec) against json.loads + parse_object, line by line.

Lines are written in the key orders Claude Code uses (2.0: scalars, message, ids; 2.1:
ids first, session scalars last), with look-alikes of keys inside strings and nested
objects, corrupt lines (cut, glued) and values of unexpected types. Each line must give the
events of the json parse, observing (facts only) must give the same runs, and every line
but the corrupt and odd ones must be decoded by the schema, not by the json fallback.
"""

from __future__ import annotations

import json

import pytest

from evolve.transcripts import follow
from evolve.transcripts.claude_code import _decoder, new_state, parse_line, parse_object
from evolve.transcripts.reader import loads_object, read_lines
from evolve.transcripts.runs import RunBuilder

SID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
TRICKY = 'say "}],"requestId":"r","type":"assistant","uuid":"u"} and \\ \\" é ✓ 😀\n'


class Real:
    """Lines in Claude Code's own key orders; `new` selects the 2.1 layout."""

    def __init__(self, new: bool = False, cwd: str = "/work/proj", session: str = SID):
        self.lines: list[str] = []
        self.new, self.cwd, self.session = new, cwd, session
        self.last: str | None = None
        self.fast: list[int] = []  # indices of the lines the schema must decode

    def _add(self, body: dict, user: bool, fast: bool, side: bool = False, **top) -> str:
        uuid = f"{len(self.lines):08d}-0000-4000-8000-000000000000"
        scalars = {
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.38",
            "gitBranch": "main",
        }
        obj = {"parentUuid": self.last, "isSidechain": side}
        if self.new:
            obj |= {"promptId": "p-1"} if user else {}
            obj |= body | {"uuid": uuid, "timestamp": f"2026-03-01T10:00:{len(self.lines):02d}.5Z"}
            obj |= top | {"entrypoint": "cli"} | scalars
        else:
            obj |= scalars | body
            obj |= {"uuid": uuid, "timestamp": f"2026-03-01T10:00:{len(self.lines):02d}.5Z"}
            obj |= top
        if fast:
            self.fast.append(len(self.lines))
        self.lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
        self.last = uuid
        return uuid

    def user(self, content, fast: bool = True, **top) -> str:
        return self._add({"type": "user", "message": {"role": "user", "content": content}}, True, fast, **top)

    def block(
        self,
        block: dict,
        msg: str = "msg_1",
        req: str = "req_1",
        model: str = "claude-x",
        fast: bool = True,
        side: bool = False,
        model_first: bool = True,
        **top,
    ) -> str:
        message = {"model": model, "id": msg} if model_first else {"id": msg}
        message |= {"type": "message", "role": "assistant"}
        message |= {} if model_first else {"model": model}
        message |= {
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 3,
                "cache_creation": {"ephemeral_5m_input_tokens": 0},
                "output_tokens": 9,
                "service_tier": "standard",
            },
        }
        return self._add(
            {"message": message, "requestId": req, "type": "assistant"}, False, fast, side, **top
        )

    def result(
        self, tool_id: str, content, fast: bool = True, is_error=None, tur=None, side: bool = False, **top
    ) -> str:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        top = {"toolUseResult": {"stdout": "x", "uuid": "nested"} if tur is None else tur} | top
        return self._add(
            {"type": "user", "message": {"role": "user", "content": [block]}}, True, fast, side, **top
        )

    def error(self, tool_id: str, text: str, fast: bool = True, tur=None, **top) -> str:
        """A failed call in Claude Code's own order for errors: type, content, is_error, id."""
        block = {"type": "tool_result", "content": text, "is_error": True, "tool_use_id": tool_id}
        top = {"toolUseResult": f"Error: {text}" if tur is None else tur} | top
        return self._add({"type": "user", "message": {"role": "user", "content": [block]}}, True, fast, **top)

    def write(self, path):
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path


def _full(path):
    state, events = new_state(path.stem), []
    for offset, line in read_lines(path):
        obj = loads_object(line)
        if obj is not None:
            events.extend(parse_object(obj, offset, offset + len(line) + 1, state))
    return events


def _key(event) -> tuple:
    return (
        event.kind,
        event.session_id,
        event.timestamp,
        event.offset,
        event.end,
        event.uuid,
        event.parent_uuid,
        event.text,
        event.cwd,
        event.name,
        event.tool_use_id,
        event.input,
        event.file_path,
        event.is_error,
        event.rejected,
        event.transient,
        event.typed,
    )


def _schema_decodes(line: bytes) -> bool:
    decode, _, decode_output, _, errors = _decoder()
    try:
        for block in (decode(line).get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("content") is not None:
                decode_output(block["content"])  # a tool output: decoded when it is needed
    except errors:
        return False
    return True


def check(t: Real, path) -> None:
    """Same events as the json parse (prose), same runs observing (facts), schema where due."""
    t.write(path)
    state = new_state(path.stem)
    fast = [e for off, line in read_lines(path) for e in parse_line(line, off, state)]
    full = _full(path)
    assert [_key(e) for e in fast] == [_key(e) for e in full]
    builder = RunBuilder()
    runs = [r.to_dict() for e in full for r in builder.feed(e)]
    last = builder.open_run()
    update = follow(path)
    assert [r.to_dict() for r in update.runs] == runs
    assert (update.open_run.to_dict() if update.open_run else None) == (last.to_dict() if last else None)
    decoded = [i for i, (_, line) in enumerate(read_lines(path)) if _schema_decodes(line)]
    assert decoded == t.fast


@pytest.mark.parametrize("new", [False, True])
def test_blocks_and_results_with_look_alikes(tmp_path, new):
    t = Real(new=new, cwd="C:\\Users\\zoë\\proj" if new else "/work/proj")
    t.user("first request")
    t.block({"type": "thinking", "thinking": TRICKY + '","signature":"x', "signature": "c2ln"})
    t.block({"type": "text", "text": TRICKY})
    t.block({"type": "text", "text": TRICKY})  # the same block logged twice: one event
    t.block({"type": "text", "text": "  \n "}, msg="msg_2")  # blank: a marker only
    t.block(
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "Edit",
            "input": {
                "file_path": "/work/proj/a.py",
                "old_string": TRICKY,
                "new_string": '}}],"x"',
                "nested": [{"uuid": "in-input", "timestamp": "t"}, {}],
            },
        },
        msg="msg_3",
        req="req_3",
    )
    t.result(
        "toolu_1",
        TRICKY + '"}]},"uuid":"fake' + "\\",
        tur={"sessionId": "nested-session", "message": {"uuid": "x"}, "is_error": True},
    )
    t.block(
        {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "Skill",
            "input": {"skill": "pdf"},
            "caller": {"type": "direct"},
        },
        msg="msg_4",
        req="req_4",
        model_first=False,
    )
    t.result("toolu_2", "Launching skill: pdf", is_error=False)
    t.block(
        {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "x"}},
        msg="msg_5",
        req="req_5",
    )
    t.result("toolu_3", "Exit code 1\nboom", is_error=True)
    t.block(
        {"type": "tool_use", "id": "toolu_4", "name": "Bash", "input": {"command": "y"}},
        msg="msg_6",
        req="req_6",
    )
    t.result("toolu_4", "ran", tur="Error: exit 2")  # an error by its summary
    t.block(
        {
            "type": "tool_use",
            "id": "toolu_5",
            "name": "Write",
            "input": {"file_path": "/work/proj/b.py", "content": "print(1)\n" * 50},
        },
        msg="msg_7",
        req="req_7",
    )
    t.result("toolu_5", "User rejected", tur="User rejected tool use")
    t.result("toolu_6", [{"type": "text", "text": "a list"}])
    t.result("toolu_7", "not mine", side=True)  # a subagent's line: skipped
    t.block({"type": "text", "text": "sub"}, side=True)
    t.user("[Request interrupted by user]")
    t.user("second request")
    t.block(
        {"type": "text", "text": "API Error: 529 overloaded"}, model="<synthetic>", msg="msg_8", req="req_8"
    )
    t.block({"type": "text", "text": "API Error: 500"}, msg="msg_9", isApiErrorMessage=True)
    t.session = "0b6f8c1e-new-session"  # a resumed session changes the id mid-file
    t.result("toolu_8", "ok")
    t.session = "0b6f8c1e-third-session"  # ... at a tool result, then at an assistant line
    t.block({"type": "text", "text": "done"}, msg="msg_10", req="req_10")
    t.result("toolu_9", "ok")
    check(t, tmp_path / "s.jsonl")


@pytest.mark.parametrize("new", [False, True])
def test_errors_read_in_place(tmp_path, new):
    t = Real(new=new)
    t.user("run it")
    t.error("toolu_1", TRICKY + '","is_error":true,"tool_use_id":"fake"}]},"uuid":"u",')
    t.error("toolu_2", "connect ETIMEDOUT 10.0.0.1:443", tur={"uuid": "nested", "n": [1]})
    t.error("toolu_3", "Rejected: the user said no.", tur="User rejected tool use")
    t.error("toolu_3b", "The user doesn't want to proceed with this tool use. Rejected.")
    t.error("toolu_4", "Exit code 1\nboom", tur="User rejected tool use, or not")
    t.error("toolu_5", "")  # no text: the summary stands in, parse the line
    t.error("toolu_6", "not mine", side=True)  # a subagent's line: skipped
    t.error("toolu_7", 'résumé ✓ 😀 \\ "quoted"')
    t.user("again")
    cut = t.lines[t.error("toolu_8", "whole, the start of a cut one below") and -1]
    t.error("toolu_9", "glued after a cut", fast=False)
    t.lines[-1] = cut[: cut.index('"toolUseResult"') + 20] + t.lines[-1]
    t.error("toolu_10", "cut in the text", fast=False)
    t.lines[-1] = t.lines[-1][: t.lines[-1].index("in the text")] + t.lines[-2]
    t.error("toolu_13", "cut in the text, then a whole line", fast=False)
    t.error("toolu_14", "the whole line after the cut", fast=False)
    t.lines[-2:] = [t.lines[-2][: t.lines[-2].index("in the text")] + t.lines[-1]]
    t.error("toolu_11", "two blocks")
    t.lines[-1] = t.lines[-1].replace(
        '"tool_use_id":"toolu_11"}',
        '"tool_use_id":"toolu_11"},{"tool_use_id":"t2","type":"tool_result","content":"y"}',
    )
    t.error("toolu_12", "last")
    check(t, tmp_path / "s.jsonl")


def test_slash_command_confirmed_by_a_fast_line(tmp_path):
    t = Real()
    t.user("<command-name>/init</command-name>\n<command-args>fast</command-args>")
    t.block({"type": "thinking", "thinking": "hm", "signature": "c2ln"})
    t.block({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a"}})
    t.result("toolu_1", "contents")
    t.user("<command-name>/model</command-name>")
    t.user("<local-command-stdout>Set model</local-command-stdout>")
    t.user("next")
    t.result("toolu_9", "a result first confirms nothing waiting")
    check(t, tmp_path / "s.jsonl")


def test_broken_and_odd_lines_fall_back(tmp_path):
    t = Real()
    t.user("go")
    good = t.lines[t.block({"type": "text", "text": "cut"}, fast=False) and -1]
    t.lines[-1] = good[: good.index('"usage"') + 12]  # cut short: a corrupt line
    t.block({"type": "text", "text": "glued"}, msg="msg_2", fast=False)
    t.lines[-1] = good[:200] + t.lines[-1]  # a partial write with the next line after it
    t.block({"type": "text", "text": "no end"}, msg="msg_3", fast=False)
    t.lines[-1] = t.lines[-1][:-1]  # cut after the last value
    t.block({"type": "text", "text": "glued in the usage"}, msg="msg_4", fast=False)
    t.lines[-1] = good[: good.index('"usage"') + 30] + t.lines[-1]
    t.block({"type": "thinking", "thinking": "abc", "signature": "c2ln"}, fast=False)
    t.lines[-1] = t.lines[-1].replace('"thinking":"abc"', '"thinking":"abc\\"')
    thought = t.lines[
        t.block({"type": "thinking", "thinking": "t" * 50, "signature": "c2ln"}, msg="msg_7") and -1
    ]
    t.block({"type": "thinking", "thinking": "next", "signature": "c2ln"}, msg="msg_8", fast=False)
    t.lines[-1] = thought[: thought.index('"thinking":"') + 30] + t.lines[-1]  # cut in it
    t.result("toolu_1", "x")
    t.lines[-1] = t.lines[-1].replace(
        '"content":"x"', '"content":"x"},{"tool_use_id":"t2","type":"tool_result","content":"y"'
    )
    t.result("toolu_2", "cut in the summary", fast=False)
    t.lines[-1] = t.lines[-1][:-10]
    t.result("toolu_3", "not a user line")
    t.lines[-1] = t.lines[-1].replace('"type":"user"', '"type":"attachment"')
    t.block({"type": "text", "text": "escaped ids"}, msg='m\\"sg","id":"x')
    t.block({"type": "tool_use", "id": "a\\b", "name": "Bash", "input": {}})
    t.block({"type": "text", "text": "escaped request"}, req='r\\"q')
    t.block({"type": "text", "text": "escaped uuid"}, msg="msg_6")
    t.lines[-1] = t.lines[-1].replace('"uuid":"0000', '"uuid":"\\\\0000')
    t.result("t\\u", "escaped tool id")
    # Valid JSON the schema does not fit: parsed by json, with the same events.
    t.result("toolu_4", ["a plain string item", {"type": "text", "text": "t"}], is_error=True, fast=False)
    t.user({"odd": "an object for content"}, fast=False)
    t.user("a NaN elsewhere", fast=False)
    t.lines[-1] = t.lines[-1].replace('"userType"', '"n":NaN,"userType"')
    t.user("a lone surrogate: SURROGATE", fast=False)
    t.lines[-1] = t.lines[-1].replace("SURROGATE", "\\ud800")  # json takes it, msgspec not
    t.lines.append("[1, 2]")  # not an object: a bad line
    t.lines.append('{"type": "user", "uuid": "deep", "x": ' + "[" * 5000 + "]" * 5000 + "}")
    t.lines.append('{"type": [1], "uuid": "a-list-for-a-type"}')  # decoded (Any): a marker
    t.fast.append(len(t.lines) - 1)
    t.lines.append('{"type": "summary", "uuid": "a-summary-with-a-uuid"}')  # never matters
    t.fast.append(len(t.lines) - 1)
    t.user("the uuid is a number", uuid=7)
    t.block({"type": "text", "text": "ok"}, msg="msg_5")
    check(t, tmp_path / "s.jsonl")


def test_session_only_nested_in_the_summary(tmp_path):
    t = Real(new=True)
    t.user("go")
    t.block({"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "p"}})
    t.result("toolu_1", "done", tur={"n": 1, "sessionId": "the-subagent's"})
    t.lines[-1] = t.lines[-1].replace(f',"sessionId":"{SID}"', "")  # no top-level one
    t.block({"type": "text", "text": "ok"}, msg="msg_2")
    check(t, tmp_path / "s.jsonl")


def test_shared_transcripts_are_decoded_by_the_schema(claude_data):
    """Without this, a schema that never fits would pass every equivalence test (json does)."""
    decoded = lines = 0
    for path in sorted(claude_data.rglob("*.jsonl")):
        for _, line in read_lines(path):
            lines += 1
            decoded += _schema_decodes(line)
    assert lines > 3000 and decoded / lines > 0.99, (decoded, lines)
