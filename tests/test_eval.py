"""`evolve eval` end to end: the pinned real Claude Code runs each lesson's case, with and without.

The harness (`claude plugin eval`) runs on an export of the agent's main against a fake
Messages API whose model follows a lesson only when its request carries it
(tests/eval_helpers.py), so each Δ is known before the run: 1 for a lesson it follows, 0 for
one it ignores. Beside it: cases whose graders are broken, a run stopped at the cost ceiling,
an interrupted run, and a machine without Claude Code or without its eval command.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.store import ledger
from evolve.workspace import memo as memo_mod
from evolve.workspace.agent import Agent
from tests import agent_clis
from tests.conformance import cli_env, installed
from tests.eval_helpers import FollowingModel, Rule, contains, grader, write_case
from tests.helpers import commit_all, git_out, make_agent, run_cli, write_skill

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(120, func_only=True)]

AGENT = "shop"
PNPM = "This repo uses pnpm, never npm: pnpm install, pnpm add."
VITEST = "Tests here run with vitest, not jest."
DRAFT = "An uncommitted edit is no lesson yet."
SKILL = "release-cut"
SKILL_DESCRIPTION = "Use when asked to cut or tag a release of this repository."
INSTALL = Rule("install the dependencies", "uses pnpm", "Run `pnpm install`.", "Run `npm install`.")
TESTS = Rule("run the tests", "vitest", "Run `npm test`.", "Run `npm test`.")  # it ignores the lesson
RELEASE = Rule("Cut a release", SKILL_DESCRIPTION, "Tagged v1.2.0 with release-cut.", "Bumped the version.")


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return installed(agent_clis.claude_code, agent_clis.CLAUDE_CODE)


def lesson_agent(bullets: list[str], skill: bool = False) -> tuple[Agent, list[str]]:
    """The agent `shop` as a plugin, with `bullets` in its memo (and the skill); their ids."""
    agent = make_agent(AGENT)
    text = agent.memo_path.read_text()
    text = text.replace(
        "## Strategies for this user and domain\n",
        "## Strategies for this user and domain\n\n" + "".join(f"- {b}\n" for b in bullets),
    )
    agent.memo_path.write_text(text)
    if skill:
        write_skill(agent.path, SKILL, SKILL_DESCRIPTION, "## Steps\n1. Tag with vX.Y.Z.\n")
    commit_all(agent.path, "lessons")
    ids = [memo_mod.lesson_id(b) for b in bullets]
    return agent, ids


def use_claude(home: Path, binary: Path) -> None:
    """`[eval] claude = ...` in config.toml: the pinned binary (it is not on the test's PATH)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[eval]\nclaude = "{binary}"\n')


def evolve_env(api: FollowingModel, proxy_port: int, **extra: str) -> dict[str, str]:
    return cli_env(
        proxy_port,
        False,
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="sk-ant-fake-eval",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        **extra,
    )


def evolve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evolve", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=100,
        check=False,
    )


def eval_rows(home: Path) -> list[dict]:
    with ledger.opened(Home.resolve(home).state_db) as conn:
        return [dict(r) for r in conn.execute("SELECT * FROM evals ORDER BY id")]


