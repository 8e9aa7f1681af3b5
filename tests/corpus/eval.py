"""`make eval`: replay the corpus through the reflection path and say what the model saw.

For each case (a recorded history) and each of its recorded answers: a fresh home, the
case set up (tests/corpus/loader.py), one reflection through `evolve.reflect.run.reflect`
with the recorded answer as the model's, and per history the bundle's tokens, the budget
used, the signalled runs shown, the real errors shown with their cause, the person's words
shown, the redactions, and of the operations proposed how many landed, wait for a person's
review and were rejected (with why).

With `EVOLVE_EVAL_LIVE=1` and a configured backend (`EVOLVE_MODEL_BACKEND=anthropic` with
`ANTHROPIC_API_KEY`, and `ANTHROPIC_BASE_URL` for another server), each case is sent as the
real request instead and the answer is kept as a new recording (`answers/live-*.json` in
the case, or under `EVOLVE_EVAL_RECORD`). Cases whose shared transcripts are missing are
skipped, saying so.

    python -m tests.corpus.eval [CASE ...]       the table (and the people cases' measures)
    python -m tests.corpus.eval --bundle CASE    the bundle a case's reflection sends
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evolve.home import Home
from evolve.reflect.client import Answer, ReflectionRequest, make_client
from evolve.reflect.run import Outcome, reflect
from tests.corpus.evalcases import Measured, measure
from tests.corpus.loader import Case, cases, load

LIVE = "EVOLVE_EVAL_LIVE"
RECORD = "EVOLVE_EVAL_RECORD"
PERSON = {
    "GIT_AUTHOR_NAME": "Corpus Person",
    "GIT_AUTHOR_EMAIL": "person@corpus.test",
    "GIT_COMMITTER_NAME": "Corpus Person",
    "GIT_COMMITTER_EMAIL": "person@corpus.test",
}


@dataclass(frozen=True)
class Recorded:
    """A model that gives the recorded answer (a ReflectionClient)."""

    tool_input: dict
    name: str = "recorded"

    def reflect(self, request: ReflectionRequest) -> Answer:
        return Answer(self.tool_input, self.name, 0, 0)


@dataclass
class Recording:
    """The configured backend, keeping the answer it gave."""

    client: object
    answer: Answer | None = None

    @property
    def name(self) -> str:
        return self.client.name  # type: ignore[attr-defined]

    def reflect(self, request: ReflectionRequest) -> Answer:
        self.answer = self.client.reflect(request)  # type: ignore[attr-defined]
        return self.answer


@dataclass
class Round:
    """One reflection of one history: what the bundle showed and what the answer did."""

    case: str
    answer: str
    status: str
    evidence: dict
    tokens: int
    budget: int
    proposed: int
    landed: int
    waiting: int = 0  # for a person's review (a proposals/ branch)
    rejected: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # why the write-path guard sent it to review
    recorded_to: Path | None = None
    unchanged: int = 0  # valid, but the files already said so
    cases: Measured | None = None  # the lessons it created, their eval cases, replayed

    def row(self) -> list[str]:
        e = self.evidence
        return [
            self.case,
            self.answer,
            str(self.tokens),
            f"{100 * self.tokens / self.budget:.1f}%",
            f"{e['signalled_runs_shown']}/{e['signalled_runs']}",
            _share(e["errors_with_cause"], e["real_errors"]),
            _share(e["user_words_shown"], e["user_words"]),
            str(e["redactions"]),
            f"{self.landed}/{self.waiting}/{len(self.rejected)} of {self.proposed}",
            self.status,
        ]


HEADER = [
    "case",
    "answer",
    "tokens",
    "budget",
    "signalled",
    "errors+cause",
    "user words",
    "redacted",
    "ops landed/review/rejected",
    "status",
]


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} {100 * part / whole:.0f}%" if whole else "0/0"


@contextlib.contextmanager
def fresh_home() -> Iterator[Home]:
    """A temporary evolve home, the process's own while it lasts (the token cache goes there)."""
    saved = {key: os.environ.get(key) for key in ("EVOLVE_HOME", *PERSON)}
    with tempfile.TemporaryDirectory(prefix="evolve-eval-") as folder:
        os.environ.update({"EVOLVE_HOME": str(Path(folder) / "home"), **PERSON})
        try:
            yield Home.resolve()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def evaluate(case: Case, *, live: bool = False, record_to: Path | None = None) -> list[Round]:
    """One round per recorded answer (or one live round), each on a fresh setup of the case."""
    rounds = []
    for path in [None] if live else case.answers():
        with fresh_home() as home:
            agent = case.setup(home)
            if live:
                client: Recorded | Recording = Recording(make_client(agent.config.model))
                label = "live"
            else:
                assert path is not None
                client = Recorded(case.answer(path))
                label = path.stem
            outcome = reflect(home, agent.name, force=True, client=client)
            round_ = _round(case, label, outcome, client)
            round_.cases = measure(agent, outcome)
        if isinstance(client, Recording) and client.answer is not None:
            round_.recorded_to = _keep(client.answer, record_to or case.folder / "answers")
        rounds.append(round_)
    return rounds


