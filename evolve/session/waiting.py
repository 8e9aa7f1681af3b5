"""The fixes waiting for a person's review: the skills a pending proposal patches.

A reflection's patch to a person's lines waits on `proposals/<id>` until they accept it;
meanwhile the agent still reads the old skill, so its next session is told that a fix is
waiting (and the memo's interim line is what to follow). On the session-start hot path:
the proposal branches' tips are read from the agent's `.git` (no git process); only a tip
not seen before costs one `git log` (its reflection's `Evolve-Ops`), and what it said is
kept in a small cache under the home, by tip.
"""

from __future__ import annotations

import json
from pathlib import Path

from evolve.session.index import write_cache
from evolve.store.head import BRANCH, PROPOSALS, branch_tips

PATCH = "patch_skill "  # an Evolve-Ops line of a patch (`patch_skill <name>`)
_RECORD, _FIELD = "\x1d", "\x1f"


def waiting_fixes(git_dir: Path, cache: Path) -> list[str]:
    """The skills a pending proposal patches, by name (none: [])."""
    tips = {b: sha for b, sha in branch_tips(git_dir, PROPOSALS).items() if _hex(b[len(PROPOSALS) :])}
    if not tips:
        return []
    try:
        known = json.loads(cache.read_bytes())
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    fresh: dict[str, dict] = {}
    for branch, sha in sorted(tips.items()):
        entry = known.get(branch)
        if not (
            isinstance(entry, dict) and entry.get("tip") == sha and isinstance(entry.get("skills"), list)
        ):
            entry = {"tip": sha, "skills": patched_skills(git_dir.parent, sha)}
        fresh[branch] = entry
    if fresh != known:
        write_cache(cache, fresh)
    return sorted({str(name) for entry in fresh.values() for name in entry["skills"]})


def patched_skills(repo: Path, tip: str) -> list[str]:
    """The skills the reflections on a proposal branch patch (its commits the agent's branch lacks)."""
    from evolve.store.git import GitError, git_text

    fmt = f"%(trailers:key=Evolve-Kind,valueonly){_FIELD}%(trailers:key=Evolve-Ops,valueonly){_RECORD}"
    try:
        out = git_text(repo, "log", f"--format={fmt}", tip, "--not", BRANCH, "--")
    except (GitError, OSError):  # no git here: the session starts without the note
        return []
    names: list[str] = []
    for record in out.split(_RECORD):
        kind, _, ops = record.partition(_FIELD)
        if kind.strip() != "reflection":
            continue
        for line in ops.splitlines():
            name = line.strip().removeprefix(PATCH) if line.strip().startswith(PATCH) else ""
            if name and name not in names:
                names.append(name)
    return names


def _hex(name: str) -> bool:
    return 6 <= len(name) <= 40 and all(c in "0123456789abcdef" for c in name)
