"""Evidence fitted to the token budget in order of its value, then rendered run by run.

The order: the heads and the person's words of the signalled runs (and of the run a
correction reacts to), then the bodies of the skills in question (placed by the caller
between `place` calls), then real errors with their causes (the signalled runs' first),
then the rest: the other runs' words, the signalled runs' calls and then the agent's own
words, then the same of the other runs. A line that does not
fit at full detail is tried at its tight cap; a run is opened (its head and request shown)
before any other line of it. What is left out of a run is counted in a marker, so the model
knows it is there. Costs are counted per line as it is placed and the rendered whole is
checked at the end: the lowest-valued lines go first until it fits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evolve.reflect.evidence import AGENT, CALL, ERROR, HEAD, USER, Line, frame_error
from evolve.reflect.tokens import count_tokens, fit

FOLLOWS = "USER (after interrupting the agent): [their message starts the next run]"
MARKER_TOKENS = 14  # "[… not shown: 12 calls, 3 agent messages …]"
MIN_LINE_TOKENS = 8  # with fewer left, nothing more is tried
MAX_CHARS_PER_TOKEN = 12  # a text of n characters is at least n / 12 tokens
RUN_TOKENS = 24  # a run's fence lines and the blank line around it
_NOUNS = {CALL: "call", AGENT: "agent message", ERROR: "error", USER: "user line", HEAD: "head"}


@dataclass
class Shown:
    """One run being fitted (a BundleRun): its lines, and the positions placed so far."""

    run: Any
    lines: list[Line]
    signalled: bool
    rank: int
    placed: set[int] = field(default_factory=set)

    @property
    def opening(self) -> list[int]:
        """The head, and the request when there is one: shown before any other line."""
        request = len(self.lines) > 1 and self.lines[1].kind == USER and self.lines[1].words
        return [0, 1] if request else [0]

    def gaps_after(self, position: int) -> int:
        """How the number of left-out stretches changes when `position` is placed."""
        left = position == 0 or position - 1 in self.placed
        right = position == len(self.lines) - 1 or position + 1 in self.placed
        return -1 if left and right else 1 if not left and not right else 0


@dataclass
class Unit:
    """A line to place, with the order it is tried in."""

    order: tuple
    shown: Shown
    line: Line


def units(runs: list[Shown]) -> tuple[list[Unit], list[Unit]]:
    """(the person's words of the signalled runs, everything else), each in the order to try."""
    first: list[Unit] = []
    rest: list[Unit] = []
    for shown in runs:
        for index, line in enumerate(shown.lines):
            tier, kind = _tier(line, shown.signalled)
            unit = Unit((tier, kind, shown.rank, index), shown, line)
            (first if tier == 0 else rest).append(unit)
    first.sort(key=lambda u: u.order)
    rest.sort(key=lambda u: u.order)
    return first, rest


def _tier(line: Line, signalled: bool) -> tuple[int, int]:
    """(tier, kind order): words first, errors next, then calls before the agent's own words."""
    if line.kind in (HEAD, USER):
        return (0, 0) if signalled else (4, 0)
    if line.kind == ERROR and line.real:
        return (2, 0) if signalled else (3, 0)
    return (4 if signalled else 5, 2 if line.kind == AGENT else 1)


class Fitter:
    """Places lines within `budget` tokens; `spend` takes tokens for something else (skill bodies)."""

    def __init__(self, runs: list[Shown], budget: int) -> None:
        self.runs = runs
        self.left = budget
        self.order: list[tuple[Shown, int]] = []  # placed, in order of value
        self.version = 0  # changes whenever a line is placed or dropped
        self._variants: dict[tuple[int, bool], tuple[str, int]] = {}  # (id(line), tight) → text, tokens

    def spend(self, tokens: int) -> None:
        self.left -= tokens

    def place(self, todo: list[Unit]) -> int:
        """Place what fits of `todo`, in its order; how many lines were placed."""
        before = len(self.order)
        for unit in todo:
            if self.left < MIN_LINE_TOKENS:
                break
            shown, line = unit.shown, unit.line
            if line.position in shown.placed:
                continue
            opening = [] if shown.placed else [p for p in shown.opening if p != line.position]
            cost = 0 if shown.placed else RUN_TOKENS
            cost += sum(self._cost(shown, shown.lines[p], tight=False) for p in opening)
            smallest = min(len(line.text) // MAX_CHARS_PER_TOKEN, line.caps[1] or line.caps[0])
            if cost + smallest > self.left:
                continue  # even its shortest form cannot fit: not worth counting
            for tight in (False, True) if line.caps[1] else (False,):
                need = cost + self._cost(shown, line, tight)
                if need <= self.left:
                    for position in opening:
                        self._set(shown, shown.lines[position], tight=False)
                    self._set(shown, line, tight)
                    self.left -= need
                    break
        return len(self.order) - before

    def top_up(self, todo: list[Unit], spare: Callable[[], int], rounds: int = 3) -> None:
        """Per-line costs overestimate the whole: place more while `spare()` tokens are left."""
        for _ in range(rounds):
            self.left = spare()
            if self.left <= MARKER_TOKENS or not self.place(todo):
                return

    def _variant(self, line: Line, tight: bool) -> tuple[str, int]:
        """The line rendered at its full or tight cap and its tokens (with a newline), once."""
        key = (id(line), tight)
        found = self._variants.get(key)
        if found is None:
            text, tokens = render_line(line, line.caps[1] if tight else line.caps[0])
            found = self._variants[key] = (text, tokens + 1)
        return found

    def _cost(self, shown: Shown, line: Line, tight: bool) -> int:
        """Its tokens, plus a marker for each left-out stretch it adds."""
        return self._variant(line, tight)[1] + MARKER_TOKENS * shown.gaps_after(line.position)

    def _set(self, shown: Shown, line: Line, tight: bool) -> None:
        line.shown, line.tokens = self._variant(line, tight)
        shown.placed.add(line.position)
        self.order.append((shown, line.position))
        self.version += 1

    def trim(self, over: Callable[[], int]) -> None:
        """Drop the lowest-valued lines while `over()` (tokens above the budget) is positive."""
        while self.order and (excess := over()) > 0:
            while excess > 0 and self.order:
                shown, position = self.order.pop()
                line = shown.lines[position]
                excess -= line.tokens
                line.shown, line.tokens = "", 0
                shown.placed.discard(position)
                self.version += 1
                if shown.placed and shown.placed <= {0}:
                    shown.placed.clear()  # a head alone says nothing

    def shown_runs(self) -> list[Shown]:
        return [s for s in self.runs if s.placed]


def render_line(line: Line, cap: int) -> tuple[str, int]:
    """The line's text within `cap` tokens, and its tokens; an error's output is cut, never its frame."""
    if line.kind != ERROR:
        return fit(line.text, cap)
    frame = frame_error(line, "")
    output, tokens = fit(line.text, max(20, cap - count_tokens(frame)))
    text = frame_error(line, output)
    return text, count_tokens(text)


def render_run(shown: Shown, next_shown: bool = False) -> str:
    """The placed lines in time order; what is left out is counted in marker lines.

    A left-out stretch of the agent's own messages only is counted at the end of the run
    (a marker between every two calls would cost more than it tells); any other stretch
    gets a marker where it is. `next_shown`: the next run is in the bundle too, so the
    message after an interrupt (its request) is pointed to, not repeated.
    """
    out: list[str] = []
    skipped: dict[str, int] = {}
    quiet = 0  # agent messages left out silently
    for line in shown.lines:
        if line.position not in shown.placed:
            skipped[line.kind] = skipped.get(line.kind, 0) + line.count
            continue
        if set(skipped) == {AGENT}:
            quiet += skipped[AGENT]
        elif skipped:
            out.append(_marker(skipped))
        skipped = {}
        out.append(FOLLOWS if line.follows and next_shown else line.shown)
    if quiet:
        skipped[AGENT] = skipped.get(AGENT, 0) + quiet
    if skipped:
        out.append(_marker(skipped))
    return "\n".join(out)


def _marker(skipped: dict[str, int]) -> str:
    parts = [f"{n} {_NOUNS[k]}{'' if n == 1 else 's'}" for k, n in skipped.items()]
    return f"[… not shown: {', '.join(parts)} …]"
