"""evolve.patterns, the linear-time door: `re`'s spans, refusals in one line, linear work.

It agrees with `re` on what it accepts, refuses the rest in one line, and never does
more than linear work (counted, not timed).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve import patterns
from evolve.pattern_syntax import MAX_REPEAT

ALPHABET = "ab_ 1\nAé-É"  # words, digits, spaces, a line break, case and accents


def _literal(c: str) -> str:
    return re.escape(c)


ATOMS = st.one_of(
    st.sampled_from(ALPHABET).map(_literal),
    st.sampled_from(
        [
            ".",
            r"\d",
            r"\w",
            r"\s",
            r"\D",
            r"\W",
            r"\S",
            "[ab]",
            "[^a\n]",
            "[a-c1]",
            r"[\w-]",
            "[^_\\s]",
            "[A-Z]",
            "[é]",
            r"\n",
            r"\x41",
            "[]a]",
            r"\.",
            "a{}",
        ]
    ),
)
ASSERTIONS = st.sampled_from(["^", "$", r"\A", r"\Z", r"\b", r"\B"])
QUANTIFIERS = st.sampled_from(["*", "+", "?", "{2}", "{1,}", "{0,2}", "{,2}", "{1,3}"])


def _quantify(pair: tuple[str, str], lazy: bool) -> str:
    item, quantifier = pair
    return f"(?:{item}){quantifier}{'?' if lazy else ''}"


def _patterns() -> st.SearchStrategy[str]:
    leaves = st.one_of(ATOMS, ATOMS, ASSERTIONS)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=4).map("".join),
            st.lists(inner, min_size=2, max_size=3).map("|".join).map(lambda s: f"(?:{s})"),
            st.lists(inner, min_size=1, max_size=3).map("".join).map(lambda s: f"({s})"),
            st.builds(_quantify, st.tuples(inner, QUANTIFIERS), st.booleans()),
            st.builds(lambda s: f"(?:|{s})", inner),  # an empty branch first: re's empty-loop rules
        ),
        max_leaves=10,
    )


TEXTS = st.text(alphabet=ALPHABET, max_size=24)


def _re_spans(source: str, text: str, ignore_case: bool) -> tuple:
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    found = re.search(source, text, flags)
    return (found.span() if found else None), [m.span() for m in re.finditer(source, text, flags)]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_patterns(), st.lists(TEXTS, min_size=1, max_size=4), st.booleans())
def test_spans_agree_with_re(source, texts, ignore_case):
    compiled = patterns.compile(source, ignore_case=ignore_case)
    for text in texts:
        expected_first, expected_all = _re_spans(source, text, ignore_case)
        assert compiled.matches(text) is (expected_first is not None), (source, text)
        assert compiled.search(text) == expected_first, (source, text)
        assert list(compiled.finditer(text)) == expected_all, (source, text)


PATTERNISH = st.text(alphabet="ab()[]{}|*+?^$\\.,-:!=<>#P0123456789dwsbBAZxiu", max_size=12)


@settings(max_examples=800, deadline=None)
@given(PATTERNISH, TEXTS)
def test_what_the_door_accepts_re_accepts_with_the_same_meaning(source, text):
    try:
        compiled = patterns.compile(source)
    except patterns.PatternError as exc:
        assert exc.problem and 0 <= exc.position <= len(source)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # re's FutureWarning about `[[`: still one meaning
        expected = re.compile(source, re.MULTILINE)
    found = expected.search(text)
    assert compiled.search(text) == (found.span() if found else None), (source, text)


@pytest.mark.parametrize(
    ("source", "problem", "position"),
    [
        (r"(a)\1", "backreferences cannot run in linear time", 3),
        ("(?P<x>a)(?P=x)", "backreferences cannot run in linear time", 8),
        ("a(?=b)", "lookahead cannot run in linear time", 1),
        ("a(?!b)", "lookahead cannot run in linear time", 1),
        ("(?<=a)b", "lookbehind cannot run in linear time", 0),
        ("(?<!a)b", "lookbehind cannot run in linear time", 0),
        ("(?>a+)b", "atomic groups cannot run in linear time", 0),
        ("a++b", "possessive quantifiers cannot run in linear time", 2),
        ("(a)?(?(1)b|c)", "conditional groups cannot run in linear time", 4),
        ("(?x) a", "flag 'x' is not supported", 2),
        ("(?-m:^a)", "^ and $ always match at line breaks", 3),
        ("(?#note)a", "comments", 0),
        (r"\N{DIGIT ONE}", r"bad escape \N", 0),
        (f"a{{{MAX_REPEAT + 1}}}", f"a counted repetition is limited to {MAX_REPEAT}", 1),
        ("(?:(?:a{1000}){1000})", "too large", 3),
        ("(abc", "missing ), unterminated subpattern", 0),
        ("abc)", "unbalanced parenthesis", 3),
        ("[abc", "unterminated character set", 0),
        ("*a", "nothing to repeat", 0),
        ("^*", "nothing to repeat", 1),
        ("a**", "multiple repeat", 2),
        ("a{3,2}", "min repeat greater than max repeat", 1),
        ("[z-a]", "bad character range z-a", 1),
        (r"[\d-z]", r"bad character range \d-z", 1),
        (r"\q", r"bad escape \q", 0),
        (r"\x4", r"incomplete escape \x4", 0),
        ("a(?i)b", "global flags not at the start", 1),
        ("(" * 33 + ")" * 33, "groups nest too deeply", 32),
    ],
)
def test_what_cannot_run_in_linear_time_is_refused_in_one_line(source, problem, position):
    with pytest.raises(patterns.PatternError) as caught:
        patterns.compile(source)
    assert problem in str(caught.value)
    assert caught.value.position == position
    assert str(caught.value).endswith(f"at position {position}")
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)


# Each pathological for a backtracking engine: nested or overlapping quantifiers that fail
# at the very end (Python's re takes exponential or polynomial time on them).
PATHOLOGICAL = [
    ("(x+x+)+y", "x"),
    ("(a|a)*b", "a"),
    ("(a*)*b", "a"),
    ("(?:a|aa)+$", "a"),
    (r"\s*\s*\s*\s*x", " "),
    ("(?:a+)+(?:a+)+c", "a"),
    (r"(\w+\s?)+$", "ab "),
    ("(.*a){12}", "a"),
    ("(?:a|b)*a(?:a|b){10}c", "ab"),  # a DFA of 2^11 states: the cache must cap it
]


def _text(unit: str, size: int, seed: int = 7) -> str:
    generator = random.Random(seed)
    return "".join(generator.choice(unit) for _ in range(size)) + "!"


@pytest.mark.parametrize(("source", "unit"), PATHOLOGICAL)
def test_pathological_patterns_cost_linear_work_on_100_kb(source, unit):
    small, large = (patterns.compile(source) for _ in range(2))
    small.search(_text(unit, 50_000))
    large.search(_text(unit, 100_000))
    n = 100_001
    assert large.work <= 4 * n * (large.size + 1)  # at most every instruction, at every position
    # doubling the text at most doubles the work (plus what building the cache cost once)
    assert large.work <= 2 * small.work + 4 * large.size**2 + 10_000


def test_a_pattern_with_more_states_than_the_cache_holds_still_finds_its_match():
    compiled = patterns.compile("(?:a|b)*a(?:a|b){11}c")  # 2^12 states: the cache starts over
    noise = _text("ab", 30_000, seed=3)[:-1]
    assert compiled.search(noise + "b" * 12 + "c") is None  # no `a` 12 before the `c`
    assert compiled.search(noise + "ab" * 6 + "c") == (0, 30_013)
    assert compiled.work <= 4 * 2 * 30_014 * (compiled.size + 1)


def test_nested_loops_compile_to_a_program_linear_in_the_pattern():
    source = "(?:(?:a|b)" * 30 + "c" + ")+" * 30  # each `+` shares its round, never copies it
    compiled = patterns.compile(source)
    assert compiled.size <= 5 * len(source)
    text = "x" + "ab" * 15 + "c"
    assert compiled.search(text) == re.search(source, text).span()


# Found by the attack on the fixed main: linear, but 10,000 live states per character cost
# half a minute on one 16 kB error text, and a pulled agent.toml may hold many such patterns.
CACHE_DEFEATING = "(?s).*a" + ".{1000}" * 5 + "b"


def test_a_pattern_built_to_defeat_the_cache_gives_up_within_its_budget():
    compiled = patterns.compile(CACHE_DEFEATING)
    text = _text("ab", 16_000)
    assert compiled.search(text) is None and compiled.gave_up
    budget = patterns.WORK_BASE + patterns.WORK_PER_CHAR * len(text)
    assert compiled.work <= 2 * budget + 2 * compiled.size  # one instruction set past it, per direction
    spent = compiled.work
    assert compiled.search("a" + "x" * 5_000 + "b") is None and compiled.work == spent  # no more work
    ordinary = patterns.compile(r"(?i)\b(?:connection|socket)\s+(?:reset|refused)\b")
    assert ordinary.search(_text("ab ", 100_000) + " connection reset") is not None and not ordinary.gave_up


def test_counts_work_the_same_way_every_run():
    first, second = (patterns.compile(r"(\w+\s?)+$") for _ in range(2))
    text = _text("ab ", 10_000) + "!"
    assert first.search(text) == second.search(text)
    assert first.work == second.work > 0


def test_ignore_case_and_inline_flag():
    assert patterns.compile("TIMEOUT", ignore_case=True).search("read timeout") == (5, 12)
    assert patterns.compile("(?i)TIMEOUT").search("read timeout") == (5, 12)
    assert patterns.compile("TIMEOUT").search("read timeout") is None
    assert patterns.compile("(?i:a)B").search("Ab AB") == (3, 5)
    compiled = patterns.compile("x+", ignore_case=True)
    assert (compiled.source, compiled.ignore_case) == ("x+", True)


def test_line_anchors_and_text_anchors():
    text = "one\ntwo\n"
    assert patterns.compile("^two$").search(text) == (4, 7)
    assert patterns.compile(r"\Atwo").search(text) is None
    assert patterns.compile(r"two\Z").search(text) is None
    assert patterns.compile(r"\n\Z").search(text) == (7, 8)


def test_importing_it_loads_nothing_else():
    code = (
        "import sys; before = set(sys.modules); import evolve.patterns;"
        "print(sorted(set(sys.modules) - before - {'__future__'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['evolve', 'evolve.pattern_syntax', 'evolve.patterns']"


@given(_patterns(), st.lists(TEXTS, min_size=1, max_size=4))
def test_the_text_a_pattern_requires_is_in_every_text_it_matches(source, texts):
    """`required_text` lets a guard skip a call: never when the pattern would match it."""
    needed = patterns.required_text(source)
    for text in texts:
        if re.search(source, text, re.MULTILINE) is not None:
            assert needed in text, (source, text, needed)


def test_the_text_a_pattern_requires():
    assert patterns.required_text(r"\bnpm (install|i|add)\b") == "npm "
    assert patterns.required_text(r"git push .*--tags") == "git push "
    assert patterns.required_text(r"(?:ab)+c") == "ab"
    assert patterns.required_text(r"(?i)npm") == ""  # any case: no one text
    assert patterns.required_text(r"npm|yarn") == ""


def test_a_persons_patterns_are_compiled_once_however_often_they_are_checked(evolve_home, monkeypatch):
    """Each of a config's `re:` phrases compiles once, however often it is checked and matched.

    They are checked when the config is read, again as the lexicons are built, then matched:
    thousands of them cost a second per compile round.
    """
    from evolve.transcripts import lexicons
    from tests.helpers import make_agent

    built = []
    real = patterns.LinearPattern.__init__
    monkeypatch.setattr(
        patterns.LinearPattern, "__init__", lambda self, *a: built.append(a[0]) or real(self, *a)
    )
    agent = make_agent("demo")
    fresh = f"w{random.randrange(1 << 60):x}x"  # never compiled before in this process
    phrases = [f"re:\\b{fresh}{i}\\w* still broken\\b" for i in range(40)]
    (agent.path / "agent.toml").write_text(
        f"[signals.correction_phrases]\nen = {phrases!r}\n".replace("'", '"')
    )
    extra = agent.config.signals.correction_phrases
    lexicons.load_lexicons(extra)
    found = list(lexicons.load_lexicons(extra).matches(f"the {fresh}7 is still broken", ("phrases",)))
    assert found and sorted(set(built)) == sorted(built)  # each pattern built once
    assert len(built) == 40


def test_a_persons_pattern_that_python_would_warn_about_loads_quietly():
    from evolve.transcripts.hearing import hear
    from evolve.transcripts.lexicons import load_lexicons

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")  # re's "Possible nested set" on stderr of every hook
        lexicons = load_lexicons({"en": ["re:[[:punct:]]+z"]})
        assert not hear(lexicons, "fine, thanks", "Done: the tests pass now.").correction
    assert not said
