"""The hooks' hot path stays light: no heavy module imported; the name check mirrors evolve's own.

A hook runs at every event of the user's agent, so what it imports is its cost. Split from
test_hooks.py (which holds the hooks' behaviour) to keep each module readable in one sitting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evolve import hookio
from evolve.names import name_problem
from tests.test_hooks import ROOT, agent, argv_for, hook_log, spooled  # noqa: F401 (agent: a fixture)

LIGHT_PROBE = """
import sys
before = set(sys.modules)
import evolve.hookmain as h
h.main({argv!r})
loaded = sorted(set(sys.modules) - before)
sys.stderr.write("LOADED " + " ".join(loaded) + "\\n")
"""
HEAVY = {
    "argparse",
    "subprocess",
    "sqlite3",
    "json",
    "re",
    "pathlib",
    "dataclasses",
    "tomllib",
    "typing",
    "logging",
    "git",
    "anthropic",
    "tiktoken",
    "watchdog",
    "yaml",
}


@pytest.mark.parametrize(
    "event, payload",
    [
        ("stop", {"session_id": "s1", "transcript_path": "/t"}),
        ("post-tool-use", {"tool_name": "Skill", "tool_input": {"skill": "fix-tests"}, "tool_use_id": "t"}),
        ("session-start", {"session_id": "s1"}),
    ],
)
@pytest.mark.usefixtures("agent")
def test_the_hot_path_imports_nothing_heavy(evolve_home, event, payload):
    argv = argv_for(event)[4:]
    code = LIGHT_PROBE.format(argv=argv)
    # -S: no site (an import line of a .pth file, or an editable install's finder, loads modules
    # of its own), so every import shows
    proc = subprocess.run(
        [sys.executable, "-S", "-P", "-c", code],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(ROOT), "EVOLVE_NO_WATCHER": "1", "EVOLVE_FORBID_HOME": ""},
    )
    loaded = set(proc.stderr.decode().split("LOADED ", 1)[1].split())
    assert not loaded & HEAVY, sorted(loaded & HEAVY)
    assert len(spooled(evolve_home)) == 1 and hook_log(evolve_home) == ""


def test_hookmain_mirrors_the_modules_it_cannot_import():
    for name in ["a", "fix-tests", "a1-b2", "-a", "a-", "a--b", "A", "a_b", "", "x" * 64, "x" * 65, "é"]:
        assert hookio.valid_name(name) == (name_problem(name) is None), name
