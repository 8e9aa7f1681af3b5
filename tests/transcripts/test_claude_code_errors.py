"""Claude Code adapter on hand-built transcripts: errors, transient retries and aborts.

A tool error the run recovers from, one it ends in, API retries counted as one transient
incident, errors that are not transient, and a rejected tool or an interrupt as an abort.
"""

from __future__ import annotations

from evolve.transcripts import parse_file
from evolve.transcripts.classify import BUILT_IN
from evolve.transcripts.model import judged_transient
from tests.transcripts.claude_code_lines import Transcript, events_of


def test_ended_in_error_survives_closing_text(tmp_path):
    t = Transcript()
    t.user("run it")
    t.tool("Bash", {"command": "make"}, "toolu_1")
    t.result("toolu_1", "make: *** [all] Error 2", is_error=True)
    t.text("The build fails; I could not fix it.", msg="msg_2")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.ended_in_error and not run.recovered and run.errors == 1


def test_transient_tool_error_is_not_an_error(tmp_path):
    t = Transcript()
    t.user("fetch the page")
    t.tool("WebFetch", {"url": "https://example.test"}, "toolu_1")
    t.result(
        "toolu_1",
        "Request failed with status code 504",
        is_error=True,
        tur="Error: Request failed with status code 504",
    )
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 0 and run.transient_errors == 1 and not run.ended_in_error


def test_error_flag_from_tool_use_result_string(tmp_path):
    t = Transcript()
    t.user("read it")
    t.tool("Read", {"file_path": "/nope"}, "toolu_1")
    t.result("toolu_1", "File does not exist.", tur="Error: File does not exist.")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 1 and run.ended_in_error


def test_api_error_retries_are_one_transient_incident(tmp_path):
    t = Transcript()
    t.user("hello")
    for attempt in (1, 2, 3):
        t.api_error(attempt)
    t.synthetic('API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}')
    path = t.write(tmp_path / "s.jsonl")
    (run,) = parse_file(path)
    assert run.transient_errors == 1 and run.errors == 0 and not run.ended_in_error
    events, _ = events_of(path)
    incidents = [e for e in events if e.kind == "api_error" and not e.continued]
    assert len(incidents) == 1 and judged_transient(incidents[0], BUILT_IN) and incidents[0].attempt == 1


def test_retries_that_succeed_and_a_second_sequence(tmp_path):
    t = Transcript()
    t.user("hello")
    t.api_error(1)
    t.api_error(2)
    t.text("Hi!")
    t.api_error(1, status=500, kind="api_error")
    t.text("More.", msg="msg_2")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.transient_errors == 2 and run.errors == 0


def test_non_transient_api_error_is_a_real_error(tmp_path):
    t = Transcript()
    t.user("hello")
    t.synthetic(
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"prompt is too long"}}'
    )
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 1 and run.transient_errors == 0 and run.ended_in_error
    assert run.error_texts and "prompt is too long" in run.error_texts[0]


def test_retried_incident_ending_in_auth_error_counts_once_as_real(tmp_path):
    t = Transcript()
    t.user("hello")
    t.api_error(1, status=401, kind="authentication_error")
    t.api_error(2, status=401, kind="authentication_error")
    t.synthetic("API Error: 401 authentication_error invalid x-api-key")
    (run,) = parse_file(t.write(tmp_path / "s.jsonl"))
    assert run.errors == 1 and run.transient_errors == 0 and run.ended_in_error


def test_rejected_tool_is_an_abort_not_an_error(tmp_path):
    t = Transcript()
    t.user("delete the build dir")
    t.tool("Bash", {"command": "rm -rf build"}, "toolu_1")
    t.result(
        "toolu_1",
        "The user doesn't want to proceed with this tool use. The tool use was "
        "rejected (eg. if it was a file edit, the new_string was NOT written to the file). "
        "STOP what you are doing and wait for the user to tell you how to proceed.",
        is_error=True,
        tur="User rejected tool use",
    )
    t.user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    path = t.write(tmp_path / "s.jsonl")
    (run,) = parse_file(path)
    assert run.aborted and run.errors == 0 and not run.ended_in_error
    kinds = [e.kind for e in events_of(path)[0]]
    assert kinds.count("interrupt") == 1 and "human" in kinds and kinds.count("human") == 1


def test_plain_interrupt_marks_the_run_aborted(tmp_path):
    t = Transcript()
    t.user("long task")
    t.tool("Bash", {"command": "sleep 100"}, "toolu_1")
    t.result("toolu_1", "ok")
    t.user([{"type": "text", "text": "[Request interrupted by user]"}])
    t.user("something else")
    runs = parse_file(t.write(tmp_path / "s.jsonl"))
    assert [r.aborted for r in runs] == [True, False]
