"""`make demo`: the whole loop offline, in a temporary home, on example transcripts.

The examples (shipped in evolve/examples) hold a run where the agent recovered from a real
error, a run where the user corrected it, and a run whose only failures were transient
(a timeout, an overloaded API, an HTTP 503): the last one must teach nothing.
"""

from __future__ import annotations

import os
import sys
import tempfile
from importlib import resources
from pathlib import Path

from evolve.cli import main as evolve


def step(title: str, *argv: str) -> None:
    sys.stdout.write(f"\n$ evolve {' '.join(argv)}\n# {title}\n")
    sys.stdout.flush()
    code = evolve(list(argv))
    if code != 0:
        raise SystemExit(f"demo step failed with exit code {code}: evolve {' '.join(argv)}")


def show(title: str, path: Path) -> None:
    sys.stdout.write(f"\n$ cat {path.name}\n# {title}\n{path.read_text()}")


def run(home: Path) -> None:
    os.environ["EVOLVE_HOME"] = str(home)
    os.environ["EVOLVE_MODEL_BACKEND"] = "offline"  # the demo never calls a model
    examples = sorted(
        str(p) for p in resources.files("evolve").joinpath("examples").iterdir() if p.name.endswith(".jsonl")
    )
    step("create an agent: a git repository holding its skills and memo", "init", "demo")
    step("read the example transcripts: runs and facts, no model", "observe", "demo", *examples)
    step(
        "score each run: a correction and a recovered error qualify; transient errors never do",
        "score",
        "demo",
    )
    step("a background cycle, run by hand: dirty gate, threshold, then one reflection", "cycle", "--now")
    step("every commit, told apart by trailers that carry the evidence", "log", "demo")
    step("the reflection as a diff", "review", "demo", "HEAD")
    show("what the agent sees next session", home / "agents" / "demo" / "memo.md")
    step("the skills, with git-derived history", "skills", "demo")
    step("bad learning is undone with a revert (and never re-learned)", "revert", "demo", "HEAD")
    step("nothing new since: the next cycle skips the agent at zero cost", "cycle", "--now")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="evolve-demo-") as tmp:
        run(Path(tmp) / "home")
    sys.stdout.write("\ndemo finished; its temporary home was removed.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
