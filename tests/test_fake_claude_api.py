"""The fake streaming Messages API the Claude Code conformance tests drive, checked on its own.

The official anthropic SDK is the oracle for the wire format: its streaming parser must
rebuild exactly the scripted turns from the server's SSE events. These run without node or
the CLI, so the fake stays right even on machines where the conformance tests skip.
"""

from __future__ import annotations

import urllib.request
from typing import TYPE_CHECKING

import pytest

from tests.fake_claude_api import UNSCRIPTED

if TYPE_CHECKING:
    import anthropic

TOOLS = [
    {
        "name": "Bash",
        "description": "Run a command",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def client(api) -> anthropic.Anthropic:
    # here, not at the top: every pytest process collects this module, the one running no test too,
    # and importing the SDK costs seconds of CPU (`pytest --collect-only`: 5.9 s, without it 2.5 s)
    import anthropic

    return anthropic.Anthropic(base_url=api.url, api_key="sk-ant-fake", max_retries=0)


def agent_turn(api, text: str = "go"):
    with client(api).messages.stream(
        model="claude-fake", max_tokens=64, tools=TOOLS, messages=[{"role": "user", "content": text}]
    ) as stream:
        events = [event.type for event in stream]
        return stream.get_final_message(), events


def test_scripted_turns_stream_as_the_sdk_expects(fake_claude_api):
    api = fake_claude_api
    command = {"command": "npm test -- --update-snapshots", "description": "a long input, split in pieces"}
    tool_id = api.tool("Bash", command, text="Running the tests.")
    api.text("All 3 tests pass. " * 5)

    first, events = agent_turn(api, "Run the tests")
    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["text", "tool_use"]
    assert first.content[0].text == "Running the tests."
    assert (first.content[1].id, first.content[1].name, first.content[1].input) == (tool_id, "Bash", command)
    assert events[0] == "message_start" and events.count("content_block_stop") == 2
    second, _ = agent_turn(api)
    assert second.stop_reason == "end_turn" and second.content[0].text == "All 3 tests pass. " * 5
    api.check_done()

    turns = api.agent_turns()
    assert [t.turn for t in turns] == [0, 1]
    assert turns[0].body["stream"] is True and turns[0].tool_names() == ["Bash"]
    assert "Run the tests" in turns[0].text()


def test_other_requests_are_answered_without_using_the_script(fake_claude_api):
    api = fake_claude_api
    api.text("the agent's turn")
    sdk = client(api)
    side = sdk.messages.create(
        model="claude-fake", max_tokens=16, messages=[{"role": "user", "content": "a title for this chat"}]
    )
    assert side.content[0].text == "Fake side answer"
    counted = sdk.messages.count_tokens(model="claude-fake", messages=[{"role": "user", "content": "hi"}])
    assert counted.input_tokens > 0
    head = urllib.request.urlopen(urllib.request.Request(api.url + "/", method="HEAD"), timeout=5)
    assert head.status == 200
    with pytest.raises(AssertionError, match="never asked for"):
        api.check_done()
    assert agent_turn(api)[0].content[0].text == "the agent's turn"
    api.check_done()
    assert [(r.method, r.route) for r in api.requests] == [
        ("POST", "/v1/messages"),
        ("POST", "/v1/messages/count_tokens"),
        ("HEAD", "/"),
        ("POST", "/v1/messages"),
    ]
    assert api.requests[0].text() == "a title for this chat" and api.requests[0].turn is None


def test_an_unscripted_turn_ends_the_session_and_fails_the_check(fake_claude_api):
    message, _ = agent_turn(fake_claude_api)
    assert message.stop_reason == "end_turn" and message.content[0].text == UNSCRIPTED
    with pytest.raises(AssertionError, match="beyond the script"):
        fake_claude_api.check_done()