def test_each_lesson_is_scored_with_and_without_the_agent(claude_bin, evolve_home, closed_port):
    agent, (pnpm, vitest) = lesson_agent([PNPM, VITEST], skill=True)
    write_case(
        agent.path,
        pnpm,
        "How do I install the dependencies of this repo?",
        {
            "uses-pnpm": contains("pnpm install"),
            "no-npm": grader(target="last_message", match="not_contains", pattern=r"(^|[^p])npm install"),
        },
    )
    write_case(agent.path, vitest, "How do I run the tests?", {"vitest": contains("vitest")})
    write_case(agent.path, SKILL, "Cut a release of this repo.", {"tagged": contains("Tagged v")})
    commit_all(agent.path, "eval cases")
    agent.memo_path.write_text(agent.memo_path.read_text() + f"- {DRAFT}\n")
    before = git_out(agent.path, "status", "--porcelain")
    use_claude(evolve_home, claude_bin)
    api = FollowingModel([INSTALL, TESTS, RELEASE])
    try:
        started = time.monotonic()
        proc = evolve(evolve_env(api, closed_port), "eval", AGENT, "--runs", "1", "--json")
        wall = time.monotonic() - started
    finally:
        api.close()
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by_lesson = {r["lesson"]: r for r in data["lessons"]}
    assert {
        k: (r["status"], r["score_with"], r["score_without"], r["delta"]) for k, r in by_lesson.items()
    } == {
        pnpm: ("full", 1, 0, 1),
        vitest: ("full", 0, 0, 0),
        SKILL: ("full", 1, 0, 1),
    }
    assert all((r["runs_with"], r["runs_without"]) == (1, 1) for r in data["lessons"])
    assert all(r["cost_usd"] > 0 for r in data["lessons"]) and not data["partial"]
    # the memo and the skill reached the with-arm only (each case once per arm)
    assert sorted(api.answered) == sorted(
        [(rule.prompt, seen) for rule in (INSTALL, TESTS, RELEASE) for seen in (True, False)]
    )
    # what was recorded: the lesson's commit, main's tip, the date
    rows = eval_rows(evolve_home)
    tip = git_out(agent.path, "rev-parse", "main")
    lessons_commit = git_out(agent.path, "rev-parse", "main~1")
    assert {(r["lesson"], r["commit_sha"], r["tip"], r["status"]) for r in rows} == {
        (pnpm, lessons_commit, tip, "full"),
        (vitest, lessons_commit, tip, "full"),
        (SKILL, lessons_commit, tip, "full"),
    }
    # the person's repository is as it was: no results folder, their edit still uncommitted
    assert git_out(agent.path, "status", "--porcelain") == before
    assert not (agent.path / "evals" / "results").exists()
    assert Path(data["report"]).is_file() and Path(data["report"]).is_relative_to(evolve_home)
    assert not list((evolve_home / "run").glob("eval-*"))
    # evolve lessons and evolve report show it
    listing = run_cli("lessons", AGENT, "--json")
    assert listing.returncode == 0, listing.stderr
    listed = json.loads(listing.stdout)
    deltas = {r["id"]: (r["eval"] or {}).get("delta") for r in listed["lessons"]}
    draft = memo_mod.lesson_id(DRAFT)
    assert deltas == {pnpm: 1, vitest: 0, SKILL: 1, draft: None}  # the person's draft: untested
    text = run_cli("lessons", AGENT).stdout
    assert "EVAL Δ" in text.splitlines()[2]
    report = run_cli("report", AGENT).stdout
    assert "Lessons proven: 2 of 4 improve the agent, 0 make it worse, 1 untested" in report
    print(f"evolve eval, 3 lessons, 1 run per arm: {wall:.1f} s")


