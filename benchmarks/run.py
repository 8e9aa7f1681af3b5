"""`make bench`: run every benchmarks/bench_*.py, print a table, write results.json.

Each bench module exposes `run(workdir: Path) -> dict` and measures against a baseline
taken in the same run (ratios, never absolute timings checked in tests). A bench may
return "ratio", "target" (e.g. ">= 10" or "<= 1.0") and any other numbers it measured.
`python benchmarks/run.py history observe` runs a subset.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _meets(value: object, target: str | None) -> str:
    if not isinstance(value, (int, float)) or not target:
        return ""
    op, _, number = target.partition(" ")
    bound = float(number)
    ok = {"<=": value <= bound, "<": value < bound, ">=": value >= bound, ">": value > bound}.get(op)
    return "" if ok is None else ("yes" if ok else "NO")


def _flatten(name: str, result: dict) -> list[tuple[str, str, str, str]]:
    rows = []
    for key, value in result.items():
        if key.startswith("_") or key == "targets":
            continue
        target = result.get("targets", {}).get(key)
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        rows.append((f"{name}.{key}", shown, target or "", _meets(value, target)))
    return rows


def main(argv: list[str]) -> int:
    wanted = set(argv)
    benches = sorted(HERE.glob("bench_*.py"))
    results: dict[str, dict] = {}
    os.environ.setdefault("EVOLVE_HOME", tempfile.mkdtemp(prefix="evolve-bench-home-"))
    for path in benches:
        name = path.stem.removeprefix("bench_")
        if wanted and name not in wanted:
            continue
        sys.stderr.write(f"bench {name} …\n")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"evolve-bench-{name}-") as tmp:
            try:
                results[name] = _load(path).run(Path(tmp))
            except Exception:
                results[name] = {"error": traceback.format_exc(limit=3).splitlines()[-1]}
                traceback.print_exc()
        results[name]["_seconds"] = round(time.perf_counter() - started, 2)
    rows = [row for name, result in results.items() for row in _flatten(name, result)]
    width = max((len(r[0]) for r in rows), default=10)
    print(f"{'measure'.ljust(width)}  {'value':>12}  {'target':<10}  met")
    for measure, value, target, met in rows:
        print(f"{measure.ljust(width)}  {value:>12}  {target:<10}  {met}")
    out = HERE / "results.json"
    payload = {
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "results": results,
    }
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"\nwritten: {out}")
    return 1 if any("error" in r for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
