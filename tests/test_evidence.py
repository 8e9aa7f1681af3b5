"""Calls, errors and recoveries as evidence, and the budget spent in order of evidence value."""

from __future__ import annotations

import json
import re

import pytest

from evolve.cli import main
from evolve.reflect.evidence import call_summary
from evolve.reflect.tokens import count_tokens
from evolve.transcripts import ADAPTERS
from evolve.transcripts.model import TOOL_RESULT
from tests.helpers import bundle_of, evolve_commit, make_agent, skill_text
from tests.reflect.scenarios import Transcript

JSON_PAIR = re.compile(r'"\w+":\s')


def _observe(agent, *paths) -> None:
    assert main(["observe", agent.name, *map(str, paths)]) == 0


def _largest(claude_data, count=5):
    return sorted(claude_data.rglob("*.jsonl"), key=lambda p: -p.stat().st_size)[:count]


def _failing_calls(path) -> list[tuple[str, dict]]:
    """(tool, raw input) of every call whose result was a real (non-rejected) error."""
    adapter = ADAPTERS["claude_code"]
    state = adapter.new_state(path.stem)
    calls, failed, offset = {}, [], 0
    for line in path.read_bytes().split(b"\n"):
        obj = json.loads(line) if line.strip() else {}
        for block in (obj.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls[block["id"]] = (block["name"], block["input"])
        for event in adapter.parse_line(line, offset, state):
            if event.kind == TOOL_RESULT and event.is_error and event.tool_use_id in calls:
                failed.append(calls[event.tool_use_id])
        offset += len(line) + 1
    return failed


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Bash", {"command": "make test", "description": "Run the tests"}, "Bash: make test"),
        (
            "Write",
            {"file_path": "/a/b.py", "content": "x = 1\n" * 400},
            "Write: /a/b.py · content='" + "x = 1\\n" * 26 + "x = …'",
        ),
        (
            "Edit",
            {"file_path": "/a/b.py", "old_string": "def f(x):\n    return x\n", "new_string": "def g(x):\n"},
            "Edit: /a/b.py · old_string='def f(x):…' · new_string='def g(x):\\n'",
        ),
        (
            "MultiEdit",
            {
                "file_path": "/a/b.py",
                "edits": "[{'old_string': 'a', 'new_string': 'b\\nc'}, {'new_string': \"it's\"}]",
            },
            "MultiEdit: /a/b.py · new_string='b\\nc' | new_string=\"it's\"",
        ),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"},
            "apply_patch: src/a.py · added='x = 2'",
        ),
        ("Grep", {"pattern": "TODO", "path": "src", "output_mode": "content"}, "Grep: TODO · path=src"),
        (
            "TodoWrite",
            {"todos": [{"content": "a", "status": "pending"}] * 30},
            "TodoWrite: (todos not shown)",
        ),
        ("shell", {"cmd": "ls -la", "timeout": 30}, "shell: ls -la · timeout=30"),
        ("Skill", {"skill": "release-cut"}, "Skill: release-cut"),
    ],
)
def test_a_call_is_summarised_by_its_meaningful_keys(tool, tool_input, expected) -> None:
    assert call_summary(tool, tool_input) == expected


def test_every_real_error_appears_next_to_its_causing_call_in_the_shared_sessions(claude_data) -> None:
    agent = make_agent()
    (agent.path / "agent.toml").write_text("[limits]\nbundle_tokens = 400000\n")  # room for everything
    files = _largest(claude_data)
    _observe(agent, *files)
    bundle = bundle_of(agent)
    evidence = bundle.evidence()
    assert evidence["real_errors"] > 20 and evidence["errors_with_cause_pct"] == 100.0
    failed = [call for path in files for call in _failing_calls(path)]
    assert failed
    for tool, tool_input in failed:
        key = {"Bash": "command", "Read": "file_path", "Edit": "file_path", "Write": "file_path"}.get(tool)
        if key is None:
            continue
        argument = " ".join(str(tool_input[key]).split())[:60]
        pattern = (
            rf"(?:TRANSIENT )?ERROR(?: ×\d+)? in (?:[^\n]* \| )?{re.escape(tool)}: {re.escape(argument)}"
        )
        assert re.search(pattern, bundle.text), (tool, argument)


def test_no_call_line_holds_cut_json_in_the_shared_sessions(claude_data) -> None:
    agent = make_agent()
    _observe(agent, *_largest(claude_data))
    text = bundle_of(agent).text
    call_lines = [
        ln for ln in text.splitlines() if ln.startswith(("CALL ", "ERROR", "THEN SUCCEEDED", "REJECTED"))
    ]
    assert len(call_lines) > 50
    assert "TOOL CALL" not in text
    for line in call_lines:
        assert not JSON_PAIR.search(line) and ": {" not in line, line