def test_a_case_with_a_broken_grader_is_an_error_never_a_result(claude_bin, evolve_home, closed_port):
    agent, (pnpm, throws, unknown) = lesson_agent([PNPM, VITEST, "Commit messages are in English."])
    write_case(
        agent.path, pnpm, "How do I install the dependencies?", {"uses-pnpm": contains("pnpm install")}
    )
    write_case(agent.path, throws, "How do I run the tests?", {"vitest": contains("(unclosed")})
    write_case(agent.path, unknown, "Write a commit message.", {"odd": grader("no-such-type", pattern="x")})
    commit_all(agent.path, "eval cases", no_verify=True)  # a person committed past the pre-commit check
    use_claude(evolve_home, claude_bin)
    api = FollowingModel([INSTALL, TESTS])
    try:
        proc = evolve(evolve_env(api, closed_port), "eval", AGENT, "--runs", "1")
    finally:
        api.close()
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[1:] == [
        "evolve: 2 case(s) could not be scored: recorded as partial or failed, never as a result; "
        "fix the case or run again"
    ]
    rows = {r["lesson"]: r for r in eval_rows(evolve_home)}
    assert (rows[pnpm]["status"], rows[pnpm]["delta"]) == ("full", 1)
    assert (rows[throws]["status"], rows[throws]["delta"]) == ("error", None)
    assert "a grader is broken: grader threw: Invalid regular expression" in rows[throws]["detail"]
    assert (rows[unknown]["status"], rows[unknown]["runs_with"], rows[unknown]["cost_usd"]) == ("error", 0, 0)
    assert (
        rows[unknown]["detail"].startswith("not loaded: invalid case.yaml")
        and "type" in rows[unknown]["detail"]
    )
    assert proc.stderr.startswith(f"evolve: running 3 eval case(s) of {AGENT!r} at ")
    assert "1 run(s) with the agent and as many without (claude plugin eval)\n" in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"evolve eval {AGENT}: 3 lesson(s) at ") and ", complete, $" in lines[0]
    assert any(line.startswith(throws) and "error: a grader is broken" in line for line in lines)
    with ledger.opened(Home.resolve(evolve_home).state_db) as conn:
        assert set(ledger.latest_evals(conn, AGENT)) == {("memo", pnpm)}
    # one lesson alone; a case whose folder names no lesson runs but is not recorded
    write_case(agent.path, "gone-lesson", "How do I install the dependencies?", {"x": contains("pnpm")})
    commit_all(agent.path, "a case left behind")
    api = FollowingModel([INSTALL])
    try:
        alone = evolve(evolve_env(api, closed_port), "eval", AGENT, "--lesson", pnpm, "--runs", "1", "--json")
        stale = evolve(evolve_env(api, closed_port), "eval", AGENT, "--lesson", "gone-lesson", "--runs", "1")
        nothing = run_cli("eval", AGENT, "--lesson", "no-such-lesson")
    finally:
        api.close()
    assert alone.returncode == 0, alone.stderr
    assert [(r["lesson"], r["delta"]) for r in json.loads(alone.stdout)["lessons"]] == [(pnpm, 1)]
    assert (
        stale.returncode == 0
        and "case evals/gone-lesson/ names no lesson on main: not recorded" in stale.stdout
    )
    assert nothing.returncode == 1 and nothing.stderr == (
        "evolve: error: lesson 'no-such-lesson' has no eval case on main (evals/no-such-lesson/); "
        f"`evolve lessons {AGENT}` lists the lessons\n"
    )
    assert len(api.answered) == 4 and len(eval_rows(evolve_home)) == 4  # 3, then the one lesson


def test_a_run_stopped_at_the_cost_ceiling_is_recorded_as_partial(claude_bin, evolve_home, closed_port):
    agent, (pnpm, vitest) = lesson_agent([PNPM, VITEST])
    write_case(
        agent.path, pnpm, "How do I install the dependencies?", {"uses-pnpm": contains("pnpm install")}
    )
    write_case(agent.path, vitest, "How do I run the tests?", {"vitest": contains("vitest")})
    commit_all(agent.path, "eval cases")
    api = FollowingModel([INSTALL, TESTS])
    # Claude Code found on PATH this time (no [eval] claude)
    path = os.pathsep.join([str(claude_bin.parent), os.environ["PATH"]])
    try:  # one fake run costs $0.0004: the ceiling stops the harness after the first
        proc = evolve(
            evolve_env(api, closed_port, PATH=path), "eval", AGENT, "--max-cost-usd", "0.0001", "--json"
        )
    finally:
        api.close()
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["partial"] and "cost" in data["partial_reason"].lower() and data["max_cost_usd"] == 0.0001
    rows = {r["lesson"]: r for r in eval_rows(evolve_home)}
    assert {r["status"] for r in rows.values()} == {"partial"} and set(rows) == {pnpm, vitest}
    assert sum(r["runs_with"] + r["runs_without"] for r in rows.values()) == len(api.answered) == 1
    assert all(r["delta"] is None for r in rows.values())
    with ledger.opened(Home.resolve(evolve_home).state_db) as conn:
        assert ledger.latest_evals(conn, AGENT) == {}  # never a result


