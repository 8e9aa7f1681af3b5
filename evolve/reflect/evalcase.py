r"""A lesson's eval case: its schema, its checks and its files, as `claude plugin eval` reads them.

A case lives at `evals/<lesson id>/` in the agent repository: `prompt.md` (the request, with
`allowed_tools` in its frontmatter when a grader needs a tool the run must be granted) and
`graders/<name>.md`, one grader each, its fields as YAML frontmatter — the format Claude Code
(2.1.332) reads, checked against the real CLI: a regex grader has `target` (trace |
last_message), `match` (contains | not_contains | count:N), `pattern`, `flags` (JavaScript's);
tool_used has `tool`, `input_match`, `min`, `max`; file_exists has `path`, `exists`.

Only those three deterministic types: a case proves a lesson without paying a judge. A pattern
is JavaScript's `RegExp` there and is compiled here through `evolve.patterns` (linear time):
what that door refuses is refused, and so is what it reads differently from JavaScript
(`(?P<…>)`, inline flags, `\A`, `\Z`). A case from a model is checked whole (`from_answer`:
sizes, invisible characters out of the prompt, secrets redacted there and refused in a
grader); a case's files, as a person commits them or a server brings them, one by one
(`file_problems`). Every refusal is one line. Pure: no I/O (where cases live and who wrote
them: `workspace.lessons`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evolve import patterns
from evolve.errors import EvolveError
from evolve.names import name_problem
from evolve.transcripts.redact import find_invisible, find_secrets, make_visible, redact, strip_invisible
from evolve.workspace.cases import CASES_RESERVED, EVALS, case_folder, case_lesson
from evolve.workspace.lessons import CaseFiles
from evolve.workspace.skills import parse_frontmatter, split_frontmatter

__all__ = ["EVALS", "Case", "CaseError", "CaseFiles", "case_folder", "case_lesson"]

PROMPT, GRADERS = "prompt.md", "graders"
REGEX, TOOL_USED, FILE_EXISTS = "regex", "tool_used", "file_exists"
TYPES = (REGEX, TOOL_USED, FILE_EXISTS)
TARGETS = ("trace", "last_message")
MATCHES = ("contains", "not_contains")  # or count:N
MAX_PROMPT_CHARS = 4_000
MAX_GRADERS = 8
MAX_PATTERN_CHARS = 500
MAX_FIELD_CHARS = 200  # a tool name, a path
MAX_FILE_CHARS = 8_000  # one file of a case, as committed
# what each type holds besides `type` and `name` (`weight` and `arm` only in a person's files)
FIELDS = {
    REGEX: ("target", "match", "pattern", "flags"),
    TOOL_USED: ("tool", "input_match", "min", "max"),
    FILE_EXISTS: ("path", "exists"),
}
PERSONS_FIELDS = ("weight", "arm")
# prompt.md's frontmatter keys the CLI knows (it refuses any other)
PROMPT_KEYS = (
    "schema_version name description tags plugins runs expected_outcome model max_turns "
    "timeout_seconds allowed_tools disallowed_tools artifact_publish growthbook_overrides "
    "append_system_prompt env"
).split()
_JS_ONLY = (  # what the door reads and JavaScript's RegExp does not, or reads otherwise
    ("(?P", "named groups are written (?<name>…) in JavaScript"),
    ("\\A", "JavaScript has no \\A"),
    ("\\Z", "JavaScript has no \\Z"),
)


class CaseError(EvolveError):
    """A case (or one of its files) is refused; str(exc) is the one-line reason, safe to show."""


@dataclass(frozen=True)
class Grader:
    """One grader: its file name (`graders/<name>.md`), type and fields, in the schema's order."""

    name: str
    type: str
    fields: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.fields).get(key, default)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, **dict(self.fields)}


@dataclass(frozen=True)
class Case:
    """A lesson's eval case: the request and the graders that pass when the lesson is followed."""

    prompt: str
    graders: tuple[Grader, ...]

    @property
    def tools(self) -> list[str]:
        """The tools a run must be granted for its graders to pass (the prompt's `allowed_tools`)."""
        tools = [g.get("tool") for g in self.graders if g.type == TOOL_USED]
        if any(g.type == FILE_EXISTS and g.get("exists", True) for g in self.graders):
            tools.append("Write")
        return list(dict.fromkeys(tools))

    def files(self, lesson: str) -> dict[str, str]:
        """The case's files by repository path."""
        folder = case_folder(lesson)
        head = f"allowed_tools: {json.dumps(self.tools)}\n" if self.tools else ""
        found = {f"{folder}/{PROMPT}": f"---\n{head}---\n{self.prompt.strip()}\n"}
        for grader in self.graders:
            lines = [f"{key}: {_yaml(value)}" for key, value in (("type", grader.type), *grader.fields)]
            found[f"{folder}/{GRADERS}/{grader.name}.md"] = "---\n" + "\n".join(lines) + "\n---\n"
        return found

    def to_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "graders": [g.to_dict() for g in self.graders]}


