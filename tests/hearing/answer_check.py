"""Does a model learned from the agent's ANSWER hear people it never saw? The check, fixed before scoring.

The agent answers a correction in words that hardly vary across people and languages
("You're right", "I apologize", "Let me fix", "抱歉"), so the answer's words may carry what
the person's words do not. The variants (`learned.ANSWER_VARIANTS`): `answer` (the answer's
words, word pairs and CJK character pairs, from its first 300 characters, folded as the
rules fold), `answer+cues+rule` (those, the message's cues and context, and the rules'
verdict). A message with no answer keeps its other features only.

The protocol, fixed before any number was seen:

1. Leave one read set out at a time (every grown set but the two blind ones, `BLIND`):
   P / R / F1 at 0.3, 0.5, 0.7 and average precision, for each variant.
2. The candidate: among each variant used alone, OR'd with the rules' verdict (a correction
   when either says so) or AND'd with it (the rules' corrections the model confirms), at each
   cut 0.05 … 0.95, the one with the best pooled F1 at precision ≥ 0.70 on the left-out sets
   (ties: higher precision, then the lower cut; none reaching 0.70: the best F1).
3. `--blind`, once: each variant trained on every read set scores the blind sets pooled, and
   the dev set, beside the rules; only pooled counts are printed, never a message.
4. Ship iff the candidate beats the rules' F1 on the blind sets by ≥ 0.05 at a precision no
   lower than the rules' − 0.02, and on dev keeps recall ≥ the rules' − 0.03 at precision ≥ 0.90.

    python -m tests.hearing.answer_check [--blind]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from tests.hearing.eval import Tally, sets
from tests.hearing.learned import ANSWER_VARIANTS, Features, Model, features, verdict

BLIND = ("grown-blind24", "grown-blind25")
REPORTED_CUTS = (0.3, 0.5, 0.7)
CUTS = tuple(round(0.05 * step, 2) for step in range(1, 20))
MODES = ("alone", "or", "and")
MIN_PRECISION = 0.70
WORKERS = 2  # the machine's cores are shared


@dataclass(frozen=True)
class Scored:
    """One strict message as a held-out model saw it."""

    clear: bool
    probability: float
    rule: bool


def strict(items: list[dict]) -> list[dict]:
    return [item for item in items if item["label"] != "yes-borderline"]


def read_sets() -> dict[str, list[dict]]:
    """Every grown set but the blind ones, which are never opened here."""
    return {name.removeprefix("grown: "): strict(items) for name, items in sets(["grown"], exclude=BLIND)}


def blind_messages(read: Iterable[str]) -> list[dict]:
    """The blind sets' strict messages, pooled (opened only by `--blind`, never printed)."""
    return [item for _name, items in sets(["grown"], exclude=read) for item in strict(items)]


_ROWS: dict[str, list[tuple[Features, bool]]] = {}  # a fold's training rows, shared with the workers


def _train_without(left_out: str) -> Model:
    return Model().train([row for name, part in _ROWS.items() if name != left_out for row in part])


def left_out(read: dict[str, list[dict]], variant: str) -> tuple[list[Scored], list[Model]]:
    """Every read message scored by a model that never saw its set, and those models."""
    _ROWS.clear()
    _ROWS.update(
        {
            name: [(features(item, variant), item["label"] == "yes-clear") for item in items]
            for name, items in read.items()
        }
    )
    with ProcessPoolExecutor(WORKERS) as pool:
        models = list(pool.map(_train_without, list(read)))
    scored = [
        Scored(clear, model.probability(x), verdict(item).correction)
        for model, (name, items) in zip(models, read.items(), strict=True)
        for item, (x, clear) in zip(items, _ROWS[name], strict=True)
    ]
    return scored, models


def says(mode: str, cut: float) -> Callable[[Scored], bool]:
    """The detector: the model alone, or OR'd / AND'd with the rules' verdict (`rules`: the rules alone)."""
    if mode == "rules":
        return lambda s: s.rule
    if mode == "or":
        return lambda s: s.rule or s.probability >= cut
    if mode == "and":
        return lambda s: s.rule and s.probability >= cut
    return lambda s: s.probability >= cut


def tally(scored: Iterable[Scored], detector: Callable[[Scored], bool]) -> Tally:
    counts = Tally()
    for s in scored:
        counts.add(detector(s), s.clear)
    return counts


def average_precision(scored: list[Scored]) -> float:
    """Mean precision at each clear correction, ranked by probability (pooled over the held-out sets)."""
    ranked = sorted(scored, key=lambda s: -s.probability)
    found, total = 0, 0.0
    for rank, s in enumerate(ranked, 1):
        if s.clear:
            found += 1
            total += found / rank
    return total / found if found else 0.0


