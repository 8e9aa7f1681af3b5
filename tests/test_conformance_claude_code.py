"""Conformance with the real Claude Code CLI: evolve installed, sessions run with `claude -p`.

The pinned `claude` binary (tests/agent_clis.py) talks to a scripted fake Messages API
(tests/fake_claude_api.py) on 127.0.0.1; HOME, CLAUDE_CONFIG_DIR and EVOLVE_HOME are the
test's tmp dirs (tests/conftest.py) and both proxies point at a closed local port, so
nothing leaves the machine. What is real: the CLI, its hook runner and the hook payloads,
the transcripts it writes, the way it lists skills and runs the `Skill` tool, how it puts a
SessionStart hook's output into the model's context, and evolve's install, hooks, spool,
observe, reflection and uninstall.

One scenario, in the order a person meets it: a session where `npm test` fails and the
agent recovers, the same session resumed with a correction, a session that loads a skill,
an offline reflection, the next session (which must carry the lesson and list the skill)
and an uninstall that gives the person's files back byte for byte. Beside it: a broken hook
command is noticed by the same checks (they can fail), and the watcher a real session
starts survives the CLI and is stopped by uninstall.

The first run installs the CLI with npm (a ~200 MB download, outside the per-test timeout: the
timeout below covers the test function only); without npm or the registry, these tests skip.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations import claude_code
from evolve.observe import ingest
from evolve.observe.records import drain_pending
from evolve.session.context import MEMO_TITLE
from evolve.store import ledger
from evolve.workspace.agent import Agent
from tests import agent_clis
from tests.conformance import alive, cli_env, evolve_cli, installed, snapshot, spool_records
from tests.fake_claude_api import FakeClaudeAPI
from tests.helpers import commit_all, git, git_out, parsed_trailers, skill_text

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(120, func_only=True)]

AGENT = "shop"
SKILL = "release-cut"
SKILL_DESCRIPTION = "Use when asked to cut or tag a release of this repository."
CORRECTION = "No, don't use npm, always use pnpm here"
CLI_TIMEOUT_S = 60
# The person's own settings, written before install in their own style (4 spaces, no final
# newline): their permission rule lets `npm test` run in `-p` mode, their hook logs Bash calls.
PERSON_SETTINGS = """{{
    "permissions": {{
        "allow": ["Bash(npm test:*)"]
    }},
    "env": {{"SHOP_FLAVOUR": "vanilla"}},
    "hooks": {{
        "PostToolUse": [
            {{"matcher": "Bash", "hooks": [{{"type": "command", "command": "echo bash >> {log}"}}]}}
        ]
    }}
}}"""
PERSON_EXCLUDE = "# my own excludes\n*.local\n/scratch/\n"
SKILL_BODY = "## Steps\n1. Run the tests first.\n2. Tag with vX.Y.Z.\n"
TEST_SCRIPT = """#!/bin/sh
if [ "$1" = "--update-snapshots" ]; then echo "3 passing"; exit 0; fi
echo "1 failing: parser.test.js (snapshot mismatch)"; exit 1
"""


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned `claude` binary, installed into .cache/agent-clis/ on first use."""
    return installed(agent_clis.claude_code, agent_clis.CLAUDE_CODE)


class Claude:
    """Runs the real `claude -p` in a project against the fake API; returns its JSON result.

    The hooks start no watcher (EVOLVE_NO_WATCHER=1; the test stands in for it) unless
    `watcher=True`.
    """

    def __init__(
        self, binary: Path, api: FakeClaudeAPI, project: Path, proxy_port: int, watcher: bool = False
    ) -> None:
        self.binary, self.api, self.project = binary, api, project
        self.env = cli_env(  # HOME, CLAUDE_CONFIG_DIR, EVOLVE_HOME: the test's (conftest)
            proxy_port,
            watcher,
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="sk-ant-fake-conformance",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
        )

    def run(self, prompt: str, *, resume: str | None = None) -> dict:
        argv = [str(self.binary), "-p", "--output-format", "json"]
        if resume:
            argv += ["--resume", resume]
        proc = subprocess.run(
            [*argv, prompt],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )
        assert proc.returncode == 0, f"claude -p exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        result = json.loads(proc.stdout)
        assert result.get("is_error") is False, result
        self.api.check_done()
        return result


