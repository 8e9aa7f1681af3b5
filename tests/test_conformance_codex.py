"""Conformance with the real OpenAI Codex CLI: evolve installed, sessions run with `codex exec`.

The pinned `codex` binary (tests/agent_clis.py) talks to a scripted fake Responses API
(tests/fake_codex_api.py) on 127.0.0.1 through a custom provider in the person's
config.toml; HOME, CODEX_HOME and EVOLVE_HOME are the test's tmp dirs (tests/conftest.py)
and both proxies point at a closed local port, so nothing leaves the machine. What is
real: the CLI, its hook runner, its trust check and the hook payloads, the rollouts it
writes, how it lists the linked skills and runs `exec_command`, how it puts a SessionStart
hook's output into the model's context, and evolve's install, hooks, spool, observe,
reflection and uninstall.

Codex runs a hook only once the person trusted it (interactively, `/hooks`); these
sessions pass `--dangerously-bypass-hook-trust` so the hooks run without a person, except
the one that shows an untrusted hook is silent and `evolve status` says so.

One scenario, as for Claude Code: a session where `npm test` fails and the agent recovers,
the same session resumed with a correction (`codex exec resume`, the same rollout), a
session that reads the skill, an offline reflection, the next session (which must carry
the lesson and list the skill) and an uninstall that gives the person's files back byte
for byte. The first run installs the CLI with npm (outside the per-test timeout); without
npm or the registry, the test skips.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations import codex
from evolve.observe import ingest
from evolve.observe.records import drain_pending
from evolve.session.context import MEMO_TITLE
from evolve.store import codex_rollouts, ledger
from evolve.workspace.agent import Agent
from tests import agent_clis
from tests.codex_counts import independent_counts, parsed_counts
from tests.conformance import alive, cli_env, evolve_cli, installed, snapshot, spool_records
from tests.fake_codex_api import FakeCodexAPI
from tests.helpers import commit_all, git, git_out, parsed_trailers, skill_text

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(120, func_only=True)]

AGENT = "shop"
SKILL = "release-cut"
SKILL_DESCRIPTION = "Use when asked to cut or tag a release of this repository."
SKILL_BODY = "## Steps\n1. Run the tests first.\n2. Tag with vX.Y.Z.\n"
CORRECTION = "No, don't use npm, always use pnpm here"
CLI_TIMEOUT_S = 60
TEST_SCRIPT = """#!/bin/sh
if [ "$1" = "--update-snapshots" ]; then echo "3 passing"; exit 0; fi
echo "1 failing: parser.test.js (snapshot mismatch)"; exit 1
"""
# The person's own Codex files, in their own style (4 spaces, no final newline): a hook of
# theirs that logs every command, and the provider that points Codex at the fake API.
PERSON_HOOKS = """{{
    "hooks": {{
        "PostToolUse": [
            {{"matcher": "Bash", "hooks": [{{"type": "command", "command": "echo bash >> {log}"}}]}}
        ]
    }}
}}"""
PERSON_CONFIG = """model = "gpt-5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}"
wire_api = "responses"
env_key = "FAKE_CODEX_KEY"
"""
PERSON_EXCLUDE = "# my own excludes\n*.local\n"


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The pinned `codex` binary, installed into .cache/agent-clis/ on first use."""
    return installed(agent_clis.codex, agent_clis.CODEX)


class Codex:
    """Runs the real `codex exec` in a project against the fake API; returns the session id.

    The hooks start no watcher (EVOLVE_NO_WATCHER=1; the test stands in for it) unless
    `watcher=True`.
    """

    def __init__(
        self, binary: Path, api: FakeCodexAPI, project: Path, proxy_port: int, watcher: bool = False
    ) -> None:
        self.binary, self.api, self.project = binary, api, project
        # HOME, CODEX_HOME, EVOLVE_HOME: the test's (conftest)
        self.env = cli_env(proxy_port, watcher, FAKE_CODEX_KEY="sk-fake-conformance")

    def run(self, prompt: str, *, resume: str | None = None, trusted: bool = True) -> str:
        flags = ["--dangerously-bypass-approvals-and-sandbox"]
        if trusted:
            flags.append("--dangerously-bypass-hook-trust")  # a person's /hooks approval, for tests
        argv = [str(self.binary), "exec", "--skip-git-repo-check"]
        argv += ["resume", *flags, resume, prompt] if resume else [*flags, prompt]
        proc = subprocess.run(
            argv,
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )
        assert proc.returncode == 0, f"codex exec exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        self.api.check_done()
        session = next(line for line in proc.stderr.splitlines() if line.startswith("session id: "))
        return session.removeprefix("session id: ").strip()


def assert_hooks_ran(home: Home, session: str, events: list[str], skip: int = 0) -> list[dict]:
    """The spool (from record `skip` on) holds exactly `events`, each of the agent; no hook failed."""
    log = home.logs_dir / "hooks.log"
    assert not log.exists(), f"a hook failed:\n{log.read_text()}"
    records = spool_records(home)[skip:]
    assert [r["event"] for r in records] == events, records
    for record in records:
        assert record["agent"] == AGENT
        assert record.get("session", record.get("session_id", session)) == session, record
    return records


