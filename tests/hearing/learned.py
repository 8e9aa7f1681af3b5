"""Would a learned weighting hear new people better than the rules? Leave one set out and see.

Issue 22 welcomes a small model learned from labelled data if it beats the rules. This
trains a logistic regression (seeded SGD, L2; explainable per message: each feature's
weight) on every labelled set but one and scores the one left out, for each set in turn,
so no person it is scored on was seen in training. Features, by variant:

- `cues`: which lexicon cue kinds the message holds (anywhere, near its start), what the
  agent's last words hold (a claim, a question), and the context (session's first message,
  after an error or interruption, length band, a question mark);
- `cues+rule`: those and the rules' own verdict and kind of correction;
- `cues+words`: those and the message's words and word pairs (CJK: character pairs).

The rules are scored on the same held-out sets. The lexicons and rules were written while
reading these sets, so neither side's numbers are blind; what the comparison shows is
whether learning the weights adds anything to the same evidence.

With `--unread SET` (a set whose messages no rule was read from, e.g. `grown-blind10`) it
trains once on every other set and scores that one alone, beside the rules: the only
comparison in which neither side has seen the people it is scored on.

    python -m tests.hearing.learned [--threshold T] [--unread SET]
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Iterable, Mapping

from evolve.transcripts.classify import BUILT_IN
from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import CUES, prose
from tests.hearing.eval import Tally, sets

LEXICONS = BUILT_IN.lexicons()
_KINDS = tuple(dict.fromkeys(("phrases", "weak", "guards", *CUES)))
_WORD = re.compile(r"[^\W\d_]+|\d+|[?!]")
_WIDE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_NEAR_START = 30  # characters
_READ = 300  # characters of the message the word features read
EPOCHS, RATE, L2, POSITIVE_WEIGHT = 60, 0.2, 1.0, 3.0
VARIANTS = ("cues", "cues+rule", "cues+words")

Features = dict[str, float]


def features(item: Mapping, variant: str) -> Features:
    """The message's features for one variant (names say what they are: `cue:failure`, `word:still`)."""
    text, agent = item["text"], item.get("agent_before") or ""
    first = bool(item.get("first_message"))
    after_error = bool(item.get("prev_api_error") or item.get("prev_interrupted"))
    words = prose(text)
    found: Features = {"first": first, "after_error": after_error, "question": "?" in words}
    found["length:" + next(band for limit, band in _BANDS if len(words) < limit)] = 1
    for _lang, kind, start, _end in LEXICONS.matches(words, _KINDS):
        found["cue:" + kind] = 1
        if start < _NEAR_START:
            found["cue_at_start:" + kind] = 1
    agent_words = prose(agent[-600:]) if agent else ""
    for _lang, kind, _start, _end in LEXICONS.matches(agent_words, ("claim", "asks")):
        found["agent:" + kind] = 1
    found["agent_ends_asking"] = agent_words.rstrip().endswith("?")
    if variant == "cues+rule":
        heard = hear(LEXICONS, text, agent, first=first, after_error=after_error)
        if heard.correction:
            found["rule"] = found[f"rule:{heard.kind}"] = 1
    if variant == "cues+words":
        found.update(_words(words[:_READ]))
    return {name: float(value) for name, value in found.items() if value}


_BANDS = ((20, "<20"), (60, "<60"), (200, "<200"), (600, "<600"), (math.inf, "longer"))


def _words(words: str) -> Features:
    tokens = [t for t in _WORD.findall(words) if not _WIDE.match(t)]
    found: Features = {"word:" + t: 1 for t in tokens[:60]}
    found.update({f"pair:{a}_{b}": 1 for a, b in zip(tokens[:40], tokens[1:41], strict=False)})
    wide = "".join(_WIDE.findall(words))
    found.update({"chars:" + wide[i : i + 2]: 1 for i in range(len(wide) - 1)})
    if tokens:
        found["opens:" + tokens[0]] = 1
    return found


class Model:
    """Logistic regression over named features, trained by seeded SGD with L2."""

    def __init__(self) -> None:
        self.weights: dict[str, float] = {}
        self.bias = 0.0

    def probability(self, x: Features) -> float:
        z = self.bias + sum(self.weights.get(name, 0.0) * value for name, value in x.items())
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))

    def train(self, rows: list[tuple[Features, bool]]) -> Model:
        order, shuffle = list(range(len(rows))), random.Random(0).shuffle
        for epoch in range(EPOCHS):
            shuffle(order)
            rate = RATE / (1 + epoch * 0.1)
            for index in order:
                x, clear = rows[index]
                gradient = (self.probability(x) - clear) * (POSITIVE_WEIGHT if clear else 1.0)
                self.bias -= rate * gradient
                for name, value in x.items():
                    weight = self.weights.get(name, 0.0)
                    self.weights[name] = weight - rate * (gradient * value + L2 / len(rows) * weight)
        return self


def held_out(
    labelled: dict[str, list[dict]], variant: str, only: str | None = None
) -> Iterable[tuple[str, bool, float]]:
    """(set, clear, probability) of every strict message, each scored by a model that never saw its set.

    `only`: score that set alone (one model, trained on all the others).
    """
    rows = {
        name: [(features(item, variant), item["label"] == "yes-clear") for item in items]
        for name, items in labelled.items()
    }
    for name in [only] if only else rows:
        model = Model().train([row for other, part in rows.items() if other != name for row in part])
        for x, clear in rows[name]:
            yield name, clear, model.probability(x)


def main(argv: list[str]) -> int:
    threshold = float(argv[argv.index("--threshold") + 1]) if "--threshold" in argv else 0.5
    labelled = {
        name.removeprefix("grown: "): [item for item in items if item["label"] != "yes-borderline"]
        for name, items in sets(["dev", "grown"])
    }
    unread = argv[argv.index("--unread") + 1] if "--unread" in argv else None
    if unread is not None and unread not in labelled:
        sys.stderr.write(f"learned: no set named {unread!r}; the sets: {', '.join(labelled)}\n")
        return 2
    say = sys.stdout.write
    rules = Tally()
    for items in [labelled[unread]] if unread else labelled.values():
        for item in items:
            first = bool(item.get("first_message"))
            after_error = bool(item.get("prev_api_error") or item.get("prev_interrupted"))
            heard = hear(
                LEXICONS, item["text"], item.get("agent_before") or "", first=first, after_error=after_error
            )
            rules.add(heard.correction, item["label"] == "yes-clear")
    scope = f"on {unread}" if unread else "(each set as it is)"
    say(f"rules {scope:30} {rules.row()}\n")
    for variant in VARIANTS:
        scored = list(held_out(labelled, variant, unread))
        for cut in sorted({threshold, 0.3, 0.5, 0.7}):
            tally = Tally()
            for _name, clear, probability in scored:
                tally.add(probability >= cut, clear)
            say(f"learned {variant:11} (left out, >= {cut:.1f}) {tally.row()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
