"""`make demo`: the loop on its embedded defaults, in a temporary home, no API key needed."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from evolve.cli import main as evolve


def step(title: str, *argv: str) -> None:
    sys.stdout.write(f"\n$ evolve {' '.join(argv)}    # {title}\n")
    sys.stdout.flush()
    code = evolve(list(argv))
    if code != 0:
        raise SystemExit(f"demo step failed with exit code {code}: evolve {' '.join(argv)}")


def run(home: Path) -> None:
    os.environ["EVOLVE_HOME"] = str(home)
    os.environ.setdefault("EVOLVE_MODEL_BACKEND", "offline")
    step("create an agent: a git repository of skills and a memo", "init", "demo")
    skill = home / "agents" / "demo" / "skills" / "run-tests-first" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: run-tests-first\ndescription: Use before claiming a fix works.\n---\n\n"
        "- Always run the project's test command before saying a change is done.\n"
    )
    sys.stdout.write(f"\n(a person writes {skill.relative_to(home)} in an editor)\n")
    from evolve.agent import Agent

    Agent.open("demo").commit_human_edits()
    step("skills with their git-derived history", "skills", "demo")
    step("every commit, told apart by trailers", "log", "demo")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="evolve-demo-") as tmp:
        run(Path(tmp) / "home")
    sys.stdout.write("\ndemo finished; the temporary home was removed.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