def _round(case: Case, label: str, outcome: Outcome, client: Recorded | Recording) -> Round:
    bundle = outcome.bundle
    if bundle is None:
        raise RuntimeError(f"case {case.name}: no bundle was built ({outcome.status}: {outcome.reason})")
    answer = (
        client.tool_input
        if isinstance(client, Recorded)
        else (client.answer.tool_input if client.answer else {})
    )
    operations = answer.get("operations") if isinstance(answer, dict) else None
    proposed = sum(1 for op in operations or [] if isinstance(op, dict) and op.get("op") != "nothing_to_save")
    rows = outcome.operations()
    landed = sum(1 for row in rows if row["status"] == "landed")
    waiting = sum(1 for row in rows if row["status"] in ("waiting", "proposed"))  # a person decides
    rejected = [
        f"{row['op']} {row['target']}: {row['reason']}" for row in rows if row["status"] == "rejected"
    ]
    status = outcome.status if outcome.status != "failed" else f"failed: {outcome.reason}"
    return Round(
        case.name,
        label,
        status,
        bundle.evidence(),
        bundle.tokens,
        bundle.budget,
        proposed,
        landed,
        waiting,
        rejected,
        outcome.flags,
        unchanged=sum(1 for row in rows if row["status"] == "unchanged"),
    )


def _keep(answer: Answer, folder: Path) -> Path:
    """The live answer as a new recording, named by the model and the time."""
    folder.mkdir(parents=True, exist_ok=True)
    model = "".join(c if c.isalnum() or c in "-." else "-" for c in answer.model) or "model"
    path = folder / f"live-{model}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(answer.tool_input, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def table(rounds: list[Round]) -> str:
    rows = [HEADER] + [r.row() for r in rounds]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    for round_ in rounds:
        lines += [f"  {round_.case}/{round_.answer} rejected: {reason}" for reason in round_.rejected]
        lines += [f"  {round_.case}/{round_.answer} flagged for review: {flag}" for flag in round_.flags]
        if round_.recorded_to:
            lines.append(f"  {round_.case}: the live answer is kept as {round_.recorded_to}")
    return "\n".join(lines)


def case_table(rounds: list[Round]) -> str:
    """Each answer's lessons and their eval cases: created, with a valid case, proving the lesson."""
    lines = ["case               answer      lessons  with case  pass with / fail without"]
    total = Measured()
    for r in rounds:
        measured = r.cases or Measured()
        lines.append(
            f"{r.case:<18} {r.answer:<11} {measured.created:<8} {measured.with_case:<10} "
            f"{measured.proving}/{len(measured.replayed)}"
        )
        lines += [f"  {r.case}/{r.answer} case refused: {why}" for why in measured.refused]
        lines += [
            f"  {r.case}/{r.answer} case {p.lesson}: with the lesson {'passes' if p.with_lesson else 'fails'}"
            f"{' (' + ', '.join(p.why) + ')' if p.why else ''}, without it "
            f"{'passes' if p.without_lesson else 'fails'}"
            for p in measured.replayed
            if not p.proves
        ]
        total.created += measured.created
        total.with_case += measured.with_case
        total.replayed += measured.replayed
    weak = sum(p.without_lesson for p in total.replayed)
    unshown = sum(not p.with_lesson and not p.without_lesson for p in total.replayed)
    lines.append(
        f"  lessons created: {total.created}; with a valid eval case: {total.with_case}; "
        f"cases that pass with the lesson and fail without it: {total.proving} of {len(total.replayed)} "
        f"(pass without it too: {weak}; fail with it, the evidence never showing the lesson followed: "
        f"{unshown})"
    )
    return "\n".join(lines)


def show_bundle(case: Case) -> str:
    """The bundle a reflection of `case` sends (a dry run, no model)."""
    with fresh_home() as home:
        agent = case.setup(home)
        outcome = reflect(home, agent.name, force=True, dry_run=True, client=Recorded({"operations": []}))
        assert outcome.bundle is not None
        return outcome.bundle.text


def main(argv: list[str]) -> int:
    if argv[:1] == ["--bundle"] and len(argv) == 2:
        print(show_bundle(load(argv[1])))
        return 0
    live = os.environ.get(LIVE) == "1"
    if live and os.environ.get("EVOLVE_MODEL_BACKEND", "offline") == "offline":
        print(f"{LIVE}=1 needs a backend: set EVOLVE_MODEL_BACKEND=anthropic (and its key)")
        return 1
    from tests.corpus import adherence, trust

    record = Path(os.environ[RECORD]) if os.environ.get(RECORD) else None
    rounds: list[Round] = []
    people: list[Case] = []
    lessons: list[Case] = []
    for case in [load(name) for name in argv] if argv else cases():
        if not case.available:
            print(f"{case.name}: skipped, its shared transcripts are not here (../shared/data/claude-code)")
            continue
        if case.steps and not live:
            people.append(case)  # answers that follow a person's acts: replayed in order, below
        else:
            rounds += evaluate(case, live=live, record_to=record / case.name if record else None)
        if case.timeline and "ignored" in case.expect and not live:
            lessons.append(case)  # planted ignored lessons and topic-only controls, below
    print(table(rounds))
    print("\nEach lesson with its eval case (tests/corpus/evalcases.py):\n")
    print(case_table(rounds))
    if people:
        print("\nWith a person between reflections (tests/corpus/trust.py):\n")
        print(trust.table(trust.replay_all(people, fresh_home)))
    if lessons:
        print("\nLessons ignored, and did they stick (tests/corpus/adherence.py):\n")
        measured = []
        for case in lessons:
            with fresh_home() as home:
                measured.append(adherence.measure(case, home))
        print(adherence.table(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
