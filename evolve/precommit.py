"""The agent repository's pre-commit hook: refuse a person's commit of a broken skill, eval case or guard.

A guards.toml that is not TOML, or holds a guard the hook would leave out (an unknown tool,
a pattern the one door refuses, no message …), is refused with one line per problem.

It also refuses any staged text file that holds a merge's conflict markers (the full
`<<<<<<<` / `=======` / `>>>>>>>` triple, outside code fences): they must never reach the
branch the agent reads.

Run by `.git/hooks/pre-commit` as `python -m evolve.precommit`. Reads the staged
content (respecting GIT_INDEX_FILE, as `git commit -a` sets it), approximates tokens by
characters (no tiktoken here: it must stay fast), and exits 65 to refuse. A secret in a
person's own skill or memo is only warned about: their words are theirs to change.
"""

from __future__ import annotations

import sys
from pathlib import Path

REFUSED = 65


def _staged_names(root: Path) -> list[str]:
    from evolve.store.git import git

    names = git(root, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR", keep_index=True)
    return [name for name in names.decode("utf-8", "surrogateescape").split("\0") if name]


def _staged_bytes(root: Path, path: str) -> bytes:
    from evolve.store.git import git

    return git(root, "cat-file", "-p", f":{path}", check=False, keep_index=True)


def _checks(names: list[str]) -> list[tuple[str, str]]:
    """(kind, path) of the skills and memo among `names`: "skill" + its SKILL.md, or "memo"."""
    from evolve.workspace import memo as memo_mod

    checks: list[tuple[str, str]] = []
    for path in names:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] == "skills":
            check = ("skill", f"skills/{parts[1]}/SKILL.md")
        elif path == memo_mod.MEMO_FILE:
            check = ("memo", path)
        else:
            continue
        if check not in checks:
            checks.append(check)
    return checks


def staged_problems(root: Path, names: list[str] | None = None) -> list[str]:
    """Why the staged files (`names`: those staged, when the caller has them) may not be committed."""
    from evolve import config as config_mod
    from evolve.home import Home
    from evolve.workspace import memo as memo_mod
    from evolve.workspace import skills as skills_mod
    from evolve.workspace.cases import case_lesson

    try:
        cfg = config_mod.load(Home.resolve().config_file, root / "agent.toml")
    except Exception:  # a broken config must not block a commit that may fix it
        cfg = config_mod.Config()
    names = _staged_names(root) if names is None else names
    problems: list[str] = []
    for path in names:
        raw = b"" if path == memo_mod.MEMO_FILE else _staged_bytes(root, path)
        if b"\0" not in raw[:8000] and memo_mod.has_conflict_markers(raw.decode("utf-8", "replace")):
            problems.append(f"{path}: holds merge conflict markers (<<<<<<< ======= >>>>>>>); resolve them")
        if case_lesson(path) is not None:
            from evolve.reflect import evalcase  # here: only a commit of a case loads its checks

            problems += evalcase.file_problems(path, raw.decode("utf-8", "replace"))
    if "guards.toml" in names:
        from evolve.workspace import guards

        raw = _staged_bytes(root, guards.FILE)
        try:
            problems += guards.problems(raw.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(f"{guards.FILE}: not UTF-8 text")
    for kind, path in _checks(names):
        raw = _staged_bytes(root, path)
        if kind == "skill":
            folder = path.split("/")[1]
            if not raw:
                problems.append(f"{path}: SKILL.md is missing from the skill folder")
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.append(f"{path}: not UTF-8 text")
                continue
            skill = skills_mod.parse_skill(text, folder, root / path, cfg.limits.skill_body_tokens)
            problems += [f"{path}: {p}" for p in skill.problems]
        else:
            text = raw.decode("utf-8", "replace")
            problems += [f"{path}: {p}" for p in memo_mod.problems(text, cfg.limits.memo_section_chars)]
    return problems


def staged_warnings(root: Path, names: list[str] | None = None) -> list[str]:
    """What does not refuse a commit but a person should know: secrets in their own text."""
    from evolve.workspace.cases import case_lesson

    names = _staged_names(root) if names is None else names
    checked = [p for _kind, p in _checks(names)] + [p for p in names if case_lesson(p) is not None]
    if not checked:
        return []  # the secret rules are not loaded for nothing
    from evolve.transcripts.redact import secret_warnings

    warnings: list[str] = []
    for path in checked:
        text = _staged_bytes(root, path).decode("utf-8", "replace")
        warnings += [f"{path}: {w}" for w in secret_warnings(text)]
    return warnings


def main() -> int:
    names = _staged_names(Path.cwd())  # asked of git once for both
    for warning in staged_warnings(Path.cwd(), names):
        sys.stderr.write(f"evolve: warning: {warning}\n")
    problems = staged_problems(Path.cwd(), names)
    if not problems:
        return 0
    sys.stderr.write("evolve: this commit was refused:\n")
    for problem in problems:
        sys.stderr.write(f"  {problem}\n")
    sys.stderr.write("Fix the files and commit again, or commit anyway with `git commit --no-verify`.\n")
    return REFUSED


if __name__ == "__main__":
    sys.exit(main())