def make_project(tmp_path: Path, api: FakeCodexAPI) -> tuple[Path, Path]:
    """A person's project and their own Codex config and hooks; (project, their hook's log)."""
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
    with (project / ".git" / "info" / "exclude").open("a") as handle:
        handle.write(PERSON_EXCLUDE)
    codex_home = Path(codex_rollouts.codex_home())
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(PERSON_CONFIG.format(url=api.url))
    person_log = tmp_path / "person-hook.log"
    (codex_home / "hooks.json").write_text(PERSON_HOOKS.format(log=person_log))
    return project, person_log


def rollout_of(session: str) -> Path:
    found = [p for p in codex_rollouts.rollouts() if p.endswith(f"-{session}.jsonl")]
    assert len(found) == 1, f"the CLI's rollout of {session}: {found}"
    return Path(found[0])


def test_real_codex_sessions_are_learned_from(codex_bin, fake_codex_api, closed_port, tmp_path, evolve_home):
    api = fake_codex_api
    home = Home.resolve()
    project, person_log = make_project(tmp_path, api)
    hooks_file = codex.hooks_file()
    before = snapshot(project), hooks_file.read_bytes()

    evolve_cli("init", AGENT)
    agent = Agent.open(AGENT, home)
    skill = agent.skills_dir / SKILL / "SKILL.md"  # the person writes a skill for their agent
    skill.parent.mkdir(parents=True)
    skill.write_text(skill_text(SKILL, SKILL_DESCRIPTION, SKILL_BODY))
    commit_all(agent.path, f"add the {SKILL} skill")
    out = evolve_cli("install", "codex", "--agent", AGENT, "--project", str(project))
    assert "wait for your trust" in out
    assert (project / ".agents" / "skills" / SKILL).is_symlink()
    cli = Codex(codex_bin, api, project, closed_port)

    # 0. an untrusted hook is silent: nothing spooled, and status says it waits for trust
    api.text("Hello.")
    cli.run("Say hello", trusted=False)
    assert spool_records(home) == []
    [state] = json.loads(evolve_cli("status", "--json"))["codex"]
    assert state["state"] == codex.WAITING

    # 1. `npm test` fails, the agent updates the snapshots, the tests pass
    failing = api.command("npm test")
    passing = api.command("npm test -- --update-snapshots")
    api.text("The snapshot was stale; after updating it all 3 tests pass.")
    session = cli.run("Run the tests please")
    shown, _started, _stop = assert_hooks_ran(home, session, ["impressions", "codex_hook", "stop"])
    assert shown["skills"] == [SKILL]
    results = api.agent_turns()[-1].outputs()
    assert "Process exited with code 1" in results[failing] and "1 failing" in results[failing]
    assert "Process exited with code 0" in results[passing] and "3 passing" in results[passing]
    assert person_log.read_text() == "bash\nbash\n"  # the person's own hook still runs beside evolve's
    [state] = json.loads(evolve_cli("status", "--json"))["codex"]
    assert state["state"] == codex.WORKING  # the status drained the spool: the hooks ran

    # 2. the same session resumed: the person corrects the agent; Codex appends to its rollout
    mark = len(spool_records(home))
    api.text("Understood: pnpm from now on.")
    assert cli.run(CORRECTION, resume=session) == session
    assert_hooks_ran(home, session, ["impressions", "codex_hook", "stop"], skip=mark)

    # 3. a new session reads the agent's skill: Codex listed it from .agents/skills
    mark = len(spool_records(home))
    read = api.command(f"cat .agents/skills/{SKILL}/SKILL.md")
    api.text("Release 1.2 is cut and tagged v1.2.0.")
    release = cli.run("Cut the release 1.2")
    assert release != session
    assert_hooks_ran(home, release, ["impressions", "codex_hook", "stop"], skip=mark)
    listing, loaded = api.agent_turns()[-2].text(), api.agent_turns()[-1].outputs()[read]
    # the agent's repository is a plugin named like it: Codex names a skill linked from it so
    assert f"- {AGENT}:{SKILL}: {SKILL_DESCRIPTION}" in listing
    assert "Run the tests first." in loaded  # the linked SKILL.md's body reached the model

    # what the watcher does: drain the spool, read the sources install wrote
    with ledger.opened(home.state_db) as conn:
        # (`evolve status` drained the first session's records already)
        assert drain_pending(conn, home) == {"impressions": 2, "noted": 2, "observed": 2}
        sources = ingest.source_files(Agent.open(AGENT, home).config.sources)
        rollouts = {rollout_of(s) for s in (session, release)}
        assert {Path(p) for p, fmt in sources if fmt == "codex"} >= rollouts  # and the untrusted one
        ingest.observe(conn, AGENT, sources)
        invocations = conn.execute(
            "SELECT skill, tool_use_id, session FROM invocations WHERE agent = ?", (AGENT,)
        ).fetchall()
        assert [tuple(r) for r in invocations] == [(SKILL, read, release)]  # exactly once
    for path in rollouts:  # the adapter on what the real CLI wrote, against an independent count
        got, want = parsed_counts(path), independent_counts(path)
        assert got["bad"] == 0 and want["command_events"] > 0
        for key in ("runs", "tool_calls", "tool_errors", "skills", "interrupts"):
            assert got[key] == want[key], (path.name, key, got[key], want[key])
    runs = {(r["session"], r["run"]): r for r in json.loads(evolve_cli("score", "--all", "--json", AGENT))}
    assert {(session, 0), (session, 1), (release, 0)} <= set(runs)
    assert {r["source"] for r in runs.values()} == {"codex"}
    assert set(runs[session, 0]["signals"]) == {"error_recovered"}
    assert runs[session, 0]["errors"] == 1 and runs[session, 0]["recovered"]
    assert runs[session, 0]["path"] == str(rollout_of(session))
    assert set(runs[session, 1]["signals"]) == {"user_correction"}
    assert runs[session, 1]["request"] == CORRECTION
    assert runs[release, 0]["skills"] == [SKILL] and not runs[release, 0]["signals"]
    [usage] = [s for s in json.loads(evolve_cli("skills", AGENT, "--json")) if s["name"] == SKILL]
    assert usage["invocations"] == 1 and usage["impressions"] == 2  # two trusted sessions were shown it

    # 4. an offline reflection turns the correction into a memo rule, in one commit
    outcome = json.loads(evolve_cli("reflect", AGENT, "--json"))
    assert outcome["status"] == "committed", outcome
    repo = home.agent_dir(AGENT)
    assert (
        git_out(repo, "log", "-1", "--format=%s") == f"reflect({AGENT}): remember 1 correction from the user"
    )
    trailers = parsed_trailers(repo)
    assert trailers["Evolve-Model"] == "offline" and "user_correction" in trailers["Evolve-Signals"]
    diff = git_out(repo, "show", "--format=", "HEAD", "--", "memo.md")
    [lesson] = [line[1:] for line in diff.splitlines() if line.startswith("+-")]
    assert CORRECTION in lesson

    # 5. the next session's request carries the lesson and lists the skill
    mark = len(spool_records(home))
    api.text("I will use pnpm.")
    fourth = cli.run("Install the dependencies")
    assert_hooks_ran(home, fourth, ["impressions", "codex_hook", "stop"], skip=mark)
    context = api.agent_turns()[-1].text()
    assert MEMO_TITLE in context and lesson in context
    assert f"- {AGENT}:{SKILL}: {SKILL_DESCRIPTION}" in context
    assert "exec_command" in api.agent_turns()[-1].tool_names()
    assert not (home.run_dir / "watch.spawned").exists()  # EVOLVE_NO_WATCHER: no process left behind

    # 6. uninstall gives the person's files back, byte for byte; nothing was ever committed there
    assert git_out(project, "status", "--porcelain", "--untracked-files=all") == "?? package.json\n?? test.sh"
    evolve_cli("uninstall", "codex", "--agent", AGENT, "--project", str(project))
    assert (snapshot(project), hooks_file.read_bytes()) == before
    assert not (project / "AGENTS.md").exists()