def assert_hooks_ran(home: Home, session: str, events: list[str], skip: int = 0) -> list[dict]:
    """The spool (from record `skip` on) holds exactly `events` for `session`, and no hook failed."""
    log = home.logs_dir / "hooks.log"
    assert not log.exists(), f"a hook failed:\n{log.read_text()}"
    records = spool_records(home)[skip:]
    assert [r["event"] for r in records] == events, records
    for record in records:
        assert record["agent"] == AGENT
        assert session in (record.get("session"), record.get("session_id")), record
    return records


def make_project(tmp_path: Path) -> tuple[Path, Path]:
    """A person's project with their own Claude settings and git excludes; (project, hook log)."""
    project = tmp_path / "shop-app"
    project.mkdir()
    git(project, "init", "-q")
    (project / "package.json").write_text(
        json.dumps(
            {"name": "shop-app", "version": "1.1.0", "private": True, "scripts": {"test": "sh test.sh"}},
            indent=2,
        )
        + "\n"
    )
    (project / "test.sh").write_text(TEST_SCRIPT)
    person_log = tmp_path / "person-hook.log"
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(PERSON_SETTINGS.format(log=person_log))
    with (project / ".git" / "info" / "exclude").open("a") as handle:
        handle.write(PERSON_EXCLUDE)
    return project, person_log


def transcript_of(session: str) -> Path:
    found = list((claude_code.claude_dir() / "projects").glob(f"*/{session}.jsonl"))
    assert len(found) == 1, f"the CLI's transcript of {session}: {found}"
    return found[0]


