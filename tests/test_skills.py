"""Skills: parse, validate (problems, never exceptions), render, pin without re-serialising."""

from __future__ import annotations

from pathlib import Path

import pytest
import skills_ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve.workspace.skills import (
    MAX_DESCRIPTION,
    list_skills,
    load_skill,
    parse_skill,
    render_skill,
    set_metadata_key,
)
from tests.helpers import skill_text, write_skill


def problems_of(text: str, folder: str = "my-skill") -> list[str]:
    return parse_skill(text, folder, Path("skills") / folder / "SKILL.md").problems


def test_valid_skill_parses():
    text = (
        "---\nname: my-skill\ndescription: Use when the build breaks.\nlicense: MIT\n"
        "compatibility: needs git\nallowed-tools: Bash Read\nmetadata:\n  author: me\n---\n\n# Steps\n- a\n"
    )
    skill = parse_skill(text, "my-skill", Path("x"))
    assert skill.valid, skill.problems
    assert skill.description == "Use when the build breaks."
    assert skill.metadata == {"author": "me"}
    assert skill.body == "\n# Steps\n- a\n"
    assert not skill.pinned


def test_body_keeps_exact_bytes_with_crlf():
    text = "---\r\nname: my-skill\r\ndescription: d\r\n---\r\nline one\r\n\r\n  two  \r\n"
    skill = parse_skill(text, "my-skill", Path("x"))
    assert skill.valid, skill.problems
    assert skill.body == "line one\r\n\r\n  two  \r\n"


BROKEN = {
    "bad yaml": ("---\nname: my-skill\ndescription: [unclosed\n---\nbody\n", "not valid YAML"),
    "tab yaml": ("---\nname: my-skill\n\tdescription: x\n---\nbody\n", "not valid YAML"),
    "name differs": ("---\nname: other-skill\ndescription: d\n---\nbody\n", "differs from its folder"),
    "bad name": ("---\nname: My Skill\ndescription: d\n---\nbody\n", "name 'My Skill'"),
    "no name": ("---\ndescription: d\n---\nbody\n", "no 'name'"),
    "no description": ("---\nname: my-skill\n---\nbody\n", "no 'description'"),
    "empty description": ("---\nname: my-skill\ndescription: '  '\n---\nbody\n", "non-empty string"),
    "list description": ("---\nname: my-skill\ndescription: [a, b]\n---\nbody\n", "non-empty string"),
    "angle description": ("---\nname: my-skill\ndescription: use <b>bold</b>\n---\nb\n", "'<' or '>'"),
    "long description": (f"---\nname: my-skill\ndescription: {'d' * 1025}\n---\nb\n", "at most 1024"),
    "unknown key": (
        "---\nname: my-skill\ndescription: d\nversion: 2\n---\nb\n",
        "unknown frontmatter keys: version",
    ),
    "metadata list": ("---\nname: my-skill\ndescription: d\nmetadata: [a]\n---\nb\n", "metadata must map"),
    "metadata nested": (
        "---\nname: my-skill\ndescription: d\nmetadata:\n  a:\n    b: c\n---\nb\n",
        "metadata must map",
    ),
    "metadata bool": (
        "---\nname: my-skill\ndescription: d\nmetadata:\n  pinned: true\n---\nb\n",
        "metadata must map",
    ),
    "no frontmatter": ("# Just a heading\n\nbody\n", "must start with '---'"),
    "unclosed frontmatter": ("---\nname: my-skill\ndescription: d\nbody\n", "must start with '---'"),
    "frontmatter a list": ("---\n- a\n- b\n---\nbody\n", "must be a mapping"),
    "frontmatter a string": ("---\njust words\n---\nbody\n", "must be a mapping"),
    "empty frontmatter": ("---\n---\nbody\n", "no 'name'"),
    "python tag": (
        "---\nname: !!python/object/apply:os.system ['true']\ndescription: d\n---\nb\n",
        "not valid YAML",
    ),
    "unhashable key": ("---\n? [a, b]\n: c\n---\nb\n", "not valid YAML"),
    "deep nesting": ("---\nname: " + "[" * 10000 + "\n---\nb\n", "not valid YAML"),
    "deep braces": ("---\n" + "{a: " * 3000 + "\n---\nb\n", "not valid YAML"),
    "huge frontmatter": ("---\nname: my-skill\ndescription: " + "d" * 100_000 + "\n---\nb\n", "over"),
    "huge body": ("---\nname: my-skill\ndescription: d\n---\n" + "word " * 30_000, "tokens"),
    "compat too long": (
        f"---\nname: my-skill\ndescription: d\ncompatibility: {'c' * 501}\n---\nb\n",
        "compatibility",
    ),
    "license number": ("---\nname: my-skill\ndescription: d\nlicense: 3\n---\nb\n", "license"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_broken_skill_is_a_problem_never_an_exception(case):
    text, expected = BROKEN[case]
    found = problems_of(text)
    assert found, f"{case}: no problem reported"
    assert any(expected in p for p in found), found
    assert all(isinstance(p, str) and p for p in found)


def test_billion_laughs_aliases_stay_cheap():
    lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 30)]
    found = problems_of("\n".join(lines) + "\n---\nb\n")
    assert any("unknown frontmatter keys" in p for p in found)


