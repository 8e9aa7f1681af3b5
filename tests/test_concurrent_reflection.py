"""Concurrent writers on one agent (reliability items 6 and 7).

A person commits and reverts in a loop while evolve reflects: no lost commit, every change
in HEAD's tree, evolve retries on index.lock and never deletes a live lock. Two evolve
processes reflecting the same agent: one reflection, no interleaved commits.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from evolve.cli import main
from evolve.home import Home
from evolve.reflect.run import reflect
from tests.helpers import git_out, make_agent
from tests.reflect.scenarios import Transcript, corrected_session

PERSON = textwrap.dedent("""
    import json, subprocess, sys, time
    repo, rounds = sys.argv[1], int(sys.argv[2])
    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    done, state = [], {}
    for n in range(rounds):
        name = f"notes/person-{n}.md"
        with open(f"{repo}/{name}", "w") as f:
            f.write(f"note {n}\\n")
        for _ in range(200):
            added = git("add", name).returncode == 0
            if added and git("commit", "-q", "--no-verify", "-m", f"note {n}").returncode == 0:
                done.append(git("rev-parse", "HEAD").stdout.strip()); state[name] = True; break
            time.sleep(0.01)
        if n % 3 == 2:  # revert my previous note with git's own revert
            for _ in range(200):
                if git("revert", "--no-edit", done[-2]).returncode == 0:
                    done.append(git("rev-parse", "HEAD").stdout.strip())
                    state[f"notes/person-{n - 1}.md"] = False
                    break
                # a failed revert may leave its half in the index and work tree: put back only
                # my own files (never --abort or reset --hard: they would move or clobber more)
                git("revert", "--quit"); git("reset", "-q", "--", "notes"); git("checkout", "--", "notes")
                time.sleep(0.01)
    print(json.dumps({"commits": done, "state": state}))
""")


def test_person_commits_and_reverts_while_evolve_reflects(tmp_path) -> None:
    import json

    agent = make_agent()
    (agent.path / "notes").mkdir()
    person = subprocess.Popen(
        [sys.executable, "-c", PERSON, str(agent.path), "18"],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    rules = []
    for n in range(6):
        t = Transcript(tmp_path / f"s{n}.jsonl", cwd=f"/work/p{n}")
        t.user(f"Build target {n}")
        t.say("Built.")
        rule = f"No, that's wrong: always build target {n} with make -j{n + 2}."
        t.user(rule)
        rules.append(f"make -j{n + 2}")
        assert main(["observe", "demo", str(t.path)]) == 0
        outcome = reflect(Home.resolve(), "demo")
        assert outcome.status == "committed", outcome.reason
    result = json.loads(person.communicate(timeout=120)[0])
    assert person.returncode == 0
    reachable = set(git_out(agent.path, "rev-list", "HEAD").split())
    assert set(result["commits"]) <= reachable, "a commit that reported success was lost"
    tree = set(git_out(agent.path, "ls-tree", "-r", "--name-only", "HEAD").split())
    # evolve's reflections change only what they meant to: never a person's file
    for sha in git_out(agent.path, "log", "--format=%H", "--grep=^reflect(demo)").split():
        assert git_out(agent.path, "diff-tree", "--no-commit-id", "--name-only", "-r", sha) == "memo.md"
    # a person's leftovers (a half-failed revert) are committed as their own edit; elsewhere
    # HEAD holds exactly what the person's successful commands left
    leftovers = set(git_out(agent.path, "log", "--format=", "--name-only", "--grep=^edit(demo)").split())
    for name, present in result["state"].items():
        if name not in leftovers:
            assert (name in tree) == present, name
    memo = git_out(agent.path, "show", "HEAD:memo.md")
    assert all(rule in memo for rule in rules)
    git_out(agent.path, "fsck", "--strict")
    assert not (agent.path / ".git" / "index.lock").exists()


def test_two_evolve_processes_reflect_once(tmp_path) -> None:
    agent = make_agent()
    main(["observe", "demo", str(corrected_session(tmp_path))])
    script = "import sys; from evolve.cli import main; sys.exit(main(['reflect', 'demo', '--json']))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    statuses = sorted(__import__("json").loads(o)["status"] for o in outs)
    assert statuses.count("committed") == 1, statuses
    assert set(statuses) <= {"committed", "busy", "skipped"}
    trailers = git_out(agent.path, "log", "--format=%(trailers:key=Evolve-Reflection,valueonly)")
    assert len([t for t in trailers.splitlines() if t.strip()]) == 1
    assert agent.memo_text().count("uv run pytest") == 1
