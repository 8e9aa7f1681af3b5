"""The Codex rollout adapter: the person, failures, skills and aborts, from rollout lines."""

from __future__ import annotations

import json

from evolve.transcripts import ADAPTERS, Cursor, follow, parse_file
from evolve.transcripts.codex_events import failure, is_context, listed_skills

SESSION = "01a232f5-6fe1-7f83-b588-fba2cf745af0"
STAMP = "2026-12-01T18:54:35.549Z"
LISTING = (
    "<skills_instructions>\n## Skills\nA skill is a set of local instructions.\n### Skill roots\n"
    "- `r0` = `/home/dev/.codex/skills/.system`\n- `r1` = `/home/dev/src/shop/.agents/skills`\n"
    "### Available skills\n- imagegen: Generate images. (file: r0/imagegen/SKILL.md)\n"
    "- release-cut: Use when asked to cut a release (of this repo). (file: r1/release-cut/SKILL.md)\n"
    "- superpowers:brainstorming: Explore first. "
    "(file: /home/dev/.codex/plugins/sp/skills/brainstorming/SKILL.md)\n"
    "</skills_instructions>"
)


def line(kind: str, payload: dict, stamp: str = STAMP) -> dict:
    return {"timestamp": stamp, "type": kind, "payload": payload}


def meta(cwd: str = "/home/dev/src/shop") -> dict:
    return line(
        "session_meta",
        {
            "id": SESSION,
            "cwd": cwd,
            "cli_version": "0.171.0",
            "base_instructions": {"text": "You are Codex."},
        },
    )


def said(role: str, *texts: str, provenance: list[str] | None = None) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    payload: dict = {"type": "message", "role": role, "content": [{"type": kind, "text": t} for t in texts]}
    if provenance is not None:
        payload["internal_chat_message_metadata_passthrough"] = {
            "content_item_metadata": [{"provenance": {"type": p}} for p in provenance]
        }
    return line("response_item", payload)


def typed(text: str) -> dict:
    return line("event_msg", {"type": "user_message", "message": text, "images": []})


def call(call_id: str, cmd: str, **extra: str) -> dict:
    arguments = json.dumps({"cmd": cmd, **extra})
    return line(
        "response_item",
        {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call_id},
    )


def output(call_id: str, code: int | None, body: str = "", kind: str = "function_call_output") -> dict:
    text = body
    if code is not None:
        text = f"Chunk ID: 1a2b3c\nWall time: 0.3 seconds\nProcess exited with code {code}\nOutput:\n{body}"
    return line("response_item", {"type": kind, "call_id": call_id, "output": text})


def write(path, records, tail: bytes = b""):
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail)
    return path


def test_a_session_with_a_failing_command_a_recovery_and_a_correction(tmp_path):
    path = write(
        tmp_path / f"rollout-2026-12-01T18-54-35-{SESSION}.jsonl",
        [
            meta(),
            said("developer", LISTING, provenance=["skills"]),
            said("user", "<environment_context>\n  <cwd>/home/dev/src/shop</cwd>\n</environment_context>"),
            said("developer", "# Memo (what I learned in earlier sessions)\n- use pnpm"),  # a hook's context
            said("user", "Run the tests please", provenance=["user"]),
            call("c1", "npm test"),
            output("c1", 1, "1 failing: parser.test.js"),
            call("c2", "npm test -- -u"),
            output("c2", 0, "3 passing"),
            said("assistant", "Done."),
            line("event_msg", {"type": "task_complete", "last_agent_message": "Done."}),
            said("user", "No, that's wrong: always use pnpm here", provenance=["user"]),
            said("assistant", "OK."),
        ],
    )
    first, second = parse_file(path, "codex")
    assert first.session_id == SESSION and first.cwd == "/home/dev/src/shop"
    assert first.request == "Run the tests please" and first.started_at == "2026-12-01T18:54:35Z"
    assert first.tool_calls == 2 and first.errors == 1 and first.recovered and not first.ended_in_error
    assert first.error_texts == ["exit code 1: 1 failing: parser.test.js"]
    assert "exec_command: npm test" in first.tool_inputs_text
    assert second.request == "No, that's wrong: always use pnpm here" and second.correction


def test_older_releases_report_a_request_twice_and_it_counts_once(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            said("user", "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>"),
            said("user", "show tools"),
            typed("show tools"),
            said("assistant", "Here they are."),
            typed("show tools"),  # the same words again, after the agent answered: a new request
            typed("\n# Files mentioned by the user:\n\n## notes.vtt: /tmp/notes.vtt\n\ndraft a demo"),
        ],
    )
    runs = parse_file(path, "codex")
    assert [r.request for r in runs] == [
        "show tools",
        "show tools",
        "# Files mentioned by the user:\n\n## notes.vtt: /tmp/notes.vtt\n\ndraft a demo",
    ]


