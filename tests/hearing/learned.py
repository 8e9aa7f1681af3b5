"""Would a learned weighting hear new people better than the rules? Leave one set out and see.

Issue 22 welcomes a small model learned from labelled data if it beats the rules. This
trains a logistic regression (seeded SGD, L2; explainable per message: each feature's
weight) on every labelled set but one and scores the one left out, for each set in turn,
so no person it is scored on was seen in training. Features, by variant:

- `cues`: which lexicon cue kinds the message holds (anywhere, near its start), what the
  agent's last words hold (a claim, a question), and the context (session's first message,
  after an error or interruption, length band, a question mark);
- `cues+rule`: those and the rules' own verdict and kind of correction;
- `cues+words`: those and the message's words and word pairs (CJK: character pairs);
- `answer`: the words, word pairs and CJK character pairs of the agent's answer right after
  the message (its first 300 characters, folded as the rules fold): an agent answers a
  correction in words that vary little across people ("You're right", "Let me fix", "抱歉");
- `answer+cues+rule`: those, the cues and context, and the rules' verdict.

The rules' verdict is the one `evolve classify` gives, the agent's answer read where known.
The answer's variants are checked by `tests/hearing/answer_check.py` (fixed before scoring).

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

from evolve.transcripts.acknowledged import answered
from evolve.transcripts.classify import BUILT_IN
from evolve.transcripts.hearing import Heard, hear
from evolve.transcripts.lexicons import CUES, prose
from tests.hearing.eval import Tally, sets

LEXICONS = BUILT_IN.lexicons()
_KINDS = tuple(dict.fromkeys(("phrases", "weak", "guards", *CUES)))
_WORD = re.compile(r"[^\W\d_]+|\d+|[?!]")
_WIDE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_NEAR_START = 30  # characters
_READ = 300  # characters of the message the word features read
_ANSWER_READ = 300  # characters of the agent's answer read (its opening: the admission, if any)
EPOCHS, RATE, L2, POSITIVE_WEIGHT = 60, 0.2, 1.0, 3.0
VARIANTS = ("cues", "cues+rule", "cues+words")
ANSWER_VARIANTS = ("answer", "answer+cues+rule")  # tests/hearing/answer_check.py

Features = dict[str, float]


def features(item: Mapping, variant: str) -> Features:
    """The message's features for one variant (names say what they are: `cue:failure`, `word:still`)."""
    parts = variant.split("+")
    found: Features = _cues(item) if "cues" in parts else {}
    if "rule" in parts:
        heard = verdict(item)
        if heard.correction:
            found["rule"] = found[f"rule:{heard.kind}"] = 1
    if "words" in parts:
        found.update(_words(prose(item["text"])[:_READ]))
    if "answer" in parts and item.get("agent_after"):
        found.update(_words(prose(item["agent_after"][:_ANSWER_READ]), "answer "))
    return {name: float(value) for name, value in found.items() if value}


def verdict(item: Mapping) -> Heard:
    """What the rules hear in the message, as `evolve classify` does: the agent's answer too, where known."""
    text, before, after = item["text"], item.get("agent_before") or "", item.get("agent_after") or ""
    first = bool(item.get("first_message"))
    after_error = bool(item.get("prev_api_error") or item.get("prev_interrupted"))
    heard = hear(LEXICONS, text, before, first=first, after_error=after_error)
    return answered(heard, after, before, first, text)


def _cues(item: Mapping) -> Features:
    """The lexicons' cue kinds in the message and the agent's words before it, and the context."""
    text, agent = item["text"], item.get("agent_before") or ""
    words = prose(text)
    found: Features = {
        "first": bool(item.get("first_message")),
        "after_error": bool(item.get("prev_api_error") or item.get("prev_interrupted")),
        "question": "?" in words,
    }
    found["length:" + next(band for limit, band in _BANDS if len(words) < limit)] = 1
    for _lang, kind, start, _end in LEXICONS.matches(words, _KINDS):
        found["cue:" + kind] = 1
        if start < _NEAR_START:
            found["cue_at_start:" + kind] = 1
    agent_words = prose(agent[-600:]) if agent else ""
    for _lang, kind, _start, _end in LEXICONS.matches(agent_words, ("claim", "asks")):
        found["agent:" + kind] = 1
    found["agent_ends_asking"] = agent_words.rstrip().endswith("?")
    return found


_BANDS = ((20, "<20"), (60, "<60"), (200, "<200"), (600, "<600"), (math.inf, "longer"))


def _words(words: str, prefix: str = "") -> Features:
    """Words, word pairs and the opening word of folded text (CJK: character pairs); `prefix` names whose."""
    tokens = [t for t in _WORD.findall(words) if not _WIDE.match(t)]
    found: Features = {f"{prefix}word:{t}": 1 for t in tokens[:60]}
    found.update({f"{prefix}pair:{a}_{b}": 1 for a, b in zip(tokens[:40], tokens[1:41], strict=False)})
    wide = "".join(_WIDE.findall(words))
    found.update({f"{prefix}chars:{wide[i : i + 2]}": 1 for i in range(len(wide) - 1)})
    if tokens:
        found[f"{prefix}opens:{tokens[0]}"] = 1
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
        weights, decay = self.weights, L2 / len(rows)
        for epoch in range(EPOCHS):
            shuffle(order)
            rate = RATE / (1 + epoch * 0.1)
            for index in order:
                x, clear = rows[index]
                gradient = (self.probability(x) - clear) * (POSITIVE_WEIGHT if clear else 1.0)
                self.bias -= rate * gradient
                for name, value in x.items():
                    weight = weights.get(name, 0.0)
                    weights[name] = weight - rate * (gradient * value + decay * weight)
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
            rules.add(verdict(item).correction, item["label"] == "yes-clear")
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