def test_an_interrupted_run_is_recorded_as_partial(claude_bin, evolve_home, closed_port):
    agent, (pnpm, vitest) = lesson_agent([PNPM, VITEST])
    write_case(
        agent.path, pnpm, "How do I install the dependencies?", {"uses-pnpm": contains("pnpm install")}
    )
    write_case(agent.path, vitest, "How do I run the tests?", {"vitest": contains("vitest")})
    commit_all(agent.path, "eval cases")
    use_claude(evolve_home, claude_bin)
    api = FollowingModel([INSTALL, TESTS], delay_s=1.5)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evolve", "eval", AGENT, "--runs", "1", "--json"],
            env=evolve_env(api, closed_port),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not any(r.is_turn() for r in list(api.requests)) and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)  # as a service manager stops it
        out, err = proc.communicate(timeout=60)
    finally:
        api.close()
    assert proc.returncode == 130, err
    data = json.loads(out)
    assert data["interrupted"] and data["partial"]
    rows = eval_rows(evolve_home)
    assert {r["lesson"] for r in rows} == {pnpm, vitest} and {r["status"] for r in rows} == {"partial"}
    assert all(r["delta"] is None for r in rows)
    assert not list((evolve_home / "run").glob("eval-*"))  # the export is gone


def test_a_link_out_of_the_repository_on_main_is_never_evaluated(claude_bin, evolve_home):
    agent, (pnpm,) = lesson_agent([PNPM])
    write_case(
        agent.path, pnpm, "How do I install the dependencies?", {"uses-pnpm": contains("pnpm install")}
    )
    (agent.path / "evals" / pnpm / "fixture").symlink_to("/etc/hostname")
    commit_all(agent.path, "eval case with a link", no_verify=True)
    use_claude(evolve_home, claude_bin)
    proc = run_cli("eval", AGENT)
    assert proc.returncode == 1
    assert proc.stderr == (
        f"evolve: error: main holds a link that leads out of the repository (evals/{pnpm}/fixture); "
        "evolve never exports it: remove the link\n"
    )
    assert eval_rows(evolve_home) == [] and not list((evolve_home / "run").glob("eval-*"))


def test_without_claude_code_nothing_runs(evolve_home, tmp_path, monkeypatch):
    agent, (pnpm,) = lesson_agent([PNPM])
    write_case(
        agent.path, pnpm, "How do I install the dependencies?", {"uses-pnpm": contains("pnpm install")}
    )
    commit_all(agent.path, "eval cases")
    tip = git_out(agent.path, "rev-parse", "main")
    bare = tmp_path / "bin"  # git, no claude
    bare.mkdir()
    (bare / "git").symlink_to(shutil.which("git"))
    monkeypatch.setenv("PATH", str(bare))
    proc = run_cli("eval", AGENT)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "evolve: error: Claude Code is not installed (no `claude` on PATH): install Claude Code "
        '(https://code.claude.com/docs/en/setup), or set [eval] claude = "/path/to/claude" in config.toml'
    ]
    # a Claude Code from before `plugin eval`: its commander says the command is unknown
    old = bare / "claude"
    old.write_text("#!/bin/sh\necho \"error: unknown command 'eval'\" >&2\nexit 1\n")
    old.chmod(0o755)
    proc = run_cli("eval", AGENT, "--json")
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads(proc.stderr) == {
        "error": f"{old} has no `claude plugin eval` command (an older Claude Code?); update Claude "
        "Code (2.1.332 or later runs plugin evals)",
        "exit_code": 1,
    }
    assert eval_rows(evolve_home) == []
    assert (
        git_out(agent.path, "rev-parse", "main") == tip and git_out(agent.path, "status", "--porcelain") == ""
    )


def test_the_tools_a_case_asks_for_are_granted_and_no_other(evolve_home) -> None:
    """A case's `allowed_tools` reach the harness's operator grant; an MCP tool never does."""
    from evolve.evaluate.run import granted_tools

    agent, (pnpm, vitest) = lesson_agent([PNPM, VITEST])
    write_case(agent.path, pnpm, '---\nallowed_tools: ["Write", "mcp__x__y"]\n---\nAdd lodash.', {})
    write_case(agent.path, vitest, '---\nallowed_tools: ["Bash", "Write"]\n---\nRun the tests.', {})
    commit_all(agent.path, "eval cases", no_verify=True)
    tip = agent.repo.tip()
    assert granted_tools(agent, tip, [pnpm, vitest]) == ["Bash", "Write"]
    assert granted_tools(agent, tip, [pnpm]) == ["Write"]
