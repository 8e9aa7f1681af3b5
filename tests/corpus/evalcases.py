"""Each lesson with its eval case, in the replay corpus: counted, and replayed through a fake model.

After a recorded answer lands, every lesson it created or rewrote is counted (a skill created
or patched, a memo bullet an update added), and so are those that came with a valid case
(written to `evals/<lesson id>/`). Each case is then run, here in Python with the grader
semantics of `claude plugin eval` (2.1.332), against a fake agent that **follows the lesson
when the lesson is in its context and not otherwise**:

- its behaviour comes from the evidence: the run of the history whose request is most like
  the case's prompt (content words shared), read back from its transcript;
- without the lesson in its context, it does what the agent did in that run: every call, in
  order, and its final text;
- with the lesson in its context (the memo's bullet, or the skill's SKILL.md, as the session
  would carry it), it makes none of the run's mistakes (a call that failed, one the person
  rejected, a question the person had to answer by typing a correction, a call the
  correction redid or that uses a word it rejects — "not npm" — are left out) and,
  when the person's next message corrected the run (or said again what it should have done),
  does what that correction got it to do (the next run's calls and final text).

A case passes when every grader does. A good case passes with the lesson and fails without
it; `make eval` prints how many do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evolve import patterns
from evolve.reflect import evidence
from evolve.reflect.bundle import Bundle, BundleRun
from evolve.reflect.run import Outcome
from evolve.transcripts import calls
from evolve.transcripts import model as m
from evolve.transcripts.words import content_words
from evolve.workspace import lessons as lessons_mod
from evolve.workspace.agent import Agent
from evolve.workspace.skills import parse_frontmatter, split_frontmatter

_REJECTED = re.compile(
    r"\b(?:not|never)\s+`?([\w-]+(?:\.[\w-]+)*)", re.IGNORECASE
)  # "not npm": the word rejected


@dataclass(frozen=True)
class Behaviour:
    """What the fake agent does: its calls (tool, input) in order and its final text."""

    calls: tuple[tuple[str, object], ...]
    last_message: str

    def trace(self) -> str:
        """The run as the CLI's `trace` target shows it: one JSON object per line."""
        items = [{"type": "tool_use", "name": name, "input": given} for name, given in self.calls]
        items.append({"type": "text", "text": self.last_message})
        return "\n".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in items)


@dataclass
class Replayed:
    """One case replayed: the lesson, whether it passed with it and without it."""

    lesson: str
    with_lesson: bool
    without_lesson: bool
    why: list[str] = field(default_factory=list)  # graders that decided, per arm

    @property
    def proves(self) -> bool:
        return self.with_lesson and not self.without_lesson


@dataclass
class Measured:
    """Of one answer: lessons created, how many with a valid case, how each case replayed."""

    created: int = 0
    with_case: int = 0
    refused: list[str] = field(default_factory=list)
    replayed: list[Replayed] = field(default_factory=list)

    @property
    def proving(self) -> int:
        return sum(r.proves for r in self.replayed)


def _read(text: str) -> tuple[dict, str]:
    raw, body = split_frontmatter(text)
    data, problems = parse_frontmatter(raw) if raw is not None else ({}, [])
    assert not problems, problems
    return data, body


def _search(pattern: str, text: str, flags: str = "") -> list[tuple[int, int]]:
    compiled = patterns.compile(("(?s)" if "s" in flags else "") + pattern, ignore_case="i" in flags)
    return list(compiled.finditer(text))


def grade(graders: Iterable[Mapping], behaviour: Behaviour, files: set[str]) -> tuple[bool, list[str]]:
    """Whether every grader passes on `behaviour` (claude plugin eval's semantics), and which failed."""
    failed = []
    for grader in graders:
        kind = grader["type"]
        if kind == "regex":
            text = (
                behaviour.trace()
                if grader.get("target", "last_message") == "trace"
                else behaviour.last_message
            )
            found = len(_search(grader["pattern"], text, grader.get("flags", "")))
            match = grader.get("match", "contains")
            ok = (
                found > 0
                if match == "contains"
                else found == 0
                if match == "not_contains"
                else (found == int(match.split(":")[1]))
            )
        elif kind == "tool_used":
            wanted = grader.get("input_match") or ""
            count = sum(
                name == grader["tool"] and _input_matches(wanted, given) for name, given in behaviour.calls
            )
            ok = grader.get("min", 1) <= count <= grader.get("max", count)
        else:
            ok = (grader["path"] in files) == grader.get("exists", True)
        if not ok:
            failed.append(grader["name"])
    return not failed, failed


def _input_matches(pattern: str, given: object) -> bool:
    """The CLI tests `input_match` on the call's input as JSON text."""
    return not pattern or bool(_search(pattern, json.dumps(given, ensure_ascii=False, separators=(",", ":"))))


def _events(run: BundleRun) -> list[m.Event]:
    for fmt in ("claude_code", "generic"):
        events = evidence.read_events(run, fmt) or []
        if any(e.kind in (m.HUMAN, m.TOOL_CALL) for e in events):
            return events
    return []


