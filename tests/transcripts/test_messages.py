"""Messages API conversations (the Python API's input) give the same events and runs."""

from __future__ import annotations

from types import SimpleNamespace

from evolve.transcripts import parse_messages
from evolve.transcripts.messages import message_events

CONVERSATION = [
    {"role": "user", "content": "Summarise the report"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "tu1", "name": "read_file", "input": {"path": "r.md"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "tu1",
                "is_error": True,
                "content": [{"type": "text", "text": "FileNotFoundError: r.md"}],
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "tu2", "name": "Skill", "input": {"skill": "reports"}},
            {
                "type": "tool_use",
                "id": "tu3",
                "name": "Write",
                "input": {"file_path": "/out/summary.md", "content": "..."},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "tu2", "content": "Launching skill: reports"},
            {"type": "tool_result", "tool_use_id": "tu3", "content": "ok"},
            {"type": "text", "text": "(tool output above)"},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    {"role": "user", "content": [{"type": "text", "text": "Shorter please"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "tu4", "name": "fetch", "input": {"url": "u"}}],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "tu4", "is_error": True, "content": "Read timed out"}
        ],
    },
    {"role": "user", "content": "[Request interrupted by user]"},
]


def test_runs_from_messages():
    first, second = parse_messages(
        CONVERSATION, session_id="py-1", timestamp="2026-01-02T03:04:05.678Z", cwd="/app"
    )
    assert first.request == "Summarise the report" and first.session_id == "py-1"
    assert first.started_at == "2026-01-02T03:04:05Z" and first.cwd == "/app"
    # a failed read, then other calls: reading is never a fix, and no call retried it
    assert first.tool_calls == 3 and first.errors == 1 and not first.recovered
    assert first.skills == [{"name": "reports", "tool_use_id": "tu2"}]
    assert first.files_written == ["/out/summary.md"]
    assert first.error_texts == ["FileNotFoundError: r.md"]
    assert (first.start_offset, first.end_offset) == (0, 6) and first.complete
    assert second.request == "Shorter please" and second.transient_errors == 1
    assert second.errors == 0 and second.aborted and not second.complete


def test_event_kinds_and_names():
    events = list(message_events(CONVERSATION))
    kinds = [e.kind for e in events]
    assert kinds.count("human") == 2 and kinds.count("interrupt") == 1
    assert kinds.count("tool_call") == 4 and kinds.count("skill") == 1
    results = [e for e in events if e.kind == "tool_result"]
    assert [r.name for r in results] == ["read_file", "Skill", "Write", "fetch"]


def test_sdk_objects_and_rejection():
    messages = [
        SimpleNamespace(role="user", content=[SimpleNamespace(type="text", text="go")]),
        SimpleNamespace(
            role="assistant",
            content=[SimpleNamespace(type="tool_use", id="a", name="Bash", input={"command": "rm -rf /"})],
        ),
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "a",
                    "is_error": True,
                    "content": "User rejected tool use",
                }
            ],
        },
    ]
    (run,) = parse_messages(messages)
    assert run.request == "go" and run.tool_calls == 1
    assert run.aborted and run.errors == 0


def test_empty_and_odd_input():
    assert parse_messages([]) == []
    assert parse_messages([{"role": "system", "content": "x"}, {"role": "user"}]) == []
