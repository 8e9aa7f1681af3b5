"""Hearing: what judging one message costs, in-process and through `evolve classify`.

The messages are the dev set's (../shared/data/corrections/dev.jsonl: real messages with the
agent's text before each), or, without it, a few hundred made here. Measured in the same run:
- `us_per_message`: `hearing.hear` on every message (the agent's text before it included),
  the median of ROUNDS passes, in microseconds. Target <= 1000 (1 ms per message).
- `ratio_vs_json_loads`: that over decoding the same JSON line (what any reader of the
  message pays first).
- `command_us_per_message`: `evolve classify` over REPEAT copies of the set in one process,
  start-up included, per message.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROUNDS = 7
REPEAT = 20
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from evolve.transcripts.classify import BUILT_IN  # noqa: E402
from evolve.transcripts.hearing import hear  # noqa: E402
from tests.shared_data import SHARED  # noqa: E402

DEV = SHARED / "data" / "corrections" / "dev.jsonl"


def _messages() -> list[dict]:
    if DEV.is_file():
        rows = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [
            {
                "text": r["text"],
                "agent_before": r.get("agent_before") or "",
                "first": bool(r.get("first_message")),
            }
            for r in rows
        ]
    said = "Done: I updated the config and the tests pass now. Anything else?"
    texts = ["still failing", "Add a README", "We use pnpm here, not npm", "why did you delete it?", "ok go"]
    return [{"text": f"{t} ({i})", "agent_before": said, "first": False} for i in range(60) for t in texts]


def _best_pass(fn, items) -> float:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for item in items:
            fn(item)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run(workdir: Path) -> dict:
    messages = _messages()
    lexicons = BUILT_IN.lexicons()
    lines = [json.dumps(m, ensure_ascii=False) for m in messages]
    hear(lexicons, "warm up", "the lexicons load once")
    judged = _best_pass(lambda m: hear(lexicons, m["text"], m["agent_before"], first=m["first"]), messages)
    decoded = _best_pass(json.loads, lines)
    stdin = workdir / "messages.jsonl"
    stdin.write_text("\n".join(lines * REPEAT) + "\n", encoding="utf-8")
    started = time.perf_counter()
    with stdin.open("rb") as handle:
        subprocess.run(
            [sys.executable, "-P", "-m", "evolve", "--home", str(workdir / "home"), "classify"],
            stdin=handle,
            stdout=subprocess.DEVNULL,
            check=True,
        )
    command = time.perf_counter() - started
    return {
        "messages": len(messages),
        "us_per_message": round(judged / len(messages) * 1e6, 1),
        "ratio_vs_json_loads": round(judged / decoded, 1),
        "command_us_per_message": round(command / (len(messages) * REPEAT) * 1e6, 1),
        "targets": {"us_per_message": "<= 1000"},
    }
