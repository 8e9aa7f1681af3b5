"""The memo: a title and exactly two `##` sections, each capped in length.

Parsed by CommonMark's rules for what matters here: an ATX `##` heading (up to three
spaces of indentation) starts a section, and a heading inside a fenced code block is
text; a fence closes only on a line of the same character, at least as long as the
opening, with nothing after it. Replacing one section leaves every other byte of the
file as it was (a person's fenced examples, extra sections, CRLF line endings, a
byte-order mark), so a person's formatting survives evolve's writes. A memo holding a
merge's conflict markers is never read into a prompt or a bundle. It is read on the
session-start hot path: it imports only its block walk (`blocks`, which imports nothing:
not even re or dataclasses), and a bullet's lesson id (what the hook records as shown) is
computed with C modules only.
"""

from __future__ import annotations

from evolve.workspace.blocks import BOM, next_break, scan, split_lines

TYPE_CHECKING = False  # typing's own flag without importing typing (the hot path)
if TYPE_CHECKING:
    from collections.abc import Iterator


SELF = "self"
STRATEGIES = "strategies"
HEADINGS = {
    SELF: "What I do well and where I often stumble",
    STRATEGIES: "Strategies for this user and domain",
}
MEMO_FILE = "memo.md"
MEMO_CAP = 1 << 20  # bytes: a memo holds a few thousand characters; one over this is a log added by mistake


def over_cap(size: int) -> str:
    """How big an oversized memo is, to the byte: in whole MB, one byte over read 'is 1 MB, over the 1 MB'."""
    return f"{MEMO_FILE} is {size:,} bytes, over the {MEMO_CAP >> 20} MB ({MEMO_CAP:,} bytes) no memo reaches"


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


def _sections(text: str) -> list[Section]:
    """Find `##` headings outside fenced code blocks and list items."""
    found = [
        (heading, start, start + len(line)) for start, line, heading, _ in scan(text) if heading is not None
    ]
    sections = []
    for index, (heading, line_start, content_start) in enumerate(found):
        end = found[index + 1][1] if index + 1 < len(found) else len(text)
        sections.append(Section(heading, line_start, content_start, end))
    return sections


def newline_of(text: str) -> str:
    """The file's line ending (its first one; LF for a one-line or empty file)."""
    for line in split_lines(text):
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\r"):
            return "\r"
        if line.endswith("\n"):
            return "\n"
    return "\n"


MARKER_SIZE = 7  # git's, unless a person's conflict-marker-size says more


def has_conflict_markers(text: str, in_fences: bool = False, marker_size: int = MARKER_SIZE) -> bool:
    """The full `<<<<<<< ` / `=======` / `>>>>>>> ` triple of a merge, opened outside a fence.

    Only the opening marker is judged by the fences: an example inside a code block starts
    inside it, while a real conflict starts outside and may hold fence lines of both sides
    (which leave the rest of the file "fenced" to a Markdown reader). `in_fences`: while a
    merge is being committed, a conflict of lines inside a code block (git marks it there) counts.
    A marker is 7 characters, or as many as the opening's (`conflict-marker-size` in a
    person's .gitattributes makes them longer), the same in all three. `marker_size`: the
    file's own `conflict-marker-size` when below 7 (workspace.conflicts reads it from git):
    shorter markers count only then, as `>>>` quotes and `===` underlines are ordinary text.
    Every opening counts, the first of each size (a line of `<` of another size, a label
    after it, no separator of its own, hides no conflict after it). The markers are found
    by str.find, line by line only where fences decide: a file of millions of lines is read in C.
    """
    smallest = min(marker_size, MARKER_SIZE)  # a larger size: git's and longer still count
    if "=" * smallest not in text:
        return False
    if in_fences or ("```" not in text and "~~~" not in text):
        openings: Iterator[tuple[int, int]] = _marker_lines(text, "<", True, smallest)
    else:
        openings = (
            (at, size)
            for at, line, _heading, fenced in scan(text)
            if not fenced and (size := _opening_size(line, at == 0, smallest))
        )
    tried: set[int] = set()  # only the first opening of a size matters: a later one finds less after it
    later: list[dict[int, list[int]]] = []  # every separator's and closing's line, by size (read once)
    for opening, size in openings:
        if size in tried:
            continue
        if not tried:  # the first opening, looked for directly: a real conflict is read no further
            separator = _marker_line(text, "=", opening, False, smallest, size)[0]
            if separator >= 0 and _marker_line(text, ">", separator, True, smallest, size)[0] >= 0:
                return True
        else:
            if not later:
                later += [_by_size(_marker_lines(text, c, c == ">", smallest)) for c in "=>"]
            separator = _first_after(later[0].get(size, []), opening)
            if separator >= 0 and _first_after(later[1].get(size, []), separator) >= 0:
                return True
        tried.add(size)
        if later and tried >= later[0].keys() & later[1].keys():  # no size left that could close one
            return False
    return False