def test_non_utf8_file_is_a_problem(tmp_path):
    write_skill(tmp_path, "my-skill", text=b"---\nname: my-skill\ndescription: caf\xe9\n---\nbody\n")
    skill = load_skill(tmp_path / "skills" / "my-skill")
    assert not skill.valid
    assert any("cannot read SKILL.md" in p for p in skill.problems)


def test_missing_skill_file_and_bad_folder_name(tmp_path):
    (tmp_path / "skills" / "empty-one").mkdir(parents=True)
    write_skill(tmp_path, "Bad_Folder", text=skill_text("bad-folder"))
    skills = {s.name: s for s in list_skills(tmp_path / "skills")}
    assert any("missing" in p for p in skills["empty-one"].problems)
    assert any("folder name 'Bad_Folder'" in p for p in skills["Bad_Folder"].problems)


def test_symlinked_skill_folder_is_refused(tmp_path):
    write_skill(tmp_path, "real-one")
    (tmp_path / "skills" / "linked").symlink_to(tmp_path / "skills" / "real-one")
    skills = {s.name: s for s in list_skills(tmp_path / "skills")}
    assert skills["real-one"].valid
    assert skills["linked"].problems == ["skill folder is a symlink"]


def test_list_skills_ignores_hidden_and_files(tmp_path):
    write_skill(tmp_path, "b-skill")
    write_skill(tmp_path, "a-skill")
    (tmp_path / "skills" / ".gitkeep").write_text("")
    (tmp_path / "skills" / "README.md").write_text("hi")
    assert [s.name for s in list_skills(tmp_path / "skills")] == ["a-skill", "b-skill"]
    assert list_skills(tmp_path / "nothing") == []


def _check_with_reference(tmp_path: Path, name: str, text: str) -> list[str]:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return skills_ref.validate(folder)


@pytest.mark.parametrize(
    "description",
    [
        "Use when the build breaks.",
        'Quotes "inside" and a back\\slash',
        "colon: here # not a comment",
        "multi\nline\tdescription",
        "yes",
        "null",
        "a --- b, then ---- and -- too",
        "é, 日本語, emoji 🎉",
        "bell\x07 and del\x7f are dropped",
        "d" * MAX_DESCRIPTION,
    ],
)
def test_render_skill_passes_our_validator_and_the_reference(tmp_path, description):
    text = render_skill("my-skill", description, "- always run the tests\n")
    skill = parse_skill(text, "my-skill", Path("x"))
    assert skill.valid, skill.problems
    assert _check_with_reference(tmp_path, "my-skill", text) == []
    props = skills_ref.read_properties(tmp_path / "my-skill")
    assert props.description == skill.description
    assert props.name == "my-skill"


_DESCRIPTIONS = st.text(
    alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=300,
).filter(lambda d: any(c.isalnum() for c in d))


@settings(max_examples=400, deadline=None, database=None)
@given(description=_DESCRIPTIONS, body=st.text(max_size=200), pinned=st.booleans())
def test_every_skill_evolve_writes_reads_alike_everywhere(description, body, pinned):
    """python-frontmatter and the session-start fast path read what evolve wrote as evolve does."""
    import frontmatter

    from evolve.session.index import simple_frontmatter
    from evolve.workspace.skills import reading_differences, split_frontmatter

    text = render_skill("my-skill", description, body)
    if pinned:
        text = set_metadata_key(text, "pinned", "true")
    skill = parse_skill(text, "my-skill", Path("x"))
    assert skill.valid, skill.problems
    assert frontmatter.loads(text).metadata == skill.frontmatter
    assert reading_differences(skill) == []
    raw, _ = split_frontmatter(text)
    assert simple_frontmatter(raw) == skill.frontmatter  # never the slow PyYAML fallback


