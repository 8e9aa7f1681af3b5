"""Observe: a 200+ MB Claude Code transcript against a plain `json.loads` loop over it.

The transcript is built at bench time from the real transcripts in
../shared/data/claude-code (main session files only: subagent files are transcripts of
their own; EVOLVE_BENCH_DATA names another folder; without either, the shipped
evolve/examples): the files are concatenated and the whole set is repeated with fresh ids,
so each copy is a new session (new sessionId, uuid/parentUuid chains, message, request and
tool-use ids) and every run stays well-formed.

Measured in the same run:
- `ratio_vs_json_loads`: full observe of the file into a fresh state.db (in-process) over
  a plain `for line in f: json.loads(line)` loop (text mode, the faster of text and binary)
  timed back to back, the median over ROUNDS such pairs (`round_ratios`). This machine's
  speed drifts by up to 2x over tens of seconds (shared cores): a pair shares one machine
  state, the rounds alternate which side goes first, and the median ignores a round caught
  by a slow spell. The ratio of each side's best time (`best_of_ratio`) mixes times taken
  in different states: it is printed, but one fast baseline round can move it by 30 %.
  `cpu_ratio_vs_json_loads` is the same median in process CPU time (steal time excluded).
  Target <= 1.0, on real sessions only (the fallback's lines are far denser in runs).
- `reobserve_fraction`: after appending one run (a few lines), re-observing it, net of a
  no-op observe, as a fraction of the full observe. Target < 1 %.
- `peak_mb` / `peak_mb_50`: peak RSS growth of a full observe in a fresh subprocess
  (ru_maxrss after observing minus ru_maxrss after imports), for the 200 MB file and for a
  50 MB one: flat in file size and under 100 MB.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evolve.observe import ingest as observe_mod
from evolve.store import ledger


def shared_data(name: str) -> Path:
    """../shared/data/<name> beside the repository (a worktree one level deeper: a level up)."""
    here = Path(__file__).resolve()
    found = [p / "shared" / "data" / name for p in here.parents[2:4]]
    return next((path for path in found if path.is_dir()), found[0])


DATA = Path(os.environ.get("EVOLVE_BENCH_DATA") or shared_data("claude-code"))  # or a folder of yours
EXAMPLES = Path(__file__).resolve().parents[1] / "evolve" / "examples"
# Against json.loads over real sessions, whose bytes are mostly tool output that observe
# validates without building. The shipped examples (the fallback) hold one run per ~4 kB, ~28x
# denser than real sessions (~120 kB): per-run work dominates there, so these targets do not apply.
SPEED_TARGETS = ("ratio_vs_json_loads", "cpu_ratio_vs_json_loads")
TARGET_MB = 200
SMALL_MB = 50
AGENT = "bench"
PLACEHOLDER = b"\x01" * 6  # never in a JSONL line (control characters are escaped in JSON)

# Ids whose last six characters become the copy number: uuids (uuid, parentUuid, sessionId,
# leafUuid, sourceToolAssistantUUID, promptId…) and API ids (message, request, tool use).
_UUID = re.compile(rb"\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{6})[0-9a-f]{6}\b")
_API_ID = re.compile(rb"\b((?:msg|req|toolu|srvtoolu)_[A-Za-z0-9]{6,})[A-Za-z0-9]{6}\b")


def source_files(data: Path = DATA) -> tuple[list[Path], bool]:
    """The main session transcripts of the shared data (no subagent files); False: the fallback.

    A clone without ../shared falls back to the example transcripts evolve ships (and says
    so): fewer shapes of line, the same 200 MB of well-formed sessions.
    """
    files = [
        p
        for p in sorted(data.rglob("*.jsonl"))
        if "agent-" not in p.name and "__subagents__" not in p.name and p.name != "subagent.jsonl"
    ]
    if files:
        return files, True
    sys.stderr.write(f"bench observe: {data} is not here; using the shipped examples ({EXAMPLES}) instead\n")
    return sorted(EXAMPLES.glob("*.jsonl")), False


def template(files: list[Path]) -> bytes:
    """The files concatenated, every id's last six characters replaced by PLACEHOLDER."""
    parts = []
    for path in files:
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            raw += b"\n"
        raw = _UUID.sub(lambda m: m.group(1) + PLACEHOLDER, raw)
        parts.append(_API_ID.sub(lambda m: m.group(1) + PLACEHOLDER, raw))
    blob = b"".join(parts)
    assert PLACEHOLDER in blob, "no ids to renumber: every copy would be the same session"
    return blob


def build(path: Path, size_mb: int, blob: bytes) -> int:
    """Write copies of `blob` (copy k: ids ending in k as 6 hex digits) until size_mb."""
    copies = 0
    with path.open("wb") as handle:
        while handle.tell() < size_mb << 20:
            handle.write(blob.replace(PLACEHOLDER, b"%06x" % copies))
            copies += 1
    return copies


