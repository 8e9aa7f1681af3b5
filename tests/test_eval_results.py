"""Reading `claude plugin eval`'s aggregate-result.json: only a case whose every run scored is full.

The shapes are those the pinned 2.1.332 writes (tests/test_eval.py runs it for real); these
are the cases a fake model cannot easily provoke: a run that failed on its own (a timeout)
and runs that never came.
"""

from __future__ import annotations

from evolve.evaluate.results import ERROR, FULL, PARTIAL, case_results, load_errors


def run(score: float, error: str | None = None, explanation: str = "matched") -> dict:
    grader = {"name": "g", "passed": score == 1, "weight": 1, "explanation": explanation, "scored": True}
    return {
        "score": score,
        "passed": score == 1,
        "costUsd": 0.25,
        "judgeCostUsd": 0,
        "error": error,
        "graders": [grader],
    }


def aggregate(*cases: dict, partial: bool = False) -> dict:
    return {"schemaVersion": 1, "partial": partial, "cases": list(cases)}


def case(name: str, with_: list[dict], without: list[dict], runs: int = 3) -> dict:
    return {
        "name": name,
        "dir": f"evals/{name}",
        "runsPerCase": runs,
        "arms": {"with": with_, "without": without},
    }


def test_a_case_is_full_only_when_every_run_of_both_arms_scored():
    found = case_results(
        aggregate(
            case("a", [run(1), run(1), run(0)], [run(0)] * 3),
            case("b", [run(1), run(0, error="timeout after 300s")], [run(0), run(0)], runs=2),
            case("c", [run(1), run(1)], [run(0), run(0)]),  # 3 asked, 2 came
        ),
        ["a", "b", "c", "d"],
        None,
        {"d": "invalid case.yaml: graders.0.type: Invalid discriminator value"},
    )
    by = {r.case: r for r in found}
    assert (by["a"].status, by["a"].score_with, by["a"].score_without, by["a"].delta) == (
        FULL,
        0.666667,
        0,
        0.666667,
    )
    assert (by["a"].runs_with, by["a"].runs_without, by["a"].cost_usd) == (3, 3, 1.5)
    assert (by["b"].status, by["b"].detail, by["b"].delta) == (
        PARTIAL,
        "a run failed: timeout after 300s",
        None,
    )
    assert (by["b"].runs_with, by["b"].score_with) == (1, 1)  # the failed run is no score
    assert (by["c"].status, by["c"].detail) == (PARTIAL, "runs missing (with, without)")
    assert (by["d"].status, by["d"].runs_with) == (ERROR, 0)
    assert by["d"].detail == "not loaded: invalid case.yaml: graders.0.type: Invalid discriminator value"


def test_runs_asked_for_win_over_the_cases_own_and_a_partial_run_makes_every_case_partial():
    two = case("a", [run(1), run(1)], [run(0), run(0)])
    assert case_results(aggregate(two), ["a"], 2, {})[0].status == FULL
    stopped = case_results(aggregate(two, partial=True), ["a", "b"], 2, {})
    assert [(r.status, r.detail) for r in stopped] == [
        (PARTIAL, "the run stopped early"),
        (PARTIAL, "not run: the run stopped early"),
    ]


def test_a_grader_that_throws_is_an_error_whatever_it_scored():
    broken = run(0, explanation="grader threw: Invalid regular expression: missing )")
    [found] = case_results(aggregate(case("a", [broken], [broken], runs=1)), ["a"], None, {})
    assert (found.status, found.delta) == (ERROR, None)
    assert found.detail == "a grader is broken: grader threw: Invalid regular expression: missing )"


def test_the_cases_the_harness_could_not_load_are_read_from_its_output():
    output = (
        "Ablation: defaulting to with-without\n"
        "✗ /home/p/.local/share/evolve/run/eval-shop-x/plugin/evals/3f2a9c1b0d4e: invalid case.yaml:   "
        "graders.0.type: Invalid discriminator value. Expected 'regex' | 'tool_order'\n"
        "Couldn't load 1 case file\n"
    )
    assert load_errors(output) == {
        "3f2a9c1b0d4e": "invalid case.yaml: graders.0.type: Invalid discriminator value. "
        "Expected 'regex' | 'tool_order'"
    }


def test_a_score_that_is_no_number_from_0_to_1_fails_its_run_never_a_result():
    """A harness that writes garbage (`1e308`, `"NaN"`, a run that is no object) gives no Δ."""
    runs = [run(1), {**run(1), "score": 1e308}, {**run(1), "score": "NaN"}, {**run(1), "score": float("nan")}]
    for bad in runs[1:]:
        [found] = case_results(aggregate(case("c", [run(1), bad, run(1)], [run(0)] * 3)), ["c"], None, {})
        assert found.status == PARTIAL and found.delta is None and found.score_with == 1
        assert "is no number from 0 to 1" in found.detail
    [found] = case_results(aggregate(case("c", [run(1), 5, run(1)], [run(0)] * 3)), ["c"], None, {})  # type: ignore[list-item]
    assert found.status == PARTIAL and found.detail == "runs missing (with)"