def test_a_skill_other_readers_see_differently_is_reported():
    from evolve.workspace.skills import reading_differences

    skill = parse_skill("---\nname: my-skill\ndescription: Use it.\n---\nbody\n", "my-skill", Path("x"))
    skill.frontmatter["description"] = "read otherwise"  # as if the two readers disagreed
    (difference,) = reading_differences(skill)
    assert difference.startswith("another frontmatter reader (python-frontmatter) reads 'description' differ")


@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(description=_DESCRIPTIONS, body=st.text(max_size=200))
def test_render_skill_any_description_round_trips(tmp_path, description, body):
    text = render_skill("my-skill", description, body)
    skill = parse_skill(text, "my-skill", Path("x"))
    assert skill.valid, (skill.problems, text)
    assert _check_with_reference(tmp_path, "my-skill", text) == []
    assert skill.description == skills_ref.read_properties(tmp_path / "my-skill").description


BASES = {
    "plain": "---\nname: my-skill\ndescription: Use it.\n---\n\nbody\n",
    "folded": "---\nname: my-skill\ndescription: >\n  folded\n  text\n---\nbody\n  with indent\n",
    "crlf": "---\r\nname: my-skill\r\ndescription: Use it.\r\n---\r\n\r\nbody\r\n",
    "with metadata": (
        "---\nname: my-skill\n# a comment the person wrote\nmetadata:\n  author: me  # c\n"
        "  version: \"1\"\ndescription: 'Use it.'\n---\nbody ---\n"
    ),
}


@pytest.mark.parametrize("case", sorted(BASES))
def test_pin_and_unpin_change_only_the_pinned_line(case):
    text = BASES[case]
    pinned = set_metadata_key(text, "pinned", "true")
    skill = parse_skill(pinned, "my-skill", Path("x"))
    assert skill.valid, skill.problems
    assert skill.pinned
    assert skill.body == parse_skill(text, "my-skill", Path("x")).body
    # Only lines were added: every original line is still there, in order.
    added = pinned.splitlines(keepends=True)
    for line in text.splitlines(keepends=True):
        assert line in added
        added = added[added.index(line) + 1 :]
    unpinned = set_metadata_key(pinned, "pinned", None)
    assert unpinned == text
    assert set_metadata_key(text, "pinned", None) == text


def test_pin_keeps_the_other_metadata_values():
    pinned = set_metadata_key(BASES["with metadata"], "pinned", "true")
    assert parse_skill(pinned, "my-skill", Path("x")).metadata == {
        "author": "me",
        "version": "1",
        "pinned": "true",
    }
    # Setting it again replaces, never duplicates.
    again = set_metadata_key(pinned, "pinned", "false")
    assert again.count("pinned") == 1
    assert not parse_skill(again, "my-skill", Path("x")).pinned


def test_metadata_value_with_quotes_stays_valid_yaml():
    text = set_metadata_key(BASES["plain"], "note", 'say "hi" \\ now')
    skill = parse_skill(text, "my-skill", Path("x"))
    assert skill.valid, skill.problems
    assert skill.metadata["note"] == 'say "hi" \\ now'


def test_inline_metadata_and_no_frontmatter_are_refused():
    with pytest.raises(ValueError, match="inline"):
        set_metadata_key("---\nname: my-skill\ndescription: d\nmetadata: {a: b}\n---\nb\n", "pinned", "true")
    with pytest.raises(ValueError, match="no frontmatter"):
        set_metadata_key("just text\n", "pinned", "true")


def test_a_skill_that_starts_with_a_byte_order_mark_is_valid_and_keeps_it(tmp_path) -> None:
    """Red-team 2, finding 18: an editor's BOM made a person's skill "must start with '---'"."""
    from evolve.workspace import skills as skills_mod

    folder = tmp_path / "deploy"
    folder.mkdir()
    text = "\ufeff---\nname: deploy\ndescription: Use when deploying.\n---\n\n- Ship on Tuesdays.\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    skill = skills_mod.load_skill(folder)
    assert skill.valid, skill.problems
    assert skill.description == "Use when deploying." and skill.body.strip() == "- Ship on Tuesdays."
    assert skills_mod.reading_differences(skill) == []


def test_a_config_file_with_a_byte_order_mark_reads(tmp_path) -> None:
    from evolve import config as config_mod

    path = tmp_path / "config.toml"
    path.write_bytes("\ufeff[schedule]\ncycle_hours = 6\n".encode())
    assert config_mod.load(path).schedule.cycle_hours == 6
