"""The line and block walk behind the memo: Markdown's line endings, fenced code, list items, `##` headings.

One walk, a line at a time, shared by the memo's sections and its conflict-marker scan; kept
apart from the memo's own rules so each reads in one sitting. It is read on the session-start
hot path: no imports at all.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's own flag without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterator

BOM = "\ufeff"


def split_lines(text: str) -> list[str]:
    """Lines with their endings; Markdown's endings only (LF, CRLF, CR).

    str.splitlines would also break at form feeds, NEL and U+2028.
    """
    if "\r" not in text:
        parts = text.split("\n")
        return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    return list(each_line(text))


def each_line(text: str) -> Iterator[str]:
    """The lines of `split_lines`, one at a time: a walk that may stop early holds one line, not the file's.

    Where the next LF and the next CR are is remembered until passed: each is searched for
    once per line break, never across the rest of the text for every line.
    """
    start, size = 0, len(text)
    n = r = -2  # where the next LF / CR is: -2 not looked for yet, -1 none left
    while start < size:
        n, r = next_break(text, "\n", n, start), next_break(text, "\r", r, start)
        if n < 0 and r < 0:
            yield text[start:]
            return
        end = n if r < 0 or (0 <= n < r) else (r + 1 if n == r + 1 else r)
        yield text[start : end + 1]
        start = end + 1


def next_break(text: str, char: str, known: int, start: int) -> int:
    """The next `char` at or after `start`, given where the last search found it (`known`)."""
    return text.find(char, start) if -1 != known < start else known


def _indent(body: str) -> tuple[int, str]:
    """(columns of leading white space, tabs to the next multiple of 4; the rest)."""
    columns = 0
    for index, char in enumerate(body):
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            return columns, body[index:]
    return columns, ""


def _fence(rest: str) -> tuple[str, int] | None:
    """(fence character, length) when `rest` (indentation removed) opens a fenced block."""
    char = rest[:1]
    if char not in ("`", "~"):
        return None
    length = len(rest) - len(rest.lstrip(char))
    if length < 3 or (char == "`" and "`" in rest[length:]):  # a backtick fence's info has none
        return None
    return char, length


def _closes(rest: str, fence: tuple[str, int]) -> bool:
    char, length = fence
    run = len(rest) - len(rest.lstrip(char))
    return run >= length and not rest[run:].strip(" \t")


def _heading(rest: str) -> str | None:
    """The text of an ATX level-2 heading (`## x`, `## x ##`), indentation removed."""
    if not rest.startswith("##") or rest[2:3] not in ("", " ", "\t"):
        return None
    text = rest[2:].strip(" \t")
    closing = text.rstrip("#")
    if closing != text and (not closing or closing[-1] in " \t"):  # an optional closing `##…`
        text = closing.rstrip(" \t")
    return text


def _item(rest: str) -> tuple[int, str] | None:
    """(width of a list item's marker with its spaces, the item's first content) or None."""
    marker = 0
    if rest[:1] in ("-", "*", "+"):
        marker = 1
    else:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if 1 <= digits <= 9 and rest[digits : digits + 1] in (".", ")"):
            marker = digits + 1
    if not marker or rest[marker : marker + 1] not in ("", " ", "\t"):
        return None
    spaces, content = _indent(rest[marker:])
    return marker + (spaces if 1 <= spaces <= 4 else 1), content


def _starts_block(columns: int, rest: str) -> bool:
    """Whether a line would interrupt a paragraph (so it is not a lazy continuation)."""
    if columns > 3 or not rest:
        return not rest
    stripped = rest.replace(" ", "").replace("\t", "")
    hashes = len(rest) - len(rest.lstrip("#"))
    return (
        (1 <= hashes <= 6 and rest[hashes : hashes + 1] in ("", " ", "\t"))
        or rest.startswith(">")
        or _fence(rest) is not None
        or _item(rest) is not None
        or (len(stripped) >= 3 and len(set(stripped)) == 1 and stripped[0] in "-*_")
    )


def scan(text: str) -> Iterator[tuple[int, str, str | None, bool]]:
    """(position, line, heading text or None, inside fenced code) for every line, in order.

    A top-level ATX `##` outside fenced code counts; a fence inside a list item ends with
    the item. The one walk behind sections() and has_conflict_markers(), a line at a time.
    """
    position = 0
    fence: tuple[str, int] | None = None
    base = 0  # the columns a fence's lines are indented by (a fence inside a list item)
    item: int | None = None  # the content column of the list item the lines belong to
    paragraph = False  # the item's last line was paragraph text (a lazy line may follow)
    for line in each_line(text):
        body = line.rstrip("\r\n")
        if position == 0:
            body = body.removeprefix(BOM)
        columns, rest = _indent(body)
        heading = None
        inside = item is not None and (not rest or columns >= item)
        if fence is not None and not (base and rest and columns < base):
            if columns - base <= 3 and _closes(rest, fence):
                fence = None
            yield position, line, None, True
            position += len(line)
            continue
        fence = None  # a less indented line ends the list item, and its fence with it
        if inside and item is not None:
            relative = columns - item
            if not rest:
                paragraph = False
            elif relative > 3:
                pass  # a paragraph's continuation, or indented code: the state stays
            elif (found := _fence(rest)) is not None:
                fence, base, paragraph = found, item, False
            elif (nested := _item(rest)) is not None:
                paragraph = bool(nested[1])
            else:
                paragraph = not _starts_block(relative, rest)
        elif item is not None and paragraph and not _starts_block(columns, rest):
            pass  # a lazy continuation of the item's paragraph
        else:
            item, paragraph = None, False
            if columns <= 3 and (found := _fence(rest)) is not None:
                fence, base = found, 0
            elif columns <= 3 and (heading := _heading(rest)) is not None:
                pass
            elif columns <= 3 and (marker := _item(rest)) is not None:
                width, content = marker
                item = columns + width
                if (found := _fence(content)) is not None:
                    fence, base = found, item
                paragraph = bool(content) and fence is None
        yield position, line, heading, fence is not None
        position += len(line)
