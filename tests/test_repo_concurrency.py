"""Concurrency (issue 2 must-hold): 50 evolve commits against 50 plain `git commit`s.

Afterwards every commit that reported success is reachable from HEAD, and HEAD's tree holds
every evolve change and every human change: a stale index never undoes anyone's work.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import helpers
from tests.helpers import git, git_out, head

agent = helpers.agent  # the fixture: agent "demo" in the test's home


# -- concurrency ------------------------------------------------------------------------
EVOLVE_WRITER = """
import random, sys, time
from pathlib import Path
from evolve.workspace.agent import Agent
from evolve.store.history import build_message
from evolve.store.identity import Identity
name, go, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
while not go.exists():
    time.sleep(0.001)
agent = Agent.open(name)
for i in range(count):
    text = f"---\\nname: e{i}\\ndescription: Use when step {i} runs.\\n---\\n\\n- evolve {i}\\n"
    trailers = {"Evolve-Kind": "reflection", "Evolve-Ops": f"create e{i}"}
    message = build_message(f"reflect({name}): e{i}", trailers)
    with agent.repo.locked():
        sha = agent.repo.commit_changes({f"skills/e{i}/SKILL.md": text.encode()}, message,
                                        Identity("evolve", "evolve@localhost"))
    print(sha, flush=True)
    time.sleep(random.uniform(0, 0.02))
"""

HUMAN_WRITER = """
import random, subprocess, sys, time
from pathlib import Path
repo, go, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
while not go.exists():
    time.sleep(0.001)
def run(*args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
for i in range(count):
    (repo / "notes").mkdir(exist_ok=True)
    (repo / "notes" / f"h{i}.md").write_text(f"human note {i}\\n")
    for attempt in range(3000):  # generous: a loaded CI machine must not fail a person's loop
        proc = run("add", f"notes/h{i}.md")
        if proc.returncode == 0:
            break
        time.sleep(0.01)
    for attempt in range(3000):
        proc = run("commit", "--no-verify", "-q", "-m", f"human {i}")
        if proc.returncode == 0:
            sha = run("rev-parse", "HEAD").stdout.strip()
            print("ok", i, flush=True)
            break
        print("retry", i, proc.stderr.strip().replace("\\n", " | "), file=sys.stderr, flush=True)
        time.sleep(0.01)
    time.sleep(random.uniform(0, 0.08))  # a person types slower than evolve commits
"""


def blobs(repo: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """Each path's text at `rev`, read by one `git cat-file --batch` (not a `git show` each)."""
    out = git(repo, "cat-file", "--batch", input="".join(f"{rev}:{path}\n" for path in paths)).stdout
    found = {}
    for path in paths:
        header, _, out = out.partition("\n")
        size = int(header.split()[2])  # "<sha> blob <size>"; a missing path fails here
        found[path], out = out[:size], out[size + 1 :]
    return found


@pytest.mark.slow
def test_evolve_and_a_person_commit_concurrently_and_nothing_is_lost(agent, tmp_path):
    count = 50
    go = tmp_path / "go"
    evolve_proc = subprocess.Popen(
        [sys.executable, "-c", EVOLVE_WRITER, "demo", str(go), str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    human_proc = subprocess.Popen(
        [sys.executable, "-c", HUMAN_WRITER, str(agent.path), str(go), str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)  # both interpreters are up and waiting
    go.write_text("")
    evolve_out, evolve_err = evolve_proc.communicate(timeout=240)
    human_out, human_err = human_proc.communicate(timeout=240)
    assert evolve_proc.returncode == 0, evolve_err
    assert human_proc.returncode == 0, human_err

    evolve_shas = evolve_out.split()
    human_ok = [int(line.split()[1]) for line in human_out.splitlines() if line.startswith("ok ")]
    assert len(evolve_shas) == count
    tip = head(agent.path)
    reachable = set(git_out(agent.path, "rev-list", tip).splitlines())
    for sha in evolve_shas:
        assert sha in reachable, sha
    human_commits = git_out(agent.path, "log", "--format=%s", "--author=Test Person", tip).splitlines()
    assert sorted(human_commits) == sorted(f"human {i}" for i in human_ok)
    assert len(human_ok) == count, human_err[-2000:]  # a person's retry loop gets every edit in

    tree = set(git_out(agent.path, "ls-tree", "-r", "--name-only", tip).splitlines())
    for i in range(count):
        assert f"skills/e{i}/SKILL.md" in tree, f"evolve change {i} was undone"
    for i in human_ok:
        assert f"notes/h{i}.md" in tree, f"human change {i} was undone"
    shown = blobs(agent.path, tip, [f"skills/e{i}/SKILL.md" for i in range(count)])
    shown |= blobs(agent.path, tip, [f"notes/h{i}.md" for i in human_ok])
    for i in range(count):
        assert shown[f"skills/e{i}/SKILL.md"].strip().endswith(f"- evolve {i}")
    for i in human_ok:
        assert shown[f"notes/h{i}.md"].strip() == f"human note {i}"
    # no commit in the history ever dropped a file that its parent had
    assert git_out(agent.path, "log", "--diff-filter=D", "--name-only", "--format=", tip) == ""
    fsck = git(agent.path, "fsck", "--strict", "--no-progress")
    assert fsck.returncode == 0 and "error" not in fsck.stderr.lower(), fsck.stderr
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert not (agent.path / ".git" / "index.lock").exists()
