r"""The one door for patterns that come from a file, a git server or a model: linear time.

Python's `re` backtracks, so `(x+x+)+y` from a pulled agent.toml would hang every machine
that syncs it. Here a pattern (the syntax is in `evolve.pattern_syntax`) compiles to a
Thompson automaton that is simulated, never backtracked: every text position is visited
a bounded number of times, so a search costs at most O(pattern size x text length).
States are built lazily and cached (a DFA, capped in size), so ordinary texts cost one
dict lookup per character. Spans are `re`'s: the leftmost match, and among those the one
a backtracking engine would find first (greedy and lazy quantifiers as in `re`).

`^` and `$` always match at line starts and ends (as `re.MULTILINE`); `\A` and `\Z` at
the text's. Standard library only and nothing imported: the agent hooks use it.
"""

from __future__ import annotations

from evolve.pattern_syntax import Chars, PatternError, is_word, nullable, parse

TYPE_CHECKING = False  # typing's own flag without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = [
    "MAX_STEPS",
    "WORK_BASE",
    "WORK_PER_CHAR",
    "LinearPattern",
    "PatternError",
    "compile",
    "required_text",
]

MAX_STEPS = 10_000  # instructions a pattern may compile to (counted repetitions expand)
# A search may visit at most this many instructions, plus so many per character read: an
# ordinary pattern, its states cached, costs about one per character; one built to defeat the
# cache (`(?s).*a.{1000}.{1000}…b`: thousands of live states) could cost 10,000 per character,
# half a minute for an error text. Over the budget the pattern gives up: it matches nothing in
# this process from then on (`gave_up`), so a pulled agent.toml costs each machine a second at most.
WORK_BASE, WORK_PER_CHAR = 200_000, 100
_MAX_STATES = 2_000  # cached automaton states per direction; beyond it the cache restarts
_MAX_EDGES = 50_000
CHAR, SPLIT, ASSERT, MATCH = range(4)
MATCHED, DEAD = 1, 2  # state flags: a match ended where the state's last character began
# What lies on one side of a position: nothing (a text end), a line break, a word character
# (\w), anything else. Assertions read the classes on both sides.
NONE, NEWLINE, WORD, OTHER = range(4)
_TOO_LARGE = f"too large: it compiles to more than {MAX_STEPS} steps"


def _side(c: str) -> int:
    return NEWLINE if c == "\n" else WORD if is_word(c) else OTHER


def _holds(assertion: str, before: int, after: int) -> bool:
    if assertion == "^":
        return before <= NEWLINE
    if assertion == "$":
        return after <= NEWLINE
    if assertion == "A":
        return before == NONE
    if assertion == "Z":
        return after == NONE
    if assertion == "b":
        return (before == WORD) != (after == WORD)
    return (before == WORD) == (after == WORD) and before + after > NONE  # \B: never in ""