def test_real_claude_code_sessions_are_learned_from(
    claude_bin, fake_claude_api, closed_port, tmp_path, evolve_home
):
    api = fake_claude_api
    home = Home.resolve()
    project, person_log = make_project(tmp_path)
    before = snapshot(project)

    evolve_cli("init", AGENT)
    agent = Agent.open(AGENT, home)
    skill = agent.skills_dir / SKILL / "SKILL.md"  # the person writes a skill for their agent
    skill.parent.mkdir(parents=True)
    skill.write_text(skill_text(SKILL, SKILL_DESCRIPTION, SKILL_BODY))
    commit_all(agent.path, f"add the {SKILL} skill")
    evolve_cli("install", "claude-code", "--agent", AGENT, "--project", str(project))
    assert (project / ".claude" / "skills" / SKILL).is_symlink()
    claude = Claude(claude_bin, api, project, closed_port)

    # 1. `npm test` fails, the agent updates the snapshots, the tests pass
    failing = api.tool("Bash", {"command": "npm test", "description": "Run the tests"})
    passing = api.tool(
        "Bash", {"command": "npm test -- --update-snapshots", "description": "Update the snapshots"}
    )
    api.text("The snapshot was stale; after updating it all 3 tests pass.")
    first = claude.run("Run the tests please")
    session = first["session_id"]
    [shown, *_] = assert_hooks_ran(home, session, ["impressions", "stop", "session_end"])
    assert shown["skills"] == [SKILL]
    results = {
        block["tool_use_id"]: block
        for r in api.agent_turns()
        for m in r.body["messages"]
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if block.get("type") == "tool_result"
    }
    assert results[failing].get("is_error") is True and "1 failing" in str(results[failing]["content"])
    assert not results[passing].get("is_error") and "3 passing" in str(results[passing]["content"])
    # the person's own hook still runs beside evolve's (PostToolUse: the call that succeeded)
    assert person_log.read_text() == "bash\n"

    # 2. the same session resumed: the person corrects the agent
    mark = len(spool_records(home))
    api.text("Understood: pnpm from now on.")
    second = claude.run(CORRECTION, resume=session)
    assert second["session_id"] == session
    assert_hooks_ran(home, session, ["impressions", "stop", "session_end"], skip=mark)

    # 3. a new session loads the agent's skill through the Skill tool
    mark = len(spool_records(home))
    skill_call = api.tool("Skill", {"skill": SKILL})
    api.text("Release 1.2 is cut and tagged v1.2.0.")
    third = claude.run("Cut the release 1.2")
    release = third["session_id"]
    assert release != session
    records = assert_hooks_ran(home, release, ["impressions", "invocation", "stop", "session_end"], skip=mark)
    assert records[1]["skill"] == SKILL and records[1]["tool_use_id"] == skill_call
    loaded = api.agent_turns()[-1].text()
    assert "Run the tests first." in loaded  # the linked SKILL.md's body reached the model

    # what the watcher does: drain the spool, read the sources install wrote
    conn = ledger.connect(home.state_db)
    try:
        # six Stop/SessionEnd records name two transcripts: each is observed once
        assert drain_pending(conn, home) == {"impressions": 3, "invocation": 1, "observed": 2}
        sources = ingest.source_files(Agent.open(AGENT, home).config.sources)
        assert sorted(p for p, _ in sources) == sorted(str(transcript_of(s)) for s in (session, release))
        ingest.observe(conn, AGENT, sources)
        invocations = conn.execute(
            "SELECT skill, tool_use_id, session FROM invocations WHERE agent = ?", (AGENT,)
        ).fetchall()
        assert [tuple(r) for r in invocations] == [(SKILL, skill_call, release)]  # exactly once
    finally:
        conn.close()
    runs = {(r["session"], r["run"]): r for r in json.loads(evolve_cli("score", "--json", AGENT))}
    assert set(runs) == {(session, 0), (session, 1), (release, 0)}
    assert set(runs[session, 0]["signals"]) == {"error_recovered"}
    assert runs[session, 0]["errors"] == 1 and runs[session, 0]["recovered"]
    assert runs[session, 0]["path"] == str(transcript_of(session))
    assert set(runs[session, 1]["signals"]) == {"user_correction"}
    assert runs[session, 1]["request"] == CORRECTION
    assert runs[release, 0]["skills"] == [SKILL] and not runs[release, 0]["signals"]
    [usage] = [s for s in json.loads(evolve_cli("skills", AGENT, "--json")) if s["name"] == SKILL]
    assert usage["invocations"] == 1 and usage["impressions"] == 2  # two sessions were shown it

    # 4. an offline reflection turns the correction into a memo rule, in one commit
    outcome = json.loads(evolve_cli("reflect", AGENT, "--json"))
    assert outcome["status"] == "committed", outcome
    repo = home.agent_dir(AGENT)
    subject = git_out(repo, "log", "-1", "--format=%s")
    assert subject == f"reflect({AGENT}): remember 1 correction from the user"
    trailers = parsed_trailers(repo)
    assert {"Evolve-Score", "Evolve-Signals", "Evolve-Runs", "Evolve-Ops"} <= set(trailers)
    assert trailers["Evolve-Model"] == "offline"
    assert "user_correction" in trailers["Evolve-Signals"] and f"{session[:12]}#1" in trailers["Evolve-Runs"]
    diff = git_out(repo, "show", "--format=", "HEAD", "--", "memo.md")
    [lesson] = [line[1:] for line in diff.splitlines() if line.startswith("+-")]
    assert CORRECTION in lesson

    # 5. the next session's request carries the lesson and lists the skill
    mark = len(spool_records(home))
    api.text("I will use pnpm.")
    fourth = claude.run("Install the dependencies")
    assert_hooks_ran(home, fourth["session_id"], ["impressions", "stop", "session_end"], skip=mark)
    request = api.agent_turns()[-1]
    context = request.text()
    assert MEMO_TITLE in context and lesson in context
    assert f"- {SKILL}: {SKILL_DESCRIPTION}" in context
    assert "Skill" in request.tool_names()
    assert not (home.run_dir / "watch.spawned").exists()  # EVOLVE_NO_WATCHER: no process left behind

    # 6. uninstall gives the person's files back, byte for byte
    evolve_cli("uninstall", "claude-code", "--agent", AGENT, "--project", str(project))
    assert snapshot(project) == before


