"""History-derived skill metadata: one `git log` pass against a `git log` per skill.

A repository with 200 skills over 2,000 commits (patches of 1-3 skills per commit, memo
edits, three folder renames) is generated with `git fast-import` in about a second, then
`Repo.skill_history()` is timed against the naive method (one `git log --follow` process
per skill) in the same run, and both are checked to agree.
Target: the one-pass method is at least 10x faster.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evolve.clock import stamp as iso_utc
from evolve.store.repo import Repo

SKILLS = 200
COMMITS = 2000
START = 1_700_000_000  # fixed timestamps: the history is the same on every run
IDENTITY = b"evolve <evolve@localhost>"


RENAMES = {600: 5, 1200: 17, 1800: 33}  # commit number -> skill whose folder is renamed


def _skill(name: str, index: int, version: int) -> bytes:
    body = "".join(f"- rule {r} of area {index}: when step {r} fails, read its log first\n" for r in range(8))
    return (
        f"---\nname: {name}\ndescription: Use when working on area {index}.\n---\n\n{body}"
        f"- revision {version}\n"
    ).encode()


def _history(seed: int = 7) -> list[tuple[str, dict[str, bytes | None]]]:
    """(message, {path: content or None}) per commit: creations, patches, renames, memo edits."""
    rng = random.Random(seed)
    names = [f"skill-{index:03d}" for index in range(SKILLS)]
    versions = [0] * SKILLS
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
            files["memo.md"] = f"# Memo\n\nrevision {number}\n".encode()
        commits.append((f"reflect(bench): commit {number}", files))
    return commits


def build_repo(path: Path) -> Repo:
    """A repository on `main` holding the generated history (no work tree checkout)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = bytearray()
    for number, (message, files) in enumerate(_history(), start=1):
        when = START + number * 60
        text = message.encode()
        stream += b"commit refs/heads/main\nmark :%d\n" % number
        stream += b"author %s %d +0000\ncommitter %s %d +0000\n" % (IDENTITY, when, IDENTITY, when)
        stream += b"data %d\n%s\n" % (len(text), text)
        if number > 1:
            stream += b"from :%d\n" % (number - 1)
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
        "targets": {"ratio": ">= 10"},
        "agree": True,
        "renamed_skills": renamed,
        "build_s": round(build_s, 2),
        "patches_total": sum(h.patch_count for h in history.values()),
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        result = run(Path(tmp))
    print(json.dumps(result, indent=2))
    sys.exit(0 if result["ratio"] >= 10 else 1)
