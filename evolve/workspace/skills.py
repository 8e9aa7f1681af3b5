"""Skills in the Agent Skills format: `skills/<name>/SKILL.md`, parsed, validated, rendered.

A person's frontmatter is never re-serialised (YAML dumpers sort keys and re-wrap lines):
skills evolve creates get simple hand-written frontmatter, and a patch changes body bytes
only. A broken skill is reported, never "fixed". The splitter is evolve's own (bytes kept,
strict fences); python-frontmatter, a second reader, cross-checks what it reads
(`reading_differences`) so a skill other tools would read differently is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evolve.config import LimitsConfig
from evolve.names import name_problem
from evolve.regular import read_regular

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any

SKILL_FILE = "SKILL.md"
ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FRONTMATTER_BYTES = 16_384
CHARS_PER_TOKEN = 4  # the pre-commit hook approximates tokens by characters
SYMLINKED = f"{SKILL_FILE} is a symbolic link: evolve never reads or writes through one; make it a file"
_FENCE = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)  # a BOM may lead


@dataclass
class Skill:
    """One skill folder as found on disk; `problems` empty means valid."""

    name: str
    path: Path
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    text: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""

    @property
    def metadata(self) -> dict[str, str]:
        value = self.frontmatter.get("metadata")
        return value if isinstance(value, dict) else {}

    @property
    def pinned(self) -> bool:
        return str(self.metadata.get("pinned", "")).lower() in {"true", "yes", "1"}


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Return (frontmatter text or None, body); the body keeps its exact bytes."""
    match = _FENCE.match(text)
    if not match:
        return None, text
    return match.group(1) or "", text[match.end() :]


def _yaml_where(exc: Exception) -> str:
    """' at line N of SKILL.md: what the parser said' (line 1 is the opening `---`)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    words = [w for w in (getattr(exc, "context", None), getattr(exc, "problem", None)) if w]
    said = ", ".join(words) or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    where = f" at line {mark.line + 2} of {SKILL_FILE}" if mark is not None else ""
    return f"{where}: {said}"


def parse_frontmatter(raw: str) -> tuple[dict[str, Any], list[str]]:
    """YAML frontmatter → mapping, or problems. Never raises on any input."""
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        return {}, [f"frontmatter is over {MAX_FRONTMATTER_BYTES} bytes"]
    import yaml  # lazy: only readers of full frontmatter pay for it

    try:
        # libyaml when present: 500x faster on hostile nesting, which it caps itself
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(raw, Loader=loader) if raw.strip() else {}  # noqa: S506 - a safe loader
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        return {}, [f"frontmatter is not valid YAML{_yaml_where(exc)}"]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return {}, ["frontmatter must be a mapping of keys to values"]
    return data, []


def frontmatter_problems(data: dict[str, Any], folder_name: str) -> list[str]:
    """The spec's rules (and Anthropic's validator's: no unknown keys)."""
    problems = []
    unknown = sorted(str(k) for k in data if k not in ALLOWED_KEYS)
    if unknown:
        problems.append(
            f"unknown frontmatter keys: {', '.join(unknown)} (allowed: {', '.join(sorted(ALLOWED_KEYS))})"
        )
    name = data.get("name")
    if name is None:
        problems.append("frontmatter has no 'name'")
    else:
        why = name_problem(name)
        if why:
            problems.append(f"name {name!r} {why}")
        elif name != folder_name:
            problems.append(f"name {name!r} differs from its folder {folder_name!r}")
    description = data.get("description")
    if description is None:
        problems.append("frontmatter has no 'description'")
    elif not isinstance(description, str) or not description.strip():
        problems.append("description must be a non-empty string")
    else:
        if len(description) > MAX_DESCRIPTION:
            problems.append(f"description is {len(description)} chars; at most {MAX_DESCRIPTION}")
        if "<" in description or ">" in description:
            problems.append("description may not contain '<' or '>'")
    compatibility = data.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY
    ):
        problems.append(f"compatibility must be a string of at most {MAX_COMPATIBILITY} chars")
    metadata = data.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        problems.append("metadata must map strings to strings")
    if "license" in data and not isinstance(data["license"], str):
        problems.append("license must be a string")
    return problems


def body_problems(body: str, max_tokens: int, count_tokens: Callable[[str], int] | None = None) -> list[str]:
    """Body length against the token cap; characters approximate tokens when no counter."""
    if count_tokens is None:
        approx = len(body) // CHARS_PER_TOKEN
        if approx > max_tokens:
            return [f"body is about {approx} tokens; at most {max_tokens}"]
        return []
    used = count_tokens(body)
    return [f"body is {used} tokens; at most {max_tokens}"] if used > max_tokens else []


def parse_skill(
    text: str, folder_name: str, path: Path, max_body_tokens: int = LimitsConfig.skill_body_tokens
) -> Skill:
    """Parse SKILL.md text; every problem is collected, nothing raises."""
    skill = Skill(name=folder_name, path=path, text=text)
    raw, body = split_frontmatter(text)
    skill.body = body
    if raw is None:
        skill.problems.append("SKILL.md must start with '---' YAML frontmatter")
        return skill
    data, problems = parse_frontmatter(raw)
    skill.frontmatter = data
    skill.problems += problems
    if not problems:
        skill.problems += frontmatter_problems(data, folder_name)
    skill.problems += body_problems(body, max_body_tokens)
    return skill


