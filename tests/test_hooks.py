"""The hook entry point, run as Claude Code runs it: a process with one JSON value on stdin.

It must always exit 0, print nothing but SessionStart's context, log every problem under
the home, return without waiting for EOF, and import nothing heavy.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evolve import hookio, hookmain
from evolve.home import Home
from evolve.integrations import claude_code
from evolve.session import prompt as inject
from evolve.store import ledger, spool
from evolve.watch import service
from tests.helpers import evolve_commit, make_agent, skill_text

ROOT = Path(__file__).resolve().parents[1]
MEMO = (
    "# Memo of demo\n\n## What I do well and where I often stumble\n\n- I forget to run the tests.\n\n"
    "## Strategies for this user and domain\n"
)


def argv_for(event: str, home: Path | None = None, agent: str = "demo", linked: bool = True) -> list[str]:
    return shlex.split(claude_code.hook_command(sys.executable, Home.resolve(home), agent, event, linked))


def run_hook(
    argv: list[str], payload: bytes | str | dict, env: dict | None = None, cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess, float]:
    data = json.dumps(payload) if isinstance(payload, dict) else payload
    started = time.monotonic()
    proc = subprocess.run(
        argv,
        input=data.encode() if isinstance(data, str) else data,
        capture_output=True,
        timeout=30,
        cwd=cwd,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1", **(env or {})},
    )
    return proc, time.monotonic() - started


def spooled(home: Path) -> list[dict]:
    path = home / "spool" / spool.SPOOL
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def hook_log(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


@pytest.fixture
def agent(evolve_home):
    agent = make_agent("demo")
    evolve_commit(
        agent,
        {
            "memo.md": MEMO.encode(),
            "skills/fix-tests/SKILL.md": skill_text("fix-tests").encode(),
            "skills/deploy-safely/SKILL.md": skill_text("deploy-safely").encode(),
        },
    )
    return agent


@pytest.mark.parametrize(
    "event, kind", [("stop", "stop"), ("session-end", "session_end"), ("stop-failure", "stop_failure")]
)
def test_a_run_ending_appends_one_record_and_prints_nothing(agent, evolve_home, event, kind):
    payload = {
        "session_id": "s1",
        "transcript_path": "/t/s1.jsonl",
        "hook_event_name": "Stop",
        "reason": "clear",
        "error": "rate_limit",
        "last_assistant_message": "x" * 100_000,
    }
    proc, _ = run_hook(argv_for(event), payload)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    [record] = spooled(evolve_home)
    assert record["event"] == kind and record["agent"] == "demo"
    assert record["transcript_path"] == "/t/s1.jsonl" and record["session_id"] == "s1"
    assert hook_log(evolve_home) == ""


def test_post_tool_use_of_skill_records_an_invocation(agent, evolve_home):
    payload = {
        "session_id": "s1",
        "tool_name": "Skill",
        "tool_input": {"skill": "fix-tests"},
        "tool_use_id": "toolu_1",
        "tool_response": "Launching skill: fix-tests",
    }
    proc, _ = run_hook(argv_for("post-tool-use"), payload)
    assert (proc.returncode, proc.stdout) == (0, b"")
    proc, _ = run_hook(argv_for("post-tool-use"), {**payload, "tool_name": "Bash"})
    [record] = spooled(evolve_home)
    assert {k: record[k] for k in ("event", "agent", "skill", "tool_use_id", "session", "source")} == {
        "event": "invocation",
        "agent": "demo",
        "skill": "fix-tests",
        "tool_use_id": "toolu_1",
        "session": "s1",
        "source": "hook",
    }


def test_session_start_prints_the_memo_and_spools_impressions(agent, evolve_home):
    proc, _ = run_hook(argv_for("session-start"), {"session_id": "s1", "source": "startup"})
    assert proc.returncode == 0 and proc.stderr == b""
    out = proc.stdout.decode()
    assert out == inject.render(Home.resolve(), "demo", record=False, include_index=False).text
    assert "I forget to run the tests." in out and "fix-tests" not in out  # Claude Code lists skills
    [record] = spooled(evolve_home)
    assert record["event"] == "impressions" and record["session"] == "s1"
    assert record["skills"] == ["deploy-safely", "fix-tests"]


def test_session_start_without_links_prints_the_index_too(agent, evolve_home):
    proc, _ = run_hook(argv_for("session-start", linked=False), {"session_id": "s2"})
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "- fix-tests: Use when testing things." in out
    assert "I forget to run the tests." in out
    [record] = spooled(evolve_home)
    assert record["event"] == "impressions" and sorted(record["skills"]) == ["deploy-safely", "fix-tests"]


def test_session_start_stays_within_prompt_chars(agent, evolve_home):
    long_memo = MEMO.replace("- I forget", "- " + "very long lesson " * 200 + "\n- I forget")
    toml = (agent.path / "agent.toml").read_bytes() + b"\n[limits]\nprompt_chars = 500\n"
    evolve_commit(agent, {"memo.md": long_memo.encode(), "agent.toml": toml})
    proc, _ = run_hook(argv_for("session-start"), {"session_id": "s1"})
    out = proc.stdout.decode()
    assert proc.returncode == 0 and 300 < len(out) <= 500 and "cut to fit" in out


def test_an_empty_memo_prints_nothing(evolve_home):
    make_agent("demo")
    proc, _ = run_hook(argv_for("session-start"), {"session_id": "s1"})
    assert (proc.returncode, proc.stdout) == (0, b"")


@pytest.mark.parametrize(
    "case, argv, payload, reason",
    [
        ("garbage", None, b"\x00not json at all", "stdin is not JSON"),
        ("empty", None, b"", "stdin was empty"),
        ("array", None, b"[1, 2]", "not an object"),
        ("unknown event", ["claude-code", "pre-compact", "--agent", "demo"], b"{}", "unknown event"),
        ("usage", ["--bogus"], b"{}", "usage: evolve hook claude-code"),
        ("unknown option", ["claude-code", "stop", "--agent", "demo", "-x"], b"{}", "unknown option"),
        ("no agent", ["claude-code", "stop", "--agent", "ghost"], b"{}", "no agent 'ghost'"),
        ("bad agent name", ["claude-code", "stop", "--agent", "../x"], b"{}", "not an agent name"),
    ],
)
def test_every_problem_exits_0_quietly_and_is_logged(agent, evolve_home, case, argv, payload, reason):
    prefix = argv_for("stop")[:4]
    full = argv_for("stop") if argv is None else [*prefix, *argv, "--home", str(evolve_home)]
    proc, took = run_hook(full, payload)
    assert (proc.returncode, proc.stdout) == (0, b""), case
    assert reason in hook_log(evolve_home), case
    assert took < 10 and spooled(evolve_home) == []


def test_a_secret_in_what_the_hook_could_not_read_is_logged_redacted(agent, evolve_home):
    token = "ghp_" + "R4nd0mT0k3nV4lu3" + "Abcdefghij0123456789"
    proc, _ = run_hook(argv_for("stop"), b'{"prompt": "release with ' + token.encode())  # cut short
    assert (proc.returncode, proc.stdout) == (0, b"")
    log = hook_log(evolve_home)
    assert "stdin is not JSON" in log and "[REDACTED:github-token]" in log and token not in log


def test_a_missing_home_is_never_made_again_by_a_hook(tmp_path):
    """A home moved away (`mv`): its hooks write nothing where it was, one line on stderr at most."""
    home = tmp_path / "nowhere"
    proc, _ = run_hook(argv_for("session-start", home=home), {"session_id": "s1"})
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert proc.stderr.decode().splitlines() == [
        f"evolve: no evolve home at {home}; run `evolve doctor` where it is now"
    ]
    assert not home.exists()


def test_a_locked_database_does_not_slow_the_hooks(agent, evolve_home):
    ledger.connect(evolve_home / "state.db").close()
    holder = sqlite3.connect(evolve_home / "state.db", isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for event, payload in [
            ("session-start", {"session_id": "s1"}),
            ("post-tool-use", {"tool_name": "Skill", "tool_input": {"skill": "x"}}),
            ("stop", {"session_id": "s1", "transcript_path": "/t"}),
        ]:
            proc, took = run_hook(argv_for(event), payload)
            assert proc.returncode == 0 and took < 5, event
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [r["event"] for r in spooled(evolve_home)] == ["impressions", "invocation", "stop"]


def test_stdin_that_is_never_closed_does_not_hold_the_hook(agent, evolve_home):
    proc = subprocess.Popen(
        argv_for("stop"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"session_id": "s1", "transcript_path": "/t/a.jsonl", "x": {"y": "}"}}\n')
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=10) == 0
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
    assert spooled(evolve_home)[0]["transcript_path"] == "/t/a.jsonl"


def test_evolve_disable_hooks_turns_every_hook_off(agent, evolve_home):
    for event in ("session-start", "stop", "post-tool-use"):
        proc, _ = run_hook(argv_for(event), b"garbage", env={"EVOLVE_DISABLE_HOOKS": "1"})
        assert (proc.returncode, proc.stdout) == (0, b"")
    assert spooled(evolve_home) == [] and hook_log(evolve_home) == ""


def test_the_evolve_command_dispatches_hooks_without_argparse(agent, evolve_home):
    stop = ["claude-code", "stop", "--agent", "demo"]
    for argv in (
        ["-m", "evolve", "hook", *stop],
        ["-m", "evolve", "--home", str(evolve_home), "hook", *stop],
        ["-m", "evolve", "hook"],
    ):
        proc, _ = run_hook([sys.executable, *argv], {"session_id": "s1", "transcript_path": "/t"})
        assert (proc.returncode, proc.stdout) == (0, b""), argv
    assert len(spooled(evolve_home)) == 2 and "usage" in hook_log(evolve_home)


MEMOS = {
    "fenced heading": "# Memo of demo\n\n## What I do well and where I often stumble\n\n- a\n\n"
    "```md\n## Strategies for this user and domain\n```\n\n"
    "## Strategies for this user and domain\n\n- b\n",
    "a person's own section": MEMO + "\n## My private notes\n\n- ask before deploying\n",
    "renamed heading": MEMO.replace("## Strategies for this user and domain", "## Strategies"),
    "text above the sections": MEMO.replace("# Memo of demo\n", "# Memo of demo\n\nRead me first.\n"),
    "crlf": MEMO.replace("\n", "\r\n"),
    "headings only": "# Memo of demo\n\n## What I do well and where I often stumble\n\n"
    "## Strategies for this user and domain\n",
    "no sections": "just a note a person wrote\n",
}


@pytest.mark.parametrize("case", MEMOS)
def test_the_hook_and_evolve_prompt_show_the_same_memo(agent, evolve_home, case):
    """One renderer: the SessionStart hook (linked skills) prints what `evolve prompt` shows."""
    evolve_commit(agent, {"memo.md": MEMOS[case].encode()})
    proc, _ = run_hook(argv_for("session-start"), {"session_id": "s1"})
    shown = inject.render(Home.resolve(), "demo", record=False, include_index=False).text
    assert proc.stdout.decode() == shown
    for words in ("ask before deploying", "Read me first.", "- b"):
        if words in MEMOS[case]:
            assert words in shown, words
    assert ("```" in shown) == (case == "fenced heading")
    assert bool(shown) == (case != "headings only")


ODD_MEMOS = {
    # a log appended by mistake: `evolve prompt` left it out with a note, the linked hook showed its head
    "over 1 MB": b"# Memo\n\n## Strategies for this user and domain\n\n- test first\n"
    + b"a log line\n" * 100_000,
    # saved by an editor in Latin-1: `evolve prompt` showed no memo at all, the linked hook all of it
    "a byte not UTF-8": b"# Memo\n\n## Strategies for this user and domain\n\n- caf\xe9 closes at 5\n",
}


@pytest.mark.parametrize("case", ODD_MEMOS)
def test_the_hook_and_evolve_prompt_read_an_odd_memo_alike(agent, evolve_home, case):
    """One reader too: what a linked session gets is what `evolve prompt` says it gets."""
    evolve_commit(agent, {"memo.md": ODD_MEMOS[case]})
    proc, _ = run_hook(argv_for("session-start"), {"session_id": "s1"})
    shown = inject.render(Home.resolve(), "demo", record=False, include_index=False).text
    assert proc.stdout.decode() == shown
    if case == "over 1 MB":
        assert "is over 1 MB" in shown and "a log line" not in shown
    else:
        assert "- caf\N{REPLACEMENT CHARACTER} closes at 5" in shown  # the rest of the memo is kept


def test_hookmain_lists_the_skills_the_links_follow(tmp_path):
    from evolve.workspace.links import skill_names

    for name in ["good", "also-good", "Bad", "no-skill-file", "-x"]:
        (tmp_path / name).mkdir()
        if name != "no-skill-file":
            (tmp_path / name / "SKILL.md").write_text("x")
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "linked").symlink_to(tmp_path / "good")
    assert hookmain.skill_names(str(tmp_path)) == skill_names(tmp_path) == ["also-good", "good"]


def test_spool_records_written_by_the_hook_drain_like_any_other(evolve_home):
    hookio.append_record(str(evolve_home), {"event": "stop", "agent": "démo", "n": [1, 2.5, None]})
    spool.append(evolve_home / "spool", {"event": "stop", "agent": "b"})
    with spool.drain(evolve_home / "spool") as records:
        assert [r["agent"] for r in records] == ["démo", "b"] and records[0]["n"] == [1, 2.5, None]


def test_read_payload_returns_as_soon_as_the_value_is_complete():
    read, write = os.pipe()

    def feed() -> None:
        os.write(write, b'  {"a": "}", "b": [')
        time.sleep(0.2)
        os.write(write, b'1, {"c": "\\u00e9"}]}  {"next": 1}')

    thread = threading.Thread(target=feed)
    thread.start()
    try:
        assert hookio.read_payload(read, wait_s=5) == {"a": "}", "b": [1, {"c": "é"}]}
    finally:
        thread.join()
        os.close(write)
        os.close(read)


def test_a_payload_cut_after_a_nested_object_waits_for_the_rest(agent, evolve_home):
    # In a hook process json.decoder is never imported: before Python 3.12 the C scanner
    # then fails a cut-short object with SystemError, which must read as "not complete yet".
    proc = subprocess.Popen(
        argv_for("stop"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"session_id": "s1", "transcript_path": "/t/s1.jsonl", "extra": {"a": 1}')
    proc.stdin.flush()
    time.sleep(0.3)
    proc.stdin.write(b"}")
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    assert hook_log(evolve_home) == ""
    assert [r["transcript_path"] for r in spooled(evolve_home)] == ["/t/s1.jsonl"]


def test_read_payload_gives_up_at_its_caps():
    read, write = os.pipe()
    try:
        os.write(write, b'{"a": "')
        started = time.monotonic()
        with pytest.raises(hookio.Problem, match="no complete JSON value"):
            hookio.read_payload(read, wait_s=0.3)
        assert time.monotonic() - started < 2
        os.write(write, b"x" * 5000)
        with pytest.raises(hookio.Problem, match="over 1000 bytes"):
            hookio.read_payload(read, cap=1000, wait_s=1)
    finally:
        os.close(write)
        os.close(read)


def test_session_start_starts_the_watcher_detached_once(agent, evolve_home, tmp_path):
    home = Home.resolve()
    project = tmp_path / "p"
    project.mkdir()
    claude_code.install(home, "demo", "project", str(project))
    env = {k: v for k, v in os.environ.items() if k != "EVOLVE_NO_WATCHER"}
    try:
        subprocess.run(
            argv_for("session-start"),
            input=b'{"session_id": "s1"}',
            env=env,
            capture_output=True,
            timeout=30,
            check=True,
        )
        spawned = int((evolve_home / "run" / "watch.spawned").read_text())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not service.state(home).running:
            time.sleep(0.1)
        assert service.state(home).pid == spawned and os.getsid(spawned) == spawned
        subprocess.run(
            argv_for("session-start"),
            input=b'{"session_id": "s2"}',
            env=env,
            capture_output=True,
            timeout=30,
            check=True,
        )
        assert int((evolve_home / "run" / "watch.spawned").read_text()) == spawned
        assert claude_code.uninstall(home, "demo", "project", str(project))["watcher_stopped"] == spawned
        assert not service.state(home).running
    finally:
        service.stop(home)


@pytest.mark.parametrize("memo_kind", ["fifo", "socket"])
def test_a_fifo_for_the_memo_or_guards_never_holds_up_a_hook_or_a_command(
    agent, evolve_home, memo_kind, monkeypatch
):
    # open() of a FIFO with no writer waits forever: the session-start hook (the memo), every
    # tool call's hook (guards.toml), and doctor and lessons with them; a socket cannot be opened
    agent.memo_path.unlink()
    if memo_kind == "fifo":
        os.mkfifo(agent.memo_path)
    else:
        import socket

        monkeypatch.chdir(agent.path)  # a socket's path is short: named from its folder
        socket.socket(socket.AF_UNIX).bind("memo.md")
    os.mkfifo(agent.path / "guards.toml")
    proc, _ = run_hook(argv_for("session-start"), {"session_id": "s1", "source": "startup"})
    assert proc.returncode == 0 and "I forget to run the tests." not in proc.stdout.decode()
    call = {"tool_name": "Bash", "tool_input": {"command": "npm test"}, "cwd": str(agent.path)}
    guard_hook = [
        *argv_for("stop")[:4],
        "claude-code",
        "pre-tool-use",
        "--home",
        str(evolve_home),
        "--agent",
        "demo",
    ]
    proc, _ = run_hook(guard_hook, call)
    assert (proc.returncode, proc.stdout) == (0, b""), proc
    assert "guards.toml" in hook_log(evolve_home) and "not a regular file" in hook_log(evolve_home)
    for command in (["doctor"], ["lessons", "demo"]):
        ran = subprocess.run(
            [sys.executable, "-m", "evolve", *command],
            capture_output=True,
            timeout=30,
            env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
        )
        assert b"Traceback" not in ran.stderr and b"internal error" not in ran.stderr, ran.stderr
    doctor = subprocess.run(
        [sys.executable, "-m", "evolve", "doctor"], capture_output=True, timeout=30, text=True
    ).stdout
    assert "memo.md is not a regular file" in doctor and "guards.toml" in doctor, doctor
