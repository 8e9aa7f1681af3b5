"""The scheduler's rules, pure, with an injected clock: each rule in order, reasons in words."""

from __future__ import annotations

import pytest

from evolve.schedule.rules import DAY, HOUR, AgentState, Rules, ago, plan_cycle

NOW = 1_800_000_000.0
RULES = Rules(min_gap_hours=4, force_after_days=7, max_agents_per_cycle=5)


def agent(name="a", **kw) -> AgentState:
    base = {
        "dirty": True,
        "created_at": NOW - 30 * DAY,
        "last_reflection_at": NOW - 1 * DAY,
        "best_score": 0.9,
        "worth_reflecting": True,
        "waiting_since": NOW - HOUR,
    }
    return AgentState(name, **{**base, **kw})


def decide(state: AgentState, rules: Rules = RULES, now: float = NOW) -> str:
    plan = plan_cycle([state], rules, now)
    return "selected" if state.name in plan.selected else plan.skipped[state.name]


def test_a_dirty_agent_above_the_threshold_is_selected():
    assert decide(agent()) == "selected"


def test_dirty_gate_comes_first():
    # nothing new: skipped whatever else holds (paused, busy, a high old score, long waiting)
    assert decide(agent(dirty=False, paused=True, busy=True)) == "nothing new"
    assert decide(agent(dirty=False, last_reflection_at=NOW - 30 * DAY)) == "nothing new"


def test_paused_agents_are_skipped():
    assert decide(agent(paused=True)) == "paused"
    assert decide(agent(paused=True, last_reflection_at=NOW - HOUR)) == "paused"


@pytest.mark.parametrize(
    "since, reason",
    [
        (2 * HOUR, "reflected 2 h ago, gap 4 h"),
        (35 * 60, "reflected 35 min ago, gap 4 h"),
        (4 * HOUR - 1, "reflected 4 h ago, gap 4 h"),
    ],
)
def test_minimum_gap_since_the_last_reflection(since, reason):
    assert decide(agent(last_reflection_at=NOW - since)) == reason


def test_the_gap_ends_exactly_at_min_gap_hours():
    assert decide(agent(last_reflection_at=NOW - 4 * HOUR)) == "selected"
    moved = NOW + 10 * HOUR  # the same agent, later: the injected clock decides
    assert decide(agent(last_reflection_at=NOW - 2 * HOUR), now=moved) == "selected"


def test_below_the_threshold_is_skipped_with_its_best_score():
    state = agent(best_score=0.5, worth_reflecting=False)
    assert decide(state) == "below threshold (best pending score 0.50)"


def test_forced_after_seven_days_when_something_new_exists():
    state = agent(best_score=0.0, worth_reflecting=False, last_reflection_at=NOW - 8 * DAY)
    plan = plan_cycle([state], RULES, NOW)
    assert plan.selected == ["a"] and plan.forced == ["a"]
    six_days = agent(best_score=0.0, worth_reflecting=False, last_reflection_at=NOW - 6 * DAY)
    assert decide(six_days).startswith("below threshold")


def test_an_agent_that_never_reflected_is_forced_seven_days_after_its_creation():
    never = {"last_reflection_at": None, "best_score": 0.2, "worth_reflecting": False}
    assert decide(agent(created_at=NOW - 8 * DAY, **never)) == "selected"
    assert decide(agent(created_at=NOW - 2 * DAY, **never)).startswith("below threshold")
    # and no gap applies to it: a new agent with a correction reflects at once
    assert decide(agent(created_at=NOW - 60, last_reflection_at=None)) == "selected"


def test_cap_keeps_the_highest_scores_then_the_longest_waiting():
    states = [
        agent("low", best_score=0.75, waiting_since=NOW - 50 * HOUR),
        agent("top", best_score=2.5, waiting_since=NOW - 1 * HOUR),
        agent("tie-new", best_score=0.9, waiting_since=NOW - 1 * HOUR),
        agent("tie-old", best_score=0.9, waiting_since=NOW - 9 * HOUR),
        agent("mid", best_score=1.7, waiting_since=NOW - 2 * HOUR),
        agent(
            "forced",
            best_score=0.0,
            worth_reflecting=False,
            last_reflection_at=NOW - 9 * DAY,
            waiting_since=NOW - 90 * HOUR,
        ),
        agent("clean", dirty=False, best_score=3.0),
    ]
    plan = plan_cycle(states, Rules(max_agents_per_cycle=3), NOW)
    assert plan.selected == ["top", "mid", "tie-old"]
    assert plan.skipped["tie-new"] == plan.skipped["low"] == "cap: at most 3 agents per cycle"
    assert plan.skipped["forced"].startswith("cap") and plan.forced == []
    assert plan.skipped["clean"] == "nothing new"
    assert plan.to_dict() == {"selected": plan.selected, "skipped": plan.skipped}


def test_a_busy_agent_is_skipped_without_taking_a_slot():
    states = [agent("busy", best_score=3.0, busy=True), agent("b"), agent("c")]
    plan = plan_cycle(states, Rules(max_agents_per_cycle=2), NOW)
    assert plan.selected == ["b", "c"] and plan.skipped == {"busy": "busy"}
    # other reasons stay more telling than "busy"
    assert decide(agent(busy=True, paused=True)) == "paused"


def test_durations_read_like_a_person_says_them():
    assert [ago(s) for s in (30, 35 * 60, 2 * HOUR, 30 * HOUR, 3 * DAY)] == [
        "0 min",
        "35 min",
        "2 h",
        "30 h",
        "3 d",
    ]


def test_the_next_cycle_comes_sooner_for_an_agents_first_lesson():
    """Newcomer 9: a first qualifying run brings the cycle `first_reflection_minutes` after it."""
    from evolve.schedule.rules import next_cycle

    now, every, first = 1_000_000.0, 12 * HOUR, 300.0
    assert next_cycle(None, every, {}, first, now) == (now, "no cycle ran yet")
    last = now - HOUR
    assert next_cycle(last, every, {}, first, now) == (last + every, "every 12 h")
    worthy = {"b": now - 10, "a": now - 60}
    assert next_cycle(last, every, worthy, first, now) == (now - 60 + first, "a's first reflection")
    late = {"a": last + every - 100}  # the regular cycle comes first anyway
    assert next_cycle(last, every, late, first, now) == (last + every, "every 12 h")
