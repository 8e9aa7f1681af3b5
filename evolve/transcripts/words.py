"""Content words: what a text is about, without the words every text has.

Shared by the scoring that ties a run to a memo bullet and by hearing, which asks whether
a word the person rejects is one the agent just used. Standard library only.
"""

from __future__ import annotations

import functools
import os
import re

_LETTERS = re.compile(r"[^\W\d_]+")


@functools.cache
def stopwords() -> frozenset[str]:
    """Evolve's stopword list (data/stopwords.txt), read once."""
    path = os.path.join(os.path.dirname(__file__), "data", "stopwords.txt")  # noqa: PTH118, PTH120
    with open(path, encoding="utf-8") as handle:
        lines = [line.split("#", 1)[0] for line in handle]
    return frozenset(word for line in lines for word in line.lower().split())


def content_words(text: str) -> set[str]:
    """Lower-case letter words of 4+ letters, stopwords dropped, a plural `s` dropped."""
    stop = stopwords()
    words = set()
    for word in _LETTERS.findall(text.lower()):
        if len(word) < 4 or word in stop:
            continue
        if word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
            if word in stop:
                continue
        words.add(word)
    return words
