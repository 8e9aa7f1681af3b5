"""The memo: a title and exactly two `##` sections, each capped in length.

Replacing one section leaves every other byte of the file as it was, so a person's
formatting survives evolve's writes. It is read on the session-start hot path: no imports
at all (not even re or dataclasses).
"""

from __future__ import annotations

SELF = "self"
STRATEGIES = "strategies"
HEADINGS = {
    SELF: "What I do well and where I often stumble",
    STRATEGIES: "Strategies for this user and domain",
}
MEMO_FILE = "memo.md"


class Section:
    """One `##` section: its heading text, where its heading line starts, its content's span.

    A plain class: dataclasses cost the session-start hook ~9 ms of imports.
    """

    __slots__ = ("heading", "line_start", "content_start", "content_end")

    def __init__(self, heading: str, line_start: int, content_start: int, content_end: int) -> None:
        self.heading, self.line_start = heading, line_start
        self.content_start, self.content_end = content_start, content_end

    def __repr__(self) -> str:
        return f"Section({self.heading!r}, {self.line_start}, {self.content_start}, {self.content_end})"


def _lines(text: str) -> list[str]:
    """Lines with their endings; Markdown's endings only (LF, CRLF, CR).

    str.splitlines would also break at form feeds, NEL and U+2028.
    """
    if "\r" not in text:
        parts = text.split("\n")
        return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    lines, start, size = [], 0, len(text)
    while start < size:
        n, r = text.find("\n", start), text.find("\r", start)
        if n < 0 and r < 0:
            lines.append(text[start:])
            break
        end = n if r < 0 or (0 <= n < r) else (r + 1 if n == r + 1 else r)
        lines.append(text[start : end + 1])
        start = end + 1
    return lines


def _sections(text: str) -> list[Section]:
    """Find `## ` headings outside fenced code blocks."""
    found: list[tuple[str, int, int]] = []  # heading, line start, content start
    position = 0
    fence: str | None = None
    for line in _lines(text):
        stripped = line.strip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            fence = None if fence == marker else (fence or marker)
        elif fence is None and line.startswith("## "):
            found.append((line[3:].strip(), position, position + len(line)))
        position += len(line)
    sections = []
    for index, (heading, line_start, content_start) in enumerate(found):
        end = found[index + 1][1] if index + 1 < len(found) else len(text)
        sections.append(Section(heading, line_start, content_start, end))
    return sections


def sections(text: str) -> list[Section]:
    """The `##` sections of a memo, in file order (headings inside code fences are text)."""
    return _sections(text)


def section_content(text: str, key: str) -> str:
    """The content under a section's heading, stripped; '' when the section is absent."""
    heading = HEADINGS[key]
    for section in _sections(text):
        if section.heading == heading:
            return text[section.content_start : section.content_end].strip()
    return ""


def replace_section(text: str, key: str, content: str) -> str:
    """Return the memo with one section's content replaced; the rest byte-identical."""
    heading = HEADINGS[key]
    body = content.strip("\n")
    for section in _sections(text):
        if section.heading == heading:
            tail = "\n\n" if section.content_end < len(text) else "\n"
            block = f"\n{body}{tail}" if body else "\n"
            return text[: section.content_start] + block + text[section.content_end :]
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
        issues.append(
            f"memo.md has unexpected '##' sections: {', '.join(extra)} "
            "(only the two standard sections are allowed; use ### inside them)"
        )
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
    return f"# Memo of {agent}\n\n## {HEADINGS[SELF]}\n\n## {HEADINGS[STRATEGIES]}\n"
