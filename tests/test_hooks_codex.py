"""The Codex hook, run as Codex runs it: the frozen command from hooks.json, one JSON value on stdin.

It finds its agents from the session's folder, prints SessionStart's context as Codex's
JSON, costs one small file read in a folder no agent is installed for, always exits 0 and
logs every problem under the home, like the Claude Code hooks.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations import codex
from evolve.observe.records import drain_pending
from evolve.session.context import MEMO_TITLE
from evolve.store import ledger
from evolve.workspace.memo import lesson_id
from tests.helpers import evolve_commit, git, make_agent, skill_text
from tests.test_hooks import ROOT, hook_log, run_hook, spooled
from tests.test_hooks_light import HEAVY, LIGHT_PROBE

MEMO = (
    "# Memo of shop\n\n## What I do well and where I often stumble\n\n- I forget to run the tests.\n\n"
    "## Strategies for this user and domain\n\n- Use pnpm, never npm.\n"
)
SESSION = "01a232f5-6fe1-7f83-b588-fba2cf745af0"


@pytest.fixture
def project(tmp_path: Path, evolve_home) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    git(folder, "init", "-q")
    agent = make_agent("shop")
    evolve_commit(
        agent, {"memo.md": MEMO.encode(), "skills/release-cut/SKILL.md": skill_text("release-cut").encode()}
    )
    codex.install(Home.resolve(), "shop", "project", str(folder))
    return folder


def command(event: str) -> list[str]:
    """The command Codex runs, as install wrote it into hooks.json."""
    doc = json.loads(codex.hooks_file().read_text())
    [entry] = [h["command"] for group in doc["hooks"][event] for h in group["hooks"]]
    return shlex.split(entry)


def payload(cwd: Path, event: str = "SessionStart", **extra) -> dict:
    return {
        "session_id": SESSION,
        "transcript_path": str(cwd / "rollout.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
        "model": "gpt-5",
        "permission_mode": "bypassPermissions",
        "source": "startup",
        **extra,
    }


def test_session_start_in_the_project_gives_codex_the_memo(project, evolve_home):
    proc, _ = run_hook(command("SessionStart"), payload(project / "src"))
    assert proc.returncode == 0 and proc.stderr == b"" and hook_log(evolve_home) == ""
    out = json.loads(proc.stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert MEMO_TITLE in context and "Use pnpm, never npm." in context
    assert "release-cut" not in context  # linked: Codex lists the skill itself
    shown, seen = spooled(evolve_home)
    assert shown == {
        **shown,
        "event": "impressions",
        "agent": "shop",
        "session": SESSION,
        "skills": ["release-cut"],
    }
    # what the session's context carried: the bullets shown whole, from the branch's tip
    assert shown["memo"] == {
        "self": [lesson_id("I forget to run the tests.")],
        "strategies": [lesson_id("Use pnpm, never npm.")],
    }
    assert shown["tip"] == git(Home.resolve().agent_dir("shop"), "rev-parse", "main").stdout.strip()
    assert (
        seen["event"] == "codex_hook" and seen["harness"] == "codex" and seen["cwd"] == str(project / "src")
    )


def test_a_session_in_a_folder_without_an_agent_costs_nothing(project, evolve_home, tmp_path):
    for event in ("SessionStart", "Stop"):
        proc, _ = run_hook(command(event), payload(tmp_path, event))
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert spooled(evolve_home) == [] and hook_log(evolve_home) == ""


def test_stop_spools_the_rollout_for_the_watcher_to_read_as_codex(project, evolve_home):
    rollout = project / "rollout.jsonl"
    lines = [
        {
            "timestamp": "2026-12-01T18:54:35.549Z",
            "type": "session_meta",
            "payload": {"id": SESSION, "cwd": str(project)},
        },
        {
            "timestamp": "2026-12-01T18:54:36.000Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "hi"},
        },
    ]
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines))
    proc, _ = run_hook(
        command("Stop"), payload(project, "Stop", turn_id="t1", last_assistant_message="x" * 50_000)
    )
    assert (proc.returncode, proc.stdout) == (0, b"")
    [record] = spooled(evolve_home)
    assert {k: record[k] for k in ("event", "agent", "format", "transcript_path", "session_id")} == {
        "event": "stop",
        "agent": "shop",
        "format": "codex",
        "transcript_path": str(rollout),
        "session_id": SESSION,
    }
    home = Home.resolve()
    with ledger.opened(home.state_db) as conn:
        assert drain_pending(conn, home) == {"observed": 1}
        [row] = conn.execute("SELECT adapter FROM cursors WHERE agent = 'shop'").fetchall()
        assert row["adapter"] == "codex"
        assert [r["session"] for r in conn.execute("SELECT session FROM runs")] == [SESSION]
    [install] = codex.install_states(home)
    assert install["state"] == codex.WORKING


@pytest.mark.parametrize(
    "case, argv, stdin, reason",
    [
        ("an agent named", ["codex", "stop", "--agent", "shop"], b"{}", "no --agent"),
        ("unknown event", ["codex", "pre-compact"], b"{}", "unknown event"),
        ("not json", None, b"\x00 not json", "stdin is not JSON"),
    ],
)
def test_every_problem_exits_0_quietly_and_is_logged(project, evolve_home, case, argv, stdin, reason):
    base = command("Stop")
    full = base if argv is None else [*base[:4], *argv, "--home", str(evolve_home)]
    proc, _ = run_hook(full, stdin)
    assert (proc.returncode, proc.stdout) == (0, b""), case
    assert reason in hook_log(evolve_home), case


def test_a_broken_install_record_is_logged_and_the_session_goes_on(project, evolve_home):
    (evolve_home / "integrations" / "codex.json").write_text("{broken")
    proc, _ = run_hook(command("SessionStart"), payload(project))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert "codex.json is not valid JSON" in hook_log(evolve_home)


@pytest.mark.parametrize("event", ["SessionStart", "Stop"])
def test_the_hot_path_imports_nothing_heavy(project, evolve_home, event):
    code = LIGHT_PROBE.format(argv=command(event)[4:])
    proc = subprocess.run(
        [sys.executable, "-S", "-P", "-c", code],
        input=json.dumps(payload(project, event)).encode(),
        capture_output=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(ROOT), "EVOLVE_NO_WATCHER": "1", "EVOLVE_FORBID_HOME": ""},
    )
    loaded = set(proc.stderr.decode().split("LOADED ", 1)[1].split())
    assert not loaded & HEAVY, sorted(loaded & HEAVY)
    assert spooled(evolve_home) and hook_log(evolve_home) == ""
