"""How far a second, independent labeller agrees with the grown sets' labels: the ceiling for any detector.

`python -m tests.hearing.agreement [--disagreements]` re-draws the sample (seed 49: 12 of grown-blind3
… grown-blind23, 40 messages of each), joins `agreement.jsonl` (second labels made from the text and its
context alone) with the sets' labels by id, and prints agreement, Cohen's kappa, each side scored as a
detector against the other with the strict rule (clear positive, borderline left out, "no" negative), the
same for preferences, the 3×3 confusion table and bootstrapped 90 % intervals. agreement.md reports the
numbers and reads the disagreements.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

HEARING = Path(__file__).resolve().parent
SEED = 49
SETS_DRAWN = 12
PER_SET = 40
CANDIDATE_SETS = tuple(f"grown-blind{n}" for n in range(3, 24))
LABELS = ("yes-clear", "yes-borderline", "no")
BOOTSTRAP_ROUNDS = 2000
# Messages whose original label the second labeller could have read before labelling: quoted in
# grown-blind16.md's labelling notes, which the brief asked to read first.
QUOTED_IN_NOTES = frozenset({"gb16-0146", "gb16-0159", "gb16-0279", "gb16-0384"})


@dataclass(frozen=True)
class Pair:
    """One message's original label and second label."""

    id: str
    original: str
    second: str
    original_preference: bool
    second_preference: bool
    hinted: bool  # original label inferable: question_answer is set (almost) only on "no" messages


@dataclass(frozen=True)
class Score:
    """Precision, recall and F1 of a detector, with the counts behind them."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else 0.0

    @property
    def recall(self) -> float:
        actual = self.true_positives + self.false_negatives
        return self.true_positives / actual if actual else 0.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0

    def describe(self) -> str:
        return (
            f"P {self.precision:.2f} / R {self.recall:.2f} / F1 {self.f1:.2f} "
            f"(TP {self.true_positives}, FP {self.false_positives}, FN {self.false_negatives})"
        )


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def draw_sample(seed: int = SEED) -> list[tuple[str, list[dict]]]:
    """The sample, drawn exactly as before labelling: the sets first, then 40 messages of each."""
    rng = random.Random(seed)
    drawn = rng.sample(CANDIDATE_SETS, SETS_DRAWN)
    chosen = sorted(drawn, key=lambda name: int(name.removeprefix("grown-blind")))
    sample = []
    for name in chosen:
        rows = read_jsonl(HEARING / f"{name}.jsonl")
        sample.append((name, sorted(rng.sample(rows, PER_SET), key=lambda row: row["id"])))
    return sample


def join(sample: list[tuple[str, list[dict]]], second_rows: list[dict]) -> list[Pair]:
    """Pairs in sample order; the second labels must cover exactly the sampled ids."""
    second_by_id = {row["id"]: row for row in second_rows}
    originals = [row for _, rows in sample for row in rows]
    if {row["id"] for row in originals} != set(second_by_id):
        raise SystemExit("agreement.jsonl does not hold exactly the sampled ids: re-draw or relabel")
    return [
        Pair(
            id=row["id"],
            original=row["label"],
            second=second_by_id[row["id"]]["label"],
            original_preference=bool(row.get("preference")),
            second_preference=bool(second_by_id[row["id"]]["preference"]),
            hinted=bool(row.get("question_answer")) or row["id"] in QUOTED_IN_NOTES,
        )
        for row in originals
    ]


def strict_score(truth: Sequence[str], flagged: Sequence[bool]) -> Score:
    """A detector's flags against labels: clear positive, borderline left out, no negative."""
    pairs = list(zip(truth, flagged, strict=True))
    return Score(
        true_positives=sum(1 for label, flag in pairs if flag and label == "yes-clear"),
        false_positives=sum(1 for label, flag in pairs if flag and label == "no"),
        false_negatives=sum(1 for label, flag in pairs if not flag and label == "yes-clear"),
    )


def binary_score(truth: Sequence[bool], flagged: Sequence[bool]) -> Score:
    pairs = list(zip(truth, flagged, strict=True))
    return Score(
        true_positives=sum(1 for actual, flag in pairs if flag and actual),
        false_positives=sum(1 for actual, flag in pairs if flag and not actual),
        false_negatives=sum(1 for actual, flag in pairs if not flag and actual),
    )


