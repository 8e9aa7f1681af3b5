"""RunBuilder: facts, rewinds, caps and resumable state, from hand-made events."""

from __future__ import annotations

import json

from evolve.transcripts.model import (
    API_ERROR,
    ASSISTANT_TEXT,
    HUMAN,
    INTERRUPT,
    MARKER,
    SKILL,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Run,
)
from evolve.transcripts.runs import TAILS_CAP, RunBuilder, mark_superseded


def human(text, uuid=None, parent=None, offset=0):
    return Event(
        HUMAN,
        text=text,
        uuid=uuid,
        parent_uuid=parent,
        offset=offset,
        end=offset + 10,
        timestamp="2026-01-01T00:00:00Z",
        cwd="/w",
        session_id="s",
    )


def call(name="Bash", tool_id="t", **kw):
    return Event(TOOL_CALL, name=name, tool_use_id=tool_id, input={"command": "x"}, **kw)


def ok(**kw):
    return Event(TOOL_RESULT, **kw)


def err(text="boom", transient=False, **kw):
    return Event(TOOL_RESULT, is_error=True, text=text, transient=transient, **kw)


def run_of(events) -> Run:
    builder = RunBuilder()
    for event in events:
        builder.feed(event)
    run = builder.open_run()
    assert run is not None
    return run


def test_error_then_success_is_recovered():
    run = run_of([human("go"), call(), err(), call(), ok()])
    assert run.errors == 1 and run.recovered and not run.ended_in_error


def test_success_then_error_ends_in_error():
    run = run_of([human("go"), call(), ok(), call(), err(), Event(ASSISTANT_TEXT, text="I give up")])
    assert run.ended_in_error and not run.recovered


def test_error_success_error_is_not_recovered():
    run = run_of([human("go"), err(), ok(), err()])
    assert run.ended_in_error and not run.recovered and run.errors == 2


def test_transient_errors_never_make_a_run_fail():
    run = run_of([human("go"), ok(), err("ETIMEDOUT", transient=True)])
    assert run.transient_errors == 1 and run.errors == 0
    assert not run.ended_in_error and not run.recovered and run.error_texts == []


def test_rejection_and_interrupt_abort():
    assert run_of([human("go"), Event(TOOL_RESULT, is_error=False, rejected=True)]).aborted
    run = run_of([human("go"), err(), Event(INTERRUPT)])
    assert run.aborted and run.ended_in_error


def test_api_errors():
    transient = run_of([human("go"), Event(API_ERROR, text="overloaded", transient=True)])
    assert transient.transient_errors == 1 and not transient.ended_in_error
    real = run_of([human("go"), ok(), Event(API_ERROR, text="400 invalid_request")])
    assert real.errors == 1 and real.ended_in_error and real.error_texts == ["400 invalid_request"]
    escalated = run_of(
        [
            human("go"),
            Event(API_ERROR, text="529", transient=True),
            Event(API_ERROR, text="401 authentication_error", continued=True),
        ]
    )
    assert escalated.errors == 1 and escalated.transient_errors == 0 and escalated.ended_in_error
    same = run_of(
        [
            human("go"),
            Event(API_ERROR, text="529", transient=True),
            Event(API_ERROR, text="529 overloaded", transient=True, continued=True),
        ]
    )
    assert same.transient_errors == 1 and same.errors == 0


def test_skills_files_and_inputs():
    run = run_of(
        [
            human("go"),
            Event(TOOL_CALL, name="Skill", tool_use_id="t1", input={"skill": "pdf"}),
            Event(SKILL, name="pdf", tool_use_id="t1"),
            Event(TOOL_CALL, name="Write", tool_use_id="t2", input={"file_path": "/a", "content": "x\n" * 9}),
            call("Edit", "t3", file_path="/a"),
            call("Edit", "t4", file_path="/b"),
        ]
    )
    assert run.tool_calls == 4 and run.skills == [{"name": "pdf", "tool_use_id": "t1"}]
    assert run.files_written == ["/a", "/b"]
    # the meaningful arguments only: a file's contents are no keyword to match
    assert run.tool_inputs_text.splitlines()[:2] == ["Skill: pdf", "Write: /a"]


def test_caps():
    events = [human("x" * 10_000)]
    events += [err("e" * 3000 + "the failure") for _ in range(9)]
    events += [call("Bash", f"t{i}", file_path=f"/f{i}") for i in range(300)]
    run = run_of(events)
    assert len(run.request) == 4000
    assert len(run.error_texts) == 5 and all(len(t) <= 500 for t in run.error_texts)
    assert all(t.startswith("eee") and t.endswith("the failure") for t in run.error_texts)  # head and tail
    assert len(run.files_written) == 50
    assert len(run.tool_inputs_text) <= 2000
    assert len(json.dumps(run.to_dict())) < 20_000