def break_python(project: Path, home: Home) -> None:
    """Hook commands that cannot start: an interpreter that is not there."""
    claude_code.install(home, AGENT, "project", str(project), python=str(project.parent / "no-such-python"))


def break_agent(project: Path, home: Home) -> None:
    """Hook commands that run and fail: they name an agent that does not exist."""
    claude_code.install(home, AGENT, "project", str(project))
    settings = project / ".claude" / "settings.local.json"
    settings.write_text(settings.read_text().replace(f"--agent {AGENT}", "--agent ghost"))


@pytest.mark.parametrize(
    ("breakage", "complaint"),
    [(break_python, r"assert \[\] == \["), (break_agent, "(?s)a hook failed:.*no agent 'ghost'")],
    ids=["python-missing", "unknown-agent"],
)
def test_a_broken_hook_command_is_noticed(
    breakage, complaint, claude_bin, fake_claude_api, closed_port, tmp_path, evolve_home
):
    """The checks above can fail: with hooks that cannot do their work, `assert_hooks_ran` says so."""
    home = Home.resolve()
    project, _ = make_project(tmp_path)
    evolve_cli("init", AGENT)
    (home.agent_dir(AGENT) / "memo.md").write_text(f"{MEMO_TITLE}\n\n## Strategies\n\n- Use pnpm.\n")
    breakage(project, home)
    fake_claude_api.text("Hello.")
    result = Claude(claude_bin, fake_claude_api, project, closed_port).run("Say hello")
    # Claude Code treats a failing hook as a non-blocking error: the session itself succeeded
    assert result["result"] == "Hello."
    with pytest.raises(AssertionError, match=complaint):
        assert_hooks_ran(home, result["session_id"], ["impressions", "stop", "session_end"])
    assert "- Use pnpm." not in fake_claude_api.agent_turns()[0].text()


def test_the_watcher_a_real_session_starts_outlives_it_and_uninstall_stops_it(
    claude_bin, fake_claude_api, closed_port, tmp_path, evolve_home, watcher_reaper
):
    home = Home.resolve()
    project, _ = make_project(tmp_path)
    evolve_cli("init", AGENT)
    evolve_cli("install", "claude-code", "--agent", AGENT, "--project", str(project))
    fake_claude_api.text("Hello.")
    result = Claude(claude_bin, fake_claude_api, project, closed_port, watcher=True).run("Say hello")
    pid = int((home.run_dir / "watch.spawned").read_text())
    assert alive(pid)  # after Claude Code ended the session and its hooks
    deadline = time.monotonic() + 30
    runs: list = []
    while not runs and time.monotonic() < deadline:  # the watcher drains the spool: the run is observed
        time.sleep(0.2)
        conn = ledger.connect(home.state_db)
        try:
            runs = conn.execute("SELECT session FROM runs WHERE agent = ?", (AGENT,)).fetchall()
        finally:
            conn.close()
    assert [r["session"] for r in runs] == [result["session_id"]]
    out = json.loads(
        evolve_cli("uninstall", "claude-code", "--agent", AGENT, "--project", str(project), "--json")
    )
    assert out["watcher_stopped"] == pid
    assert not alive(pid)


