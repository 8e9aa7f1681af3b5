"""The replay corpus loads, replays through the real reflection path, and records live answers."""

from __future__ import annotations

import functools
import json

import pytest

from evolve.reflect.compose import compose
from evolve.reflect.operations import AnswerError, SkillState
from tests.corpus import eval as corpus_eval
from tests.corpus.loader import cases, load

SCRIPTED = ["typed-correction", "secrets", "skill-ineffective", "person-skill"]


@functools.cache
def replayed(name: str) -> corpus_eval.Round:
    """The case's one recorded round, replayed once per run: two tests read the same replay."""
    (round_,) = corpus_eval.evaluate(load(name))
    return round_


def test_every_case_loads_and_every_answer_is_an_apply_reflection_input() -> None:
    found = cases()
    assert {c.name for c in found} >= {*SCRIPTED, "five-largest", "real-cli-release", "spotter"}
    for case in found:
        assert case.description and case.answers(), case.name
        assert case.shared or case.own, case.name
        for path in case.answers():
            answer = case.answer(path)
            try:  # well-formed as a whole: only single operations may be refused
                compose(answer, SkillState.build([], ""))
            except AnswerError as exc:
                pytest.fail(f"{path}: {exc}")
            assert len(answer["operations"]) >= 2 and answer["summary"], path


@pytest.mark.parametrize("name", SCRIPTED)
def test_a_scripted_history_replays_through_the_reflection_path(name) -> None:
    case = load(name)
    round_ = replayed(name)
    evidence = round_.evidence
    assert round_.tokens <= round_.budget
    assert evidence["signalled_runs_shown"] == evidence["signalled_runs"] >= 1
    assert evidence["errors_with_cause_pct"] == 100.0 and evidence["user_words_pct"] == 100.0
    assert round_.proposed == len(case.answer(case.answers()[0])["operations"])
    assert round_.landed + round_.waiting >= 1 and round_.status in ("committed", "proposed")
    assert round_.landed + round_.waiting + len(round_.rejected) + round_.unchanged == round_.proposed


def test_the_planted_secrets_are_counted_and_never_sent(fake_messages_api, monkeypatch, tmp_path) -> None:
    case = load("secrets")
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "anthropic")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-fake-server")
    recorded = case.answer(case.answers()[0])
    fake_messages_api.reply_tool(recorded, model="claude-fake-1")
    (round_,) = corpus_eval.evaluate(case, live=True, record_to=tmp_path / "kept")
    (request,) = fake_messages_api.requests
    sent = json.dumps(request.body)
    assert "## Conversations" in sent and "1Password" in sent
    assert all(secret not in sent for secret in case.secrets.values())
    # the token in the request, the key in the export and in its error, the mysql password
    # (the JSON config the agent wrote is not shown: file contents never are)
    assert round_.evidence["redactions"] >= 4
    assert round_.answer == "live" and round_.proposed == len(recorded["operations"])
    # the live answer is kept as a new recording, replayable like the others
    assert round_.recorded_to is not None and round_.recorded_to.parent == tmp_path / "kept"
    assert round_.recorded_to.name.startswith("live-claude-fake-1-")
    assert json.loads(round_.recorded_to.read_text()) == recorded


def test_the_eval_prints_a_row_per_history_and_refuses_live_without_a_backend(capsys, monkeypatch) -> None:
    assert corpus_eval.main(["typed-correction", "skill-ineffective"]) == 0
    out = capsys.readouterr().out
    first = out.split("\n\n")[0]  # the replay table; the eval cases' table follows
    header, *rows = [line for line in first.splitlines() if not line.startswith("  ")]
    assert header.split()[:3] == ["case", "answer", "tokens"]
    assert [row.split()[0] for row in rows] == ["typed-correction", "skill-ineffective"]
    monkeypatch.setenv(corpus_eval.LIVE, "1")
    monkeypatch.delenv("EVOLVE_MODEL_BACKEND", raising=False)
    assert corpus_eval.main([]) == 1
    assert "needs a backend" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name", ["typed-correction", "skill-ineffective", "adherence-skill", "adherence-memo"]
)
def test_each_recorded_lessons_eval_case_is_valid_and_proves_its_lesson(name) -> None:
    case = load(name)
    answer = case.answer(case.answers()[0])
    measured = replayed(name).cases
    assert measured is not None and not measured.refused
    assert measured.with_case == sum("eval" in op for op in answer["operations"]) == len(measured.replayed)
    assert [(r.lesson, r.with_lesson, r.without_lesson) for r in measured.replayed if not r.proves] == []


