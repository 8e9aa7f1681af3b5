"""tests/hearing/answer_check.py: the answer's features, the blind sets unopened, the fixed choice."""

from __future__ import annotations

import json

from tests.hearing import answer_check, learned
from tests.hearing import eval as hearing_eval
from tests.hearing.answer_check import Scored


def _message(**fields: object) -> dict:
    said = "the vis library sets group.visible itself, less work"  # no cue the rules hear alone
    return {"text": said, "agent_before": "I loop over the items.", **fields}


def test_the_answer_is_read_folded_as_the_rules_fold():
    """A curly apostrophe, capitals and a Chinese apology give the same features as their plain forms."""
    english = learned.features(_message(agent_after="You’re RIGHT — let me fix it."), "answer")
    assert {"answer opens:you", "answer pair:re_right", "answer word:fix"} <= set(english)
    chinese = learned.features(_message(agent_after="抱歉，我來修復"), "answer")  # Traditional folded
    assert {"answer chars:抱歉", "answer chars:来修"} <= set(chinese)
    assert all(name.startswith("answer ") for name in english | chinese)


def test_a_message_without_an_answer_keeps_its_other_features():
    silent = learned.features(_message(), "answer+cues+rule")
    answered = learned.features(_message(agent_after="Here is the new loop."), "answer+cues+rule")
    assert learned.features(_message(), "answer") == {}
    assert silent and not any(name.startswith("answer ") for name in silent)
    assert {name: value for name, value in answered.items() if not name.startswith("answer ")} == silent


def test_the_rules_verdict_reads_the_answer_as_evolve_classify_does():
    """An answer opening "Sorry, my mistake" makes an unmarked message a correction: `rule` is on."""
    admitted = _message(agent_after="Sorry, my mistake: the media query hides it.")
    assert learned.verdict(admitted).correction and "rule" in learned.features(admitted, "answer+cues+rule")
    assert not learned.verdict(_message()).correction


def test_the_blind_sets_are_never_opened_when_reading(tmp_path, monkeypatch):
    row = {"id": "x-1", "text": "still failing", "agent_before": "I fixed it", "label": "yes-clear"}
    (tmp_path / "grown-read.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    for blind in answer_check.BLIND:
        (tmp_path / f"{blind}.jsonl").write_text("not json: opening it would fail\n", encoding="utf-8")
    monkeypatch.setattr(hearing_eval, "HERE", tmp_path)
    assert list(answer_check.read_sets()) == ["grown-read"]


def test_the_candidate_must_reach_the_precision_floor_before_its_f1_counts():
    """A cut with better F1 but P < 0.70 loses to one at P >= 0.70."""
    scored = (
        [Scored(clear=True, probability=0.9, rule=False)] * 7
        + [Scored(clear=False, probability=0.9, rule=False)] * 3
        + [Scored(clear=True, probability=0.4, rule=False)] * 8
        + [Scored(clear=False, probability=0.4, rule=False)] * 6
    )
    variant, mode, cut, counts = answer_check.pick({"answer": scored})
    assert (variant, mode) == ("answer", "alone") and 0.4 < cut <= 0.9
    assert counts.precision == 0.7 and counts.recall == 7 / 15


def test_the_or_and_and_detectors_join_the_rules_verdict():
    heard_by_rules = Scored(clear=True, probability=0.2, rule=True)
    heard_by_model = Scored(clear=True, probability=0.8, rule=False)
    assert answer_check.says("or", 0.5)(heard_by_rules) and answer_check.says("or", 0.5)(heard_by_model)
    assert not answer_check.says("and", 0.5)(heard_by_rules) and not answer_check.says("and", 0.5)(
        heard_by_model
    )
    assert answer_check.says("rules", 0.5)(heard_by_rules) and not answer_check.says("alone", 0.5)(
        heard_by_rules
    )


def test_average_precision_ranks_by_probability():
    ranked = [Scored(True, 0.9, False), Scored(False, 0.8, False), Scored(True, 0.7, False)]
    assert answer_check.average_precision(ranked) == (1 + 2 / 3) / 2
    assert answer_check.average_precision([Scored(False, 0.5, False)]) == 0.0
