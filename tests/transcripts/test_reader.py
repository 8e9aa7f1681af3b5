"""LineReader: only new complete lines, bounded memory, and resets when the file changes."""

from __future__ import annotations

import json

import pytest

from evolve.transcripts.reader import Cursor, LineReader, read_lines


def read(path, cursor=None, chunk_size=1 << 20, max_line=64 << 20):
    reader = LineReader(path, cursor, chunk_size, max_line)
    lines = list(reader.lines())
    return lines, reader


def roundtrip(cursor: Cursor) -> Cursor:
    return Cursor.from_dict(json.loads(json.dumps(cursor.to_dict())))


def test_empty_file(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    lines, reader = read(path)
    assert lines == []
    assert reader.cursor.offset == 0
    assert not reader.reset
    lines, reader = read(path, roundtrip(reader.cursor))
    assert lines == [] and not reader.reset


def test_partial_line_waits_for_its_newline(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    lines, reader = read(path)
    assert lines == [(0, b'{"a":1}')]
    assert reader.cursor.offset == 8
    with path.open("ab") as handle:
        handle.write(b'2}\n{"c"')
    lines, reader = read(path, roundtrip(reader.cursor))
    assert lines == [(8, b'{"b":2}')]
    assert not reader.reset
    with path.open("ab") as handle:
        handle.write(b":3}\n")
    lines, reader = read(path, roundtrip(reader.cursor))
    assert lines == [(16, b'{"c":3}')]
    assert reader.cursor.offset == path.stat().st_size


def test_rereading_adds_nothing(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"one\ntwo\n")
    _, reader = read(path)
    lines, again = read(path, reader.cursor)
    assert lines == [] and not again.reset
    assert again.cursor.to_dict() == reader.cursor.to_dict()


def test_lines_straddling_hash_window_and_chunks(tmp_path):
    path = tmp_path / "t.jsonl"
    first = b"x" * 4090
    second = b"y" * 20  # crosses byte 4096
    path.write_bytes(first + b"\n" + second + b"\n" + b"z" * 5)
    for chunk in (7, 4096, 1 << 20):
        lines, reader = read(path, chunk_size=chunk)
        assert lines == [(0, first), (4091, second)], chunk
        assert reader.cursor.offset == 4091 + 21
        lines2, reader2 = read(path, roundtrip(reader.cursor), chunk_size=chunk)
        assert lines2 == [] and not reader2.reset


def test_appends_in_small_chunks_give_every_line_once(tmp_path):
    path = tmp_path / "t.jsonl"
    payload = b"".join(b"line-%d-" % i + b"q" * (i * 37 % 300) + b"\n" for i in range(200))
    path.write_bytes(b"")
    cursor = None
    got = []
    for start in range(0, len(payload), 333):
        with path.open("ab") as handle:
            handle.write(payload[start : start + 333])
        lines, reader = read(path, cursor, chunk_size=64)
        assert not reader.reset
        got.extend(lines)
        cursor = roundtrip(reader.cursor)
    assert [line for _, line in got] == payload.split(b"\n")[:-1]
    assert all(payload[off : off + len(line)] == line for off, line in got)


def test_truncation_restarts_from_zero(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a\nb\nc\n")
    _, reader = read(path)
    cursor = reader.cursor
    cursor.parser_state = {"something": 1}
    path.write_bytes(b"")
    lines, reader = read(path, cursor)
    assert lines == [] and reader.reset
    assert reader.cursor.offset == 0 and reader.cursor.parser_state == {}
    path.write_bytes(b"new\n")
    lines, reader2 = read(path, reader.cursor)
    assert lines == [(0, b"new")] and not reader2.reset


def test_rewrite_with_same_size_is_noticed(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"aaaa\nbbbb\n")
    _, reader = read(path)
    with path.open("r+b") as handle:  # rewritten in place, same inode, same size
        handle.write(b"cccc\ndddd\n")
    lines, reader2 = read(path, reader.cursor)
    assert reader2.reset
    assert lines == [(0, b"cccc"), (5, b"dddd")]


def test_rewrite_far_from_the_start_is_noticed(tmp_path):
    path = tmp_path / "t.jsonl"
    body = b"".join(b"%06d\n" % i for i in range(3000))  # 21,000 bytes
    path.write_bytes(body)
    _, reader = read(path)
    changed = body[:-7] + b"X" + body[-6:]
    path.write_bytes(changed)
    lines, reader2 = read(path, reader.cursor)
    assert reader2.reset and len(lines) == 3000


def test_replaced_file_restarts(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"old-1\nold-2\n")
    _, reader = read(path)
    path.rename(tmp_path / "rotated.jsonl")
    path.write_bytes(b"old-1\nold-2\nnew-3\n")  # same prefix, different file
    lines, reader2 = read(path, reader.cursor)
    assert reader2.reset
    assert [line for _, line in lines] == [b"old-1", b"old-2", b"new-3"]


def test_ten_megabyte_line_is_yielded_whole(tmp_path):
    path = tmp_path / "t.jsonl"
    big = b'{"k":"' + b"v" * (10 << 20) + b'"}'
    path.write_bytes(b"small\n" + big + b"\nafter\n")
    lines, reader = read(path, chunk_size=1 << 16)
    assert [len(line) for _, line in lines] == [5, len(big), 5]
    assert lines[1][1] == big and lines[2][0] == 6 + len(big) + 1
    assert reader.skipped == 0


def test_overlong_line_is_skipped_and_counted(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"ok\n" + b"x" * 5000 + b"\nfine\n" + b"y" * 3000)
    lines, reader = read(path, chunk_size=256, max_line=1000)
    assert lines == [(0, b"ok"), (5004, b"fine")]
    assert reader.skipped == 1
    assert reader.cursor.offset == 5009  # the unfinished long tail is left for later
    with path.open("ab") as handle:
        handle.write(b"\nlast\n")
    lines, reader = read(path, reader.cursor, chunk_size=256, max_line=1000)
    assert lines == [(8009 + 1, b"last")] and reader.skipped == 1


def test_invalid_utf8_and_u2028_are_left_to_the_adapter(tmp_path):
    path = tmp_path / "t.jsonl"
    sep = "\u2028".encode()
    path.write_bytes(b"\xff\xfe bad\n" + b'{"t":"a' + sep + b'b"}\r\n')
    lines = list(read_lines(path))
    assert lines == [(0, b"\xff\xfe bad"), (7, b'{"t":"a' + sep + b'b"}\r')]


def test_cursor_is_json_serialisable(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"a\n")
    _, reader = read(path)
    cursor = reader.cursor
    cursor.parser_state = {"runs": {"next": 1}}
    data = json.loads(json.dumps(cursor.to_dict()))
    assert Cursor.from_dict(data) == cursor
    assert set(data) >= {"dev", "inode", "size", "offset", "prefix_hash", "parser_state"}


@pytest.mark.parametrize("chunk_size", [97, 4096, 1 << 20])
def test_a_valid_line_over_the_cap_is_read_with_its_texts_cut(tmp_path, chunk_size):
    """Red team C5: a valid 400 MB line was dropped as "corrupt", and its error with it."""
    from evolve.transcripts import overlong

    huge = 'é\\"\u2028' + "log line " * 40_000  # escapes, non-ASCII and a long text
    record = {
        "type": "user",
        "message": {
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": huge, "is_error": True}]
        },
        "toolUseResult": {"stdout": huge, "stderr": "error: missing libfoo"},
    }
    line = json.dumps(record, ensure_ascii=False).encode()
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"ok\n" + line + b"\nnext\n")
    lines, reader = read(path, chunk_size=chunk_size, max_line=300_000)
    assert len(line) > 300_000 and reader.cut == 1 and reader.skipped == 0
    assert [offset for offset, _ in lines] == [0, 3, 3 + len(line) + 1]
    kept = json.loads(lines[1][1])
    result = kept["message"]["content"][0]
    assert result["is_error"] is True and result["tool_use_id"] == "t1"  # what the signal needs
    assert result["content"].startswith(huge[:1000]) and result["content"].endswith(overlong.CUT.decode())
    assert kept["toolUseResult"]["stderr"] == "error: missing libfoo"
    assert len(lines[1][1]) <= 2 * overlong.STRING_CAP + 1000
