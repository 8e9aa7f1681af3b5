"""`make eval-signals`: how well evolve hears real people, per language and per kind of correction.

Reads labelled messages people typed to coding agents: the dev set in
`../shared/data/corrections/dev.jsonl` (with our per-message annotations of how each person
corrected and whether they stated a preference, `dev-annotations.jsonl` here: ids and labels
only, no text) and the sets we grew from other public sessions (`grown-*.jsonl` here; see
README.md). Each message goes through the same code as `evolve classify`, with the agent's
text before it, whether it opened the session and whether an API error or an interruption
came just before.

Strict scoring counts clear corrections as positives and leaves borderline ones out;
lenient scoring counts both. Nothing here is learned from the data (the detector is rules
and lexicons), so there is nothing to cross-validate; the sets are split by person all the
same, and each set's people are reported apart.

    python -m tests.hearing.eval [--misses] [--exclude NAME ...] [SET ...]
        SET: dev, grown (default: both); --exclude NAME (repeatable) leaves the grown set
        NAME (`grown-blind16`, or its file name) out unread: a set being built blind
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evolve.commands.classifying import classify_lines
from evolve.transcripts.classify import BUILT_IN
from evolve.transcripts.hearing import Heard
from tests.shared_data import SHARED

HERE = Path(__file__).parent
DEV = SHARED / "data" / "corrections" / "dev.jsonl"


@dataclass
class Tally:
    """Counts for precision and recall."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        self.tp += predicted and actual
        self.fp += predicted and not actual
        self.fn += actual and not predicted

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p and r else None

    def row(self) -> str:
        def num(value: float | None) -> str:
            return "  -  " if value is None else f"{value:.2f} "

        counts = f"(tp {self.tp}, fp {self.fp}, fn {self.fn})"
        return f"P {num(self.precision)} R {num(self.recall)} F1 {num(self.f1)} {counts}"


@dataclass
class Report:
    """Every tally of one set."""

    name: str
    messages: int = 0
    people: set[str] = field(default_factory=set)
    strict: Tally = field(default_factory=Tally)
    lenient: Tally = field(default_factory=Tally)
    preference: Tally = field(default_factory=Tally)
    by_language: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_kind: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))  # recall: labelled kind
    fired_kind: Counter = field(default_factory=Counter)  # precision: what fired, and was it right
    fired_right: Counter = field(default_factory=Counter)
    false_alarms: Counter = field(default_factory=Counter)  # by the labeller's reason
    misses: list[str] = field(default_factory=list)

    def add(self, item: dict, heard: Heard) -> None:
        self.messages += 1
        self.people.add(item.get("person", "?"))
        label = item["label"]
        clear, borderline = label == "yes-clear", label == "yes-borderline"
        self.lenient.add(heard.correction, clear or borderline)
        self.preference.add(heard.preference, bool(item.get("preference")))
        if heard.preference != bool(item.get("preference")):
            self.misses.append(
                f"  preference {'fired' if heard.preference else 'missed'}: {_line(item, heard)}"
            )
        if borderline:
            return
        self.strict.add(heard.correction, clear)
        self.by_language[item.get("language") or "?"].add(heard.correction, clear)
        if clear:
            self.by_kind[item.get("correction_kind") or "unlabelled"].add(heard.correction, True)
        if heard.correction:
            self.fired_kind[heard.kind] += 1
            self.fired_right[heard.kind] += clear
            if not clear:
                self.false_alarms[_reason(item)] += 1
        if heard.correction != clear:
            self.misses.append(f"  {'false alarm' if heard.correction else 'missed'}: {_line(item, heard)}")

    def print(self, misses: bool) -> None:
        say = sys.stdout.write
        say(f"\n== {self.name}: {self.messages} messages, {len(self.people)} people\n")
        say(f"corrections, strict (clear vs no):   {self.strict.row()}\n")
        say(f"corrections, lenient (+borderline): {self.lenient.row()}\n")
        say(f"stated preferences:                  {self.preference.row()}\n")
        say("per language (strict):\n")
        for lang, tally in sorted(self.by_language.items()):
            say(f"  {lang:3} {tally.row()}\n")
        say("per kind of correction (recall of the labelled kind; precision of what fired as it):\n")
        for kind in sorted(set(self.by_kind) | set(self.fired_kind), key=str):
            tally = self.by_kind.get(kind, Tally())
            fired = self.fired_kind.get(kind, 0)
            precision = f"{self.fired_right[kind] / fired:.2f}" if fired else "  - "
            recall = f"{tally.tp}/{tally.tp + tally.fn}"
            say(f"  {kind!s:15} recall {recall}   fired {fired}, precision {precision}\n")
        if self.false_alarms:
            say("false alarms, by what the message was:\n")
            for reason, count in self.false_alarms.most_common():
                say(f"  {count}  {reason}\n")
        if misses and self.misses:
            say("misses and false alarms:\n" + "\n".join(self.misses) + "\n")