class _Program:
    """Instructions in parallel lists; built backwards from the match (continuations)."""

    def __init__(self, tree: tuple, *, backward: bool) -> None:
        self.ops: list[int] = []
        self.args: list[Any] = []  # CHAR: its class (Chars); ASSERT: which one (str)
        self.xs: list[int] = []  # the next instruction (SPLIT: the preferred one)
        self.ys: list[int] = []  # SPLIT: the other one
        self.backward = backward  # reads the text from right to left (finds where a match starts)
        self.repeating = False
        self.start = self.build(tree, self.emit(MATCH, None, -1))

    def emit(self, op: int, arg: Chars | str | None, x: int, y: int = -1) -> int:
        if len(self.ops) >= MAX_STEPS:
            raise OverflowError
        self.ops.append(op)
        self.args.append(arg)
        self.xs.append(x)
        self.ys.append(y)
        return len(self.ops) - 1

    def build(self, tree: tuple, then: int) -> int:
        """Instructions for `tree` followed by `then`; the first instruction."""
        kind = tree[0]
        if kind == "chars":
            return self.emit(CHAR, tree[1], then)
        if kind == "at":
            return self.emit(ASSERT, tree[1], then)
        if kind == "cat":
            for item in tree[1] if self.backward else reversed(tree[1]):
                then = self.build(item, then)
            return then
        if kind == "alt":
            entries = [self.build(branch, then) for branch in tree[1]]
            first = entries.pop()
            for entry in reversed(entries):
                first = self.emit(SPLIT, None, entry, first)
            return first
        _, item, low, high, greedy, position = tree
        if self.repeating:  # inside another repetition: the outermost one is to blame
            return self.repeat(item, low, high, greedy, then)
        self.repeating = True
        try:
            return self.repeat(item, low, high, greedy, then)
        except OverflowError:
            raise PatternError(_TOO_LARGE, position) from None
        finally:
            self.repeating = False

    def repeat(self, item: tuple, low: int, high: int | None, greedy: bool, then: int) -> int:
        """`item` low to high times. Like `re`, an optional round that matched nothing ends the loop."""
        guard = nullable(item) and not self.backward  # the order of matches matters forwards only
        if high is None:
            loop = self.emit(SPLIT, None, -1)
            entry = self.round(item, loop, then, guard)
            self.xs[loop], self.ys[loop] = (entry, then) if greedy else (then, entry)
            follow = loop
            if low and not guard:  # `x+`: the loop's own round is the first (nested ones stay small)
                follow, low = entry, low - 1
        else:
            follow = then
            for count in range(high - low):
                entry = self.round(item, follow, then, guard and count > 0)
                follow = self.emit(SPLIT, None, *((entry, then) if greedy else (then, entry)))
        for _ in range(low):
            follow = self.build(item, follow)
        return follow

    def round(self, item: tuple, again: int, leave: int, guard: bool) -> int:
        """One optional round of `item`, then `again`; `guard`: to `leave` if it read nothing.

        The guarded round is a copy whose character steps lead back into the original
        (something was read): only a path that reads nothing reaches `leave`.
        """
        first = len(self.ops)
        body = self.build(item, again)
        if not guard:
            return body
        if body == again:  # an empty item
            return leave
        last = len(self.ops)
        shift = last - first
        for pc in range(first, last):
            op, x, y = self.ops[pc], self.xs[pc], self.ys[pc]
            if op != CHAR:
                x, y = (leave if t == again else t + shift if first <= t < last else t for t in (x, y))
            self.emit(op, self.args[pc], x, y)
        return body + shift


class _State:
    __slots__ = ("kernel", "side", "searching", "flags", "next", "ends")

    def __init__(self, kernel: tuple, side: int, searching: int, flags: int) -> None:
        self.kernel = kernel  # instructions waiting here, preferred first
        self.side = side  # the class of the character just read (behind the position)
        self.searching = searching  # 1: a match may still start here; 2: and not an empty one here
        self.flags = flags
        self.next: dict[str, _State] = {}
        self.ends: dict[int, bool] = {}  # the class beyond the text's edge -> a match ends there