def test_the_watcher_a_real_session_starts_reads_its_rollout_and_uninstall_stops_it(
    codex_bin, fake_codex_api, closed_port, tmp_path, evolve_home, watcher_reaper
):
    home = Home.resolve()
    project, _ = make_project(tmp_path, fake_codex_api)
    evolve_cli("init", AGENT)
    evolve_cli("install", "codex", "--agent", AGENT, "--project", str(project))
    fake_codex_api.text("Hello.")
    session = Codex(codex_bin, fake_codex_api, project, closed_port, watcher=True).run("Say hello")
    logs = [home.logs_dir / name for name in ("hooks.log", "watch.log", "watch.stderr")]

    def told() -> str:  # what the hooks and the watcher said, should this fail
        return "\n".join(f"{p.name}:\n{p.read_text()[-2000:]}" for p in logs if p.exists())

    pid = int((home.run_dir / "watch.spawned").read_text())
    assert alive(pid), told()  # after Codex ended the session and its hooks
    deadline = time.monotonic() + 30
    runs: list = []
    while not runs and time.monotonic() < deadline:  # the watcher drains the spool: the run is observed
        time.sleep(0.2)
        with ledger.opened(home.state_db) as conn:
            runs = conn.execute("SELECT session FROM runs WHERE agent = ?", (AGENT,)).fetchall()
    assert [r["session"] for r in runs] == [session], told()
    out = json.loads(evolve_cli("uninstall", "codex", "--agent", AGENT, "--project", str(project), "--json"))
    assert out["watcher_stopped"] == pid
    assert not alive(pid)