def test_repeated_errors_are_one_line_with_a_count_and_the_recovery_is_named(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl")
    t.user("Make the build pass")
    for flag in ("-x", "-q", "-x"):
        t.tool("Bash", {"command": f"pytest {flag}"}, "ImportError: no module named app", error=True)
    t.tool("Read", {"file_path": "/app/setup.cfg"}, "ok")
    t.tool("Bash", {"command": "uv run pytest -x"}, "3 passed")
    t.say("Fixed: the tests run through uv.")
    _observe(agent, t.path)
    text = bundle_of(agent).text
    assert text.count("ImportError: no module named app") == 1
    assert "ERROR ×3 in Bash: pytest -x | Bash: pytest -q\nImportError: no module named app" in text
    assert "THEN SUCCEEDED: Bash: uv run pytest -x" in text
    assert "CALL Bash: pytest" not in text  # a failing call is named by its error line
    assert "CALL Read: /app/setup.cfg" in text


def test_a_long_error_keeps_its_head_and_tail_with_the_cut_marked(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl")
    t.user("Run the linter")
    output = "collected 400 items\n" + "".join(f"src/mod{n}.py:1:1 E501 line too long\n" for n in range(3000))
    t.tool("Bash", {"command": "ruff check ."}, output + "Found 3000 errors. FAILED: lint", error=True)
    t.tool("Bash", {"command": "ruff check --fix ."}, "fixed")
    _observe(agent, t.path)
    bundle = bundle_of(agent)
    error = next(line for run in bundle.runs for line in run.lines if line.kind == "error")
    assert error.shown.startswith("ERROR in Bash: ruff check .\ncollected 400 items")
    assert error.shown.endswith("Found 3000 errors. FAILED: lint\nTHEN SUCCEEDED: Bash: ruff check --fix .")
    assert "characters cut" in error.shown or "tokens cut" in error.shown
    assert count_tokens(error.shown) <= 460


def _busy_session(folder, name, signalled: bool) -> Transcript:
    t = Transcript(folder / name, cwd=f"/work/{name}")
    t.user(f"Refactor the parser in {name}" + " with care" * 20)
    for n in range(40):
        t.tool("Read", {"file_path": f"/work/{name}/src/file_{n}.py"}, "code " * 50)
        t.say(f"Looked at file {n}. " + "notes " * 60)
    t.tool("Skill", {"skill": "parser-rules"}, "Launching skill: parser-rules")
    t.tool(
        "Bash", {"command": "pytest tests/test_parser.py"}, "E   AssertionError: 2 != 3\n" * 40, error=True
    )
    if signalled:
        t.user("No, that's wrong: never change the public API of the parser")
        t.say("Understood.")
    return t


def test_a_tight_budget_goes_to_words_then_skill_bodies_then_errors_then_the_rest(tmp_path) -> None:
    agent = make_agent()
    (agent.path / "agent.toml").write_text("[limits]\nbundle_tokens = 3000\n")
    body = "## Rules\n1. Keep the public API.\n2. Run `pytest tests/test_parser.py` first.\n"
    evolve_commit(agent, {"skills/parser-rules/SKILL.md": skill_text("parser-rules", body=body).encode()})
    _observe(agent, _busy_session(tmp_path, "alpha", True).path, _busy_session(tmp_path, "beta", False).path)
    bundle = bundle_of(agent)
    text = bundle.text
    assert count_tokens(text) == bundle.tokens <= 3000 and bundle.tokens >= 0.9 * 3000
    assert "USER: No, that's wrong: never change the public API of the parser" in text  # the correction
    assert "USER: Refactor the parser in alpha" in text  # the run it reacts to
    assert "2. Run `pytest tests/test_parser.py` first." in text  # the skill body
    assert "ERROR in Bash: pytest tests/test_parser.py" in text  # its error, with its cause
    shown = {line.kind for run in bundle.runs if "alpha" in run.cwd for line in run.lines if line.shown}
    assert {"head", "user", "error"} <= shown
    alpha = [ln for run in bundle.runs if "alpha" in run.cwd for ln in run.lines]
    assert all(ln.shown for ln in alpha if ln.kind in ("user", "error"))
    assert any(not ln.shown for ln in alpha if ln.kind == "agent")  # the rest is what gives way
    assert "E   AssertionError: 2 != 3\n[… the line above 39 more times …]" in text
    assert "[… not shown: " in text
    evidence = bundle.evidence()
    assert evidence["signalled_runs_shown"] == evidence["signalled_runs"] >= 1


def _score(agent) -> dict:
    """`evolve score --json` of the agent's one run: its facts and signals."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["score", agent.name, "--json"]) == 0
    (run,) = json.loads(out.getvalue())
    return run


def test_a_different_command_after_an_error_is_not_its_fix_and_no_call_is_shown_twice(tmp_path) -> None:
    # the newcomer's Codex run: `npm run lint` failed, then the agent ran `npm test`
    from tests.transcripts.test_codex import call, meta, output, said, write

    agent = make_agent()
    path = write(
        tmp_path / "rollout-2026-12-01T18-54-35-01a232f5-6fe1-7f83-b588-fba2cf745af0.jsonl",
        [
            meta(),
            said("user", "Check the code", provenance=["user"]),
            call("c1", "npm run lint"),
            output("c1", 1, "src/a.ts:3:1 error  'x' is never used  no-unused-vars"),
            call("c2", "npm test"),
            output("c2", 0, "3 passing"),
            said("assistant", "Done."),
        ],
    )
    _observe(agent, path)
    text = bundle_of(agent).text
    assert "ERROR in exec_command: npm run lint\n" in text
    assert "THEN SUCCEEDED: exec_command: npm test" not in text
    assert "THEN SUCCEEDED: other calls (no fix named)" in text
    assert text.count("exec_command: npm test") == 1  # its call line, once
    run = _score(agent)
    assert run["errors"] == 1 and not run["recovered"] and "error_recovered" not in run["signals"]


def test_the_fix_is_the_call_like_the_failing_one_with_the_edits_before_it(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl", cwd="/app")
    t.user("Migrate the dev database")
    t.tool(
        "Bash", {"command": "./scripts/migrate.sh"}, "bash: ./scripts/migrate.sh: No such file", error=True
    )
    t.tool("Bash", {"command": "ls scripts"}, "seed.sh")  # a look: never the fix
    t.tool("Bash", {"command": "npm run build"}, "built")  # something else that worked
    t.tool("Grep", {"pattern": "migrate", "path": "Makefile"}, "migrate:")
    t.tool(
        "Edit",
        {"file_path": "/app/Makefile", "old_string": "migrate:\n", "new_string": "migrate: .env.dev\n"},
        "The file has been updated.",
    )
    t.tool("Bash", {"command": "make migrate"}, "Applied 3 migrations")
    t.say("Migrated.")
    _observe(agent, t.path)
    text = bundle_of(agent).text
    # the call like the failing one (its script's name), not `ls` nor the first success
    assert "No such file\nTHEN SUCCEEDED: Bash: make migrate\n" in text, text
    assert text.count("Bash: make migrate") == 1  # named as the fix only, not again as a call
    assert "CALL Bash: ls scripts" in text and "CALL Bash: npm run build" in text
    # the edit is evidence too: its new text, as summarised (capped, redacted)
    assert "CALL Edit: /app/Makefile · old_string='migrate:' · new_string='migrate: .env.dev\\n'" in text
    run = _score(agent)
    assert run["recovered"] and "error_recovered" in run["signals"]


def test_a_failed_edit_is_fixed_by_the_next_edit_of_that_file_whose_new_text_is_shown(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl", cwd="/app")
    t.user("Rename f to g")
    edit = {"file_path": "/app/x.py", "old_string": "def  f(", "new_string": "def g("}
    t.tool("Edit", edit, "<tool_use_error>String to replace not found in file.</tool_use_error>", error=True)
    t.tool("Read", {"file_path": "/app/x.py"}, "def f(x):")  # reading it: never the fix
    t.tool("Edit", {"file_path": "/app/y.py", "old_string": "f(", "new_string": "g("}, "ok")  # another file
    t.tool("Edit", {**edit, "old_string": "def f("}, "The file has been updated.")
    _observe(agent, t.path)
    text = bundle_of(agent).text
    assert (
        "String to replace not found in file.</tool_use_error>\n"
        "THEN SUCCEEDED: Edit: /app/x.py · old_string='def f(' · new_string='def g('\n"
    ) in text
    assert "CALL Read: /app/x.py" in text and "THEN SUCCEEDED: Read" not in text
    assert "CALL Edit: /app/y.py · old_string='f(' · new_string='g('" in text


def test_the_same_call_again_names_the_files_edited_before_it(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl", cwd="/app")
    t.user("Make the tests pass")
    t.tool("Bash", {"command": "pytest -q"}, "FAILED tests/test_a.py::test_sum - assert 3 == 4", error=True)
    t.tool("Edit", {"file_path": "/app/src/a.py", "old_string": "a + b", "new_string": "a + b + 1"}, "ok")
    t.tool("Edit", {"file_path": "/lib/vendor.py", "old_string": "x", "new_string": "y"}, "ok")
    t.tool("Bash", {"command": "pytest -q"}, "4 passed")
    _observe(agent, t.path)
    text = bundle_of(agent).text
    # the command did not change: the edits between are what fixed it (outside the project: its name)
    assert "THEN SUCCEEDED: Bash: pytest -q (after editing src/a.py, vendor.py)" in text
