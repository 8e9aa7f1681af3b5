"""The memo: two `##` sections; replacing one leaves every other byte as it was."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolve.workspace import memo
from evolve.workspace.memo import HEADINGS, SELF, STRATEGIES

SELF_H = f"## {HEADINGS[SELF]}"
STRAT_H = f"## {HEADINGS[STRATEGIES]}"


def sample() -> str:
    return (
        "# Memo of demo\n\nIntro a person wrote.\n\n"
        f"{SELF_H}\n\n- I write tests first.\n-   odd   spacing kept\n\n"
        f"{STRAT_H}\n\n* The user likes short answers.\n\n\n"
    )


def test_render_empty_has_both_sections_and_no_problems():
    text = memo.render_empty("demo")
    assert memo.problems(text, 2000) == []
    assert memo.section_content(text, SELF) == ""
    assert memo.section_content(text, STRATEGIES) == ""


def test_read_sections():
    text = sample()
    assert memo.section_content(text, SELF) == "- I write tests first.\n-   odd   spacing kept"
    assert memo.section_content(text, STRATEGIES) == "* The user likes short answers."
    assert memo.bullets(memo.section_content(text, SELF)) == ["I write tests first.", "odd   spacing kept"]


def test_replace_first_section_leaves_the_rest_byte_identical():
    text = sample()
    out = memo.replace_section(text, SELF, "- new lesson\n")
    assert out[: out.index(SELF_H)] == text[: text.index(SELF_H)]
    assert out[out.index(STRAT_H) :] == text[text.index(STRAT_H) :]
    assert memo.section_content(out, SELF) == "- new lesson"


def test_replace_last_section_leaves_the_rest_byte_identical():
    text = sample()
    out = memo.replace_section(text, STRATEGIES, "- be brief")
    assert out[: out.index(STRAT_H)] == text[: text.index(STRAT_H)]
    assert memo.section_content(out, STRATEGIES) == "- be brief"
    assert memo.problems(out, 2000) == []


def test_replace_with_empty_and_back():
    text = sample()
    emptied = memo.replace_section(text, SELF, "")
    assert memo.section_content(emptied, SELF) == ""
    assert memo.problems(emptied, 2000) == []
    again = memo.replace_section(emptied, SELF, "- back")
    assert memo.section_content(again, SELF) == "- back"
    assert again[again.index(STRAT_H) :] == text[text.index(STRAT_H) :]


def test_missing_section_is_added_at_the_end():
    text = f"# Memo\n\n{SELF_H}\n\n- a\n"
    out = memo.replace_section(text, STRATEGIES, "- b")
    assert out.startswith(text)
    assert memo.section_content(out, STRATEGIES) == "- b"
    assert memo.problems(out, 2000) == []


def test_code_fences_holding_hashes_are_not_headings():
    text = (
        f"# Memo\n\n{SELF_H}\n\n```markdown\n## Not a heading\n{STRAT_H}\n```\n\n"
        f"~~~\n## also not\n~~~\n\n{STRAT_H}\n\n- real\n"
    )
    assert memo.problems(text, 2000) == []
    assert "## Not a heading" in memo.section_content(text, SELF)
    assert memo.section_content(text, STRATEGIES) == "- real"
    out = memo.replace_section(text, STRATEGIES, "- replaced")
    assert out[: out.rindex(STRAT_H)] == text[: text.rindex(STRAT_H)]
    out = memo.replace_section(text, SELF, "- replaced")
    assert out.endswith(f"{STRAT_H}\n\n- real\n")
    assert "Not a heading" not in out


def test_problems_missing_duplicate_extra_and_over_cap():
    missing = f"# Memo\n\n{SELF_H}\n\n- a\n"
    assert any("exactly one" in p and "(found 0)" in p for p in memo.problems(missing, 2000))
    duplicate = sample() + f"\n{SELF_H}\n\n- again\n"
    assert any("exactly one" in p and "(found 2)" in p for p in memo.problems(duplicate, 2000))
    extra = sample() + "\n## Random notes\n\n- x\n"
    found = memo.problems(extra, 2000)
    assert any("unexpected '##' sections: Random notes" in p for p in found)
    long = memo.replace_section(sample(), STRATEGIES, "x" * 2001)
    found = memo.problems(long, 2000)
    assert found == [f"memo section '{HEADINGS[STRATEGIES]}' is 2001 chars; at most 2000"]
    assert memo.problems(memo.replace_section(sample(), STRATEGIES, "x" * 2000), 2000) == []
    assert len(memo.problems("", 2000)) == 2


_plain_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
    max_size=40,
).filter(lambda s: not s.lstrip().startswith(("#", "`", "~")))
_chunk = st.one_of(
    _plain_line,
    st.just("### a sub-heading"),
    st.just("```\n## inside a fence\n```"),
    st.just("~~~python\n# comment\n## x = 1\n~~~"),
)
_content = st.lists(_chunk, max_size=8).map("\n".join)


@settings(max_examples=200, deadline=None, database=None)
@given(first=_content, second=_content, new=_content)
def test_replacing_one_section_never_touches_the_other(first, second, new):
    text = memo.replace_section(
        memo.replace_section(memo.render_empty("demo"), SELF, first), STRATEGIES, second
    )
    assert memo.section_content(text, SELF) == first.strip()
    assert memo.section_content(text, STRATEGIES) == second.strip()
    out = memo.replace_section(text, SELF, new)
    assert out[out.index(STRAT_H) :] == text[text.index(STRAT_H) :]
    assert memo.section_content(out, SELF) == new.strip()
    out = memo.replace_section(text, STRATEGIES, new)
    assert out[: out.index(STRAT_H)] == text[: text.index(STRAT_H)]
    assert memo.section_content(out, STRATEGIES) == new.strip()


def test_only_markdown_line_endings_start_a_heading():
    # \x0c, \x85 and U+2028 end a line for str.splitlines but not for Markdown.
    content = "note\u2028## Random and \x0c## Strategies for this user and domain\x85## x"
    text = memo.replace_section(memo.render_empty("demo"), SELF, content)
    assert memo.problems(text, 2000) == []
    assert memo.section_content(text, SELF) == content
    crlf = memo.render_empty("demo").replace("\n", "\r\n")
    assert memo.problems(crlf, 2000) == []


# -- CommonMark's rules, checked against markdown-it-py ------------------------------------
_LINES = st.sampled_from(
    [
        "## What I do well and where I often stumble",
        "## Strategies for this user and domain",
        "## My notes",
        "  ## Indented two",
        "   ## Indented three",
        "    ## Indented four",
        "##",
        "## closing ##",
        "##no space",
        "### sub",
        "# Title",
        "- a bullet",
        "text line",
        "",
        "```",
        "````",
        "```md",
        "```` md",
        "~~~",
        "~~~~",
        "~~~ python",
        "``` x ` y",
        "  ```",
        "    ```",
        "```  ",
        "~~~~~ ",
        "\t## tab-indented",
        "##\ttab",
        " - ``` a fence in an item",
        "1. ordered",
        "  - nested",
        "> quoted",
        "***",
    ]
)


def _markdown_it_h2(text: str) -> list[tuple[str, int]]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    found = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2" and token.markup == "##" and token.level == 0:
            found.append((tokens[index + 1].content, token.map[0]))
    return found


@settings(max_examples=500, deadline=None, database=None)
@given(st.lists(_LINES, max_size=30), st.sampled_from(["\n", "\r\n"]))
def test_sections_are_the_h2_headings_markdown_it_finds(lines, newline):
    text = newline.join(lines) + newline
    ours = [(s.heading, text[: s.line_start].count("\n")) for s in memo.sections(text)]
    assert ours == _markdown_it_h2(text)


def test_a_fence_closes_only_on_its_own_character_and_length():
    text = (
        "# Memo\n\n## What I do well and where I often stumble\n\n- a\n\n"
        "````md\nexample of a memo:\n```\n## Strategies for this user and domain\n```\n````\n\n"
        "## Strategies for this user and domain\n\n- b\n"
    )
    new = memo.replace_section(text, STRATEGIES, "- NEW RULE")
    assert new == text.replace("- b\n", "- NEW RULE\n")  # the person's example stays whole
    assert memo.section_content(text, STRATEGIES) == "- b"


def test_crlf_bom_and_extra_sections_keep_their_bytes():
    text = (
        "\ufeff# Memo of demo\r\n\r\n## What I do well and where I often stumble\r\n\r\n- old\r\n\r\n"
        "## My own notes\r\n\r\n- mine\r\n\r\n## Strategies for this user and domain\r\n\r\n- s\r\n"
    )
    new = memo.replace_section(text, SELF, "- one\n- two")
    assert new == text.replace("- old\r\n", "- one\r\n- two\r\n")
    assert memo.newline_of(new) == "\r\n" and "\n" not in new.replace("\r\n", "")
    added = memo.replace_section("\ufeff# Memo\r\n", STRATEGIES, "- x")
    assert added == "\ufeff# Memo\r\n\r\n## Strategies for this user and domain\r\n\r\n- x\r\n"
    assert memo.sections(text)[0].heading == HEADINGS[SELF]  # the BOM does not hide a heading


def test_conflict_markers_are_found_outside_fences_only():
    conflicted = "# Memo\n<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> parent of 1a2b3c\n"
    assert memo.has_conflict_markers(conflicted)
    assert any("conflict markers" in p for p in memo.problems(conflicted, 2000))
    fenced = "# Memo\n```\n<<<<<<< HEAD\n=======\n>>>>>>> x\n```\n"
    assert not memo.has_conflict_markers(fenced)
    assert not memo.has_conflict_markers("<<<<<<< only an opening\n- text\n")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_conflict_markers_are_whole_lines_whatever_the_line_endings(newline):
    def text(*lines: str) -> str:
        return newline.join(lines) + newline

    assert memo.has_conflict_markers(text("\ufeff<<<<<<< ours", "a", "=======", "b", ">>>>>>>"))
    assert memo.has_conflict_markers(text("x", "<<<<<<<", "a", "=======", ">>>>>>> theirs"))
    # a marker inside a line, a longer run of the character, a tab after it: not a marker line
    assert not memo.has_conflict_markers(text("a <<<<<<< b", "=======", ">>>>>>> c"))
    assert not memo.has_conflict_markers(text("<<<<<<< a", "========", ">>>>>>> c"))
    assert not memo.has_conflict_markers(text("<<<<<<<\ta", "=======", ">>>>>>> c"))
    assert not memo.has_conflict_markers(text("<<<<<<< a", ">>>>>>> c", "======="))  # out of order
    # the opening inside a fence is an example; the one after it opens a conflict
    fenced = text("```", "<<<<<<< a", "```", "b", "<<<<<<< a", "c", "=======", ">>>>>>> d")
    assert memo.has_conflict_markers(fenced)
    assert not memo.has_conflict_markers(text("~~~", "<<<<<<< a", "=======", ">>>>>>> d", "~~~"))
    assert memo.has_conflict_markers(text("~~~", "<<<<<<< a", "=======", ">>>>>>> d", "~~~"), in_fences=True)
    # a person's conflict-marker-size makes all three longer, alike; a longer run alone is no marker
    assert memo.has_conflict_markers(text("<" * 10 + " ours", "a", "=" * 10, "b", ">" * 10 + " theirs"))
    assert memo.has_conflict_markers(text("```", "<" * 9 + " a", "```", "<" * 9, "=" * 9, ">" * 9))
    assert not memo.has_conflict_markers(text("<" * 10 + " ours", "a", "=======", "b", ">>>>>>> theirs"))
    assert not memo.has_conflict_markers(text("<" * 10 + " ours", "=" * 10, ">" * 11 + " theirs"))
    assert not memo.has_conflict_markers(text("<" * 6 + " ours", "=" * 6, ">" * 6))  # git never writes fewer
    # a line of "<" with no separator of its size before a real conflict hides nothing
    assert memo.has_conflict_markers(text("<" * 20, "x", "<<<<<<< a", "b", "=======", ">>>>>>> c"))
    assert memo.has_conflict_markers(text("```", "```", "<" * 8 + " todo", "<" * 10, "=" * 10, ">" * 10))
    assert memo.has_conflict_markers(text("<<<<<<< a", ">>>>>>> b", "<" * 9 + " a", "=" * 9, ">" * 9 + " c"))


def test_conflict_markers_in_millions_of_lines_are_found_without_holding_a_line_each():
    # the check walked every line into a tuple: 8 MB of blank lines took 2 GB and 28 s
    import tracemalloc

    blank = "\n" * (4 << 20)
    text = "<<<<<<< ours\n" + blank + "=======\n" + blank + ">>>>>>> theirs\n"
    fenced = "```\n<<<<<<< example\n```\n" + text
    tracemalloc.start()
    try:
        found = memo.has_conflict_markers(text), memo.has_conflict_markers(fenced)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == (True, True)
    assert peak < 1 << 20, peak


# -- lessons: a bullet's id, and which bullets a session's text showed --------------------
def _regex_normalise(text: str) -> str:
    """The normalisation undo's fingerprints were made with (before memo.normalise)."""
    import re
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]|_", " ", folded).split())


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_normalise_without_re_is_the_regex_normalisation(text):
    assert memo.normalise(text) == _regex_normalise(text)


