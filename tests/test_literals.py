"""Literals.present finds exactly the literals a text holds, however their anchors overlap."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evolve.transcripts import redact
from evolve.transcripts.literals import Literals

# The secret rules' keywords: the literals the observer looks for in every text it keeps
KEYWORDS = sorted({k for rule in redact.rules() for k in rule.keywords} | set(redact._assignments().keywords))
LITERALS = Literals(KEYWORDS)


def held(literals: list[str], text: str) -> frozenset[str]:
    return frozenset(lit for lit in literals if lit in text)


# Texts made of keywords, their pieces (an anchor without the rest) and the characters they use
_PIECES = st.one_of(
    st.sampled_from(KEYWORDS),
    st.builds(
        lambda k, a, b: k[a : len(k) - b], st.sampled_from(KEYWORDS), st.integers(0, 3), st.integers(0, 3)
    ),
    st.text(alphabet=sorted(set("".join(KEYWORDS))) + ["x", "é", "中"], max_size=6),
)


@settings(max_examples=400, deadline=None, database=None)
@given(parts=st.lists(_PIECES, max_size=12))
def test_present_is_every_keyword_the_text_holds(parts):
    text = "".join(parts)
    assert LITERALS.present(text) == held(KEYWORDS, text)


def test_overlapping_and_nested_anchors_are_all_found():
    # "xoxb-" and "xoxa-" overlap inside one run; "sk-ant-" holds "sk-"; "token" ends a longer word
    for text in ("xoxoxb-1 xoxa-", "sk-ant-api03", "mytoken=abc password passwd ", "akiasia"):
        assert LITERALS.present(text) == held(KEYWORDS, text)
        assert LITERALS.present(text)


def test_a_text_without_any_is_told_so():
    assert LITERALS.present("read the file and run the tests, then commit") == frozenset()
    assert LITERALS.present("") == frozenset()


@settings(max_examples=200, deadline=None, database=None)
@given(
    literals=st.lists(st.text(alphabet="ab ~z-", min_size=1, max_size=5), min_size=1, max_size=12),
    text=st.text(alphabet="ab ~z-", max_size=40),
)
def test_any_set_of_literals(literals, text):
    assert Literals(literals).present(text) == held(literals, text)