class _Automaton:
    """A program simulated over a text, its states cached (a lazily built DFA)."""

    def __init__(self, program: _Program) -> None:
        self.p = program
        self.states: dict[tuple, _State] = {}
        self.edges = 0
        self.work = 0  # instructions visited and characters read: the cost, for tests and bench
        self.limit = 0  # the work at which the search under way gives up

    def state(self, kernel: tuple, side: int, searching: int, flags: int) -> _State:
        key = (kernel, side, searching, flags)
        found = self.states.get(key)
        if found is None:
            if len(self.states) >= _MAX_STATES or self.edges >= _MAX_EDGES:
                for old in self.states.values():  # start over: memory stays bounded
                    old.next.clear()
                self.states.clear()
                self.edges = 0
            found = self.states[key] = _State(kernel, side, searching, flags)
        return found

    def closure(self, state: _State, before: int, after: int) -> tuple[list[int], bool]:
        """The CHAR instructions reachable without reading (preferred first), and a match here.

        Forwards, a match cuts every less preferred path (backtracking would never try
        them); backwards every path counts (the earliest start wins).
        """
        ops, xs, ys, args = self.p.ops, self.p.xs, self.p.ys, self.p.args
        chars: list[int] = []
        seen: set[int] = set()
        matched = False
        roots = state.kernel + (self.p.start,) if state.searching else state.kernel
        for root in roots:
            stack = [root]
            while stack:
                pc = stack.pop()
                if pc in seen:
                    continue
                seen.add(pc)
                op = ops[pc]
                if op == CHAR:
                    chars.append(pc)
                elif op == SPLIT:
                    stack.append(ys[pc])
                    stack.append(xs[pc])
                elif op == ASSERT:
                    if _holds(args[pc], before, after):
                        stack.append(xs[pc])
                elif state.searching != 2:
                    matched = True
                    if not self.p.backward:
                        self.work += len(seen)
                        return chars, True
        self.work += len(seen)
        return chars, matched

    def advance(self, state: _State, c: str) -> _State:
        """The state after reading `c` (forwards: the next character; backwards: the previous)."""
        side = _side(c)
        before, after = (side, state.side) if self.p.backward else (state.side, side)
        chars, matched = self.closure(state, before, after)
        args, xs = self.p.args, self.p.xs
        kernel = dict.fromkeys(xs[pc] for pc in chars if c in args[pc])
        ordered = tuple(sorted(kernel) if self.p.backward else kernel)
        searching = 1 if state.searching and not matched and not self.p.backward else 0
        flags = (MATCHED if matched else 0) | (DEAD if not ordered and not searching else 0)
        found = state.next[c] = self.state(ordered, side, searching, flags)
        self.edges += 1
        if self.work > self.limit:
            raise _OverBudget
        return found

    def ends(self, state: _State, edge: int) -> bool:
        """Whether a match ends at the text's edge (or where the search must stop)."""
        found = state.ends.get(edge)
        if found is None:
            before, after = (edge, state.side) if self.p.backward else (state.side, edge)
            found = state.ends[edge] = self.closure(state, before, after)[1]
        return found


class _OverBudget(Exception):
    """A search visited more instructions than its budget."""


class LinearPattern:
    """A compiled pattern: `search` and `finditer` in time linear in the text."""

    __slots__ = ("source", "ignore_case", "gave_up", "_tree", "_forward", "_back")

    def __init__(self, source: str, ignore_case: bool) -> None:
        self.source = source
        self.ignore_case = ignore_case
        self.gave_up = False  # a search went over its budget: no match from then on
        self._tree = parse(source, caseless=ignore_case)
        self._back: _Automaton | None = None  # built when a span is first asked for
        try:
            self._forward = _Automaton(_Program(self._tree, backward=False))
        except OverflowError:
            raise PatternError(_TOO_LARGE, 0) from None

    @property
    def _backward(self) -> _Automaton:
        """The program read from right to left (where a match starts), built on first use.

        Never larger than the forward one (its loops need no guarded copies), so it fits too.
        """
        if self._back is None:
            self._back = _Automaton(_Program(self._tree, backward=True))
        return self._back

    @property
    def size(self) -> int:
        """Instructions in the compiled program: a search costs at most about size x text length."""
        return len(self._forward.p.ops)

    @property
    def work(self) -> int:
        """Characters read and instructions visited so far (what tests bound, not the clock)."""
        return self._forward.work + (self._back.work if self._back is not None else 0)

    def matches(self, text: str) -> bool:
        """Whether `text` holds a match (what `search` finds, without working out where it starts)."""
        if self.gave_up:
            return False
        self._forward.limit = self._forward.work + WORK_BASE + WORK_PER_CHAR * len(text)
        try:
            return self._end(text, 0, False) is not None
        except _OverBudget:
            self.gave_up = True
            return False

    def search(self, text: str) -> tuple[int, int] | None:
        """(start, end) of the first match, as `re.search(...).span()` gives it; None if none."""
        return self._search(text, 0, False)

    def finditer(self, text: str) -> Iterator[tuple[int, int]]:
        """(start, end) of each match, left to right, as `re.finditer` finds them.

        Each match costs at most one search of the rest of the text: the caller bounds how
        many it takes from a long text (leftmost-first spans can need a look far ahead).
        """
        pos, advance = 0, False
        while pos <= len(text):
            span = self._search(text, pos, advance)
            if span is None:
                return
            yield span
            pos, advance = span[1], span[0] == span[1]

    def _search(self, text: str, pos: int, advance: bool) -> tuple[int, int] | None:
        """The first match at or after `pos` (`advance`: not an empty one at `pos`)."""
        if self.gave_up:
            return None
        budget = WORK_BASE + WORK_PER_CHAR * (len(text) - pos)
        self._forward.limit = self._forward.work + budget
        try:
            end = self._end(text, pos, advance)
            if end is None:
                return None
            back = self._backward
            back.limit = back.work + budget
            return self._start(text, pos, end), end
        except _OverBudget:
            self.gave_up = True
            return None

    def _end(self, text: str, pos: int, advance: bool) -> int | None:
        """Where the first match ends: read until no preferred path is left."""
        auto = self._forward
        state = auto.state((), _side(text[pos - 1]) if pos else NONE, 2 if advance else 1, 0)
        end = None
        for at, c in enumerate(text[pos:] if pos else text, pos):
            try:
                state = state.next[c]
            except KeyError:
                state = auto.advance(state, c)
            if state.flags:
                if state.flags & MATCHED:
                    end = at
                if state.flags & DEAD:
                    auto.work += at + 1 - pos
                    return end
        auto.work += len(text) - pos
        return len(text) if auto.ends(state, NONE) else end

    def _start(self, text: str, pos: int, end: int) -> int:
        """Where the first match starts: the earliest start of a match that ends at `end`."""
        auto = self._backward
        state = auto.state((auto.p.start,), _side(text[end]) if end < len(text) else NONE, 0, 0)
        start = end
        for at in range(end - 1, pos - 1, -1):
            c = text[at]
            try:
                state = state.next[c]
            except KeyError:
                state = auto.advance(state, c)
            if state.flags:
                if state.flags & MATCHED:
                    start = at + 1
                if state.flags & DEAD:
                    auto.work += end - at
                    return start
        auto.work += end - pos
        return pos if auto.ends(state, _side(text[pos - 1]) if pos else NONE) else start


