"""Patterns: the linear-time door (evolve.patterns) against Python's re, in the same run.

- `compile_us` / `re_compile_us`: median µs to compile one of ORDINARY (transient- and
  guard-like patterns, case ignored), the door against re's compile (its cache purged).
- `search_us_per_kb` / `re_search_us_per_kb` / `search_vs_re`: a search that reads all of a
  100 kB error log without a match (the common case: every character is read), median over
  ORDINARY, warm (the door's states built by a first search, as a classifier's are).
- `first_search_us_per_kb`: the same with a fresh pattern (its states built on the way).
- `pathological_ms_100kb`: `(x+x+)+y` on 100 kB of x's through the door;
  `re_pathological_ms_22`: the same pattern in re on 22 x's (each more x doubles it).
- `import_ms`: `import evolve.patterns` in a fresh interpreter (`-X importtime`).
- `observe_user_patterns_ratio`: observe of real transcripts with a person's transient and
  correction patterns over observe with the defaults (which never use the door), median of
  interleaved rounds.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_observe import source_files

from evolve import patterns
from evolve.observe import ingest as observe_mod
from evolve.store import ledger
from evolve.transcripts import classify

ORDINARY = [
    r"\bconnection (?:was )?(?:reset|refused|aborted)\b",
    r"\bE(?:CONNRESET|CONNREFUSED|HOSTUNREACH)\b",
    r"\b(?:HTTP|status)[ /:]*(?:429|502|503|504)\b",
    r"tunnel dropped",
    r"\bnpm (?:i|install|add)\b",
    r"(?:^|\s)rm -rf [/~]",
    r"\bcurl\b[^|\n]*\|\s*(?:ba|z)?sh\b",
    r"\.env(?:\.\w+)?$",
]
ROUNDS = 5


def _median_us(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def _log(size: int) -> str:
    lines = [
        "npm ERR! code ELIFECYCLE",
        "    at Module._compile (node:internal/modules/cjs/loader:1105:14)",
        "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200",
        "error[E0308]: mismatched types --> src/main.rs:12:5",
        'Traceback (most recent call last): File "app.py", line 3, in <module>',
    ]
    text = "\n".join(lines[i % len(lines)] + f" #{i}" for i in range(size // 40))
    return text[:size]


def _compile_and_search() -> dict:
    text = _log(100_000)
    kb = len(text) / 1000
    compile_us, re_compile_us, warm, first, re_search = [], [], [], [], []
    for source in ORDINARY:
        compile_us.append(_median_us(lambda s=source: patterns.compile(s, ignore_case=True), 50))

        def re_compile(s: str = source) -> None:
            re.purge()
            re.compile(s, re.IGNORECASE | re.MULTILINE)

        re_compile_us.append(_median_us(re_compile, 50))
        assert patterns.compile(source, ignore_case=True).search(text) is None, source
        first.append(_median_us(lambda s=source: patterns.compile(s, ignore_case=True).search(text), 3) / kb)
        door = patterns.compile(source, ignore_case=True)
        door.search(text)
        warm.append(_median_us(lambda d=door: d.search(text), 5) / kb)
        regex = re.compile(source, re.IGNORECASE | re.MULTILINE)
        re_search.append(_median_us(lambda r=regex: r.search(text), 5) / kb)
    median = statistics.median
    return {
        "compile_us": round(median(compile_us), 1),
        "re_compile_us": round(median(re_compile_us), 1),
        "search_us_per_kb": round(median(warm), 2),
        "first_search_us_per_kb": round(median(first), 2),
        "re_search_us_per_kb": round(median(re_search), 2),
        "search_vs_re": round(median(warm) / median(re_search), 2),
    }


def _pathological() -> dict:
    door = patterns.compile("(x+x+)+y")
    text = "x" * 100_000
    door_ms = _median_us(lambda: door.search(text), 3) / 1000
    regex = re.compile("(x+x+)+y")
    re_ms = _median_us(lambda: regex.search("x" * 22), 1) / 1000
    return {"pathological_ms_100kb": round(door_ms, 2), "re_pathological_ms_22": round(re_ms, 1)}


def _import_ms() -> float:
    """`import evolve.patterns` as `python -X importtime` counts it (the package included)."""

    def once() -> float:
        code = "import evolve.patterns"
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
        ).stderr
        line = next(ln for ln in err.splitlines() if ln.rstrip().endswith("| evolve.patterns"))
        return int(line.split("|")[1]) / 1000

    return round(statistics.median(once() for _ in range(9)), 2)


def _observe_ratio(workdir: Path) -> dict:
    files, real = source_files()  # the real transcripts of ../shared, else evolve's examples
    users = classify.Classifier(
        ["tunnel dropped", r"\bupstream (?:gone|vanished)\b", "!from staging"],
        {"en": [r"re:\bthat(?: i|')s not what i (?:asked|meant)\b", "guard:re:no worries"]},
    ).check()

    def once(name: str, classifier: classify.Classifier) -> float:
        conn = ledger.connect(workdir / f"{name}.db")
        try:
            started = time.perf_counter()
            observe_mod.observe(
                conn, "bench", [(str(f), "claude_code") for f in files], classifier=classifier
            )
            return time.perf_counter() - started
        finally:
            conn.close()
            (workdir / f"{name}.db").unlink()

    ratios = []
    for number in range(ROUNDS):  # alternate who goes first: the machine's speed drifts
        pair = [("default", classify.BUILT_IN), ("user", users)]
        times = dict((name, once(f"{name}{number}", c)) for name, c in pair[:: 1 if number % 2 else -1])
        ratios.append(times["user"] / times["default"])
    return {"observe_user_patterns_ratio": round(statistics.median(ratios), 3), "observe_real_data": real}


def run(workdir: Path) -> dict:
    return {
        **_compile_and_search(),
        **_pathological(),
        "import_ms": _import_ms(),
        **_observe_ratio(workdir),
        "targets": {"observe_user_patterns_ratio": "<= 1.1", "pathological_ms_100kb": "< 1000"},
    }
