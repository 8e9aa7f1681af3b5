"""A case evolve writes is read by the real `claude plugin eval` as evolve meant it.

The pinned `claude` (tests/agent_clis.py) runs one case of a minimal plugin, one arm, one
run, against the scripted fake Messages API: every grader evolve wrote is found with its
fields, and each passes or fails as the scripted agent's calls say. A tool the graders need
is granted through the prompt's `allowed_tools` (and `--allow-tools`, as `evolve eval` will).
Bash is left out: the CLI refuses a case that grants it without bubblewrap and socat.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evolve.reflect.evalcase import from_answer
from tests import agent_clis
from tests.conformance import cli_env, installed
from tests.fake_claude_api import FakeClaudeAPI

CASE = {
    "prompt": "Write the release note for 1.2 in NOTES.md",
    "graders": [
        {
            "type": "tool_used",
            "name": "wrote-notes",
            "tool": "Write",
            "input_match": '"file_path":"NOTES\\.md"',
        },
        {"type": "file_exists", "name": "notes-exist", "path": "NOTES.md"},
        {
            "type": "regex",
            "name": "no-changelog",
            "target": "trace",
            "match": "not_contains",
            "pattern": "\\bCHANGELOG\\b",
        },
        {"type": "regex", "name": "says-done", "target": "last_message", "pattern": "^Written"},
        {"type": "regex", "name": "twice", "target": "last_message", "match": "count:2", "pattern": "1\\.2"},
    ],
}


def test_the_real_cli_runs_the_graders_evolve_writes(
    fake_claude_api: FakeClaudeAPI, tmp_path: Path, closed_port
) -> None:
    binary = installed(agent_clis.claude_code, agent_clis.CLAUDE_CODE)
    plugin = tmp_path / "agent"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo", "version": "0.1.0"}\n')
    for path, text in from_answer(CASE).files("release-notes").items():
        (plugin / path).parent.mkdir(parents=True, exist_ok=True)
        (plugin / path).write_text(text)
    fake_claude_api.tool("Write", {"file_path": "NOTES.md", "content": "# 1.2\n"})
    fake_claude_api.text("Written: NOTES.md holds the 1.2 notes (not 1.3).")
    out = tmp_path / "result.json"
    env = cli_env(
        closed_port,
        False,
        ANTHROPIC_BASE_URL=fake_claude_api.url,
        ANTHROPIC_API_KEY="sk-ant-fake-conformance",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    argv = [str(binary), "plugin", "eval", str(plugin), "--trust-plugin", "--runs", "1", "--ablation", "none"]
    proc = subprocess.run(
        [*argv, "--allow-tools", "Write", "--json", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if not out.exists():
        pytest.fail(f"claude plugin eval wrote no result ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    (case,) = json.loads(out.read_text())["cases"]
    assert {g["name"]: g["config"] for g in case["graders"]} == {
        "wrote-notes": {"tool": "Write", "input_match": '"file_path":"NOTES\\.md"'},
        "notes-exist": {"path": "NOTES.md", "exists": True},
        "no-changelog": {
            "target": "trace",
            "pattern": "\\bCHANGELOG\\b",
            "flags": "",
            "match": "not_contains",
        },
        "says-done": {"target": "last_message", "pattern": "^Written", "flags": "m", "match": "contains"},
        "twice": {"target": "last_message", "pattern": "1\\.2", "flags": "", "match": "count:2"},
    }
    (run,) = case["arms"]["with"]
    passed = {g["name"]: g["passed"] for g in run["graders"]}
    assert passed == {
        "wrote-notes": True,
        "notes-exist": True,
        "no-changelog": True,
        "says-done": True,
        "twice": False,  # "1.2" once, and "1.3" is no match: counted as evolve's door counts
    }
