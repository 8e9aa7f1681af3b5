"""Real Codex rollouts: every file parses, and counts match an independent count.

The independent count (tests/codex_counts.py) reads other evidence than the adapter: the
exit codes and parsed reads of Codex's own command events. Hand-counted numbers below
cover what it cannot see (a rollout without command events), read with jq (commands in
the comments), so a bug shared by the parser and the naive counter would still show.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.transcripts import ADAPTERS, codex, parse_file
from evolve.transcripts.reader import loads_object, read_lines
from tests.codex_counts import independent_counts, parsed_counts
from tests.transcripts.test_conformance import replay

KEYS = ("runs", "tool_calls", "tool_errors", "skills", "interrupts")


def all_files(codex_data: Path) -> list[Path]:
    return sorted(codex_data.rglob("*.jsonl"))


def test_every_rollout_parses_and_matches_the_independent_count(codex_data):
    files = all_files(codex_data)
    assert len(files) >= 4
    for path in files:
        got, want = parsed_counts(path), independent_counts(path)
        assert got["bad"] == 0, path
        keys = KEYS if want["command_events"] else ("runs", "tool_calls", "interrupts")
        for key in keys:
            assert got[key] == want[key], (path.name, key, got[key], want[key])


# By hand, F a rollout:
#   runs:        jq -c 'select(.payload.type=="user_message")|.payload.message[:40]' F   (or, with none,
#                user messages whose provenance is "user")
#   tool_calls:  jq -c 'select(.type=="response_item" and (.payload.type|endswith("_call")))' F | wc -l
#   tool_errors: jq -r 'select(.payload.type=="function_call_output")|.payload.output[:300]' F
#                | grep -cE 'Process exited with code [1-9]|^[a-z_]+ failed:'
#   skills:      jq -r 'select(.payload.type=="function_call")|.payload.call_id+" "+.payload.arguments' F
#                | grep -o '^call_[^ ]*\|[^ ]*SKILL.md' (the SKILL.md paths each call names, distinct)
HAND_COUNTED = {
    # 0.125 TUI: both user_message and user messages; 99 function calls, 3 apply_patch, 3 web
    # searches; 4 polls of failing commands + 1 write_stdin failure; one `sed` reads two skills.
    "codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": dict(
        runs=2, tool_calls=105, tool_errors=5, skills=3, interrupts=0
    ),
    # 0.128-alpha: user_message events only, no skill listing, no command events: `ps` exits 1.
    "codemie-code/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl": dict(
        runs=3, tool_calls=38, tool_errors=1, skills=4, interrupts=0
    ),
    # the real 0.171 CLI: `npm test` fails, then a correction in the resumed session.
    "real-cli-0.171.0/rollout-2026-12-01T18-54-35-01a232f5-6fe1-7f83-b588-fba2cf745af0.jsonl": dict(
        runs=2, tool_calls=1, tool_errors=1, skills=0, interrupts=0
    ),
    # a session that reads the project's skill with `cat …/.agents/skills/release-cut/SKILL.md`.
    "real-cli-0.171.0/rollout-2026-12-01T18-54-36-01a232f5-7540-7de2-b527-5385a79c8dee.jsonl": dict(
        runs=1, tool_calls=1, tool_errors=0, skills=1, interrupts=0
    ),
}


@pytest.mark.parametrize("name", sorted(HAND_COUNTED))
def test_hand_counted_rollouts(codex_data, name):
    got = parsed_counts(codex_data / name)
    assert {key: got[key] for key in KEYS} == HAND_COUNTED[name]


def test_the_real_cli_rollouts_give_the_facts_of_what_happened(codex_data):
    failing, reading = sorted((codex_data / "real-cli-0.171.0").glob("*.jsonl"))
    tests, correction = parse_file(failing, "codex")
    assert tests.request == "Run the tests please" and tests.errors == 1 and tests.ended_in_error
    assert correction.correction and "pnpm" in correction.request
    [release] = parse_file(reading, "codex")
    assert release.skills == [{"name": "release-cut", "tool_use_id": "call_5a3742fa2c97"}]
    assert {r.cwd for r in (tests, correction, release)} == {"/home/dev/src/demo-svc"}


def test_incremental_reading_equals_one_full_read(codex_data, tmp_path):
    for number, path in enumerate(all_files(codex_data)):
        full = [run.to_dict() for run in parse_file(path, "codex")]
        assert replay(path, tmp_path / f"{number}.jsonl", seed=number, fmt="codex") == full, path.name


def test_schema_decoding_agrees_with_json_parsing(codex_data):
    adapter = ADAPTERS["codex"]
    for path in all_files(codex_data):
        state = adapter.new_state(path.stem)
        decoded = [e for off, line in read_lines(path) for e in adapter.parse_line(line, off, state)]
        reference = codex.new_state(path.stem)
        full = []
        for offset, line in read_lines(path):
            obj = loads_object(line)
            if obj is not None:
                full.extend(codex.parse_object(obj, offset, offset + len(line) + 1, reference))
        assert decoded == full, path.name
