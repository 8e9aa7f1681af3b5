"""A lesson's eval case: the schema a model's case and a person's files are held to, one line per refusal."""

from __future__ import annotations

import time

import pytest

from evolve.reflect.evalcase import MAX_GRADERS, MAX_PROMPT_CHARS, CaseError, file_problems, from_answer
from evolve.workspace.skills import parse_frontmatter, split_frontmatter

PNPM = {
    "prompt": "add lodash to the shop",
    "graders": [
        {"type": "tool_used", "tool": "Bash", "input_match": "pnpm (add|install)"},
        {"type": "regex", "target": "trace", "match": "not_contains", "pattern": r"\bnpm (install|i|add)\b"},
    ],
}
TOKEN = "ghp_" + "R4nd0mT0k3nV4lu3Abcdefghij0123456789"


def refusal(raw) -> str:
    with pytest.raises(CaseError) as caught:
        from_answer(raw)
    line = str(caught.value)
    assert "\n" not in line
    return line


def test_a_case_becomes_the_files_claude_plugin_eval_reads() -> None:
    files = from_answer(PNPM).files("a606c629bdb1")
    assert sorted(files) == [
        "evals/a606c629bdb1/graders/regex-2.md",
        "evals/a606c629bdb1/graders/tool-used-1.md",
        "evals/a606c629bdb1/prompt.md",
    ]
    assert (
        files["evals/a606c629bdb1/prompt.md"] == '---\nallowed_tools: ["Bash"]\n---\nadd lodash to the shop\n'
    )
    raw, body = split_frontmatter(files["evals/a606c629bdb1/graders/regex-2.md"])
    assert parse_frontmatter(raw or "")[0] == {
        "type": "regex",
        "target": "trace",
        "match": "not_contains",
        "pattern": r"\bnpm (install|i|add)\b",
    }
    assert body == ""
    for path, text in files.items():  # what evolve writes passes its own file checks
        assert file_problems(path, text) == []


def test_a_pattern_anchored_at_a_line_gets_javascripts_multiline_flag() -> None:
    case = from_answer({"prompt": "p", "graders": [{"type": "regex", "pattern": "^done$"}]})
    assert case.graders[0].get("flags") == "m"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("a string", "the eval case is a str, not an object"),
        ({"graders": PNPM["graders"]}, "the eval case has no 'prompt'"),
        ({"prompt": "p"}, "the eval case has no 'graders' list"),
        ({**PNPM, "setup": "rm -rf /"}, "the eval case has no field 'setup'"),
        (
            {"prompt": "p", "graders": [{"type": "llm", "criteria": "be nice"}]},
            "grader type 'llm' is not one of",
        ),
        (
            {"prompt": "p", "graders": [{"type": "regex", "pattern": "x", "weight": 3}]},
            "has no field 'weight'",
        ),
        (
            {"prompt": "p", "graders": [{"type": "regex", "pattern": "x", "target": "files"}]},
            "'target' 'files'",
        ),
        ({"prompt": "p", "graders": [{"type": "regex", "pattern": "x", "match": "most"}]}, "'match' 'most'"),
        (
            {"prompt": "p", "graders": [{"type": "regex", "pattern": "x", "flags": "g"}]},
            "'flags' 'g' may only",
        ),
        ({"prompt": "p", "graders": [{"type": "regex"}]}, "grader 1: 'pattern' is missing"),
        ({"prompt": "p", "graders": [{"type": "tool_used", "tool": "Bash; rm"}]}, "is not a tool name"),
        (
            {"prompt": "p", "graders": [{"type": "tool_used", "tool": "Bash", "min": 3, "max": 1}]},
            "'min' (1 unless given) is more",
        ),
        ({"prompt": "p", "graders": [{"type": "file_exists", "path": "/etc/passwd"}]}, "must be relative"),
        ({"prompt": "p", "graders": [{"type": "file_exists", "path": "../x"}]}, "must be relative"),
        (
            {"prompt": "p", "graders": [{"type": "file_exists", "path": "a", "name": "A B"}]},
            "not a unique file",
        ),
        ({"prompt": "---\nx", "graders": PNPM["graders"]}, "may not start with '---'"),
    ],
)
def test_a_malformed_case_is_refused_in_one_line(raw, why) -> None:
    assert why in refusal(raw)


