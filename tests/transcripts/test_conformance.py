"""Real Claude Code transcripts: every file parses, and counts match an independent count.

The independent count below is deliberately naive (whole file, plain json, no prefilter, no
state machine); on top of it a few files carry numbers obtained by hand with jq (commands in
the comments), so a bug shared by the parser and the naive counter would still show.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from evolve.transcripts import ADAPTERS, Cursor, claude_code, follow, parse_file
from evolve.transcripts.reader import loads_object, read_lines
from evolve.transcripts.runs import RunBuilder

_WRAPPERS = ("<local-command-", "<bash-", "<task-notification>", "<user-memory-input>")
_CONTEXT = re.compile(r"<(system-reminder|ide_opened_file|ide_selection)>.*?</\1>", re.S)


def independent_counts(path: Path) -> Counter:
    """Runs, tool calls, tool errors, interrupts and skill calls, counted the simple way."""
    objs = []
    for raw in path.read_bytes().split(b"\n"):
        if raw.strip():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                objs.append(obj)
    convo = [o for o in objs if o.get("type") in ("user", "assistant")]
    subagent_file = bool(convo) and convo[0].get("isSidechain") is True
    counts: Counter = Counter()
    tool_ids: set = set()
    command_waiting = False
    for obj in objs:
        if obj.get("isSidechain") and not subagent_file:
            continue
        kind = obj.get("type")
        msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        content = msg.get("content")
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        else:
            blocks = [b for b in content or [] if isinstance(b, dict)]
        if kind == "system" and obj.get("subtype") == "api_error":
            counts["api_errors"] += 1
        if kind == "assistant" or (kind == "system" and obj.get("subtype") == "api_error"):
            counts["runs"] += command_waiting or not counts["runs"]  # activity opens a run
            command_waiting = False
            for block in blocks:
                if block.get("type") == "tool_use" and block.get("id") not in tool_ids:
                    tool_ids.add(block.get("id"))
                    counts["tool_calls"] += 1
                    counts["skills"] += block.get("name") == "Skill"
            continue
        if kind != "user":
            continue
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            counts["runs"] += command_waiting or not counts["runs"]
            command_waiting = False
            summary = obj.get("toolUseResult")
            for block in results:
                text = json.dumps(block.get("content"))
                rejected = summary == "User rejected tool use" or (
                    "doesn't want to proceed with this tool use" in text
                    or "doesn't want to take this action" in text
                )
                error = block.get("is_error") is True or (
                    len(results) == 1 and isinstance(summary, str) and summary.startswith("Error: ")
                )
                counts["tool_errors"] += error and not rejected
                counts["rejected"] += rejected
            continue
        if obj.get("isMeta") or obj.get("isCompactSummary"):
            continue
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
        if text.startswith("[Request interrupted by user"):
            counts["interrupts"] += 1
            counts["runs"] += command_waiting or not counts["runs"]
            command_waiting = False
        elif text.startswith("<command-"):
            command_waiting = True
        elif text.startswith(_WRAPPERS) or text.startswith("Caveat: The messages below"):
            if text.startswith("<local-command-"):
                command_waiting = False
        elif _CONTEXT.sub("", text).strip() or any(b.get("type") == "image" for b in blocks):
            counts["runs"] += 1
            command_waiting = False
    return counts


def parsed_counts(path: Path) -> Counter:
    runs = parse_file(path)
    adapter = ADAPTERS["claude_code"]
    state = adapter.new_state()
    events = [e for off, line in read_lines(path) for e in adapter.parse_line(line, off, state)]
    return Counter(
        runs=len(runs),
        tool_calls=sum(r.tool_calls for r in runs),
        tool_errors=sum(r.errors + r.transient_errors for r in runs),  # no API errors here
        interrupts=sum(e.kind == "interrupt" for e in events),
        skills=sum(len(r.skills) for r in runs),
        rejected=sum(e.rejected for e in events),
        bad=state["bad"],
    )


def all_files(claude_data: Path) -> list[Path]:
    return sorted(claude_data.rglob("*.jsonl"))


def test_every_file_parses_and_matches_the_independent_count(claude_data):
    files = all_files(claude_data)
    assert len(files) >= 90
    for path in files:
        want = independent_counts(path)
        assert want["api_errors"] == 0, path  # the data set has none (README)
        got = parsed_counts(path)
        assert got["bad"] == 0, path
        for key in ("runs", "tool_calls", "tool_errors", "interrupts", "skills", "rejected"):
            assert got[key] == want[key], (path.name, key, got[key], want[key])


# Hand-verified numbers. For file F (main transcripts: S='select((.isSidechain==true)|not)',
# subagent files: S='.'):
#   tool_calls: jq -r "$S|select(.type==\"assistant\")|.message.content[]?
#               |select(.type==\"tool_use\")|.id" F | sort -u | wc -l
#   skills:     same with `and .name==\"Skill\"`
#   tool_errors: jq -c "$S|select(.type==\"user\")|.message.content|arrays|.[]
#               |select(.type==\"tool_result\" and .is_error==true)|(.content|tostring)
#               |select(test(\"doesn't want to (proceed with this tool use|take this action)\")
#               |not)" F | wc -l
#   interrupts: user text starting "[Request interrupted by user" (jq, startswith)
#   runs: read by eye from jq -c 'select(.type=="user" and (.isSidechain|not) and (.isMeta|not)
#         and (.toolUseResult==null))|.message.content' F, applying the documented rules
#         (slash commands count only when the agent acts on them; wrappers never count).
HAND_COUNTED = {
    # 1 request; Bash + Glob both rejected, then "[... for tool use]"; /model is local.
    "spotter/short.jsonl": dict(runs=1, tool_calls=2, tool_errors=0, interrupts=1, skills=0),
    # "start phoenix…", "scrolling back…"; /mcp prints local output only.
    "spotter/tool_heavy.jsonl": dict(runs=2, tool_calls=6, tool_errors=0, interrupts=2, skills=0),
    # /handgemacht:create-beads (acted on) + "create the beads".
    "spotter/subagent.jsonl": dict(runs=2, tool_calls=16, tool_errors=0, interrupts=1, skills=0),
    # /orchestrator + "Thanks! Please update…"; all 23 is_error results are in sidechains.
    "claude-code-viewer/mock-global-claude-dir__projects__sample-project__"
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": dict(
        runs=2, tool_calls=11, tool_errors=0, interrupts=0, skills=0
    ),
    "claude-code-viewer/mock-global-claude-dir__projects__sample-project__"
    "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": dict(
        runs=1, tool_calls=13, tool_errors=2, interrupts=0, skills=0
    ),
    "claude-reliability/snapshot-tests__tests__coverage-test-fix__transcript.jsonl": dict(
        runs=1, tool_calls=13, tool_errors=1, interrupts=0, skills=0
    ),
    # 7 requests, one of them a rewind (see test_real_rewind).
    "claude-code-log/-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl": dict(
        runs=7, tool_calls=2, tool_errors=0, interrupts=0, skills=0
    ),
    # A subagent transcript with the one real Skill call of the data set.
    "claude-code-log/-experiments-worktrees__ef958aa1-0e93-49f0-bb71-150f63befcd1__subagents__"
    "agent-a52886dc180afb356.jsonl": dict(runs=1, tool_calls=17, tool_errors=0, interrupts=0, skills=1),
    # /init (acted on) + 5 typed requests; 4 rejected calls (old "take this action" wording).
    "claude-code-log/-Users-dain-workspace-JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl": dict(
        runs=6, tool_calls=71, tool_errors=2, interrupts=1, skills=0
    ),
}


@pytest.mark.parametrize("name", sorted(HAND_COUNTED))
def test_hand_counted_files(claude_data, name):
    got = parsed_counts(claude_data / name)
    for key, value in HAND_COUNTED[name].items():
        assert got[key] == value, (key, got[key], value)


def test_real_rewind(claude_data):
    path = claude_data / "claude-code-log/-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
    runs = parse_file(path)
    assert [r.superseded for r in runs] == [False, True, True, True, False, False, False]
    assert runs[4].superseded_from == 1


def replay(path: Path, tmp: Path, seed: int, fmt: str = "claude_code") -> list[dict]:
    """Append `path` to `tmp` in random pieces, following after each; return the runs seen."""
    data = path.read_bytes()
    rng = random.Random(seed)
    stored: dict[int, dict] = {}
    cursor = None
    pos = 0
    tmp.write_bytes(b"")
    while pos < len(data):
        step = rng.choice([1, 7, 100, 1000, 5000, 40000, 200000])
        with tmp.open("ab") as handle:
            handle.write(data[pos : pos + step])
        pos += step
        update = follow(tmp, cursor, fmt, chunk_size=rng.choice([64, 4096, 1 << 20]))
        assert not update.reset
        for run in update.runs + ([update.open_run] if update.open_run else []):
            stored[run.index] = run.to_dict()
        for index in update.superseded:
            stored[index]["superseded"] = True
        cursor = Cursor.from_dict(json.loads(json.dumps(update.cursor.to_dict())))
    return [stored[i] for i in sorted(stored)]


@pytest.mark.parametrize(
    "name",
    [
        "claude-code-log/-experiments-ideas__03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
        "spotter/subagent.jsonl",
        "claude-code-log/-Users-dain-workspace-claude-code-log-sample__0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl",
        "claude-code-log/-Users-dain-workspace-JSSoundRecorder__7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
        "claude-code-viewer/mock-global-claude-dir__projects__sample-project__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    ],
)
def test_incremental_reading_equals_one_full_read(claude_data, tmp_path, name):
    path = claude_data / name
    full = [run.to_dict() for run in parse_file(path)]
    assert replay(path, tmp_path / "t.jsonl", seed=len(name)) == full


def _full_parse_events(path: Path) -> list:
    """Every line through json.loads + claude_code.parse_object: the reference semantics."""
    state = claude_code.new_state(path.stem)
    events = []
    for offset, line in read_lines(path):
        obj = loads_object(line)
        if obj is not None:
            events.extend(claude_code.parse_object(obj, offset, offset + len(line) + 1, state))
    return events


def _key(event) -> tuple:
    # A marker's meaning is its range and uuid: compare what every path fills in.
    if event.kind == "marker":
        return ("marker", event.offset, event.end, event.uuid)
    return (
        event.kind,
        event.session_id,
        event.timestamp,
        event.offset,
        event.end,
        event.uuid,
        event.parent_uuid,
        event.text,
        event.name,
        event.tool_use_id,
        event.input,
        event.file_path,
        event.is_error,
        event.rejected,
        event.transient,
    )


def test_schema_decoding_agrees_with_json_parsing(claude_data):
    adapter = ADAPTERS["claude_code"]
    for path in all_files(claude_data):
        state = adapter.new_state(path.stem)
        decoded = [e for off, line in read_lines(path) for e in adapter.parse_line(line, off, state)]
        full = _full_parse_events(path)
        assert [_key(e) for e in decoded] == [_key(e) for e in full], path.name
        builder_decoded, builder_full = RunBuilder(), RunBuilder()
        runs_decoded = [r.to_dict() for e in decoded for r in builder_decoded.feed(e)]
        runs_full = [r.to_dict() for e in full for r in builder_full.feed(e)]
        assert runs_decoded == runs_full, path.name
        # Observing wants facts only (tool inputs left whole, summarised by the builder).
        update = follow(path)
        observed = update.runs + ([update.open_run] if update.open_run else [])
        last = builder_full.open_run()
        assert [r.to_dict() for r in observed] == runs_full + ([last.to_dict()] if last else [])
