"""What the `evolve eval` tests build: eval cases in an agent repository, and a model.

Every agent repository is a plugin (the template's manifest and SessionStart hook), so the
runs go through the real hook inside the harness's sandbox (HOME and EVOLVE_HOME stripped):
`evolve` found on PATH, the memo read from `${CLAUDE_PLUGIN_ROOT}`, the export of main.
`write_case(...)` writes `evals/<lesson id>/` as a person would.

`FollowingModel` is the fake Messages API as a model with habits: for a request whose text
holds a rule's prompt, it answers the rule's `follow` text when the request also carries the
rule's `lesson` words (the memo a SessionStart hook injected, a skill listed), else its
`default` text. So the expected Δ of each case is known before the run.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.fake_claude_api import FakeClaudeAPI, Recorded, Turn


def grader(kind: str = "regex", **fields: str) -> str:
    """A grader file: frontmatter (`type` and `fields`), then a line saying what it checks."""
    lines = [f"type: {kind}", *(f"{k}: {json.dumps(v)}" for k, v in fields.items())]
    return "---\n" + "\n".join(lines) + "\n---\nPasses when the lesson is followed.\n"


def write_case(repo: Path, lesson: str, prompt: str, graders: dict[str, str]) -> Path:
    """`evals/<lesson>/prompt.md` and `graders/<name>.md` for each grader text."""
    folder = repo / "evals" / lesson
    (folder / "graders").mkdir(parents=True, exist_ok=True)
    (folder / "prompt.md").write_text(prompt + "\n")
    for name, text in graders.items():
        (folder / "graders" / f"{name}.md").write_text(text)
    return folder


def contains(pattern: str) -> str:
    """A regex grader: the last message matches `pattern`."""
    return grader(target="last_message", match="contains", pattern=pattern)


@dataclass(frozen=True)
class Rule:
    prompt: str  # words of the case's prompt
    lesson: str  # words the request carries when the lesson is in the context
    follow: str  # the answer then
    default: str  # the answer otherwise


class FollowingModel(FakeClaudeAPI):
    """Answers each agent turn by its rules; `delay_s` slows every turn (an interrupted run)."""

    def __init__(self, rules: list[Rule], delay_s: float = 0.0) -> None:
        super().__init__()
        self.rules, self.delay_s = rules, delay_s
        self.answered: list[tuple[str, bool]] = []  # (the rule's prompt, whether the lesson was there)
        self._answered_lock = threading.Lock()

    def answer(self, recorded: Recorded) -> tuple[Recorded, Turn | None]:
        if not recorded.is_turn():
            return super().answer(recorded)
        if self.delay_s:
            time.sleep(self.delay_s)
        text = recorded.text()
        rule = next((r for r in self.rules if r.prompt in text), None)
        if rule is None:
            return super().answer(recorded)  # unscripted: noted, check_done() fails the test
        follows = rule.lesson in text
        with self._answered_lock:
            self.answered.append((rule.prompt, follows))
            self.requests.append(recorded)
        return recorded, Turn([{"type": "text", "text": rule.follow if follows else rule.default}])