def test_a_newcomers_first_correction_is_learned_by_the_watcher_within_minutes(
    claude_bin, fake_claude_api, closed_port, tmp_path, evolve_home, watcher_reaper
):
    """Newcomer 9: no `evolve reflect`, no hand-written model config, no 12 hours of waiting.

    The watcher the first session starts reflects `first_reflection_minutes` after the first
    run worth it (5 by default; a few seconds here, so the test does not wait five minutes).
    """
    home = Home.resolve()
    project, _ = make_project(tmp_path)
    home.ensure()
    home.config_file.write_text("[schedule]\nfirst_reflection_minutes = 0.05\n")
    evolve_cli("init", AGENT)
    said = evolve_cli("install", "claude-code", "--agent", AGENT, "--project", str(project))
    assert f"`evolve reflect {AGENT}` learns now; `evolve status` shows when the next cycle runs" in said
    claude = Claude(claude_bin, fake_claude_api, project, closed_port, watcher=True)
    fake_claude_api.text("Installed them with npm install.")
    session = claude.run("Install the dependencies")["session_id"]
    fake_claude_api.text("Understood: pnpm from now on.")
    claude.run(CORRECTION, resume=session)
    repo = home.agent_dir(AGENT)
    deadline = time.monotonic() + 60
    while "reflect(" not in git_out(repo, "log", "-1", "--format=%s") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (
        git_out(repo, "log", "-1", "--format=%s") == f"reflect({AGENT}): remember 1 correction from the user"
    )
    assert CORRECTION in (repo / "memo.md").read_text()
    # the commit lands before the watcher records the reflection in state.db: status follows soon
    settled = time.monotonic() + 30
    while (
        "next cycle: in 12 h (every 12 h)" not in (status := evolve_cli("status"))
        and time.monotonic() < settled
    ):
        time.sleep(0.2)
    assert "next cycle: in 12 h (every 12 h)" in status
    evolve_cli("uninstall", "claude-code", "--agent", AGENT, "--project", str(project))  # stops the watcher


RELEASE_FIX = (
    "That's not how we release here. The version lives in two files, package.json and "
    "src/version.ts, and CI tags the release after the merge."
)
NOTES_ANSWER = (
    "German, and only what users notice: leave out refactors and CI. That's how we always want release notes."
)


def test_a_correction_and_a_preference_typed_in_real_sessions_are_heard(
    claude_bin, fake_claude_api, closed_port, tmp_path, evolve_home
):
    """The shapes the real CLI writes: a correction after "done", a preference as a reply.

    Both are typed with `--resume`, the preference as the reply to a question in the agent's
    text. AskUserQuestion cannot run here: `-p` answers it "No such tool available:
    AskUserQuestion … disabled for this session"; its answers are read in the shape the
    reference records (tests/transcripts/test_hearing_scenarios.py).
    """
    api = fake_claude_api
    home = Home.resolve()
    project, _ = make_project(tmp_path)
    evolve_cli("init", AGENT)
    evolve_cli("install", "claude-code", "--agent", AGENT, "--project", str(project))
    claude = Claude(claude_bin, api, project, closed_port)

    api.text("Released v1.4.0: I bumped package.json with npm version and pushed the tag.")
    session = claude.run("Cut release 1.4")["session_id"]
    api.text("Understood: both files, and CI tags it. Which language should the release notes be in?")
    claude.run(RELEASE_FIX, resume=session)
    api.text("Die Release Notes sind fertig.")
    claude.run(NOTES_ANSWER, resume=session)

    conn = ledger.connect(home.state_db)
    try:
        drain_pending(conn, home)
        ingest.observe(conn, AGENT, ingest.source_files(Agent.open(AGENT, home).config.sources))
    finally:
        conn.close()
    runs = {r["run"]: r for r in json.loads(evolve_cli("score", "--json", AGENT)) if r["session"] == session}
    # a correction, and a convention of the team's ("how we release here"): both signals
    assert set(runs[1]["signals"]) == {"user_correction", "user_preference"}, runs[1]
    assert "that's not how" in runs[1]["correction_cue"]
    assert set(runs[2]["signals"]) == {"user_preference"}, runs[2]
    assert "that's how we" in runs[2]["preference_cue"]
    # the offline reflection keeps both, word for word, for the next session
    assert json.loads(evolve_cli("reflect", AGENT, "--json"))["status"] == "committed"
    api.text("Ich schreibe sie auf Deutsch.")
    claude.run("Write the release notes for 1.5")
    context = api.agent_turns()[-1].text()
    assert RELEASE_FIX in context and NOTES_ANSWER in context
