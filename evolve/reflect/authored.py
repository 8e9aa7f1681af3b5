"""A file as an answer's operations leave it, and who wrote each of its lines.

Blame says who wrote each line of a skill, the memo or guards.toml as committed (a person or
evolve); an operation that changes the text keeps the authors of the lines it leaves alone
and makes the new ones evolve's, so the next operation of the same answer still sees a
person's lines as theirs. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from evolve.workspace import memo as memo_mod


@dataclass
class Authored:
    """A file as the answer's operations left it so far, and who wrote each of its lines."""

    text: str
    authors: list[bool]

    def after(self, text: str) -> Authored:
        """The file with new text: unchanged lines keep their authors, new ones are evolve's."""
        old, new = memo_mod.lines(self.text), memo_mod.lines(text)
        mine = self.authors + [False] * (len(old) - len(self.authors))
        head = 0  # the common head and tail first: an operation changes one region, and the
        while head < min(len(old), len(new)) and old[head] == new[head]:  # matcher is quadratic
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        authors = mine[:head] + [False] * (len(new) - head - tail) + mine[len(old) - tail :]
        middle = SequenceMatcher(
            None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=False
        )
        for block in middle.get_matching_blocks():
            for k in range(block.size):
                authors[head + block.b + k] = mine[head + block.a + k]
        return Authored(text, authors)

    def person_lines_in(self, start: int, end: int) -> bool:
        """Whether [start, end) of the text overlaps a line a person wrote."""
        position = 0
        for index, line in enumerate(memo_mod.lines(self.text)):
            if position >= end:
                break
            if position + len(line) > start and index < len(self.authors) and self.authors[index]:
                return True
            position += len(line)
        return False


def authored(text: str, authors: tuple[bool, ...]) -> Authored:
    """`text` with blame's authors (lines by LF) on Markdown's lines (a lone CR ends one too).

    Lines past the end of `authors` are evolve's: `()` is "evolve wrote it all".
    """
    per_line, lf = [], 0
    for line in memo_mod.lines(text):
        per_line.append(authors[lf] if lf < len(authors) else False)
        lf += line.count("\n")
    return Authored(text, per_line)
