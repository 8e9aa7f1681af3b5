"""guards.toml travels with the agent like its skills, and the server's is untrusted input.

A guard a person writes on one machine reaches the other by sync and is enforced there. A
guard the server's main brings that the hook would leave out (a tool evolve does not
guard, a pattern the one door refuses) holds that main back in one line; a pattern that
would hang a backtracking engine (`(x+x+)+y`) runs in linear time, so it never hangs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from evolve.session import guards as check
from tests.sync_helpers import Clone

GUARD = '[no-npm]\ntool = "shell"\npattern = \'\\bnpm i\\b\'\naction = "deny"\nmessage = "Use pnpm."\n'


def _team_pushes(url: str, tmp_path: Path, text: str) -> None:
    team = Clone(tmp_path / "team", url)
    (team.path / "guards.toml").write_text(text)
    team.git("add", "guards.toml")
    team.git("commit", "-qm", "team guards")
    team.git("push", "-q", "origin", "main")


def _synced_after_the_team_pushes(machines, git_daemon, tmp_path: Path, text: str):
    """Machine A on the server, then a teammate pushes `text` as guards.toml: (A, A's sync)."""
    a, _b = machines
    url = git_daemon.url()
    a.create(url)
    assert a.sync()[0] == 0
    _team_pushes(url, tmp_path, text)
    return a, a.sync()


def test_a_persons_guard_reaches_the_other_machine(machines, git_daemon):
    a, b = machines
    url = git_daemon.url()
    a.create(url)
    b.join(url)
    a.write("guards.toml", GUARD)
    a.commit("my guard")
    assert a.sync()[0] == 0
    code, out = b.sync()
    assert code == 0, out
    assert b.read("guards.toml") == GUARD
    rows, problems, _ = check.load(str(b.path / "guards.toml"))
    assert problems == [] and check.verdict({"tool_name": "Bash", "tool_input": {"command": "npm i x"}}, rows)


def test_a_broken_guard_from_the_server_is_held_in_one_line(machines, git_daemon, tmp_path):
    bad = GUARD + '[fetch]\ntool = "WebFetch"\npattern = "x"\nmessage = "m"\n'
    bad += '[back]\ntool = "Bash"\npattern = "(a)\\\\1"\nmessage = "m"\n'
    a, (code, out) = _synced_after_the_team_pushes(machines, git_daemon, tmp_path, bad)
    assert code == 1 and out.count("\n") <= 1, out
    assert "guards.toml [fetch]: tool 'WebFetch' is not one evolve guards" in out
    assert "guards.toml [back]: pattern refused: backreferences" in out
    assert not (a.path / "guards.toml").exists()  # nothing was taken


def test_a_pattern_that_backtracks_for_ever_elsewhere_is_taken_and_never_hangs(
    machines, git_daemon, tmp_path
):
    slow = '[slow]\ntool = "Bash"\npattern = "(x+x+)+y"\naction = "deny"\nmessage = "m"\n'
    a, (code, out) = _synced_after_the_team_pushes(machines, git_daemon, tmp_path, slow)
    assert code == 0, out
    rows, problems, _ = check.load(str(a.path / "guards.toml"))
    assert problems == [] and [r[0] for r in rows] == ["slow"]
    started = time.monotonic()
    payload = {"tool_name": "Bash", "tool_input": {"command": "x" * 50_000}}
    assert check.verdict(payload, rows) is None
    assert time.monotonic() - started < 5
    assert json.dumps(check.verdict({**payload, "tool_input": {"command": "xxy"}}, rows))


def test_a_deny_on_every_call_from_the_server_is_held_and_a_persons_stays_theirs(
    machines, git_daemon, tmp_path
):
    """`.*` as deny: one push would refuse every shell call of every machine's sessions."""
    every = GUARD + '[stop]\ntool = "shell"\npattern = ".*"\naction = "deny"\nmessage = "m"\n'
    a, (code, out) = _synced_after_the_team_pushes(machines, git_daemon, tmp_path, every)
    assert code == 1 and out.count("\n") <= 1, out
    assert "guards.toml [stop]: a deny on '.*' refuses every call of shell" in out
    assert not (a.path / "guards.toml").exists()  # nothing was taken
    assert a.sync("--accept-held", "a")[0] == 0  # the person looked and takes it: theirs from now on
    mine = a.read("guards.toml").replace('message = "m"', 'message = "stop: we are migrating"')
    a.write("guards.toml", mine)
    a.commit("my words")
    assert a.sync()[0] == 0
