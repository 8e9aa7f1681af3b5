"""The memo: a title and exactly two `##` sections, each capped in length.

Replacing one section leaves every other byte of the file as it was, so a person's
formatting survives evolve's writes. Standard library only: it is read on the hot path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SELF = "self"
STRATEGIES = "strategies"
HEADINGS = {
    SELF: "What I do well and where I often stumble",
    STRATEGIES: "Strategies for this user and domain",
}
MEMO_FILE = "memo.md"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class Section:
    """One `##` section: its heading text and the character span of its content."""

    heading: str
    content_start: int
    content_end: int


def _sections(text: str) -> list[Section]:
    """Find `## ` headings outside fenced code blocks."""
    found: list[tuple[str, int, int]] = []  # heading, line start, content start
    position = 0
    fence: str | None = None
    # Markdown's line endings only (str.splitlines would also break at \x0c, \x85, U+2028…)
    for line in _LINE.findall(text):
        stripped = line.strip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            fence = None if fence == marker else (fence or marker)
        elif fence is None and line.startswith("## "):
            found.append((line[3:].strip(), position, position + len(line)))
        position += len(line)
    sections = []
    for index, (heading, _line_start, content_start) in enumerate(found):
        end = found[index + 1][1] if index + 1 < len(found) else len(text)
        sections.append(Section(heading, content_start, end))
    return sections


def section_content(text: str, key: str) -> str:
    """The content under a section's heading, stripped; '' when the section is absent."""
    heading = HEADINGS[key]
    for section in _sections(text):
        if section.heading == heading:
            return text[section.content_start:section.content_end].strip()
    return ""


def replace_section(text: str, key: str, content: str) -> str:
    """Return the memo with one section's content replaced; the rest byte-identical."""
    heading = HEADINGS[key]
    body = content.strip("\n")
    for section in _sections(text):
        if section.heading == heading:
            tail = "\n\n" if section.content_end < len(text) else "\n"
            block = f"\n{body}{tail}" if body else "\n"
            return text[:section.content_start] + block + text[section.content_end:]
    separator = "" if text.endswith("\n") or not text else "\n"
    return f"{text}{separator}\n## {heading}\n\n{body}\n"


def problems(text: str, section_chars: int) -> list[str]:
    """Structural and length problems; a person's memo over a cap is reported, not cut."""
    found = _sections(text)
    headings = [s.heading for s in found]
    issues = []
    for key, heading in HEADINGS.items():
        count = headings.count(heading)
        if count != 1:
            issues.append(f"memo.md must have exactly one '## {heading}' section (found {count})")
            continue
        length = len(section_content(text, key))
        if length > section_chars:
            issues.append(f"memo section '{heading}' is {length} chars; at most {section_chars}")
    extra = [h for h in headings if h not in HEADINGS.values()]
    if extra:
        issues.append(f"memo.md has unexpected '##' sections: {', '.join(extra)} "
                      "(only the two standard sections are allowed; use ### inside them)")
    return issues


def bullets(content: str) -> list[str]:
    """The `-`/`*` bullet items of a section, continuation lines joined."""
    items: list[str] = []
    for line in content.splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ", "+ ")):
            items.append(stripped[2:].strip())
        elif stripped and items and line.startswith((" ", "\t")):
            items[-1] += " " + stripped
    return items


def render_empty(agent: str) -> str:
    """The memo of a new agent."""
    return (
        f"# Memo of {agent}\n\n"
        f"## {HEADINGS[SELF]}\n\n"
        f"## {HEADINGS[STRATEGIES]}\n"
    )
