"""What one `claude plugin eval` found, per case: read from its aggregate-result.json. Pure.

A case is `full` when every run of both arms ran and scored, `partial` when the run stopped
early (interrupted, the cost ceiling: `partial` in the file) or one of its runs failed, and
`error` when it could not be scored at all: the harness could not load it (its stderr names
the case) or a grader threw (the harness scores that 0; evolve never reads it as a result).
A partial or failed case keeps what it has, and is never a result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

FULL, PARTIAL, ERROR = "full", "partial", "error"
WITH, WITHOUT = "with", "without"
THREW = "grader threw"


@dataclass(frozen=True)
class CaseResult:
    """One case's scores with and without the plugin (means over the runs that scored)."""

    case: str
    status: str
    score_with: float | None = None
    score_without: float | None = None
    runs_with: int = 0
    runs_without: int = 0
    cost_usd: float = 0.0
    detail: str = ""

    @property
    def delta(self) -> float | None:
        if self.status != FULL or self.score_with is None or self.score_without is None:
            return None
        return round(self.score_with - self.score_without, 6)


def load_errors(output: str) -> dict[str, str]:
    """Case name → why the harness could not load it, from its `✗ <case dir>: <reason>` lines."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        if not line.startswith("✗ "):
            continue
        where, _, reason = line[2:].partition(": ")
        name = PurePosixPath(where.strip()).name
        if name and reason:
            found.setdefault(name, " ".join(reason.split())[:300])
    return found


def case_results(
    aggregate: dict, cases: Iterable[str], runs: int | None, errors: dict[str, str]
) -> list[CaseResult]:
    """Each of `cases` (the case folders the run was given) as the aggregate and stderr say.

    `runs`: the runs per arm asked for (None: each case's own `runsPerCase`).
    """
    by_name = {str(case.get("name")): case for case in aggregate.get("cases") or [] if isinstance(case, dict)}
    stopped = bool(aggregate.get("partial"))
    why = str(aggregate.get("partialReason") or "the run stopped early")
    found = []
    for name in cases:
        if name in errors:
            found.append(CaseResult(name, ERROR, detail=f"not loaded: {errors[name]}"))
        elif name in by_name:
            found.append(_case(name, by_name[name], runs, why if stopped else ""))
        else:
            found.append(CaseResult(name, PARTIAL, detail=f"not run: {why}"))
    return found


def _case(name: str, case: dict, runs: int | None, stopped: str) -> CaseResult:
    arms = case.get("arms")
    arms = arms if isinstance(arms, dict) else {}
    ran = {arm: [r for r in arms.get(arm) or [] if isinstance(r, dict)] for arm in (WITH, WITHOUT)}
    scored = {
        arm: [r for r in items if not r.get("error") and _score(r) is not None] for arm, items in ran.items()
    }
    cost = sum(_number(r.get("costUsd")) + _number(r.get("judgeCostUsd")) for rs in ran.values() for r in rs)
    means = {arm: _mean([_score(r) or 0.0 for r in items]) for arm, items in scored.items()}
    threw = next(
        (
            str(g.get("explanation"))
            for rs in ran.values()
            for r in rs
            for g in r.get("graders") or []
            if isinstance(g, dict) and str(g.get("explanation") or "").startswith(THREW)
        ),
        None,
    )
    failed = next(
        (
            str(r["error"])
            if r.get("error")
            else f"its score {str(r.get('score'))[:40]!r} is no number from 0 to 1"
            for rs in ran.values()
            for r in rs
            if r.get("error") or _score(r) is None
        ),
        None,
    )
    wanted = runs or int(_number(case.get("runsPerCase")) or 1)
    short = [arm for arm in (WITH, WITHOUT) if len(scored[arm]) < wanted]
    status, detail = FULL, ""
    if threw:
        status, detail = ERROR, f"a grader is broken: {threw[:300]}"
    elif stopped or failed or short:
        status = PARTIAL
        detail = stopped or (
            f"a run failed: {failed[:300]}" if failed else f"runs missing ({', '.join(short)})"
        )
    return CaseResult(
        name,
        status,
        means[WITH],
        means[WITHOUT],
        len(scored[WITH]),
        len(scored[WITHOUT]),
        round(cost, 6),
        detail,
    )


def _score(run: dict) -> float | None:
    """A run's score: a number from 0 to 1 (anything else is no score: the run failed)."""
    value = run.get("score")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None  # NaN is not inside [0, 1] either
    return float(value)


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None