def _marker_lines(text: str, char: str, labelled: bool, smallest: int) -> Iterator[tuple[int, int]]:
    """(start, size) of every marker line of `char`s, any size from `smallest`, in order."""
    at, size = _marker_line(text, char, 0, labelled, smallest)
    while at >= 0:
        yield at, size
        at, size = _marker_line(text, char, at + size, labelled, smallest)


def _by_size(lines: Iterator[tuple[int, int]]) -> dict[int, list[int]]:
    """Where the lines of each size start, in order."""
    found: dict[int, list[int]] = {}
    for at, size in lines:
        found.setdefault(size, []).append(at)
    return found


def _first_after(positions: list[int], at: int) -> int:
    """The first of the ordered `positions` after `at`; -1 if none (a binary search: no bisect import)."""
    low, high = 0, len(positions)
    while low < high:
        middle = (low + high) // 2
        if positions[middle] > at:
            high = middle
        else:
            low = middle + 1
    return positions[low] if low < len(positions) else -1


def _run_end(text: str, char: str, at: int) -> int:
    """Where the run of `char` going on at `at` ends: strides that double, then halve (in C; no re here)."""
    stride = 8
    while text.startswith(char * stride, at):
        at += stride
        stride *= 2
    while stride > 1:
        stride //= 2
        if text.startswith(char * stride, at):
            at += stride
    return at


def _opening_size(line: str, first: bool, smallest: int) -> int:
    """The size of a merge's opening marker the line is (`<<<<<<< ours` or the bare marker); 0: none."""
    body = line.rstrip("\r\n")
    if first:
        body = body.removeprefix(BOM)
    size = len(body) - len(body.lstrip("<"))
    return size if size >= smallest and body[size : size + 1] in ("", " ") else 0


def _marker_line(
    text: str, char: str, start: int, labelled: bool, smallest: int, size: int = 0
) -> tuple[int, int]:
    """(start, size) of the first line from `start` that is a marker of `char`s; (-1, 0) if none.

    The marker is `size` characters, or (0) any run of at least `smallest`; `labelled`: a
    label may follow it after a space. A candidate that does not start a line sends the search
    to the next line; the line breaks are searched for forwards only, so the whole walk reads
    the text a few times.
    """
    at = text.find(char * (size or smallest), start)
    n = r = -2  # where the next LF / CR is (as in `blocks.each_line`)
    while at >= 0:
        starts = at == 0 or text[at - 1] in "\r\n" or (at == 1 and text[0] == BOM)
        after = at + (size or smallest)
        if starts and not size and text[after : after + 1] == char:  # longer than git's own size
            after = _run_end(text, char, after)
        ends = after == len(text) or text[after] in "\r\n" or (labelled and text[after] == " ")
        if starts and ends:
            return at, after - at
        n, r = next_break(text, "\n", n, at), next_break(text, "\r", r, at)
        if n < 0 and r < 0:
            return -1, 0
        at = text.find(char * (size or smallest), (n if r < 0 or 0 <= n < r else r) + 1)
    return -1, 0


def lines(text: str) -> list[str]:
    """The lines of `text` with their endings (LF, CRLF or CR; never U+2028 and the like)."""
    return split_lines(text)


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
    """Return the memo with one section's content replaced; the rest byte-identical.

    The new lines take the file's own line ending, so a CRLF memo stays CRLF.
    """
    heading = HEADINGS[key]
    newline = newline_of(text)
    body = newline.join(line.rstrip("\r\n") for line in split_lines(content.strip("\r\n")))
    for section in _sections(text):
        if section.heading == heading:
            tail = newline * 2 if section.content_end < len(text) else newline
            block = f"{newline}{body}{tail}" if body else newline
            return text[: section.content_start] + block + text[section.content_end :]
    ended = not text or text.endswith(("\n", "\r"))
    separator = "" if ended else newline
    return f"{text}{separator}{newline}## {heading}{newline}{newline}{body}{newline}"


