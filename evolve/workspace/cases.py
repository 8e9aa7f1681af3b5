"""Where a lesson's eval case lives in the agent repository: `evals/<lesson id>/`.

Path rules only, so the pre-commit hook tells a case's file from any other without loading
what reads and checks cases (`workspace.lessons`, `reflect.evalcase`).
"""

from __future__ import annotations

from evolve.names import name_problem

EVALS = "evals"  # each lesson's eval case: evals/<lesson id>/ (reflect.evalcase: its schema)
CASES_RESERVED = ("results",)  # `claude plugin eval` writes its runs to evals/results/


def case_folder(lesson: str) -> str:
    return f"{EVALS}/{lesson}"


def case_lesson(path: str) -> str | None:
    """The lesson whose case holds `path` (`evals/<id>/…`), or None (evals/results/, other files)."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != EVALS or parts[1] in CASES_RESERVED:
        return None
    return None if name_problem(parts[1]) else parts[1]