def _reason(item: dict) -> str:
    """The labeller's reason, shortened to its kind ("first message: task" -> "first message")."""
    return (item.get("reason") or "?").split(":")[0].split("(")[0].strip()[:40]


def _line(item: dict, heard: Heard) -> str:
    text = " ".join(item["text"].split())[:110]
    return f"{item['id']} [{item.get('language')}] {text!r} -> {heard.why or 'nothing'}"


def load(path: Path, annotations: dict[str, dict] | None = None) -> list[dict]:
    """A labelled set's messages, with their annotations merged in."""
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for item in items:
        item.update((annotations or {}).get(item["id"], {}))
    return items


def judged(items: list[dict]) -> Iterator[tuple[dict, Heard]]:
    """Each message with what `evolve classify` hears in it."""
    lines = (
        json.dumps(
            {
                "text": item["text"],
                "agent_before": item.get("agent_before") or "",
                "first": bool(item.get("first_message")),
                "after_error": bool(item.get("prev_api_error") or item.get("prev_interrupted")),
                "agent_after": item.get("agent_after") or "",
            }
        )
        for item in items
    )
    for item, (heard, problem) in zip(items, classify_lines(BUILT_IN.lexicons(), lines), strict=True):
        assert heard is not None, problem
        yield item, heard


def answers() -> dict[str, dict]:
    """The agent's answer after each message, by id, where its source was read (agent-after.jsonl)."""
    path = HERE / "agent-after.jsonl"
    return {a["id"]: {"agent_after": a["agent_after"]} for a in load(path)} if path.is_file() else {}


def sets(
    names: Iterable[str], exclude: Iterable[str] = (), with_answers: bool = True
) -> Iterator[tuple[str, list[dict]]]:
    """(name, messages) of each set asked for that is here; an excluded grown set is never opened.

    `with_answers`: each grown message carries the agent's answer after it where it is known
    (as observe reads a transcript); without, only what a classifier of lone messages gets.
    """
    left_out = {Path(name).name.removesuffix(".jsonl") for name in exclude}
    after = answers() if with_answers else {}
    for name in names:
        if name == "dev":
            if not DEV.is_file():
                sys.stdout.write(f"(dev set skipped: {DEV} is not here)\n")
                continue
            annotations = {a["id"]: a for a in load(HERE / "dev-annotations.jsonl")}
            yield "dev (../shared, 32 people)", load(DEV, annotations)
        elif name == "grown":
            for path in sorted(HERE.glob("grown-*.jsonl")):
                if path.stem in left_out:
                    sys.stdout.write(f"({path.stem} left out unread: --exclude)\n")
                    continue
                yield f"grown: {path.stem}", load(path, after)


def report(name: str, items: list[dict]) -> Report:
    result = Report(name)
    for item, heard in judged(items):
        result.add(item, heard)
    return result


def _options(argv: list[str]) -> tuple[bool, list[str], list[str], bool]:
    """(--misses, the sets asked for, the sets --exclude leaves out, not --without-answers)."""
    misses, names, exclude, with_answers = False, [], [], True
    args = iter(argv)
    for arg in args:
        if arg == "--misses":
            misses = True
        elif arg == "--without-answers":
            with_answers = False
        elif arg == "--exclude" or arg.startswith("--exclude="):
            value = arg.partition("=")[2] or next(args, "")
            if not value:
                raise SystemExit("--exclude needs a set's name (grown-blind16)")
            exclude.append(value)
        elif not arg.startswith("-"):
            names.append(arg)
    return misses, names or ["dev", "grown"], exclude, with_answers


def main(argv: list[str]) -> int:
    misses, names, exclude, with_answers = _options(argv)
    every: list[dict] = []
    for name, items in sets(names, exclude, with_answers):
        report(name, items).print(misses)
        if name.startswith("grown"):
            every += items
    if len([n for n in names if n == "grown"]) and every:
        report("grown, all sets together", every).print(False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
