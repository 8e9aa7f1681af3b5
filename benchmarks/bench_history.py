"""History-derived skill metadata: one `git log` pass against a `git log` per skill.

A repository with 200 skills over 2,000 commits (patches of 1-3 skills per commit, memo
edits of its 50 bullets, three folder renames) is generated with `git fast-import` in about
a second, then `Repo.skill_history()` is timed against the naive method (one `git log
--follow` process per skill) in the same run, and both are checked to agree.
Target: the one-pass method is at least 10x faster.

Then the same history as an agent's (on top of `evolve init`'s commit), with a state.db of
2,000 runs in 400 sessions that each had the 200 skills listed and the 50 bullets shown,
one run in ten a correction: `evolve lessons NAME --json` against `evolve skills NAME
--json`, each a process as a person runs it, medians of 5. Target: lessons <= 2x skills.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evolve.clock import stamp as iso_utc
from evolve.store.repo import Repo

SKILLS = 200
COMMITS = 2000
BULLETS = 50
START = 1_700_000_000  # fixed timestamps: the history is the same on every run
IDENTITY = b"evolve <evolve@localhost>"
SESSIONS, RUNS_PER_SESSION, REPEAT = 400, 5, 5


RENAMES = {600: 5, 1200: 17, 1800: 33}  # commit number -> skill whose folder is renamed


def _skill(name: str, index: int, version: int) -> bytes:
    body = "".join(f"- rule {r} of area {index}: when step {r} fails, read its log first\n" for r in range(8))
    return (
        f"---\nname: {name}\ndescription: Use when working on area {index}.\n---\n\n{body}"
        f"- revision {version}\n"
    ).encode()


def _memo(versions: list[int]) -> bytes:
    """A memo whose 50 bullets (25 a section) each say which revision last wrote them."""
    lines = [
        f"- When task {i} comes up (revision {version}), read `fixtures/task-{i}.json` before the code."
        for i, version in enumerate(versions)
    ]
    half = len(lines) // 2
    return (
        "# Memo of bench\n\n## What I do well and where I often stumble\n\n"
        + "\n".join(lines[:half])
        + "\n\n## Strategies for this user and domain\n\n"
        + "\n".join(lines[half:])
        + "\n"
    ).encode()


def _history(seed: int = 7) -> list[tuple[str, dict[str, bytes | None]]]:
    """(message, {path: content or None}) per commit: creations, patches, renames, memo edits."""
    rng = random.Random(seed)
    names = [f"skill-{index:03d}" for index in range(SKILLS)]
    versions = [0] * SKILLS
    bullets = [0] * BULLETS
    commits: list[tuple[str, dict[str, bytes | None]]] = []
    for index, name in enumerate(names):
        files = {f"skills/{name}/SKILL.md": _skill(name, index, 0)}
        commits.append((f"reflect(bench): create {name}", files))
    while len(commits) < COMMITS:
        number = len(commits)
        files: dict[str, bytes | None] = {}
        if number in RENAMES:
            index = RENAMES[number]
            files[f"skills/{names[index]}/SKILL.md"] = None
            names[index] = f"renamed-{index:03d}"
            files[f"skills/{names[index]}/SKILL.md"] = _skill(names[index], index, versions[index])
        else:
            for index in rng.sample(range(SKILLS), rng.choice((1, 1, 1, 2, 3))):
                versions[index] += 1
                files[f"skills/{names[index]}/SKILL.md"] = _skill(names[index], index, versions[index])
        if number % 10 == 0:
            bullets[rng.randrange(BULLETS)] = number
            files["memo.md"] = _memo(bullets)
        commits.append((f"reflect(bench): commit {number}", files))
    return commits


def build_repo(path: Path, on: str | None = None) -> Repo:
    """A repository on `main` holding the generated history (no work tree checkout).

    `on`: an existing repository's commit the history continues (an agent's first commit).
    """
    if on is None:
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = bytearray()
    for number, (message, files) in enumerate(_history(), start=1):
        when = START + number * 60
        text = (message + "\n\nEvolve-Kind: reflection\n").encode()
        stream += b"commit refs/heads/main\nmark :%d\n" % number
        stream += b"author %s %d +0000\ncommitter %s %d +0000\n" % (IDENTITY, when, IDENTITY, when)
        stream += b"data %d\n%s\n" % (len(text), text)
        if number > 1:
            stream += b"from :%d\n" % (number - 1)
        elif on is not None:
            stream += b"from %s\n" % on.encode()
        for file, content in sorted(files.items()):
            if content is None:
                stream += b"D %s\n" % file.encode()
            else:
                stream += b"M 100644 inline %s\ndata %d\n%s\n" % (file.encode(), len(content), content)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=bytes(stream), check=True)
    return Repo(path)


def naive_history(repo: Repo, names: list[str]) -> dict[str, tuple[str, str, int]]:
    """One `git log --follow` process per skill: (created_at, updated_at, patch_count)."""
    result = {}
    for name in names:
        stamps = repo.text("log", "--follow", "--format=%at", "main", "--", f"skills/{name}/SKILL.md").split()
        result[name] = (iso_utc(int(stamps[-1])), iso_utc(int(stamps[0])), len(stamps) - 1)
    return result


def build_agent(home: Path) -> str:
    """Agent `bench` in `home` holding the history, and a state.db of what its sessions had."""
    from evolve.home import Home
    from evolve.store import ledger
    from evolve.workspace.agent import Agent
    from evolve.workspace.memo import lesson_id, section_bullets

    agent = Agent.create("bench", Home(home))
    build_repo(agent.path, on=agent.repo.tip())
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=agent.path, check=True)

    shown = {key: [lesson_id(b) for b in items] for key, items in section_bullets(agent.memo_text()).items()}
    names = [skill.name for skill in agent.skills()]
    now = time.time()
    rows = []
    with ledger.opened(Home(home).state_db) as conn, ledger.transaction(conn):
        for number in range(SESSIONS):
            session = f"session-{number:04d}"
            at = now - 86_400 * 150 + number * 30_000
            ledger.add_impressions(conn, [("bench", name, session, at) for name in names])
            ledger.add_context(conn, "bench", session, at, agent.repo.tip(), shown)
            for idx in range(RUNS_PER_SESSION):
                corrected = (number * RUNS_PER_SESSION + idx) % 10 == 0
                facts = {
                    "request": f"No, read `fixtures/task-{number % BULLETS}.json` first"
                    if corrected
                    else "go on",
                    "correction": corrected,
                    "cwd": "/home/dev/bench",
                }
                rows.append(
                    (
                        "bench",
                        f"/t/{session}.jsonl",
                        session,
                        idx,
                        iso_utc(int(at + idx * 60)),
                        json.dumps(facts),
                        at,
                    )
                )
        conn.executemany(
            "INSERT INTO runs (agent, path, session, idx, started_at, facts, observed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return agent.name


def _median_s(argv: list[str]) -> float:
    times = []
    for _ in range(REPEAT + 1):  # the first one warms the page cache and the index caches
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def lessons_against_skills(workdir: Path) -> dict:
    """`evolve lessons` and `evolve skills` on the agent with that history, as processes."""
    home = workdir / "home"
    name = build_agent(home)
    base = [sys.executable, "-P", "-m", "evolve", "--home", str(home)]
    out = subprocess.run(
        [*base, "lessons", name, "--json"], check=True, capture_output=True, text=True
    ).stdout
    data = json.loads(out)
    ignored = sum(row["ignored"] for row in data["lessons"])
    skills_s = _median_s([*base, "skills", name, "--json"])
    lessons_s = _median_s([*base, "lessons", name, "--json"])
    return {
        "lessons_listed": len(data["lessons"]),
        "lessons_runs": data["runs"],
        "lessons_ignored_total": ignored,
        "skills_cmd_s": round(skills_s, 3),
        "lessons_cmd_s": round(lessons_s, 3),
        "lessons_vs_skills": round(lessons_s / skills_s, 2),
    }


def run(workdir: Path, repeat: int = 3) -> dict:
    """Build the repository under `workdir`, time both methods, check they agree."""
    workdir = Path(workdir)
    path = workdir / "bench-history-repo"
    started = time.perf_counter()
    repo = build_repo(path)
    build_s = time.perf_counter() - started
    commits = int(repo.text("rev-list", "--count", "main"))

    one_pass_s = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        history = repo.skill_history()
        one_pass_s = min(one_pass_s, time.perf_counter() - started)

    names = sorted(history)
    started = time.perf_counter()
    naive = naive_history(repo, names)
    naive_s = time.perf_counter() - started

    renamed = sum(name.startswith("renamed-") for name in names)
    disagree = [
        name
        for name in names
        if naive[name] != (history[name].created_at, history[name].updated_at, history[name].patch_count)
    ]
    if len(names) != SKILLS or renamed != len(RENAMES) or disagree:
        raise AssertionError(
            f"one-pass and naive histories differ for {disagree[:5]} ({len(names)} skills found)"
        )
    return {
        "skills": len(names),
        "commits": commits,
        "one_pass_s": round(one_pass_s, 4),
        "naive_s": round(naive_s, 4),
        "ratio": round(naive_s / one_pass_s, 1),
        **lessons_against_skills(workdir),
        "targets": {"ratio": ">= 10", "lessons_vs_skills": "<= 2"},
        "agree": True,
        "renamed_skills": renamed,
        "build_s": round(build_s, 2),
        "patches_total": sum(h.patch_count for h in history.values()),
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        result = run(Path(tmp))
    print(json.dumps(result, indent=2))
    sys.exit(0 if result["ratio"] >= 10 and result["lessons_vs_skills"] <= 2 else 1)
