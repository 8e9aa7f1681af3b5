"""`evolve eval` with a `claude` that misbehaves: what it writes is read only from its run's folder.

A stand-in for `claude` (a shell script answering `plugin eval --help`, then writing its
results) is what these need: the real harness never writes these shapes (tests/test_eval.py
runs it). Each ends in one line and nothing recorded, and the person's work tree is untouched.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve.errors import UserError
from evolve.evaluate import run as eval_run
from evolve.home import Home
from evolve.store import ledger
from evolve.workspace.agent import Agent
from tests.eval_helpers import contains, write_case
from tests.helpers import commit_all, git_out, make_agent

RESULT = {
    "cases": [{"name": "x", "arms": {"with": [{"score": 1}], "without": [{"score": 0}]}, "runsPerCase": 1}]
}


def fake_claude(tmp_path: Path, writes: str) -> Path:
    """A `claude` whose `plugin eval` runs `writes` (sh) with $out, the results folder it was given."""
    script = tmp_path / "claude"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$3" = --help ]; then echo "usage: --trust-plugin"; exit 0; fi\n'
        'while [ $# -gt 0 ]; do [ "$1" = --output-dir ] && out=$2; shift; done\n'
        f'mkdir -p "$out"\n{writes}\n'
    )
    script.chmod(0o755)
    return script


def agent_with_case(evolve_home: Path, claude: Path) -> tuple[Agent, str]:
    agent = make_agent("shop")
    agent.memo_path.write_text(agent.memo_path.read_text() + "- Use pnpm, never npm.\n")
    commit_all(agent.path, "a lesson")
    from evolve.workspace import memo as memo_mod

    lesson = memo_mod.lesson_id("Use pnpm, never npm.")
    write_case(agent.path, lesson, "Add lodash.", {"pnpm": contains("pnpm")})
    commit_all(agent.path, "its case")
    (evolve_home / "config.toml").write_text(f'[eval]\nclaude = "{claude}"\n')
    return Agent.open("shop", Home.resolve()), lesson


@pytest.mark.parametrize(
    ("writes", "said"),
    [
        (
            "python3 -c \"print('[' * 100000 + ']' * 100000)\" > \"$out/aggregate-result.json\"",
            "evolve cannot read (it is not JSON (RecursionError",
        ),
        ("printf '\\377\\376' > \"$out/aggregate-result.json\"", "evolve cannot read (it is not JSON"),
        ("echo '[1, 2]' > \"$out/aggregate-result.json\"", "(it is not a JSON object)"),
        (
            "echo '{json}' > \"$TMPDIR/elsewhere.json\"; "
            'ln -s "$TMPDIR/elsewhere.json" "$out/aggregate-result.json"',
            "left aggregate-result.json as a link out of its run's folder",
        ),
        ("head -c 2000 /dev/zero | tr '\\0' ' ' > \"$out/aggregate-result.json\"", "it is over 1,000 bytes"),
    ],
)
def test_results_evolve_cannot_trust_are_one_line_and_nothing_recorded(
    evolve_home, tmp_path, monkeypatch, writes, said
):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    if "over" in said:
        monkeypatch.setattr(eval_run, "MAX_RESULTS", 1000)
    claude = fake_claude(tmp_path, writes.replace("{json}", json.dumps(RESULT)))
    agent, _lesson = agent_with_case(evolve_home, claude)
    tip = agent.repo.tip()
    with pytest.raises(UserError) as raised:
        eval_run.evaluate(agent, eval_run.Ask())
    assert said in str(raised.value) and "nothing was recorded" in str(raised.value)
    assert "\n" not in str(raised.value)
    with ledger.opened(agent.home.state_db) as conn:
        assert conn.execute("SELECT count(*) FROM evals").fetchone()[0] == 0
    assert agent.repo.tip() == tip and git_out(agent.path, "status", "--porcelain") == ""


def test_a_report_left_as_a_link_is_never_copied(evolve_home, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not evolve's to copy\n")
    writes = (
        f'echo \'{json.dumps(RESULT)}\' > "$out/aggregate-result.json"; ln -s {secret} "$out/report.html"'
    )
    agent, lesson = agent_with_case(evolve_home, fake_claude(tmp_path, writes.replace('"x"', '"LESSON"')))
    (tmp_path / "claude").write_text((tmp_path / "claude").read_text().replace("LESSON", lesson))
    data = eval_run.evaluate(agent, eval_run.Ask())
    assert data["report"] is None and [row["delta"] for row in data["lessons"]] == [1.0]
    assert not (agent.home.cache_dir / "shop" / "eval-report.html").exists()


def test_a_hung_harness_stops_with_everything_it_started_at_the_second_ctrl_c(evolve_home, tmp_path):
    child = tmp_path / "child.pid"
    writes = f"trap '' INT\nsleep 300 & echo $! > {child}\nwait"  # it hangs, deaf to Ctrl-C, on a child
    agent, _lesson = agent_with_case(evolve_home, fake_claude(tmp_path, writes))
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolve", "eval", "shop"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    deadline = time.monotonic() + 30
    while not (child.exists() and child.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(child.read_text())
    proc.send_signal(signal.SIGINT)  # the harness is asked to finish up: this one does not
    time.sleep(0.5)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.decode().splitlines()[-1] == "evolve: interrupted"
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
    with ledger.opened(agent.home.state_db) as conn:
        assert conn.execute("SELECT count(*) FROM evals").fetchone()[0] == 0
    assert git_out(agent.path, "status", "--porcelain") == ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