def agreement(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    return sum(1 for a, b in zip(first, second, strict=True) if a == b) / len(first)


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    """Agreement beyond what the two sides' label frequencies give by chance."""
    n = len(first)
    expected = sum((list(first).count(c) / n) * (list(second).count(c) / n) for c in set(first) | set(second))
    return (agreement(first, second) - expected) / (1 - expected) if expected < 1 else 1.0


def detectors(pairs: Sequence[Pair]) -> dict[str, Score]:
    """Each side's yes-clear labels (and preferences) scored as a detector against the other side's labels."""
    original = [p.original for p in pairs]
    second = [p.second for p in pairs]
    original_preference = [p.original_preference for p in pairs]
    second_preference = [p.second_preference for p in pairs]
    return {
        "second as detector vs original (strict)": strict_score(original, [s == "yes-clear" for s in second]),
        "original as detector vs second (strict)": strict_score(second, [o == "yes-clear" for o in original]),
        "second as detector vs original (lenient: any yes)": binary_score(
            [o != "no" for o in original], [s != "no" for s in second]
        ),
        "preferences, second as detector vs original": binary_score(original_preference, second_preference),
        "preferences, original as detector vs second": binary_score(second_preference, original_preference),
    }


def interval_numbers(pairs: Sequence[Pair]) -> dict[str, float]:
    """The numbers that get a bootstrap interval, for one (re)sample of messages."""
    clear_original = [p.original == "yes-clear" for p in pairs]
    clear_second = [p.second == "yes-clear" for p in pairs]
    numbers = {"clear agreement": agreement(clear_original, clear_second)}
    numbers["clear kappa"] = cohen_kappa(clear_original, clear_second)
    for name, score in detectors(pairs).items():
        if "lenient" not in name:
            numbers[f"{name} P"] = score.precision
            numbers[f"{name} R"] = score.recall
            numbers[f"{name} F1"] = score.f1
    return numbers


def bootstrap(pairs: Sequence[Pair], rounds: int = BOOTSTRAP_ROUNDS) -> dict[str, tuple[float, float]]:
    """90 % percentile intervals from resampling messages with replacement (seeded)."""
    rng = random.Random(SEED)
    draws: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, value in interval_numbers(rng.choices(pairs, k=len(pairs))).items():
            draws.setdefault(name, []).append(value)
    low, high = int(0.05 * rounds), int(0.95 * rounds) - 1
    return {name: (sorted(values)[low], sorted(values)[high]) for name, values in draws.items()}


def report(pairs: list[Pair], sets: list[str]) -> None:
    original = [p.original for p in pairs]
    second = [p.second for p in pairs]
    n = len(pairs)
    print(f"sample: {n} messages, {PER_SET} from each of {', '.join(sets)} (seed {SEED})")
    print("original labels: " + ", ".join(f"{label} {original.count(label)}" for label in LABELS))
    print("second labels:   " + ", ".join(f"{label} {second.count(label)}" for label in LABELS))
    for name, first, other in (
        ("clear vs not", [o == "yes-clear" for o in original], [s == "yes-clear" for s in second]),
        ("any yes vs no", [o != "no" for o in original], [s != "no" for s in second]),
        ("three labels", original, second),
        ("preferences", [p.original_preference for p in pairs], [p.second_preference for p in pairs]),
    ):
        print(f"{name}: agree {agreement(first, other):.3f} of {n}, kappa {cohen_kappa(first, other):.2f}")
    for name, score in detectors(pairs).items():
        print(f"{name}: {score.describe()}")
    unhinted = [p for p in pairs if not p.hinted]
    unhinted_numbers = interval_numbers(unhinted)
    print(
        f"without the {n - len(unhinted)} hinted messages (question_answer set, or quoted in the notes): "
        f"clear kappa {unhinted_numbers['clear kappa']:.2f}, second as detector P "
        f"{unhinted_numbers['second as detector vs original (strict) P']:.2f} / R "
        f"{unhinted_numbers['second as detector vs original (strict) R']:.2f}"
    )
    print("confusion (rows original, columns second):")
    print(" " * 16 + "".join(f"{label:>16}" for label in LABELS))
    for row in LABELS:
        cells = [sum(1 for p in pairs if p.original == row and p.second == column) for column in LABELS]
        print(f"{row:>16}" + "".join(f"{cell:>16}" for cell in cells))
    print(f"bootstrap 90 % intervals ({BOOTSTRAP_ROUNDS} resamples of the {n} messages, seed {SEED}):")
    for name, (low, high) in bootstrap(pairs).items():
        print(f"  {name}: {low:.2f} – {high:.2f}")


def list_disagreements(sample: list[tuple[str, list[dict]]], pairs: list[Pair]) -> None:
    rows_by_id = {row["id"]: row for _, rows in sample for row in rows}
    for pair in pairs:
        if pair.original != pair.second or pair.original_preference != pair.second_preference:
            text = " ".join(rows_by_id[pair.id]["text"].split())[:100]
            preference = f"  preference {pair.original_preference} -> {pair.second_preference}"
            print(f"{pair.id}\t{pair.original} -> {pair.second}{preference}\t{text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--disagreements", action="store_true", help="list where the two sides differ")
    args = parser.parse_args()
    sample = draw_sample()
    pairs = join(sample, read_jsonl(HEARING / "agreement.jsonl"))
    if args.disagreements:
        list_disagreements(sample, pairs)
    else:
        report(pairs, [name for name, _ in sample])


if __name__ == "__main__":
    main()
