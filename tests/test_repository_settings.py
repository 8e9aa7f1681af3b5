"""An agent repository whose own `.git/config` git cannot parse: one bad line, named as one.

Every command said the repository was "not a git repository … restore its .git from a backup,
or clone the agent's remote": a backup or a clone would lose what the sound repository holds,
where the remedy is the one line git names.
"""

from __future__ import annotations

import json

from tests.helpers import make_agent, run_cli


def test_a_bad_line_in_the_repositorys_settings_is_named_with_its_remedy(evolve_home):
    make_agent("sound")
    agent = make_agent("demo")
    config = agent.path / ".git" / "config"
    kept = config.read_bytes()
    config.write_bytes(kept + b"[core\n  broken =\n")
    said = "git cannot read this repository's settings (fatal: bad config line"
    rows = {row["name"]: row for row in json.loads(run_cli("status", "--json").stdout)["agents"]}
    assert rows["sound"]["repository_problem"] is None
    assert rows["demo"]["repository_problem"].startswith(said), rows["demo"]
    assert (
        f"fix or remove the line git names in {agent.path}/.git/config" in rows["demo"]["repository_problem"]
    )
    out = run_cli("log", "demo")
    assert out.returncode == 1 and said in out.stderr.splitlines()[-1]
    assert "restore its .git from a backup" not in out.stderr
    config.write_bytes(kept)  # the remedy: the line goes, and nothing else was touched
    assert run_cli("log", "demo").returncode == 0
    assert not (evolve_home / "logs" / "crash.log").exists()
