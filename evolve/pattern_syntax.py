"""The pattern syntax `evolve.patterns` accepts, parsed into a small tree.

A subset of Python's `re` with the same meaning, minus what a backtracking engine needs
(backreferences, lookaround, atomic groups, possessive quantifiers, conditionals): each is
refused with one line naming it and its position. Standard library only, nothing
imported: the agent hooks will parse patterns on every call.

The tree is tuples: ("chars", Chars), ("cat", items), ("alt", branches),
("rep", item, min, max or None, greedy, position) and ("at", assertion), where an
assertion is one of "^", "$", "A", "Z", "b", "B".
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import NoReturn

    Category = tuple[Callable[[str], bool], bool]  # a test (\d, \s or \w) and the result wanted

MAX_REPEAT = 1000  # a counted repetition {m,n}: each copy is compiled, as in RE2
MAX_NESTING = 32  # groups inside groups: the parser and compiler recurse on them
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_ASSERTIONS = {"A": "A", "Z": "Z", "b": "b", "B": "B"}
_LINEAR_ONLY = "cannot run in linear time"


class PatternError(ValueError):
    """A pattern that is refused: `problem` at `position` (an index into the source)."""

    def __init__(self, problem: str, position: int) -> None:
        super().__init__(f"{problem} at position {position}")
        self.problem = problem
        self.position = position


def is_word(c: str) -> bool:
    r"""What \w matches (and \b looks for), as in Python's re for str patterns."""
    return c.isalnum() or c == "_"


_CATEGORIES = {"d": str.isdecimal, "s": str.isspace, "w": is_word}  # \d \s \w, Unicode as in re


_VARIANTS: dict[str, tuple[str, ...]] = {}


def _variants(c: str) -> tuple[str, ...]:
    """`c` and its one-character case forms: what `c` matches when case is ignored."""
    found = _VARIANTS.get(c)
    if found is None:
        forms = {c}
        for other in (c.lower(), c.upper()):
            if len(other) == 1:
                forms.update(x for x in (other, other.lower(), other.upper()) if len(x) == 1)
        if len(_VARIANTS) >= 4096:
            _VARIANTS.clear()
        found = _VARIANTS[c] = tuple(forms)
    return found


class Chars:
    """A character class: characters, ranges and categories, maybe negated or caseless."""

    __slots__ = ("chars", "ranges", "categories", "negated", "caseless", "_memo")

    def __init__(
        self,
        chars: set[str],
        ranges: Iterable[tuple[str, str]] = (),
        categories: Iterable[Category] = (),
        *,
        negated: bool = False,
        caseless: bool = False,
    ) -> None:
        if caseless and ranges:  # a short range becomes its characters: they match every case form
            short = [(lo, hi) for lo, hi in ranges if ord(hi) - ord(lo) < 256]
            chars = set(chars).union(*(map(chr, range(ord(lo), ord(hi) + 1)) for lo, hi in short))
            ranges = [r for r in ranges if r not in short]
        if caseless:
            chars = {v for c in chars for v in _variants(c)}
        self.chars = frozenset(chars)
        self.ranges = tuple(ranges)  # (first, last)
        self.categories = tuple(categories)  # (test, wanted result)
        self.negated = negated
        self.caseless = caseless
        self._memo: dict[str, bool] = {}

    def __contains__(self, c: str) -> bool:
        found = self._memo.get(c)
        if found is None:
            if len(self._memo) >= 4096:  # a text of many distinct characters: keep memory flat
                self._memo.clear()
            found = self._memo[c] = self._test(c)
        return found

    def _test(self, c: str) -> bool:
        for v in _variants(c) if self.caseless else (c,):
            if (
                v in self.chars
                or any(lo <= v <= hi for lo, hi in self.ranges)
                or any(test(v) == wanted for test, wanted in self.categories)
            ):
                return not self.negated
        return self.negated