def test_harness_context_is_never_the_person():
    assert is_context("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>")
    assert is_context("  <turn_aborted>\nThe user interrupted.\n</turn_aborted>\n")
    assert is_context("<skill>\n<name>release-cut</name>\n<path>/x/SKILL.md</path>\nbody\n</skill>")
    assert is_context("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>…</INSTRUCTIONS>")
    assert not is_context("fix <b>this</b> please")
    assert not is_context("<b>bold</b> is not what I meant")
    assert not is_context("No, use pnpm")


def test_provenance_decides_when_codex_gives_it(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            said("user", "<note>keep it short</note>", "hello", provenance=["user", "harness"]),
        ],
    )
    [run] = parse_file(path, "codex")
    assert run.request == "<note>keep it short</note>"  # the person typed it, tags and all


def test_exit_codes_tool_failures_and_refusals():
    assert failure("Chunk ID: a\nWall time: 1 s\nProcess exited with code 2\nOutput:\nrg: no such file") == (
        True,
        False,
        "exit code 2: rg: no such file",
    )
    assert failure("Chunk ID: a\nWall time: 1 s\nProcess exited with code 0\nOutput:\nexit code 1") == (
        False,
        False,
        "",
    )
    # an output that prints the words does not fool the header
    assert not failure(
        "Chunk ID: a\nWall time: 1 s\nProcess exited with code 0\nOutput:\nProcess exited with code 1"
    )[0]
    assert failure("Chunk ID: a\nWall time: 1 s\nProcess running with session ID 4823\nOutput:\n")[0] is False
    assert failure("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nboom")[0] is True  # older shell tool
    assert failure('{"output":"Success.","metadata":{"exit_code":0,"duration_seconds":0.1}}') == (
        False,
        False,
        "",
    )
    assert failure('{"output":"patch failed","metadata":{"exit_code":1}}') == (
        True,
        False,
        "exit code 1: patch failed",
    )
    assert failure("write_stdin failed: stdin is closed for this session")[0] is True
    assert failure("apply_patch verification failed: no such line")[0] is True
    assert failure("exec command rejected by user") == (False, True, "")
    assert failure("Plan updated") == (False, False, "")


def test_a_command_that_keeps_running_fails_on_its_poll(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            typed("build it"),
            call("c1", "npm run build"),
            output(
                "c1",
                None,
                "Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 981\nOutput:\n",
            ),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "write_stdin",
                    "arguments": json.dumps({"session_id": 981, "chars": ""}),
                    "call_id": "c2",
                },
            ),
            output("c2", 1, "error TS2304: Cannot find name 'x'"),
            line("event_msg", {"type": "exec_command_end", "call_id": "c1", "exit_code": 1}),  # not twice
        ],
    )
    [run] = parse_file(path, "codex")
    assert run.tool_calls == 2 and run.errors == 1 and run.ended_in_error


def test_a_refused_command_and_an_interrupt_abort_the_run(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            typed("delete the cache"),
            call("c1", "rm -rf ~/.cache"),
            output("c1", None, "exec command rejected by user"),
            typed("then stop"),
            line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
            typed("review it"),
            line("event_msg", {"type": "turn_aborted", "reason": "review_ended"}),
        ],
    )
    refused, stopped, reviewed = parse_file(path, "codex")
    assert refused.aborted and refused.errors == 0
    assert stopped.aborted and not reviewed.aborted


def test_model_service_retries_are_one_transient_incident(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            typed("go"),
            line(
                "event_msg", {"type": "stream_error", "message": "Reconnecting... 1/5 (stream disconnected)"}
            ),
            line(
                "event_msg", {"type": "stream_error", "message": "Reconnecting... 2/5 (stream disconnected)"}
            ),
            line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            said("assistant", "Done."),
            typed("again"),
            line(
                "event_msg",
                {"type": "stream_error", "message": "Reconnecting... 1/5 (503 Service Unavailable)"},
            ),
            line("event_msg", {"type": "error", "message": "exceeded retry limit, last status: 503"}),
            typed("and once more"),
            line(
                "event_msg",
                {
                    "type": "error",
                    "message": "unexpected status 401 Unauthorized: Missing bearer authentication",
                },
            ),
        ],
    )
    recovered, gave_up, real = parse_file(path, "codex")
    assert (recovered.transient_errors, recovered.errors) == (1, 0)
    assert (gave_up.transient_errors, gave_up.errors) == (1, 0)
    assert (real.transient_errors, real.errors) == (0, 1)