def pick(by_variant: dict[str, list[Scored]]) -> tuple[str, str, float, Tally]:
    """The candidate (variant, mode, cut) by the fixed rule: best F1 at P ≥ 0.70 on the left-out sets."""

    def key(choice: tuple[str, str, float, Tally]) -> tuple[bool, float, float, float]:
        counts = choice[3]
        reaches = (counts.precision or 0.0) >= MIN_PRECISION
        return reaches, counts.f1 or 0.0, counts.precision or 0.0, -choice[2]

    choices = [
        (variant, mode, cut, tally(scored, says(mode, cut)))
        for variant, scored in by_variant.items()
        for mode in MODES
        for cut in CUTS
    ]
    return max(choices, key=key)


def top_answer_words(models: list[Model], count: int = 30) -> list[tuple[str, float, int]]:
    """The answer's features weighing most (mean over the held-out models), and in how many positive."""
    names = {name for model in models for name in model.weights if name.startswith("answer ")}
    mean = {name: sum(m.weights.get(name, 0.0) for m in models) / len(models) for name in names}
    best = sorted(names, key=lambda name: -mean[name])[:count]
    return [(name, mean[name], sum(m.weights.get(name, 0.0) > 0 for m in models)) for name in best]


def main(argv: list[str]) -> int:
    say = sys.stdout.write
    read = read_sets()
    messages = [item for items in read.values() for item in items]
    answered = sum(bool(item.get("agent_after")) for item in messages)
    clear = sum(item["label"] == "yes-clear" for item in messages)
    say(
        f"read sets: {len(read)}, {len(messages)} strict messages, {clear} clear; {answered} with an answer\n"
    )
    rules = tally(
        (Scored(i["label"] == "yes-clear", 0.0, verdict(i).correction) for i in messages), says("rules", 0.0)
    )
    say(f"rules                          (each set as it is) {rules.row()}\n")
    by_variant: dict[str, list[Scored]] = {}
    for variant in ANSWER_VARIANTS:
        scored, models = left_out(read, variant)
        by_variant[variant] = scored
        say(f"learned {variant:17} average precision (left out) {average_precision(scored):.2f}\n")
        for mode in MODES:
            for cut in REPORTED_CUTS:
                say(f"  {mode:5} >= {cut:.1f} {tally(scored, says(mode, cut)).row()}\n")
        if variant == "answer":
            say(
                "  the answer's features weighing most (mean weight over the held-out models, positive in):\n"
            )
            for name, weight, positive in top_answer_words(models):
                say(f"    {weight:+.2f} {positive:2}/{len(models)} {name}\n")
    variant, mode, cut, counts = pick(by_variant)
    say(f"candidate (fixed rule): {variant} {mode} >= {cut:.2f}, left out {counts.row()}\n")
    if "--blind" in argv:
        blind(read, variant, mode, cut)
    return 0


def blind(read: dict[str, list[dict]], variant: str, mode: str, cut: float) -> None:
    """Score the blind sets pooled, and dev, once: the candidate beside the rules, and the decision."""
    say = sys.stdout.write
    rows = [
        (features(item, variant), item["label"] == "yes-clear") for items in read.values() for item in items
    ]
    model = Model().train(rows)
    dev = strict(next(iter(sets(["dev"])))[1])
    results = {}
    for name, items in (("blind 24+25 pooled", blind_messages(read)), ("dev", dev)):
        scored = [
            Scored(i["label"] == "yes-clear", model.probability(features(i, variant)), verdict(i).correction)
            for i in items
        ]
        results[name] = rules, learned = tally(scored, says("rules", 0.0)), tally(scored, says(mode, cut))
        answers = sum(bool(item.get("agent_after")) for item in items)
        say(f"{name}: {len(items)} strict, {rules.tp + rules.fn} clear, {answers} with an answer\n")
        say(f"  rules {rules.row()}\n  candidate {learned.row()}\n")
        for other in MODES:
            if other != mode:
                counts = tally(scored, says(other, cut))
                say(f"  (not the candidate) {variant} {other} >= {cut:.2f} {counts.row()}\n")
    (rules, learned), (dev_rules, dev_learned) = results.values()
    wins = _at_least(learned.f1, rules.f1, 0.05) and _at_least(learned.precision, rules.precision, -0.02)
    keeps_dev = _at_least(dev_learned.precision, 0.90, 0.0) and _at_least(
        dev_learned.recall, dev_rules.recall, -0.03
    )
    decision = "SHIP" if wins and keeps_dev else "do not ship"
    outcome = f"blind {'wins' if wins else 'loses'}; dev {'kept' if keeps_dev else 'not kept'}"
    say(f"decision: {outcome} -> {decision}\n")


def _at_least(value: float | None, base: float | None, margin: float) -> bool:
    return (value or 0.0) >= (base or 0.0) + margin - 1e-9


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