def _yaml(value: Any) -> str:
    """A scalar as YAML: a JSON string is a double-quoted YAML scalar (escapes, no surprises)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))


def lesson_problem(lesson: object) -> str | None:
    """Why `lesson` cannot name a case's folder (a memo bullet's id or a skill's name), or None."""
    if lesson in CASES_RESERVED:
        return f"'{lesson}' is where claude plugin eval writes its results"
    problem = name_problem(lesson)
    return f"lesson id {problem}" if problem else None


def _shown(value: object, limit: int = 40) -> str:
    text = value if isinstance(value, str) else type(value).__name__
    if find_secrets(text[:2000]):
        return "<text holding a secret>"
    text = make_visible(text[: limit * 2])
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _text(fields: Mapping[str, Any], key: str, *, required: bool = True, limit: int = MAX_FIELD_CHARS) -> str:
    value = fields.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise CaseError(f"'{key}' is missing" if value is None else f"'{key}' must be a non-empty string")
    if len(value) > limit:
        raise CaseError(f"'{key}' is {len(value)} chars; at most {limit}")
    hidden = find_invisible(value)
    if hidden:
        raise CaseError(f"'{key}' holds invisible characters ({hidden[0][0]} at {hidden[0][1]})")
    if find_secrets(value):
        raise CaseError(f"'{key}' holds a secret")
    return value


def check_pattern(key: str, source: str, flags: str = "") -> None:
    """Refuse a pattern the door refuses, or one JavaScript would read otherwise (CaseError)."""
    for piece, why in _JS_ONLY:
        if piece in source:
            raise CaseError(f"'{key}' {_shown(source)}: {why}")
    if source.startswith("(?") and source[2:3] in "imsx" and source[2:3]:
        raise CaseError(f"'{key}' {_shown(source)}: inline flags are not JavaScript's; use 'flags'")
    try:
        patterns.compile(("(?s)" if "s" in flags else "") + source, ignore_case="i" in flags)
    except patterns.PatternError as exc:
        raise CaseError(f"'{key}' {_shown(source)} is refused: {exc}") from None


def _count(fields: Mapping[str, Any], key: str) -> int | None:
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1000:
        raise CaseError(f"'{key}' must be a whole number from 0 to 1000")
    return value


def grader(name: str, fields: Mapping[str, Any], *, persons: bool = False) -> Grader:
    """One grader from its fields (a model's object, or a file's frontmatter); CaseError otherwise."""
    kind = fields.get("type")
    if kind not in TYPES:
        raise CaseError(f"grader type {_shown(kind)} is not one of {', '.join(TYPES)} (deterministic only)")
    allowed = ("type", "name", *FIELDS[kind], *(PERSONS_FIELDS if persons else ()))
    unknown = sorted(str(k) for k in fields if k not in allowed)
    if unknown:
        raise CaseError(
            f"a {kind} grader has no field {_shown(unknown[0])} (it has {', '.join(FIELDS[kind])})"
        )
    out: list[tuple[str, Any]] = []
    if kind == REGEX:
        target = fields.get("target", "trace")
        if target not in TARGETS:
            raise CaseError(f"'target' {_shown(target)} is not one of {', '.join(TARGETS)}")
        match = fields.get("match", "contains")
        if not (match in MATCHES or (isinstance(match, str) and _is_count(match))):
            raise CaseError(f"'match' {_shown(match)} is not contains, not_contains or count:N")
        flags = _text(fields, "flags", required=False)
        if set(flags) - set("ims") or len(set(flags)) != len(flags):
            raise CaseError(f"'flags' {_shown(flags)} may only hold i, m and s, once each")
        pattern = _text(fields, "pattern", limit=MAX_PATTERN_CHARS)
        check_pattern("pattern", pattern, flags)
        if ("^" in pattern or "$" in pattern) and "m" not in flags:
            flags += "m"  # evolve's door reads ^ and $ at lines, as JavaScript does with m
        out += [("target", target), ("match", match), ("pattern", pattern)]
        out += [("flags", flags)] if flags else []
    elif kind == TOOL_USED:
        tool = _text(fields, "tool")
        if not all(c.isascii() and (c.isalnum() or c == "_") for c in tool):
            raise CaseError(f"'tool' {_shown(tool)} is not a tool name (letters, digits, _)")
        out.append(("tool", tool))
        input_match = _text(fields, "input_match", required=False, limit=MAX_PATTERN_CHARS)
        if input_match:
            check_pattern("input_match", input_match)
            out.append(("input_match", input_match))
        low, high = _count(fields, "min"), _count(fields, "max")
        if high is not None and (1 if low is None else low) > high:
            raise CaseError("'min' (1 unless given) is more than 'max'; never called is min 0, max 0")
        out += [(k, v) for k, v in (("min", low), ("max", high)) if v is not None]
    else:
        path = _text(fields, "path")
        if path.startswith(("/", "~")) or ".." in path.split("/") or "\\" in path:
            raise CaseError(f"'path' {_shown(path)} must be relative to the run's folder")
        out.append(("path", path))
        exists = fields.get("exists", True)
        if not isinstance(exists, bool):
            raise CaseError("'exists' must be true or false")
        out += [] if exists else [("exists", False)]
    if persons:
        out += [(k, fields[k]) for k in PERSONS_FIELDS if k in fields]
    return Grader(name, kind, tuple(out))