class _Parser:
    def __init__(self, source: str, caseless: bool) -> None:
        self.s = source
        self.i = 0
        self.caseless = caseless
        self.dotall = False
        self.depth = 0
        self.literals: dict[tuple[str, bool], tuple] = {}

    def fail(self, problem: str, position: int | None = None) -> NoReturn:
        raise PatternError(problem, self.i if position is None else position)

    def peek(self, ahead: int = 0) -> str:
        at = self.i + ahead
        return self.s[at] if at < len(self.s) else ""

    def take(self, literal: str) -> bool:
        if self.s.startswith(literal, self.i):
            self.i += len(literal)
            return True
        return False

    def parse(self) -> tuple:
        while self.s.startswith("(?", self.i) and self._global_flags():
            pass
        tree = self.alternation()
        if self.i < len(self.s):  # only a ")" stops an alternation early
            self.fail("unbalanced parenthesis")
        return tree

    def _global_flags(self) -> bool:
        """`(?is)` at the start: the flags for the whole pattern. False: another group."""
        end = self.i + 2
        while end < len(self.s) and self.s[end].isalpha():
            end += 1
        if end == self.i + 2 or end >= len(self.s) or self.s[end] != ")":
            return False
        for flag in self.s[self.i + 2 : end]:
            self._set_flag(flag, True, self.i + 2)
        self.i = end + 1
        return True

    def _set_flag(self, flag: str, on: bool, position: int) -> None:
        if flag == "i":
            self.caseless = on
        elif flag == "s":
            self.dotall = on
        elif flag == "m" and on:
            pass  # always on: ^ and $ match at line starts and ends
        elif flag == "m":
            self.fail("^ and $ always match at line breaks (use \\A and \\Z for the text's ends)", position)
        else:
            self.fail(f"flag {flag!r} is not supported (only i, m and s)", position)

    def alternation(self) -> tuple:
        branches = [self.concatenation()]
        while self.take("|"):
            branches.append(self.concatenation())
        return branches[0] if len(branches) == 1 else ("alt", tuple(branches))

    def concatenation(self) -> tuple:
        items: list[tuple] = []
        while self.i < len(self.s) and self.peek() not in "|)":
            start = self.i
            item = self.atom()
            items.append(self.quantified(item, start))
        return items[0] if len(items) == 1 else ("cat", tuple(items))

    def quantified(self, item: tuple, start: int) -> tuple:
        at = self.i
        bounds = self.quantifier()
        if bounds is None:
            return item
        if item[0] == "at" and self.s[start] != "(":  # `(?:\b)*` is allowed, as in re
            self.fail("nothing to repeat", at)
        greedy = not self.take("?")
        if self.peek() == "+":
            self.fail(f"possessive quantifiers {_LINEAR_ONLY}")
        if self.quantifier() is not None:
            self.fail("multiple repeat", self.i - 1)
        return ("rep", item, bounds[0], bounds[1], greedy, start)

    def quantifier(self) -> tuple[int, int | None] | None:
        """(min, max or None) of a quantifier here, consumed; None when there is none."""
        c = self.peek()
        if c and c in "*+?":
            self.i += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        if c != "{":
            return None
        s, j = self.s, self.i + 1
        low, j = _digits(s, j)
        comma = j < len(s) and s[j] == ","
        high, j = _digits(s, j + 1) if comma else (low, j)
        if j >= len(s) or s[j] != "}" or not (low or comma):
            return None  # a `{` that starts no quantifier is a literal, as in re
        lo, hi = int(low or 0), int(high) if high else None
        if max(lo, hi or 0) > MAX_REPEAT:
            self.fail(f"a counted repetition is limited to {MAX_REPEAT}")
        if hi is not None and hi < lo:
            self.fail("min repeat greater than max repeat")
        self.i = j + 1
        return lo, hi

    def atom(self) -> tuple:
        start = self.i
        c = self.s[self.i]
        self.i += 1
        if c == "(":
            return self.group(start)
        if c == "[":
            return ("chars", self.char_class(start))
        if c == ".":
            return ("chars", Chars(set() if self.dotall else {"\n"}, negated=True))
        if c == "^" or c == "$":
            return ("at", c)
        if c in "*+?" or (c == "{" and self._is_quantifier(start)):
            self.fail("nothing to repeat", start)
        if c == "\\":
            return self.escape(start)
        return self.literal(c)

    def _is_quantifier(self, start: int) -> bool:
        self.i = start
        found = self.quantifier() is not None
        self.i = start + 1
        return found

    def literal(self, c: str) -> tuple:
        key = (c, self.caseless)
        found = self.literals.get(key)
        if found is None:  # one node per character: a repeated one shares its memo
            found = self.literals[key] = ("chars", Chars({c}, caseless=self.caseless))
        return found

    def group(self, start: int) -> tuple:
        caseless, dotall = self.caseless, self.dotall
        if self.take("?"):
            self._extension(start)
        self.depth += 1
        if self.depth > MAX_NESTING:
            self.fail(f"groups nest too deeply (at most {MAX_NESTING})", start)
        tree = self.alternation()
        if not self.take(")"):
            self.fail("missing ), unterminated subpattern", start)
        self.depth -= 1
        self.caseless, self.dotall = caseless, dotall
        return tree

    def _extension(self, start: int) -> None:
        """After `(?`: a non-capturing group, a named one, or scoped flags; else refused."""
        if self.take(":"):
            return
        if self.take("P<"):
            end = self.s.find(">", self.i)
            if end < 0 or not self.s[self.i : end].isidentifier():
                self.fail("bad group name", self.i)
            self.i = end + 1
            return
        refused = {
            "P=": f"backreferences {_LINEAR_ONLY}",
            "=": f"lookahead {_LINEAR_ONLY}",
            "!": f"lookahead {_LINEAR_ONLY}",
            "<=": f"lookbehind {_LINEAR_ONLY}",
            "<!": f"lookbehind {_LINEAR_ONLY}",
            ">": f"atomic groups {_LINEAR_ONLY}",
            "(": f"conditional groups {_LINEAR_ONLY}",
            "#": "comments (?#...) are not supported",
        }
        for lead, problem in refused.items():
            if self.s.startswith(lead, self.i):
                self.fail(problem, start)
        on = True
        while self.i < len(self.s) and (self.peek().isalpha() or (self.peek() == "-" and on)):
            if self.peek() == "-":
                on = False
            else:
                self._set_flag(self.peek(), on, self.i)
            self.i += 1
        if self.take(":"):
            return
        if self.peek() == ")":
            self.fail("global flags not at the start of the expression", start)
        self.fail(f"unknown extension (?{self.s[start + 2 : self.i + 1]}", start)

    def escape(self, start: int) -> tuple:
        c = self.peek()
        if not c:
            self.fail("bad escape (end of pattern)", start)
        self.i += 1
        if c in _ASSERTIONS:
            return ("at", _ASSERTIONS[c])
        if c.lower() in _CATEGORIES:
            return ("chars", Chars(set(), categories=[(_CATEGORIES[c.lower()], c.islower())]))
        if c in "123456789":
            self.fail(f"backreferences {_LINEAR_ONLY}", start)
        return self.literal(self._code(c, start))

    def _code(self, c: str, start: int) -> str:
        r"""The character an escape `\c...` stands for (after the `c`); the rest consumed."""
        if c in _CONTROL:
            return _CONTROL[c]
        if c == "0":
            digits = ""
            while len(digits) < 2 and self.peek() in tuple("01234567"):
                digits += self.peek()
                self.i += 1
            return chr(int(digits or "0", 8))
        width = {"x": 2, "u": 4, "U": 8}.get(c)
        if width:
            digits = self.s[self.i : self.i + width]
            if len(digits) < width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                self.fail(f"incomplete escape \\{c}{digits}", start)
            self.i += width
            if int(digits, 16) > 0x10FFFF:
                self.fail(f"bad escape \\{c}{digits}", start)
            return chr(int(digits, 16))
        if c in _LETTERS:
            self.fail(f"bad escape \\{c}", start)
        return c

    def char_class(self, start: int) -> Chars:
        negated = self.take("^")
        chars: set[str] = set()
        ranges: list[tuple[str, str]] = []
        categories: list[Category] = []
        first = True
        while self.peek() != "]" or first:
            if self.i >= len(self.s):
                self.fail("unterminated character set", start)
            first, at = False, self.i
            item = self._class_item(start)
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                last = self._class_item(start)
                if not isinstance(item, str) or not isinstance(last, str) or last < item:
                    self.fail(f"bad character range {self.s[at : self.i]}", at)
                ranges.append((item, last))
            elif isinstance(item, tuple):
                categories.append(item)
            else:
                chars.add(item)
        self.i += 1
        return Chars(chars, ranges, categories, negated=negated, caseless=self.caseless)

    def _class_item(self, start: int) -> str | Category:
        r"""One member of a class, consumed: its character, or a category (\d, \W...)."""
        at = self.i
        c = self.s[at]
        self.i += 1
        if c != "\\":
            return c
        c = self.peek()
        if not c:
            self.fail("unterminated character set", start)
        self.i += 1
        if c.lower() in _CATEGORIES:
            return (_CATEGORIES[c.lower()], c.islower())
        if c == "b":
            return "\b"
        if c in "123456789":
            self.fail(f"bad escape \\{c} (octal escapes other than \\0 are not supported)", at)
        return self._code(c, at)


def _digits(s: str, at: int) -> tuple[str, int]:
    """The ASCII digits of `s` from `at`, and where they end."""
    end = at
    while end < len(s) and s[end] in "0123456789":
        end += 1
    return s[at:end], end


def parse(source: str, *, caseless: bool = False) -> tuple:
    """The tree of `source`; PatternError says what is refused and where."""
    return _Parser(source, caseless).parse()


def nullable(tree: tuple) -> bool:
    """Whether `tree` can match the empty text (a loop around it needs care)."""
    kind = tree[0]
    if kind == "chars":
        return False
    if kind == "at":
        return True
    if kind == "cat":
        return all(map(nullable, tree[1]))
    if kind == "alt":
        return any(map(nullable, tree[1]))
    return tree[2] == 0 or nullable(tree[1])