def compile(source: str, *, ignore_case: bool = False) -> LinearPattern:
    """`source` compiled for linear-time matching; PatternError (a ValueError) if refused.

    Compiled once per process: a config's patterns are checked when it is read, again when
    the lexicons are built, then matched (thousands of a person's phrases cost seconds each time).
    """
    key = (source, ignore_case)
    found = _COMPILED.get(key)
    if found is None:
        if len(_COMPILED) >= _COMPILED_CAP:
            _COMPILED.clear()
        found = _COMPILED[key] = LinearPattern(source, ignore_case)
    return found


_COMPILED: dict[tuple[str, bool], LinearPattern] = {}
_COMPILED_CAP = 4_096  # a compiled pattern keeps its automaton's states: ~25 kB once matched


def _literal(tree: tuple) -> str | None:
    """The one character a `chars` node matches, or None when it matches more (or a class)."""
    chars = tree[1]
    if tree[0] != "chars" or chars.negated or chars.ranges or chars.categories or len(chars.chars) != 1:
        return None
    return next(iter(chars.chars))


def _required(tree: tuple) -> str:
    """The longest text every match of `tree` holds ("" when none is certain)."""
    kind = tree[0]
    if kind == "chars":
        return _literal(tree) or ""
    if kind == "rep":
        return _required(tree[1]) if tree[2] >= 1 else ""
    if kind != "cat":
        return ""  # an assertion holds no text; an alternative holds no one text for sure
    best, run = "", ""
    for item in tree[1]:
        char = _literal(item) if item[0] == "chars" else None
        if char is not None:
            run += char
        elif item[0] != "at":  # an assertion reads nothing: the text on both sides is adjacent
            best = max(best, run, _required(item), key=len)
            run = ""
    return max(best, run, key=len)


def required_text(source: str) -> str:
    """Text every match of `source` holds ("" when none is certain); PatternError as `compile`.

    A text that lacks it cannot match, so the pattern need not be compiled for it.
    """
    return _required(parse(source))
