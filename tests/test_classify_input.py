"""`evolve classify` reads what a careless person pipes in: each line judged, a bad one named, none lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from evolve.commands.classifying import classify_lines
from evolve.transcripts.lexicons import load_lexicons


def test_classify_reads_a_file_that_starts_with_a_byte_order_mark():
    [(heard, problem)] = classify_lines(load_lexicons(), ['\ufeff{"text": "still failing"}\r\n'])
    assert not problem and heard is not None and heard.correction


def test_classify_reads_a_line_nested_too_deep_as_one_bad_line():
    lines = ["[" * 100_000, '{"text": "still failing", "agent_before": "I fixed it"}']
    (first, problem), (second, _) = classify_lines(load_lexicons(), lines)
    assert (first, problem) == (None, "line 1: nested too deep")
    assert second is not None and second.correction


def test_classify_quotes_a_lone_surrogate_as_a_character_it_can_write():
    lines = ['{"text": "wrong\\ud800 path", "agent_before": "I fixed it"}']
    [(heard, _)] = classify_lines(load_lexicons({"en": ["re:wrong.{0,3}"]}), lines)
    assert heard is not None and heard.cue is not None and "wrong\ufffd" in heard.cue
    heard.cue.encode()


def test_a_cue_is_quoted_alike_whatever_the_hash_seed(tmp_path):
    """Two phrases open at one place ("tu n'as pas", "… compris"): the longer is quoted, every run."""
    line = '{"text": "tu n\'as pas compris ce que je voulais", "agent_before": "Voilà, c\'est corrigé."}\n'
    cues = set()
    for seed in range(1, 9):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "EVOLVE_HOME": str(tmp_path)}
        done = subprocess.run(
            [sys.executable, "-m", "evolve", "classify"], input=line, env=env, capture_output=True, text=True
        )
        cues.add(done.stdout)
    assert len(cues) == 1 and "tu n'as pas compris”" in cues.pop()


def test_classify_hears_a_reply_to_a_stopped_agent_only_with_after_error():
    """`after_error` carries the stop: the same reply turns a stopped agent, and is a new task otherwise."""
    stopped = "Let me start by rewriting the loader:"
    reply = "write it in utils/loading.py, not in the models module please"
    statement = "our loader already lives in utils/loading.py, beside the writer"
    lines = [
        json.dumps({"text": reply, "agent_before": stopped, "after_error": True}),
        json.dumps({"text": reply, "agent_before": stopped, "after_error": False}),
        json.dumps({"text": statement, "agent_before": stopped, "after_error": True}),
    ]
    (turned, _), (asked, _), (told, _) = classify_lines(load_lexicons(), lines)
    assert turned is not None and turned.correction and "stopped" in (turned.cue or "")
    assert asked is not None and not asked.correction
    assert told is not None and told.correction and told.kind == "fact", told.why


def test_the_eval_leaves_an_excluded_set_out_unread(tmp_path, monkeypatch, capsys):
    """`python -m tests.hearing.eval --exclude NAME`: a set being built blind is never opened."""
    from tests.hearing import eval as hearing_eval

    row = {"id": "x-1", "text": "still failing", "agent_before": "I fixed it", "label": "yes-clear"}
    (tmp_path / "grown-read.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (tmp_path / "grown-blind99.jsonl").write_text("not json: opening it would fail\n", encoding="utf-8")
    monkeypatch.setattr(hearing_eval, "HERE", tmp_path)
    assert hearing_eval.main(["grown", "--exclude", "grown-blind99", "--exclude=other.jsonl"]) == 0
    out = capsys.readouterr().out
    assert "grown-blind99 left out unread" in out and "grown: grown-read" in out
    misses, names, exclude, with_answers = hearing_eval._options(
        ["--misses", "--exclude=grown-blind99.jsonl", "dev"]
    )
    assert misses and names == ["dev"] and exclude == ["grown-blind99.jsonl"] and with_answers
    assert [name for name, _ in hearing_eval.sets(["grown"], exclude)] == ["grown: grown-read"]


def test_the_eval_gives_each_message_the_agents_answer_unless_told_not_to(tmp_path, monkeypatch, capsys):
    """agent-after.jsonl: the agent's answer after a message is its `agent_after` (not --without-answers)."""
    from tests.hearing import eval as hearing_eval

    said = "the vis library sets group.visible itself, less work"
    row = {"id": "x-1", "text": said, "agent_before": "I loop over the items.", "label": "yes-clear"}
    (tmp_path / "grown-read.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    answer = {"id": "x-1", "agent_after": "You're absolutely right. The media query hides it."}
    (tmp_path / "agent-after.jsonl").write_text(json.dumps(answer) + "\n", encoding="utf-8")
    monkeypatch.setattr(hearing_eval, "HERE", tmp_path)
    ((_, items),) = hearing_eval.sets(["grown"])
    ((_, heard),) = hearing_eval.judged(items)
    assert heard.correction and heard.cue == 'the agent answered "you\'re absolutely right"'
    ((_, alone),) = hearing_eval.sets(["grown"], with_answers=False)
    assert "agent_after" not in alone[0]
    assert hearing_eval._options(["--without-answers"])[3] is False