def test_runs_complete_with_offsets_and_tails():
    builder = RunBuilder()
    assert builder.feed(human("one", uuid="h1", offset=0)) == []
    builder.feed(Event(MARKER, uuid="m1", offset=10, end=30))
    done = builder.feed(human("two", uuid="h2", parent="m1", offset=30))
    assert len(done) == 1
    first = done[0]
    assert first.complete and first.index == 0 and first.tail_uuid == "m1"
    assert (first.start_offset, first.end_offset) == (0, 30)
    assert builder.open_run().index == 1 and not builder.open_run().complete


def test_retyping_the_last_request_supersedes_it():
    builder = RunBuilder()
    builder.feed(human("one", uuid="h1"))
    builder.feed(Event(MARKER, uuid="a1"))
    builder.feed(human("two", uuid="h2", parent="a1"))
    builder.feed(Event(MARKER, uuid="a2"))
    done = builder.feed(human("two, better", uuid="h3", parent="a1"))
    assert [(r.index, r.superseded) for r in done] == [(1, True)]
    assert builder.open_run().superseded_from == 1
    # Continuing from the new branch is a plain continuation.
    builder.feed(Event(MARKER, uuid="a3"))
    done = builder.feed(human("three", uuid="h4", parent="a3"))
    assert [(r.index, r.superseded) for r in done] == [(2, False)]


def test_mark_superseded():
    runs = [Run(index=0), Run(index=1), Run(index=2), Run(index=3, superseded_from=1)]
    assert [r.superseded for r in mark_superseded(runs)] == [False, True, True, False]


def test_open_run_is_a_copy():
    builder = RunBuilder()
    builder.feed(human("go"))
    builder.open_run().skills.append({"name": "x"})
    assert builder.open_run().skills == []


def test_activity_before_any_request_opens_an_implicit_run():
    builder = RunBuilder()
    builder.feed(Event(MARKER, uuid="m"))
    assert builder.open_run() is None
    builder.feed(call(offset=5, end=20))
    run = builder.open_run()
    assert run.request == "" and run.tool_calls == 1 and run.start_offset == 5


def test_state_round_trip_resumes_exactly():
    events = [
        human("fix it", uuid="h1"),
        call(uuid="c1"),
        err(uuid="r1"),
        Event(MARKER, uuid="m1"),
        call(uuid="c2"),
        ok(uuid="r2"),
        human("next", uuid="h2", parent="r2"),
        err(uuid="r3"),
        human("again", uuid="h3", parent="r2"),
        ok(uuid="r4"),
    ]
    whole = RunBuilder()
    want = [r.to_dict() for e in events for r in whole.feed(e)]
    for cut in range(len(events) + 1):
        first = RunBuilder()
        got = [r.to_dict() for e in events[:cut] for r in first.feed(e)]
        resumed = RunBuilder(json.loads(json.dumps(first.state())))
        got += [r.to_dict() for e in events[cut:] for r in resumed.feed(e)]
        assert got == want, cut
        assert resumed.open_run().to_dict() == whole.open_run().to_dict()


def test_state_stays_bounded():
    builder = RunBuilder()
    for i in range(TAILS_CAP + 500):
        builder.feed(human(f"r{i}", uuid=f"h{i}", parent=f"h{i - 1}"))
    state = builder.state()
    assert len(state["tails"]) <= TAILS_CAP
    assert len(json.dumps(state)) < 100_000


def test_a_correction_is_judged_with_what_the_agent_said_before():
    said = Event(ASSISTANT_TEXT, text="Done: the build passes now.")
    run = run_of([human("build the app"), call(), ok(), said, human("still at the same error")])
    assert run.correction and run.correction_kind == "failure_report"
    assert "still" in run.correction_cue
    assert not run_of([human("still at the same error")]).correction  # the session's first words


def test_after_an_api_error_a_retry_is_no_correction():
    failed = Event(API_ERROR, text="Request timed out", transient=True)
    said = Event(ASSISTANT_TEXT, text="I updated the config.")
    assert not run_of([human("go"), said, failed, human("try again")]).correction
    assert run_of([human("go"), said, human("No, that's wrong, undo it")]).correction


def test_a_preference_fires_once_and_keeps_its_words():
    words = "From now on, answer in German."
    run = run_of([human("go"), human(words)])
    assert run.preference and run.preference_text == words and "from now on" in run.preference_cue
    assert not run_of([human("go"), human("Add a README")]).preference


def test_the_rejected_word_may_be_in_what_the_agent_did():
    npm = Event(TOOL_CALL, name="Bash", tool_use_id="t", input={"command": "npm install left-pad"})
    run = run_of([human("add left-pad"), npm, ok(tool_use_id="t"), human("pnpm here, not npm")])
    assert run.correction and run.correction_kind == "convention" and "npm" in run.correction_cue
