"""Observe: a 200+ MB Codex rollout against a plain `json.loads` loop over it.

The rollout is built at bench time from the real rollouts in ../shared/data/codex: one
`session_meta` line, then every other line of every rollout, the whole set repeated with
each copy's call ids made unique (the adapter counts a call id once), so each copy adds
requests, tool calls and their outputs to one long session, as resuming a session does.
The measures are bench_observe's (Claude Code), with the same targets: the median ratio of
back-to-back pairs <= 1.0, re-observing one appended run < 1 % of a full observe, peak
memory < 100 MB and flat in the file size.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from pathlib import Path

from bench_observe import SMALL_MB, TARGET_MB, measure, shared_data

DATA = shared_data("codex")
PLACEHOLDER = b"\x01" * 6  # never in a JSONL line (control characters are escaped in JSON)
_CALL_ID = re.compile(rb"\b(call_[A-Za-z0-9]{6,})\b")


def template(files: list[Path]) -> tuple[bytes, bytes]:
    """(the first session_meta line, every other line with each call id ending in PLACEHOLDER)."""
    meta, body = b"", []
    for path in files:
        for line in path.read_bytes().splitlines():
            if json.loads(line).get("type") == "session_meta":
                meta = meta or line + b"\n"
            else:
                body.append(_CALL_ID.sub(lambda m: m.group(1) + PLACEHOLDER, line) + b"\n")
    blob = b"".join(body)
    assert meta and blob.count(PLACEHOLDER) > 100
    return meta, blob


def build(path: Path, size_mb: int, meta: bytes, blob: bytes) -> int:
    """The session_meta line, then copies of `blob` (copy k: call ids ending in k) until size_mb."""
    copies = 0
    with path.open("wb") as handle:
        handle.write(meta)
        while handle.tell() < size_mb << 20:
            handle.write(blob.replace(PLACEHOLDER, b"%06x" % copies))
            copies += 1
    return copies


def one_run(_conn, n: int) -> bytes:
    """The lines of one new run: a request, one command and its output, the answer."""
    stamp = "2026-03-01T10:00:%02d.000Z"
    call = f"call_bench{n:012d}"
    items = [
        ("event_msg", {"type": "user_message", "message": f"Run the tests again ({n})", "images": []}),
        (
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"pytest -q"}',
                "call_id": call,
            },
        ),
        (
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": "Chunk ID: 1\nWall time: 0.1 s\nProcess exited with code 0\nOutput:\n3 passed\n",
            },
        ),
        (
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "All pass."}],
            },
        ),
    ]
    return b"".join(
        json.dumps({"timestamp": stamp % i, "type": kind, "payload": payload}, separators=(",", ":")).encode()
        + b"\n"
        for i, (kind, payload) in enumerate(items)
    )


def run(workdir: Path) -> dict:
    workdir = Path(workdir)
    started = time.perf_counter()
    files = sorted(DATA.rglob("*.jsonl"))
    if not files:  # a clone without ../shared: evolve ships no rollout to build one from
        sys.stderr.write(f"bench observe_codex: no Codex rollouts under {DATA}; skipped\n")
        return {"skipped": f"no Codex rollouts under {DATA} (bench observe measures the same code)"}
    meta, blob = template(files)
    big = workdir / "rollout-big.jsonl"
    copies = build(big, TARGET_MB, meta, blob)
    small = workdir / "rollout-small.jsonl"
    build(small, SMALL_MB, meta, blob)
    build_s = time.perf_counter() - started
    measured = measure(workdir, big, small, "codex", one_run)
    return {
        **measured,
        "copies": copies,
        "lines": 1 + blob.count(b"\n") * copies,
        "build_s": round(build_s, 2),
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        print(json.dumps(run(Path(tmp)), indent=2))