def test_the_fake_agent_is_graded_as_claude_plugin_eval_grades() -> None:
    from tests.corpus.evalcases import Behaviour, grade

    ran = Behaviour(
        (("Bash", {"command": "pnpm add lodash"}), ("Write", {"file_path": "/w/notes.txt"})), "Done"
    )
    sloppy = {
        "type": "regex",
        "name": "sloppy",
        "target": "trace",
        "match": "not_contains",
        "pattern": "npm (add|i)",
    }
    bounded = {**sloppy, "name": "bounded", "pattern": r"\bnpm (add|i)\b"}
    used = {"type": "tool_used", "name": "used", "tool": "Bash", "input_match": '^\\{"command":"pnpm add'}
    never = {"type": "tool_used", "name": "never", "tool": "Bash", "min": 0, "max": 0}
    said = {"type": "regex", "name": "said", "match": "count:1", "pattern": "Done"}
    assert grade([sloppy, bounded, used, never, said], ran, {"notes.txt"}) == (False, ["sloppy", "never"])
    assert grade([{"type": "file_exists", "name": "f", "path": "notes.txt"}], ran, {"notes.txt"})[0]


def test_a_shared_history_replays_too(claude_data) -> None:
    (round_,) = corpus_eval.evaluate(load("real-cli-release"))
    assert round_.landed >= 1
    assert round_.evidence["user_words_shown"] == round_.evidence["user_words"] >= 3


def test_a_patch_of_a_persons_skill_waits_and_its_interim_memo_line_reaches_the_next_session(
    evolve_home, capsys
) -> None:
    from evolve.cli import main
    from evolve.home import Home
    from evolve.reflect import proposals
    from evolve.reflect.run import reflect
    from tests.helpers import bundle_of, git_out

    case = load("person-skill")
    home = Home.resolve()
    agent = case.setup(home)
    skill = agent.path / "skills" / "db-migrate" / "SKILL.md"
    theirs = skill.read_bytes()
    # the bundle says whose the skill is, and the answer was written reading it
    heading = "### db-migrate · its run ended in a real error (skill_ineffective); invoked in the runs below"
    assert f"{heading} · a person wrote all of it: a patch touching their lines waits for their review" in (
        bundle_of(agent).text
    )
    answer = case.answer(case.answers()[0])
    outcome = reflect(home, agent.name, force=True, client=corpus_eval.Recorded(answer))
    assert outcome.status == "committed", outcome.reason
    interim = case.expect["memo_line"]
    # the memo line landed at once; the person's skill is theirs, byte for byte; the patch waits
    assert interim in git_out(agent.path, "show", "main:memo.md")
    assert skill.read_bytes() == theirs
    assert git_out(agent.path, "show", "main:skills/db-migrate/SKILL.md") == theirs.decode().rstrip("\n")
    (waiting,) = proposals.pending(agent)
    assert "`make migrate`. Never" in git_out(
        agent.path, "show", f"{waiting.branch}:skills/db-migrate/SKILL.md"
    )
    # the next session: the memo line, and one line naming the fix that waits for review
    capsys.readouterr()
    assert main(["prompt", agent.name]) == 0
    shown = capsys.readouterr().out
    note = "(A fix to the skill db-migrate waits for the person's review: `evolve proposals api`."
    assert interim in shown and note in shown
    assert shown.index(interim) < shown.index(note) < shown.index("## Skills")
    # the person takes the fix: it lands, and no session is told it waits any more
    assert main(["accept", agent.name, waiting.id]) == 0
    capsys.readouterr()
    assert main(["prompt", agent.name]) == 0
    shown = capsys.readouterr().out
    assert "waits for the person's review" not in shown and b"`make migrate`. Never" in skill.read_bytes()