def test_a_bullets_id_survives_rewrapping_case_and_punctuation_but_not_rewording():
    one = memo.lesson_id("Use `pnpm`, never npm.")
    assert one == memo.lesson_id("use PNPM -- never   npm") and memo.is_lesson_id(one)
    assert one != memo.lesson_id("Use pnpm, never yarn.")
    text = f"# M\n\n## {HEADINGS[SELF]}\n\n- Use `pnpm`,\n  never npm.\n"
    assert memo.section_bullets(text) == {SELF: ["Use `pnpm`, never npm."]}
    assert memo.located_bullets(text) == [(SELF, "Use `pnpm`, never npm.", 4, 5)]


def test_only_bullets_shown_whole_count_as_in_a_sessions_context():
    from evolve.session.context import memo_view

    first, second = "Use pnpm in the shop, never npm.", "Release notes go in CHANGELOG.md, newest first."
    third = "Deploys run on Fridays only, after the release checklist passed and the team agreed. " * 3
    text = f"# M\n\n## {HEADINGS[SELF]}\n\n- {first}\n\n## {HEADINGS[STRATEGIES]}\n\n- {second}\n- {third}\n"
    whole, shown = memo_view(text, 8000, "memo.md")
    assert shown == {
        SELF: [memo.lesson_id(first)],
        STRATEGIES: [memo.lesson_id(second), memo.lesson_id(third)],
    }
    cut, shown = memo_view(text, len(whole) - 40, "memo.md")  # the last bullet loses its end
    assert "cut to fit" in cut and second in cut and third not in cut
    assert shown == {SELF: [memo.lesson_id(first)], STRATEGIES: [memo.lesson_id(second)]}
    conflicted = "<<<<<<< a\n" + text + "=======\n>>>>>>> b\n"
    assert memo_view(conflicted, 8000, "memo.md")[1] == {}


def test_an_undone_lesson_is_caught_in_the_forms_the_readme_names_and_not_in_other_words():
    # newcomer 8: README says other case, punctuation or spacing, inside a longer line, or
    # re-wrapped; the same lesson in other words is a new line (README says so too)
    from evolve.workspace import undo

    lesson = undo.lesson_text("- Run the tests only with `./scripts/check.sh` before a push.")
    blocked = {undo.fingerprint(lesson): lesson}
    before = "# Memo\n"
    caught = [
        "- run the TESTS only with ./scripts/check.sh, before a push",
        "- Run  the tests only with `./scripts/check.sh`   before a push!",
        "- In parser-app: run the tests only with ./scripts/check.sh before a push (user said so).",
        "- Run the tests only\n  with `./scripts/check.sh`\n  before a push.",
    ]
    for text in caught:
        assert undo.relearned(before + text + "\n", before, blocked), text
    other_words = "- The test script was renamed to `./scripts/check.sh`: use it before pushing."
    assert undo.relearned(before + other_words + "\n", before, blocked) == []
