"""Post-use edits: a file the run wrote that the user changed before the next request."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime

from evolve.home import Home
from evolve.metrics.rates import skill_usage
from evolve.observe import ingest as observe
from evolve.store import ledger
from tests.helpers import make_agent


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def transcript(path, start: float, written: str, call: str) -> None:
    lines = [
        {"type": "user", "text": "write the config", "ts": iso(start), "cwd": str(path.parent)},
        {"type": "skill", "name": "configs", "call_id": call, "ts": iso(start + 1)},
        {
            "type": "tool_call",
            "tool": "Write",
            "call_id": "w1",
            "input": {"file_path": written},
            "ts": iso(start + 2),
        },
        {"type": "tool_result", "call_id": "w1", "output": "ok", "ts": iso(start + 3)},
        {"type": "assistant", "text": "done", "ts": iso(start + 4)},
        {"type": "user", "text": "thanks, now the readme", "ts": iso(start + 60)},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_file_the_user_changed_after_the_run_is_a_post_use_edit(tmp_path) -> None:
    make_agent()
    start = time.time() - 600
    target = tmp_path / "app.toml"
    target.write_text("written by the agent\n")
    os.utime(target, (start + 30, start + 30))  # the person edits it between the two requests
    other = tmp_path / "b.toml"
    other.write_text("untouched\n")
    os.utime(other, (start + 2, start + 2))  # the agent's own write: not an edit
    transcript(tmp_path / "edited.jsonl", start, str(target), "c1")
    transcript(tmp_path / "untouched.jsonl", start + 100, "b.toml", "c2")  # relative to cwd
    conn = ledger.connect(Home.resolve().state_db)
    for name in ("edited.jsonl", "untouched.jsonl"):
        observe.observe_file(conn, "demo", tmp_path / name, "generic")
    facts = {
        row["path"]: json.loads(row["facts"])
        for row in conn.execute("SELECT path, facts FROM runs WHERE idx = 0")
    }
    assert facts[str(tmp_path / "edited.jsonl")]["user_edited_files"] == [str(target)]
    assert facts[str(tmp_path / "untouched.jsonl")]["user_edited_files"] == []
    usage = skill_usage(conn, "demo")["configs"]
    assert usage["runs_invoked"] == 2 and usage["post_use_edit_rate"] == 0.5
