"""The fake streaming Responses API the Codex conformance tests drive, checked on its own.

The real oracle is the Codex CLI (tests/test_conformance_codex.py); these run without it,
reading the server's SSE stream the way a Responses client does, so the fake stays right
on machines where the conformance tests skip.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.fake_codex_api import SHELL_TOOL, UNSCRIPTED


def turn(api, *, stream: bool = True) -> list[dict]:
    """POST one model turn; the `data:` objects of the event stream (or the JSON answer)."""
    body = {
        "model": "gpt-5",
        "stream": stream,
        "instructions": "You are a coding agent.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run the tests"}]}
        ],
        "tools": [{"type": "function", "name": SHELL_TOOL}],
    }
    request = urllib.request.Request(
        api.url + "/responses", data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        text = answer.read().decode()
    if not stream:
        return [json.loads(text)]
    events = [block.splitlines() for block in text.strip().split("\n\n")]
    assert all(lines[0] == f"event: {json.loads(lines[1][6:])['type']}" for lines in events)
    return [json.loads(lines[1].removeprefix("data: ")) for lines in events]


def test_scripted_turns_stream_as_responses_events(fake_codex_api):
    api = fake_codex_api
    call = api.command("npm test")
    api.text("All 3 tests pass.")
    first = turn(api)
    assert [e["type"] for e in first] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    [item] = first[-1]["response"]["output"]
    assert (item["type"], item["name"], item["call_id"]) == ("function_call", SHELL_TOOL, call)
    assert json.loads(item["arguments"]) == {"cmd": "npm test"}
    assert first[-1]["response"]["usage"]["total_tokens"] > 0
    second = turn(api)
    assert second[-1]["response"]["output"][0]["content"][0]["text"] == "All 3 tests pass."
    api.check_done()
    turns = api.agent_turns()
    assert [t.turn for t in turns] == [0, 1] and turns[0].tool_names() == [SHELL_TOOL]
    assert "Run the tests" in turns[0].text() and "You are a coding agent." in turns[0].text()


def test_other_requests_leave_the_script_alone_and_unscripted_turns_fail_the_check(fake_codex_api):
    api = fake_codex_api
    with urllib.request.urlopen(api.url + "/models", timeout=5) as answer:
        assert json.loads(answer.read())["data"] == []
    assert turn(api, stream=False) == [{}]  # not a streamed turn: no scripted answer used
    assert [r.turn for r in api.requests] == [None, None]
    assert turn(api)[-1]["response"]["output"][0]["content"][0]["text"] == UNSCRIPTED
    with pytest.raises(AssertionError, match="beyond the script"):
        api.check_done()