def problems(text: str, section_chars: int, marker_size: int = MARKER_SIZE) -> list[str]:
    """Structural and length problems; a person's memo over a cap is reported, not cut.

    `marker_size`: the memo's `conflict-marker-size` (see has_conflict_markers).
    """
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
    if has_conflict_markers(text, marker_size=marker_size):
        issues.append("memo.md holds merge conflict markers (<<<<<<< ======= >>>>>>>); resolve them")
    extra = [h for h in headings if h not in HEADINGS.values()]
    if extra:
        issues.append(
            f"memo.md has unexpected '##' sections: {', '.join(extra)} "
            "(only the two standard sections are allowed; use ### inside them)"
        )
    return issues


def bullet_spans(content: str) -> list[tuple[str, int, int]]:
    """(text, first line, last line) of each `-`/`*`/`+` bullet item: continuation lines joined.

    Lines are counted from 0 in `content`, by its Markdown line endings.
    """
    items: list[tuple[str, int, int]] = []
    for number, raw in enumerate(split_lines(content)):
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if stripped.startswith(("- ", "* ", "+ ")):
            items.append((stripped[2:].strip(), number, number))
        elif stripped and items and line.startswith((" ", "\t")):
            text, first, _ = items[-1]
            items[-1] = (f"{text} {stripped}", first, number)
    return items


def bullets(content: str) -> list[str]:
    """The `-`/`*`/`+` bullet items of a section, continuation lines joined."""
    return [text for text, _, _ in bullet_spans(content)]


# ASCII punctuation and "_" → a space: `normalise`'s fast path (what `[^\w\s]|_` removes)
_ASCII_GAPS = {c: " " for c in range(128) if not chr(c).isalnum() and not chr(c).isspace()}


def normalise(text: str) -> str:
    r"""Lesson text for ids and fingerprints: NFKC, case-folded, punctuation gone, spaces collapsed.

    Exactly `" ".join(re.sub(r"[^\w\s]|_", " ", NFKC(text).casefold()).split())`, without
    `re` (the session-start hook computes it): `\w` is `str.isalnum()` or "_", `\s` is
    `str.isspace()`. ASCII text is its own NFKC form and casefolds as `lower()`.
    """
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_GAPS).split())
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join("".join(c if c.isalnum() or c.isspace() else " " for c in folded).split())


def lesson_id(text: str) -> str:
    """A memo bullet's stable id: 12 hex digits of a hash of its normalised text.

    Re-wrapping, list markers, case and punctuation do not change it; a reworded bullet is
    a new lesson. blake2b from `_blake2`, a C module (hashlib loads OpenSSL: ~8 ms).
    """
    try:
        from _blake2 import blake2b
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(normalise(text).encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def is_lesson_id(value: object) -> bool:
    """Whether `value` is what `lesson_id` gives (12 lower-case hex digits)."""
    return isinstance(value, str) and len(value) == 12 and all(c in "0123456789abcdef" for c in value)


def section_bullets(text: str) -> dict[str, list[str]]:
    """The bullets of the two standard sections, by section key (SELF, STRATEGIES)."""
    found: dict[str, list[str]] = {}
    for key, bullet, _, _ in located_bullets(text):
        found.setdefault(key, []).append(bullet)
    return found


def located_bullets(text: str) -> list[tuple[str, str, int, int]]:
    """(section key, text, first line, last line) of each bullet of the two standard sections.

    Lines are counted from 0 in the whole memo (what `git blame` numbers from 1).
    """
    found: list[tuple[str, str, int, int]] = []
    seen: set[str] = set()
    for section in _sections(text):
        key = next((k for k, heading in HEADINGS.items() if heading == section.heading), None)
        if key is None or key in seen:
            continue
        seen.add(key)
        offset = len(split_lines(text[: section.content_start]))
        content = text[section.content_start : section.content_end]
        found += [(key, item, first + offset, last + offset) for item, first, last in bullet_spans(content)]
    return found


def render_empty(agent: str) -> str:
    """The memo of a new agent."""
    return f"# Memo of {agent}\n\n## {HEADINGS[SELF]}\n\n## {HEADINGS[STRATEGIES]}\n"
