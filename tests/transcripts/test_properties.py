"""Arbitrary bytes never crash the transcript reader or the adapters (hypothesis)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve.transcripts import ADAPTERS, Cursor, follow

LINE_PARTS = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [
            b'{"type":"user"',
            b'"message":{"content":',
            b'"tool_result"',
            b'"is_error":true',
            b'{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use"',
            b'"uuid":"u1","parentUuid":null',
            b'{"type":"response_item","payload":{"type":"function_call_output","call_id":"c"',
            b'"output":"Process exited with code 1\\nOutput:\\n"',
            b'{"type":"session_meta","payload":{"id":"s","cwd":"/x"}}',
            b"\xff\xfe",
            b"\n",
            b"}",
            b"]",
            b"\\u2028",
        ]
    ),
)
CHUNKS = st.lists(st.lists(LINE_PARTS, max_size=8).map(b"".join), min_size=1, max_size=6)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=CHUNKS, fmt=st.sampled_from(sorted(ADAPTERS)))
def test_arbitrary_bytes_appended_in_pieces_never_crash(chunks: list[bytes], fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(b"")
        cursor: Cursor | None = None
        for chunk in chunks:
            with path.open("ab") as handle:
                handle.write(chunk)
            update = follow(path, cursor, fmt, chunk_size=64)
            cursor = Cursor.from_dict(json.loads(json.dumps(update.cursor.to_dict())))
            assert cursor.offset <= path.stat().st_size
            for run in update.runs + ([update.open_run] if update.open_run else []):
                json.dumps(run.to_dict())


@settings(max_examples=80, deadline=None)
@given(line=st.binary(max_size=500), fmt=st.sampled_from(sorted(ADAPTERS)))
def test_any_single_line_parses_to_events_or_nothing(line: bytes, fmt: str) -> None:
    adapter = ADAPTERS[fmt]
    state = adapter.new_state("s")
    events = adapter.parse_line(line.replace(b"\n", b" "), 0, state)
    json.dumps(state)
    assert isinstance(list(events), list)


# JSON values of every type at the keys the Claude Code schema reads: whatever the types,
# decoding with the schema (msgspec, json for what it does not fit) gives the events of json.
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.sampled_from(
        [
            "",
            " ",
            "u1",
            "Error: x",
            "User rejected tool use",
            "tool_result",
            "tool_use",
            "text",
            "image",
            "user",
            "assistant",
            "system",
            "api_error",
            "summary",
            "2026-03-01T10:00:00.500Z",
            "[Request interrupted by user]",
            "<command-name>/init</command-name>",
            "Skill",
            "Write",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "text",
                    "id",
                    "name",
                    "input",
                    "tool_use_id",
                    "content",
                    "is_error",
                    "skill",
                    "file_path",
                    "source",
                    "message",
                    "status",
                ]
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
BLOCK = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["text", "tool_use", "tool_result", "image", "thinking"]) | VALUES,
        "text": VALUES,
        "id": VALUES,
        "name": st.sampled_from(["Skill", "Write", "Bash"]) | VALUES,
        "input": VALUES,
        "tool_use_id": VALUES,
        "content": VALUES,
        "is_error": VALUES,
    },
)
LINE = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["user", "assistant", "system", "summary"]) | VALUES,
        "subtype": st.sampled_from(["api_error"]) | VALUES,
        "uuid": VALUES,
        "parentUuid": VALUES,
        "isSidechain": VALUES,
        "sessionId": VALUES,
        "timestamp": VALUES,
        "requestId": VALUES,
        "isMeta": VALUES,
        "isApiErrorMessage": VALUES,
        "cwd": VALUES,
        "toolUseResult": VALUES,
        "retryAttempt": VALUES,
        "error": VALUES,
        "content": VALUES,
        "other": VALUES,
        "message": st.fixed_dictionaries(
            {},
            optional={
                "id": VALUES,
                "model": VALUES,
                "role": VALUES,
                "content": st.lists(BLOCK, max_size=3) | VALUES,
            },
        )
        | VALUES,
    },
)


# Tool results, where what the schema leaves undecoded (outputs, toolUseResult) is decided.
RESULT_LINE = st.fixed_dictionaries(
    {
        "type": st.just("user"),
        "toolUseResult": st.sampled_from(["Error: exit 1", "User rejected tool use", "ok"]) | VALUES,
        "message": st.fixed_dictionaries(
            {
                "content": st.lists(
                    st.fixed_dictionaries(
                        {
                            "type": st.just("tool_result"),
                            "tool_use_id": st.sampled_from(["t1", "t2"]),
                            "content": st.sampled_from(["boom", "", "ETIMEDOUT"]) | VALUES,
                            "is_error": st.booleans() | VALUES,
                        }
                    ),
                    min_size=1,
                    max_size=2,
                )
            }
        ),
    }
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects=st.lists(LINE | RESULT_LINE, min_size=1, max_size=6))
def test_schema_decoding_gives_the_events_of_json(objects: list[dict]) -> None:
    from evolve.transcripts.claude_code import new_state, parse_line, parse_object
    from evolve.transcripts.reader import loads_object

    decoded_state, json_state = new_state("s"), new_state("s")
    for offset, obj in enumerate(objects):
        line = json.dumps(obj).encode()
        decoded = parse_line(line, offset, decoded_state)
        parsed = loads_object(line)
        assert parsed is not None
        assert list(decoded) == list(parse_object(parsed, offset, offset + len(line) + 1, json_state))
        assert decoded_state == json_state
