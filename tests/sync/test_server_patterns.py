"""A5: `[signals]` patterns arrive with a pulled agent.toml; none can hang or break a machine.

Each pattern from a file, a server or a model is matched through evolve.patterns, in
linear time; one this evolve refuses is dropped with a warning (doctor, the watcher) and
the rest of the file still applies.
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.transcripts import classify
from tests.sync_helpers import Clone, Machine
from tests.watch_helpers import new_watcher

# The review's transcript: a 38-character error text that `(x+x+)+y` backtracks on for ever.
REDOS = [
    {"type": "user", "text": "Deploy", "session": "r1"},
    {"type": "tool_call", "tool": "shell", "call_id": "c1", "input": {"cmd": "make"}},
    {"type": "tool_result", "call_id": "c1", "error": True, "output": "error: " + "x" * 38},
    {"type": "user", "text": "No, that is wrong"},
]


def _server_sets(machine: Machine, url: str, tmp_path: Path, signals: str) -> None:
    """The agent on the server; a team member (or anyone with push access) adds `[signals]`."""
    machine.create(url)
    assert machine.sync()[0] == 0
    team = Clone(tmp_path / "team", url)
    toml = team.path / "agent.toml"
    toml.write_text(toml.read_text() + f"\n[signals]\n{signals}\n")
    team.git("commit", "-qam", "team signals")
    team.git("push", "-q", "origin", "main")
    code, out = machine.sync()
    assert code == 0 and "1 in" in out, out


def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "redos.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in REDOS))
    return path


def test_a_catastrophic_pattern_from_the_server_does_not_hang_observe(machines, git_daemon, tmp_path):
    a, _b = machines
    _server_sets(a, git_daemon.url(), tmp_path, 'transient_patterns = ["(x+x+)+y"]')
    command = [
        sys.executable,
        "-P",
        "-m",
        "evolve",
        "--home",
        str(a.root),
        "observe",
        "a",
        "--format",
        "generic",
    ]
    try:  # a process of its own: a hang is killed and fails the test instead of the run
        proc = subprocess.run(
            [*command, str(_transcript(tmp_path))], capture_output=True, text=True, cwd=tmp_path, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("`evolve observe` did not return in 60 s: the server's pattern backtracks for ever")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "observed 1 file(s): 2 run(s) added or updated" in proc.stdout
    judge = classify.for_signals(a.agent.config.signals)  # the pattern is in force, matched linearly
    assert judge.is_transient("error: xxxxy")
    assert not judge.is_transient("error: " + "x" * 38)


def noise(generator: random.Random) -> str:
    """An error text of its own (the automaton's cache helps only texts it has seen)."""
    return "".join(generator.choice("abe ") for _ in range(2_000))


def test_patterns_built_to_defeat_the_cache_from_the_server_do_not_hang_observe(
    machines, git_daemon, tmp_path
):
    """Found by the attack on the fixed main: each such pattern cost ~0.6 s per error text.

    An error keeps 2,000 characters, so a transcript with many errors took hours.
    """
    a, _b = machines
    heavy = ", ".join('"(?s).*e' + ".{1000}" * 5 + f'[{c}#]"' for c in "%&~;")  # tried on every error
    _server_sets(a, git_daemon.url(), tmp_path, f"transient_patterns = [{heavy}]")
    generator = random.Random(5)
    lines = []
    for n in range(60):
        lines += [
            {"type": "user", "text": f"Deploy {n}", "session": "r2"},
            {"type": "tool_call", "tool": "shell", "call_id": f"c{n}", "input": {"cmd": f"make {n}"}},
            {
                "type": "tool_result",
                "call_id": f"c{n}",
                "error": True,
                "output": f"error {n}: {noise(generator)}",
            },
        ]
    lines.append({"type": "user", "text": "No, that is wrong"})
    path = tmp_path / "heavy.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    command = [
        sys.executable,
        "-P",
        "-m",
        "evolve",
        "--home",
        str(a.root),
        "observe",
        "a",
        "--format",
        "generic",
    ]
    try:
        proc = subprocess.run([*command, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("`evolve observe` did not return in 60 s: the server's patterns cost minutes per error")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "observed 1 file(s)" in proc.stdout


def test_a_pattern_this_evolve_refuses_is_dropped_with_a_warning_and_the_rest_applies(
    machines, git_daemon, tmp_path, caplog
):
    a, _b = machines
    _server_sets(
        a,
        git_daemon.url(),
        tmp_path,
        'threshold = 0.5\ntransient_patterns = ["(?<=vpn )down", "tunnel dropped"]',
    )
    out = a.ok("observe", "a", "--format", "generic", str(_transcript(tmp_path)))
    assert "2 run(s) added or updated" in out
    config = a.agent.config
    assert config.signals.threshold == 0.5 and config.signals.transient_patterns == ["tunnel dropped"]
    assert classify.for_signals(config.signals).is_transient("corp-vpn: tunnel dropped")
    said = "signals.transient_patterns: pattern '(?<=vpn )down': lookbehind cannot run in linear time"
    code, report, _err = a.evolve("doctor", "--json")
    [finding] = [f for f in json.loads(report)["findings"] if said in f["problem"]]
    assert finding["where"] == "a: agent.toml" and finding["level"] == "warning", finding
    assert "config broken" not in a.ok("status")
    with caplog.at_level(logging.WARNING, logger="evolve.watch"):
        watcher = new_watcher(a.home)
        watcher.close()
    assert said in caplog.text and "not watched" not in caplog.text