def test_skills_listed_then_read_by_a_command_or_named_by_the_person(tmp_path):
    assert listed_skills(LISTING) == {
        "/home/dev/.codex/skills/.system/imagegen/SKILL.md": "imagegen",
        "/home/dev/src/shop/.agents/skills/release-cut/SKILL.md": "release-cut",
        "/home/dev/.codex/plugins/sp/skills/brainstorming/SKILL.md": "superpowers:brainstorming",
    }
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            said("developer", LISTING),
            typed("cut the release"),
            call("c1", "cat .agents/skills/release-cut/SKILL.md"),  # relative to the session's folder
            output("c1", 0, "---\nname: release-cut\n---"),
            call("c1", "cat .agents/skills/release-cut/SKILL.md"),  # the same call reported again
            call(
                "c2", "sed -n '1,80p' ~/.codex/plugins/sp/skills/brainstorming/SKILL.md && cat /etc/SKILL.md"
            ),
            call("c3", "cat docs/notes.md"),
            typed("use $release-cut and $imagegen. Not $nothing or $5"),
            line(
                "response_item",
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "call_id": "c4",
                    "input": "*** Begin Patch\n*** Update File: .agents/skills/release-cut/SKILL.md\n"
                    "@@\n-a\n+b\n*** End Patch\n",
                },
            ),
        ],
    )
    read, named = parse_file(path, "codex")
    assert read.tool_calls == 3
    assert read.skills == [
        {"name": "release-cut", "tool_use_id": "c1"},
        {"name": "superpowers:brainstorming", "tool_use_id": "c2"},
    ]
    assert named.skills == [
        {"name": "release-cut", "tool_use_id": ""},
        {"name": "imagegen", "tool_use_id": ""},
    ]
    assert named.files_written == [".agents/skills/release-cut/SKILL.md"]  # an edit, not a read


def test_one_call_reading_two_skills_counts_each_once(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [
            meta(),
            said("developer", LISTING),
            typed("plan"),
            call(
                "c9",
                "cat /home/dev/.codex/plugins/sp/skills/brainstorming/SKILL.md "
                "/home/dev/.codex/skills/.system/imagegen/SKILL.md "
                "/home/dev/.codex/skills/.system/imagegen/SKILL.md",
            ),
        ],
    )
    [run] = parse_file(path, "codex")
    assert run.skills == [
        {"name": "superpowers:brainstorming", "tool_use_id": "c9"},
        {"name": "imagegen", "tool_use_id": "c9#imagegen"},
    ]


def test_without_a_listing_a_read_skill_is_named_by_its_folder(tmp_path):
    path = write(
        tmp_path / "r.jsonl",
        [meta(), typed("go"), call("c1", "sed -n '1,220p' /Users/x/.codex/plugins/skills/browser/SKILL.md")],
    )
    [run] = parse_file(path, "codex")
    assert run.skills == [{"name": "browser", "tool_use_id": "c1"}]


def test_only_new_bytes_are_read_and_partial_or_corrupt_lines_wait_or_count(tmp_path):
    path = tmp_path / "r.jsonl"
    records = [meta(), typed("first"), call("c1", "ls"), output("c1", 2, "ls: cannot access")]
    encoded = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    half = json.dumps(typed("second")).encode()
    path.write_bytes(encoded + b"{not json}\n" + half[:20])
    update = follow(path, None, "codex")
    assert update.bad_lines == 1 and update.open_run.errors == 1
    assert update.cursor.offset == len(encoded) + len(b"{not json}\n")  # the half line waits
    with path.open("ab") as handle:
        handle.write(half[20:] + b"\n")
    cursor = Cursor.from_dict(json.loads(json.dumps(update.cursor.to_dict())))
    again = follow(path, cursor, "codex")
    assert [r.request for r in again.runs] == ["first"] and again.open_run.request == "second"
    assert again.open_run.session_id == SESSION  # the state kept what session_meta said


def test_lines_the_schema_does_not_fit_mean_the_same(tmp_path):
    adapter = ADAPTERS["codex"]
    odd = said("user", "hello")
    odd["payload"]["content"] = [{"type": "input_text", "text": "hello"}, "stray"]  # not a block
    state = adapter.new_state(f"rollout-x-{SESSION}")
    [event] = adapter.parse_line(json.dumps(odd).encode(), 0, state)
    assert event.kind == "human" and event.text == "hello" and event.session_id == SESSION
    assert adapter.parse_line(b'{"type": "response_item", "payload": "odd"}', 0, state) == ()
    assert adapter.parse_line(b"[1, 2]", 0, state) == () and state["bad"] == 1
