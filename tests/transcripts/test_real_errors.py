"""Errors as they really happen, judged alike by every adapter: the run's facts and signals.

A Windows harness that cannot start its shell and a quota that resets are the environment;
the person stopping a running call is an abort; a connection refused by this machine is a
real error (the agent's own server was not running), by a remote host the environment.
"""

from __future__ import annotations

import json

import pytest

from evolve.schedule.signals import score_run
from evolve.transcripts import parse_file, parse_messages
from tests.observe_helpers import Transcript
from tests.transcripts.test_codex import call, meta, output, said, write

INTERRUPTED = "[Request interrupted by user for tool use]"


def judged(path, fmt: str = "claude_code") -> list[tuple[dict, set[str]]]:
    """Each run's facts and the signals they fire."""
    return [(run.to_dict(), set(score_run(run.to_dict()).signals)) for run in parse_file(path, fmt)]


@pytest.mark.parametrize(
    "failure",
    [
        "Error: Command failed: cygpath -u 'C:\\Users\\dev\\AppData\\Local\\Temp'",
        "      0 [main] bash 1204 child_copy: cygheap read copy failed, 0x800000000..0x80000A3B8, done 0",
        "3164712 [main] sh 1894 dofork: child -1 - forked process 7500 died unexpectedly, retry 0, "
        "exit code 0xC0000142, errno 11\nsh: fork: retry: Resource temporarily unavailable",
        "Exit code 3221225794",
    ],
)
def test_a_windows_harness_failure_is_the_environment_not_a_lesson(tmp_path, failure) -> None:
    t = Transcript()
    t.user("Run the tests")
    t.call("Skill", {"skill": "test-runner"})
    t.call("Bash", {"command": "npm test"}, failure, error=True)
    t.call("Bash", {"command": "npm test"}, "3 passing")
    t.text("All green.")
    [(facts, signals)] = judged(t.write(tmp_path / "s.jsonl"))
    assert (facts["errors"], facts["transient_errors"]) == (0, 1)
    assert not facts["recovered"] and signals == set()  # no error_recovered, no skill_ineffective


def test_a_quota_wrapped_in_a_400_is_the_environment(tmp_path) -> None:
    t = Transcript()
    t.user("Summarise the changes")
    t.call("Skill", {"skill": "changelog"})
    t.synthetic(
        'API Error: 400 {"error":{"code":400,"message":"You have exhausted your capacity on this model. '
        'Your quota will reset after 2h3m7s.","status":"RESOURCE_EXHAUSTED"}}'
    )
    [(facts, signals)] = judged(t.write(tmp_path / "s.jsonl"))
    assert (facts["errors"], facts["transient_errors"]) == (0, 1)
    assert not facts["ended_in_error"] and signals == set()

    codex = write(  # Codex says a usage limit as the last word of the model service
        tmp_path / "rollout-2026-12-01T18-54-35-01a232f5-6fe1-7f83-b588-fba2cf745af0.jsonl",
        [
            meta(),
            said("user", "Summarise the changes", provenance=["user"]),
            {
                "timestamp": "2026-12-01T18:55:00.000Z",
                "type": "event_msg",
                "payload": {
                    "type": "error",
                    "message": "You've hit your usage limit. Upgrade to Pro or try again at 3:05 PM.",
                },
            },
        ],
    )
    [(facts, signals)] = judged(codex, "codex")
    assert (facts["errors"], facts["transient_errors"]) == (0, 1) and signals == set()


def test_the_person_stopping_a_running_call_is_an_abort_in_claude_code(tmp_path) -> None:
    t = Transcript()
    t.user("Build it")
    t.call("Skill", {"skill": "release-build"})
    build = t.tool("Bash", {"command": "make build"})
    # what Claude Code 2.1.270 writes when the person presses Esc while the command runs
    t.user(
        [{"type": "tool_result", "tool_use_id": build, "content": INTERRUPTED, "is_error": True}],
        toolUseResult=INTERRUPTED,
        toolDenialKind="interrupted",
    )
    t.user([{"type": "text", "text": INTERRUPTED}])
    t.user("Use the release target instead")
    t.call("Bash", {"command": "make release"}, "built")
    (facts, signals), (after, _) = judged(t.write(tmp_path / "s.jsonl"))
    assert facts["aborted"] and facts["errors"] == 0 and not facts["ended_in_error"]
    assert facts["error_texts"] == [] and "skill_ineffective" not in signals
    assert after["request"] == "Use the release target instead"


def test_the_person_stopping_a_call_is_an_abort_in_codex_generic_and_the_messages_api(tmp_path) -> None:
    codex = write(
        tmp_path / "rollout-2026-12-01T18-54-35-01a232f5-6fe1-7f83-b588-fba2cf745af0.jsonl",
        [
            meta(),
            said("user", "Check the code", provenance=["user"]),
            call("c1", "npm run lint"),
            output("c1", 1, "src/a.ts:3:1 error  'x' is never used"),
            call("c2", "npm run lint -- --fix"),
            output("c2", None, "Wall time: 5.0 seconds\naborted by user"),  # stopped: not a fix
            call("c3", "npm run lint"),
            output("c3", None, "aborted"),
            {
                "timestamp": "2026-12-01T18:55:00.000Z",
                "type": "event_msg",
                "payload": {"type": "turn_aborted", "reason": "interrupted"},
            },
        ],
    )
    [(facts, signals)] = judged(codex, "codex")
    assert facts["aborted"] and facts["errors"] == 1 and not facts["recovered"]
    assert "error_recovered" not in signals

    generic = tmp_path / "agent.jsonl"
    generic.write_text(
        "\n".join(
            json.dumps(record)
            for record in [
                {"type": "user", "text": "Build it", "session": "g1"},
                {"type": "tool_call", "tool": "shell", "call_id": "c1", "input": {"cmd": "make build"}},
                {"type": "tool_result", "call_id": "c1", "error": True, "output": INTERRUPTED},
                {"type": "user", "text": "[Request interrupted by user]"},  # Claude Code's words, copied
            ]
        )
        + "\n"
    )
    [(facts, signals)] = judged(generic, "generic")  # one run: the interrupt is no new request
    assert facts["aborted"] and facts["errors"] == 0 and facts["error_texts"] == []

    messages = [
        {"role": "user", "content": "Build it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": INTERRUPTED}
            ],
        },
    ]
    [run] = parse_messages(messages)
    assert run.aborted and run.errors == 0


def test_a_refused_connection_is_real_on_this_machine_and_the_environment_elsewhere(tmp_path) -> None:
    t = Transcript()
    t.user("Check the health endpoint")
    t.call("Skill", {"skill": "health-check"})
    t.call(
        "Bash",
        {"command": "curl -sf localhost:3000/health"},
        "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server",
        error=True,
    )
    t.text("The endpoint does not answer.")
    [(facts, signals)] = judged(t.write(tmp_path / "local.jsonl"))
    assert (facts["errors"], facts["transient_errors"]) == (1, 0) and facts["ended_in_error"]
    assert signals == {"skill_ineffective"}  # the agent's own server was not running: a lesson

    t = Transcript(tag="r")
    t.user("Check the health endpoint")
    t.call("Skill", {"skill": "health-check"})
    t.call(
        "Bash",
        {"command": "curl -sf https://status.example.com/health"},
        "curl: (7) Failed to connect to status.example.com port 443 after 3 ms: Connection refused",
        error=True,
    )
    t.text("The status page does not answer.")
    [(facts, signals)] = judged(t.write(tmp_path / "remote.jsonl"))
    assert (facts["errors"], facts["transient_errors"]) == (0, 1) and signals == set()
