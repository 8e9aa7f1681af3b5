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
    st.sampled_from([b'{"type":"user"', b'"message":{"content":', b'"tool_result"', b'"is_error":true',
                     b'{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use"',
                     b'"uuid":"u1","parentUuid":null', b"\xff\xfe", b"\n", b"}", b"]", b"\\u2028"]),
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