def _is_count(match: str) -> bool:
    head, _, number = match.partition(":")
    return head == "count" and number.isdigit() and len(number) <= 4


def from_answer(raw: object) -> Case:
    """The case a model proposed (`{"prompt": …, "graders": [{type, …}, …]}`), checked; CaseError otherwise.

    The prompt is the person's request: invisible characters are taken out and secrets
    redacted. A grader holding a secret or invisible characters is refused.
    """
    if not isinstance(raw, Mapping):
        raise CaseError(f"the eval case is a {type(raw).__name__}, not an object")
    unknown = sorted(str(k) for k in raw if k not in ("lesson", "prompt", "graders"))
    if unknown:
        raise CaseError(f"the eval case has no field {_shown(unknown[0])} (it has lesson, prompt, graders)")
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise CaseError("the eval case has no 'prompt'")
    prompt = redact(strip_invisible(prompt)).strip()
    if len(prompt) > MAX_PROMPT_CHARS:
        raise CaseError(f"the prompt is {len(prompt)} chars; at most {MAX_PROMPT_CHARS}")
    if prompt.startswith("---"):
        raise CaseError("the prompt may not start with '---' (it would read as frontmatter)")
    listed = raw.get("graders")
    if not isinstance(listed, list) or not listed:
        raise CaseError("the eval case has no 'graders' list")
    if len(listed) > MAX_GRADERS:
        raise CaseError(f"the eval case has {len(listed)} graders; at most {MAX_GRADERS}")
    graders: list[Grader] = []
    for number, item in enumerate(listed, 1):
        if not isinstance(item, Mapping):
            raise CaseError(f"grader {number} is a {type(item).__name__}, not an object")
        name = item.get("name") or f"{item.get('type')}-{number}".replace("_", "-")
        if name_problem(name) or any(g.name == name for g in graders):
            raise CaseError(f"grader {number}: name {_shown(name)} is not a unique file name (a-z, 0-9, -)")
        try:
            graders.append(grader(name, item))
        except CaseError as exc:
            raise CaseError(f"grader {number}: {exc}") from None
    return Case(prompt, tuple(graders))


def file_problems(path: str, text: str) -> list[str]:
    """Why one file of a case (as committed or brought by a server) breaks the schema, one line each."""
    if case_lesson(path) is None:
        return []
    rest = path.split("/")[2:]
    if len(text) > MAX_FILE_CHARS:
        return [f"{path}: {len(text)} chars; a case's file holds at most {MAX_FILE_CHARS}"]
    raw, body = split_frontmatter(text)
    data, problems = parse_frontmatter(raw) if raw is not None else ({}, [])
    if problems:
        return [f"{path}: {problems[0]}"]
    if rest == [PROMPT]:
        unknown = sorted(str(k) for k in data if k not in PROMPT_KEYS)
        found = [f"{path}: unknown frontmatter key {_shown(unknown[0])}"] if unknown else []
        if len(body) > MAX_PROMPT_CHARS:
            found.append(f"{path}: the prompt is {len(body)} chars; at most {MAX_PROMPT_CHARS}")
        return found
    if len(rest) == 2 and rest[0] == GRADERS and rest[1].endswith(".md"):
        if raw is None:
            return []  # the CLI reads a grader file without frontmatter as none
        fields = dict(data)
        if fields.get("type") == REGEX and "pattern" not in fields and body.strip():
            fields["pattern"] = body.strip()  # the CLI reads a regex grader's body as its pattern
        try:
            grader(rest[1][: -len(".md")], fields, persons=True)
        except CaseError as exc:
            return [f"{path}: {exc}"]
    return []
