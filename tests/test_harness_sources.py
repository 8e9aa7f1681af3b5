"""One agent, several harnesses: each run carries its source in score, skills and report."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from evolve import cli
from evolve.api import open_agent
from evolve.home import Home
from evolve.metrics.usage import store_impressions
from evolve.observe import ingest
from evolve.store import ledger
from tests import observe_helpers
from tests.helpers import evolve_commit, make_agent, skill_text
from tests.observe_helpers import Transcript
from tests.transcripts.test_codex import LISTING, call, meta, output, said, typed, write

HOUR_AGO = datetime.now(UTC) - timedelta(hours=1)  # inside every rate's window, whatever the date


def run_json(capsys, *argv: str):
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def recent(records: list[dict]) -> list[dict]:
    for number, record in enumerate(records):
        record["timestamp"] = (HOUR_AGO + timedelta(seconds=number)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return records


def test_runs_of_each_harness_are_scored_and_shown_with_their_source(
    evolve_home, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(observe_helpers, "START", HOUR_AGO)
    agent = make_agent("shop")
    evolve_commit(agent, {"skills/release-cut/SKILL.md": skill_text("release-cut").encode()})
    home = Home.resolve()
    claude = Transcript(session="5e55a0c1-0000-4000-8000-00000000c1de")
    claude.user("Run the tests")
    claude.call("Bash", {"command": "npm test"}, "1 failing", error=True)
    claude.skill("release-cut")
    claude_path = claude.write(tmp_path / "claude.jsonl")
    rollout = write(
        tmp_path / "rollout-2026-12-01T18-54-35-01a232f5-6fe1-7f83-b588-fba2cf745af0.jsonl",
        recent(
            [
                meta("/home/dev/src/shop"),
                said("developer", LISTING),
                typed("cut the release"),
                call("c1", "cat /home/dev/src/shop/.agents/skills/release-cut/SKILL.md"),
                output("c1", 0, "---"),
                typed("No, that's wrong: tag it v2"),
            ]
        ),
    )
    generic = tmp_path / "other-agent.jsonl"
    generic.write_text(json.dumps({"type": "user", "text": "hello", "session": "g1"}) + "\n")
    with ledger.opened(home.state_db) as conn:
        ingest.observe(
            conn,
            "shop",
            [(str(claude_path), "claude_code"), (str(rollout), "codex"), (str(generic), "generic")],
        )
        store_impressions(conn, "shop", claude.session, ["release-cut"])
        store_impressions(conn, "shop", "01a232f5-6fe1-7f83-b588-fba2cf745af0", ["release-cut"])
    open_agent("shop").session("api-1").record_run([{"role": "user", "content": "Summarise the log"}])

    runs = run_json(capsys, "score", "shop")
    assert sorted({r["source"] for r in runs}) == ["api", "claude_code", "codex", "generic"]
    [correction] = [r for r in runs if r["correction"]]
    assert correction["source"] == "codex"
    assert cli.main(["score", "shop"]) == 0 and "codex" in capsys.readouterr().out

    [skill] = run_json(capsys, "skills", "shop")
    assert [(s["source"], s["runs_shown"], s["runs_invoked"]) for s in skill["by_source"]] == [
        ("claude_code", 1, 1),
        ("codex", 2, 1),
    ]
    assert skill["invocations"] == 2 and skill["runs_invoked"] == 2
    assert cli.main(["skills", "shop"]) == 0
    assert "claude_code used in 1 of 1 runs shown; codex used in 1 of 2 runs shown" in capsys.readouterr().out

    report = run_json(capsys, "report", "shop")
    assert {s["source"]: s["runs"] for s in report["sources"]} == {
        "api": 1,
        "claude_code": 1,
        "codex": 2,
        "generic": 1,
    }
    assert [s["source"] for s in report["skills"][0]["by_source"]] == ["claude_code", "codex"]
    assert cli.main(["report", "shop"]) == 0 and "codex: 2 runs" in capsys.readouterr().out