def _calls(run: BundleRun) -> tuple[list[tuple[str, object]], list[tuple[str, object]], str]:
    """A run's calls as recorded, the same without its mistakes, and its final text."""
    events = _events(run)
    mistakes = {
        e.tool_use_id
        for e in events
        if (e.kind == m.TOOL_RESULT and (e.is_error or e.rejected)) or (e.kind == m.REPLY and e.typed)
    }
    calls = [(e.tool_use_id, e.name, e.input) for e in events if e.kind == m.TOOL_CALL]
    texts = [e.text for e in events if e.kind == m.ASSISTANT_TEXT and e.text.strip()]
    recorded = [(name, given) for _, name, given in calls]
    right = [(name, given) for use, name, given in calls if use not in mistakes]
    return recorded, right, texts[-1] if texts else ""


def behaviours(run: BundleRun, corrected_by: BundleRun | None) -> tuple[Behaviour, Behaviour]:
    """(with the lesson, without it) from a run of the evidence and the run that corrected it.

    Without the lesson the agent does what the run recorded; with it, it makes none of the
    run's mistakes — a call that failed, that the person rejected, a question they answered
    by typing a correction, a call the correction redid (`transcripts.calls.fixes`: the same
    command with another prefix, a script named like its target), a call using a word the
    correction rejects ("not npm") — and does what the
    person's correction (the next run) got it to do, errors and all.
    """
    recorded, right, last = _calls(run)
    if corrected_by is not None:
        fixed, _, said = _calls(corrected_by)  # as the person's correction had it, errors and all
        redone = [calls.shape(name, given) for name, given in fixed]
        words = _REJECTED.findall(str(corrected_by.facts.get("request") or ""))
        right = [
            c
            for c in right
            if not any(calls.fixes(calls.shape(*c), later) for later in redone)
            and not any(
                re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", json.dumps(c[1])) for word in words
            )
        ]
        right, last = right + fixed, said or last
    return Behaviour(tuple(right), last), Behaviour(tuple(recorded), _calls(run)[2])


def _corrects(run: BundleRun) -> bool:
    """Whether a run's request corrected the run before it (or said again what it should have done)."""
    return any(run.signals.get(s) for s in ("user_correction", "user_preference", "lesson_ignored"))


def _likeness(run: BundleRun, prompt: str) -> int:
    asked = " ".join(str(run.facts.get(key) or "") for key in ("request", "replies"))
    return len(content_words(prompt) & content_words(asked))


def _created(outcome: Outcome) -> tuple[int, list[str]]:
    """Lessons the landed operations created or rewrote, and the cases refused (one line each)."""
    plan = outcome.plan
    if plan is None:
        return 0, []
    created = 0
    for op in plan.operations:
        if op.kind in ("create_skill", "patch_skill"):
            created += 1
        elif op.kind == "update_memo":
            before = {lid for lid in _bullet_ids(op.previous)}
            created += len(_bullet_ids(op.text) - before)
    return created, [f"{op.line()}: {op.case_refused}" for op in plan.operations if op.case_refused]


def _bullet_ids(memo: str | None) -> set[str]:
    return {lesson.id for lesson in lessons_mod.memo_lessons(memo or "")}


def measure(agent: Agent, outcome: Outcome) -> Measured:
    """Count the lessons an answer's commit created and replay each case it wrote."""
    created, refused = _created(outcome)
    result = Measured(created=created, refused=refused)
    bundle: Bundle | None = outcome.bundle
    lessons = {lesson.id: lesson for lesson in lessons_mod.current(agent)}
    for lesson_id, folder in sorted(lessons_mod.case_folders(agent.repo).items()):
        result.with_case += 1
        root = agent.path / folder
        _, prompt = _read((root / "prompt.md").read_text(encoding="utf-8"))
        graders = []
        for path in sorted((root / "graders").glob("*.md")):
            data, body = _read(path.read_text(encoding="utf-8"))
            graders.append(
                {"name": path.stem, **data}
                | ({"pattern": body.strip()} if "pattern" not in data and data.get("type") == "regex" else {})
            )
        runs = bundle.runs if bundle is not None else []
        run = max(runs, key=lambda r: _likeness(r, prompt), default=None)
        if run is None:
            continue
        after = next((r for r in runs if r.session == run.session and r.run == run.run + 1), None)
        corrected, recorded = behaviours(run, after if after is not None and _corrects(after) else None)
        lesson = lessons.get(lesson_id)
        context = lesson.text if lesson is not None else ""  # the session carries the lesson
        following = (
            corrected
            if context and context in (agent.memo_text() + _skill_text(agent, lesson_id))
            else recorded
        )
        with_ok, with_failed = grade(graders, following, _written(following))
        without_ok, _ = grade(graders, recorded, _written(recorded))
        result.replayed.append(Replayed(lesson_id, with_ok, without_ok, with_failed))
    return result


def _written(behaviour: Behaviour) -> set[str]:
    """The files a behaviour's calls wrote, by path and by name (file_exists paths are relative)."""
    found = set()
    for name, given in behaviour.calls:
        path = given.get("file_path") if isinstance(given, dict) and name in m.WRITE_TOOLS else None
        if isinstance(path, str):
            found |= {path, path.rsplit("/", 1)[-1]}
    return found


def _skill_text(agent: Agent, name: str) -> str:
    path = agent.skills_dir / name / "SKILL.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


__all__ = ["Behaviour", "Measured", "grade", "measure"]