def one_run(session: str, parent: str | None, n: int) -> tuple[bytes, str]:
    """A few lines of one new run (request, tool call, result, answer): (bytes, last uuid)."""
    stamp = "2026-03-01T10:00:%02d.000Z"
    lines = []
    head = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/bench",
        "sessionId": session,
        "version": "2.1.38",
    }
    ids = [str(uuid.uuid4()) for _ in range(4)]
    tool = f"toolu_bench{n:012d}"
    bodies = [
        {"type": "user", "message": {"role": "user", "content": f"Run the tests again ({n})"}},
        {
            "type": "assistant",
            "requestId": f"req_bench{n:012d}",
            "message": {
                "id": f"msg_bench{n:012d}a",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [
                    {"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "pytest -q"}}
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"tool_use_id": tool, "type": "tool_result", "content": "3 passed"}],
            },
        },
        {
            "type": "assistant",
            "requestId": f"req_bench{n:012d}b",
            "message": {
                "id": f"msg_bench{n:012d}b",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "All tests pass."}],
            },
        },
    ]
    for i, body in enumerate(bodies):
        obj = {"parentUuid": parent, **head, **body, "uuid": ids[i], "timestamp": stamp % i}
        lines.append(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        parent = ids[i]
    return b"".join(lines), ids[-1]


ROUNDS = 7


def json_loads_loop(path: Path, binary: bool) -> tuple[float, float]:
    """The baseline: `for line in f: json.loads(line)` (text or binary mode): (wall, cpu)."""
    started, cpu = time.perf_counter(), time.process_time()
    with path.open("rb") if binary else path.open(encoding="utf-8") as f:
        for line in f:
            json.loads(line)
    return time.perf_counter() - started, time.process_time() - cpu


def observe_once(
    db: Path, path: Path, fmt: str = "claude_code"
) -> tuple[float, float, observe_mod.ObserveResult]:
    """One full observe into a fresh state.db: (wall, cpu, result)."""
    conn = ledger.connect(db)
    try:
        started, cpu = time.perf_counter(), time.process_time()
        result = observe_mod.observe(conn, AGENT, [(str(path), fmt)])
        return time.perf_counter() - started, time.process_time() - cpu, result
    finally:
        conn.close()


def interleaved(workdir: Path, path: Path, rounds: int = ROUNDS, fmt: str = "claude_code") -> dict:
    """Best (wall, cpu) of the text loop, the binary loop and a full observe, interleaved.

    The order alternates between rounds (baseline first, then observe first), so a slow
    spell of the machine is as likely to fall on either side; the binary loop, always the
    slower baseline here, runs in the first two rounds only. `pairs` and `cpu_pairs` hold
    each round's observe/text ratio in wall and CPU time.
    """
    best = {"text": [float("inf")] * 2, "bytes": [float("inf")] * 2, "observe": [float("inf")] * 2}
    result, pairs, cpu_pairs = None, [], []
    for attempt in range(rounds):
        timings = {}
        steps = ["text", "bytes", "observe"] if attempt < 2 else ["text", "observe"]
        for step in steps if attempt % 2 == 0 else reversed(steps):
            if step == "observe":
                *observed, result = observe_once(workdir / f"full-{attempt}" / "state.db", path, fmt)
                timings[step] = tuple(observed)
            else:
                timings[step] = json_loads_loop(path, binary=step == "bytes")
        pairs.append(round(timings["observe"][0] / timings["text"][0], 3))
        cpu_pairs.append(round(timings["observe"][1] / timings["text"][1], 3))
        for name, (wall, cpu) in timings.items():
            best[name] = [min(best[name][0], wall), min(best[name][1], cpu)]
    return {
        **best,
        "result": result,
        "pairs": pairs,
        "cpu_pairs": cpu_pairs,
        "db": workdir / f"full-{rounds - 1}" / "state.db",
    }


_PEAK = """
import json, resource, sys, time
from pathlib import Path
from evolve.observe import ingest as observe
from evolve.store import ledger

def status(key):  # this process's own numbers (ru_maxrss survives exec on Linux: the parent's)
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

conn = ledger.connect(Path(sys.argv[1]))
base = status("VmRSS")
started = time.perf_counter()
result = observe.observe(conn, "bench", [(sys.argv[2], sys.argv[3])])
seconds = time.perf_counter() - started
peak = status("VmHWM")
print(json.dumps({"base_kb": base, "peak_kb": peak, "runs": result.runs, "s": seconds}))
"""


def peak_memory(workdir: Path, path: Path, fmt: str = "claude_code") -> dict:
    """Peak RSS growth (MB) of one full observe in a fresh interpreter.

    The baseline is the subprocess's resident size after its imports and connect; the peak
    is its high-water mark after observing (VmHWM: ru_maxrss is inherited across exec on
    Linux, so it would report the parent's peak).
    """
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = subprocess.run(
            [sys.executable, "-c", _PEAK, str(Path(tmp) / "state.db"), str(path), fmt],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    data = json.loads(out.stdout)
    return {
        "peak_mb": round((data["peak_kb"] - data["base_kb"]) / 1024, 1),
        "runs": data["runs"],
        "seconds": data["s"],
    }


def run(workdir: Path) -> dict:
    workdir = Path(workdir)
    started = time.perf_counter()
    files, real = source_files()
    blob = template(files)
    big = workdir / "big.jsonl"
    copies = build(big, TARGET_MB, blob)
    small = workdir / "small.jsonl"
    build(small, SMALL_MB, blob)
    build_s = time.perf_counter() - started
    measured = measure(workdir, big, small, "claude_code", next_run)
    if not real:
        for key in SPEED_TARGETS:
            del measured["targets"][key]
        measured["speed_targets"] = "only on real transcripts: ../shared or EVOLVE_BENCH_DATA (see above)"
    source = str(DATA if real else EXAMPLES) + ("" if real else f" (fallback: no {DATA})")
    extra = {"copies": copies, "lines": blob.count(b"\n") * copies, "build_s": round(build_s, 2)}
    return {"source": source, **measured, **extra}


def next_run(conn, n: int) -> bytes:
    """A new run continuing the last stored one (its session, its tail uuid as parent)."""
    row = conn.execute(
        "SELECT session, tail_uuid FROM runs WHERE agent = ? ORDER BY idx DESC LIMIT 1", (AGENT,)
    ).fetchone()
    return one_run(row["session"], row["tail_uuid"], n)[0]


def measure(workdir: Path, big: Path, small: Path, fmt: str, appended: Callable[[Any, int], bytes]) -> dict:
    """Full observe against json.loads, re-observe after an appended run, peak memory.

    `appended(conn, n)`: the lines of one new run to append (the n-th), given the state.db
    of the full observe.
    """
    size = big.stat().st_size
    # Warm-up, untimed: the first observe in a process pays one-time costs (imports, the
    # correction lexicons, compiled patterns) that a 200 MB read should not be charged with.
    observe_once(workdir / "warm-up" / "state.db", small, fmt)
    timed = interleaved(workdir, big, fmt=fmt)
    text_s, bytes_s = timed["text"][0], timed["bytes"][0]
    baseline_s = min(text_s, bytes_s)  # the faster loop (text: the pairs' baseline)
    full_s = timed["observe"][0]
    result, db = timed["result"], timed["db"]
    runs = result.runs
    bad_lines = result.bad_lines

    conn = ledger.connect(db)
    try:
        noop_s = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            noop = observe_mod.observe(conn, AGENT, [(str(big), fmt)])
            noop_s = min(noop_s, time.perf_counter() - t0)
            assert noop.runs == 0, "a no-op observe stored runs"
        reobserve_s = float("inf")
        for n in range(3):
            data = appended(conn, n)
            with big.open("ab") as handle:
                handle.write(data)
            t0 = time.perf_counter()
            again = observe_mod.observe(conn, AGENT, [(str(big), fmt)])
            reobserve_s = min(reobserve_s, time.perf_counter() - t0)
            assert again.runs == 2, f"appending one run changed {again.runs} runs"  # old open + new
        stored = conn.execute("SELECT COUNT(*) FROM runs WHERE agent = ?", (AGENT,)).fetchone()[0]
    finally:
        conn.close()

    memory = peak_memory(workdir, big, fmt)
    memory_50 = peak_memory(workdir, small, fmt)
    return {
        "file_mb": round(size / (1 << 20), 1),
        "runs": runs,
        "runs_stored": stored,
        "bad_lines": bad_lines,
        "json_loads_s": round(baseline_s, 3),
        "json_loads_text_s": round(text_s, 3),
        "json_loads_bytes_s": round(bytes_s, 3),
        "observe_s": round(full_s, 3),
        "observe_mb_per_s": round(size / (1 << 20) / full_s, 1),
        "ratio_vs_json_loads": statistics.median(timed["pairs"]),
        "cpu_ratio_vs_json_loads": statistics.median(timed["cpu_pairs"]),
        "best_of_ratio": round(full_s / baseline_s, 3),
        "rounds": ROUNDS,
        "round_ratios": timed["pairs"],
        "noop_observe_s": round(noop_s, 4),
        "reobserve_s": round(reobserve_s, 4),
        "reobserve_fraction": round(max(0.0, reobserve_s - noop_s) / full_s, 5),
        "reobserve_fraction_gross": round(reobserve_s / full_s, 5),
        "peak_mb": memory["peak_mb"],
        "peak_mb_50": memory_50["peak_mb"],
        "peak_growth_mb": round(memory["peak_mb"] - memory_50["peak_mb"], 1),
        "targets": {
            "ratio_vs_json_loads": "<= 1.0",
            "cpu_ratio_vs_json_loads": "<= 1.0",
            "reobserve_fraction": "< 0.01",
            "peak_mb": "< 100",
            "peak_mb_50": "< 100",
            "peak_growth_mb": "< 20",
        },
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        print(json.dumps(run(Path(tmp)), indent=2))