def load_skill(folder: Path, max_body_tokens: int = LimitsConfig.skill_body_tokens) -> Skill:
    """Read one skill folder; unreadable or non-UTF-8 files become problems."""
    path = folder / SKILL_FILE
    if folder.is_symlink():
        return Skill(name=folder.name, path=path, problems=["skill folder is a symlink"])
    if path.is_symlink():  # never read (it may lead out of the repository) nor written through
        return Skill(name=folder.name, path=path, problems=[SYMLINKED])
    why = name_problem(folder.name)
    try:
        text = read_regular(path).decode("utf-8")
    except FileNotFoundError:
        return Skill(name=folder.name, path=path, problems=[f"{SKILL_FILE} is missing"])
    except (OSError, UnicodeDecodeError) as exc:
        return Skill(name=folder.name, path=path, problems=[f"cannot read {SKILL_FILE}: {exc}"])
    skill = parse_skill(text, folder.name, path, max_body_tokens)
    if why:
        skill.problems.insert(0, f"folder name {folder.name!r} {why}")
    return skill


def list_skills(skills_dir: Path, max_body_tokens: int = LimitsConfig.skill_body_tokens) -> list[Skill]:
    """All skill folders under `skills/`, sorted by name (hidden entries ignored).

    Nothing when `skills/` is a symbolic link (never followed: it could list files anywhere).
    """
    if skills_dir.is_symlink() or not skills_dir.is_dir():
        return []
    return [
        load_skill(entry, max_body_tokens)
        for entry in sorted(skills_dir.iterdir())
        if not entry.name.startswith(".") and (entry.is_dir() or entry.is_symlink())
    ]


_NOT_YAML_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def _quoted(value: str) -> str:
    """One line as a YAML double-quoted scalar that any YAML reader accepts.

    Characters YAML forbids in a stream are dropped, and a `---` inside is written with
    an escape so that naive frontmatter splitters (the reference validator's
    `split("---")`) do not cut the frontmatter short; characters that are not printable
    (format, private-use, unassigned) are escaped. YAML reads back the same text.
    """
    one_line = " ".join(_NOT_YAML_PRINTABLE.sub("", value).split())
    escaped = one_line.replace("\\", "\\\\").replace('"', '\\"')
    if "---" in escaped:
        escaped = escaped.replace("--", "-\\x2d")
    if not escaped.isprintable():  # format and unassigned characters: escaped, so every reader agrees
        escaped = "".join(c if c.isprintable() else _escape(c) for c in escaped)
    return f'"{escaped}"'


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def render_skill(name: str, description: str, body: str) -> str:
    """Hand-written frontmatter for a skill evolve creates (no YAML dumper)."""
    text = body if body.endswith("\n") else body + "\n"
    return f"---\nname: {name}\ndescription: {_quoted(description)}\n---\n\n{text.lstrip(chr(10))}"


def set_metadata_key(text: str, key: str, value: str | None) -> str:
    """Set or drop `metadata.<key>` by editing frontmatter lines, never re-serialising.

    Handles the block form evolve writes (`metadata:` then indented `key: "value"`). Raises
    ValueError for frontmatter whose metadata uses a form it cannot edit safely.
    """
    raw, body = split_frontmatter(text)
    if raw is None:
        raise ValueError("SKILL.md has no frontmatter")
    lines = raw.splitlines(keepends=True)
    newline = "\r\n" if raw.endswith("\r\n") else "\n"
    entry = f"  {key}: {_quoted(value)}{newline}" if value is not None else None
    start = next((i for i, ln in enumerate(lines) if re.match(r"metadata:\s*(#.*)?$", ln)), None)
    if start is None:
        if any(ln.startswith("metadata:") for ln in lines):
            raise ValueError("metadata is written inline; edit it by hand")
        if entry is None:
            return text
        lines += [f"metadata:{newline}", entry]
    else:
        end = start + 1
        while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
            end += 1
        block = [
            ln for ln in lines[start + 1 : end] if not re.match(rf"\s+['\"]?{re.escape(key)}['\"]?\s*:", ln)
        ]
        if entry is not None:
            block.append(entry)
        lines[start:end] = ([lines[start]] + block) if block else []
    head = "".join(lines)
    return f"---{newline}{head}---{newline}{body}"


def reading_differences(skill: Skill) -> list[str]:
    """Where python-frontmatter reads a valid skill's frontmatter differently from evolve."""
    if not skill.valid:
        return []  # its problems are reported already
    import frontmatter  # lazily: only doctor and the tests cross-check

    try:
        theirs = frontmatter.loads(skill.text.removeprefix("\ufeff")).metadata  # a BOM is encoding, not YAML
    except Exception as exc:  # a second YAML reader refusing it is the finding
        return [f"another frontmatter reader (python-frontmatter) cannot read it: {exc}"[:300]]
    keys = sorted(set(theirs) | set(skill.frontmatter))
    return [
        f"another frontmatter reader (python-frontmatter) reads {key!r} differently; check the YAML quoting"
        for key in keys
        if theirs.get(key) != skill.frontmatter.get(key)
    ]
