"""Arbitrary bytes never crash skill or memo parsing (hypothesis); deep YAML nesting included."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evolve.workspace import memo, skills

FRONT = st.sampled_from(
    [
        "---\n",
        "name: x\n",
        "description: d\n",
        "metadata:\n  pinned: yes\n",
        "[" * 500,
        "{a: " * 300,
        "&a [*a, *a]\n",
        "!!python/object:os.system\n",
        "---\n",
        "\x00",
        "\ufeff",
        "## heading\n",
        "```\n",
    ]
)
DOCS = st.one_of(
    st.binary(max_size=400),
    st.lists(st.one_of(FRONT, st.text(max_size=40)), max_size=12).map(
        lambda parts: "".join(parts).encode("utf-8", "surrogatepass")
    ),
)


@settings(max_examples=150, deadline=None)
@given(data=DOCS)
def test_skill_files_never_crash(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "some-skill"
        folder.mkdir()
        (folder / "SKILL.md").write_bytes(data)
        skill = skills.load_skill(folder)
        assert isinstance(skill.problems, list)
        if skill.valid:
            assert skill.frontmatter["name"] == "some-skill"


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=600), content=st.text(max_size=200))
def test_memo_parsing_never_crashes(text: str, content: str) -> None:
    assert isinstance(memo.problems(text, 2000), list)
    replaced = memo.replace_section(text, memo.SELF, content.replace("\n## ", "\n- "))
    assert isinstance(memo.section_content(replaced, memo.SELF), str)


def test_deep_nesting_is_a_problem_not_a_crash() -> None:
    for raw in ("[" * 100_000, "{a: " * 50_000, "- " * 50_000):
        data, problems = skills.parse_frontmatter(raw)
        assert problems and data == {}