def test_a_catastrophic_pattern_is_refused_in_linear_time() -> None:
    started = time.monotonic()
    why = refusal({"prompt": "p", "graders": [{"type": "regex", "pattern": r"(x+x+)+y\1"}]})
    assert "is refused" in why and "'pattern'" in why
    ok = from_answer({"prompt": "p", "graders": [{"type": "regex", "pattern": "(x+x+)+y"}]})
    assert ok.graders[0].get("pattern") == "(x+x+)+y"  # no backtracking here: it is allowed
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(?=npm)", "is refused"),
        ("(?P<tool>npm)", "named groups are written"),
        (r"\Anpm", "JavaScript has no \\A"),
        ("(?i)npm", "inline flags are not JavaScript's"),
    ],
)
def test_a_pattern_javascript_reads_otherwise_is_refused(pattern, why) -> None:
    assert why in refusal(
        {"prompt": "p", "graders": [{"type": "tool_used", "tool": "Bash", "input_match": pattern}]}
    )


def test_a_secret_is_redacted_from_the_prompt_and_refused_in_a_grader() -> None:
    case = from_answer({**PNPM, "prompt": f"push with token {TOKEN} please"})
    assert TOKEN not in case.prompt and "push with token" in case.prompt
    why = refusal({"prompt": "p", "graders": [{"type": "regex", "pattern": TOKEN}]})
    assert "holds a secret" in why and TOKEN not in why


def test_invisible_characters_leave_the_prompt_and_refuse_a_grader() -> None:
    case = from_answer({**PNPM, "prompt": "add\u200b lodash\u202e"})
    assert case.prompt == "add lodash"
    assert "invisible characters (U+200B" in refusal(
        {"prompt": "p", "graders": [{"type": "regex", "pattern": "np\u200bm"}]}
    )


def test_never_called_needs_min_0_as_the_cli_counts_from_1() -> None:
    never = {"type": "tool_used", "tool": "AskUserQuestion", "max": 0}
    assert "never called is min 0, max 0" in refusal({"prompt": "p", "graders": [never]})
    assert from_answer({"prompt": "p", "graders": [{**never, "min": 0}]}).graders[0].get("max") == 0


def test_an_oversize_case_is_refused() -> None:
    assert "at most 4000" in refusal({**PNPM, "prompt": "x" * (MAX_PROMPT_CHARS + 1)})
    many = [{"type": "file_exists", "path": f"f{n}"} for n in range(MAX_GRADERS + 1)]
    assert f"at most {MAX_GRADERS}" in refusal({"prompt": "p", "graders": many})
    assert "at most 500" in refusal({"prompt": "p", "graders": [{"type": "regex", "pattern": "a" * 501}]})


@pytest.mark.parametrize(
    ("path", "text", "why"),
    [
        ("evals/x/graders/a.md", "---\ntype: [unclosed\n---\n", "frontmatter is not valid YAML"),
        ("evals/x/graders/a.md", "---\ntype: tool_order\n---\n", "grader type 'tool_order'"),
        ("evals/x/graders/a.md", "---\ntype: regex\n---\n(a)\\1\n", "is refused"),  # the body is the pattern
        ("evals/x/prompt.md", "---\nsetup_script: x.sh\n---\nhi\n", "unknown frontmatter key 'setup_script'"),
        ("evals/x/prompt.md", "x" * 9000, "a case's file holds at most"),
    ],
)
def test_a_case_file_a_person_or_a_server_writes_is_checked(path, text, why) -> None:
    problems = file_problems(path, text)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: ") and why in problems[0]


def test_a_persons_grader_may_weigh_and_pick_its_arm() -> None:
    text = "---\ntype: regex\ntarget: last_message\nweight: 2\narm: with-only\n---\npnpm\n"
    assert file_problems("evals/x/graders/said.md", text) == []
    assert file_problems("evals/results/2026/report.html", "<html>") == []  # the CLI's results
