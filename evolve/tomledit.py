"""Set string keys of one table in a person's TOML file, keeping every other byte as it was.

A TOML dumper would drop the person's comments, spacing and order, so the file is edited
as lines: a key of the table is rewritten in place (its indentation and trailing comment
kept), removed, or added after the table's last key; a missing table is appended. The
result is parsed again and must hold exactly what was asked with everything else equal,
or nothing is written (`EditError` says to edit by hand): a table written some other way
(inline, dotted keys, a multi-line string) is refused, never guessed at.
"""

from __future__ import annotations

import re

from evolve.errors import UserError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_HEADER = re.compile(r"[ \t]*\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\][ \t]*(?:#.*)?")
_ANY_HEADER = re.compile(r"[ \t]*\[")
_KEY = re.compile(r"[ \t]*([A-Za-z0-9_-]+|\"[A-Za-z0-9_-]+\"|'[A-Za-z0-9_-]+')[ \t]*=")
_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'")
_BOM = "\ufeff"


class EditError(UserError):
    """The file cannot be edited safely as lines; nothing was written."""


def quoted(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def set_keys(text: str, table: str, values: dict[str, str | None]) -> str:
    """`text` with `table`'s keys set to `values` (None: removed); everything else byte for byte."""
    bom = _BOM if text.startswith(_BOM) else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    start = next((i for i, line in enumerate(lines) if header(line) == table), None)
    if start is None:
        tail = "".join(lines)
        added = [f"{key} = {quoted(value)}{newline}" for key, value in values.items() if value is not None]
        if not added:
            return text
        joint = "" if not tail else (newline if tail.endswith("\n") else newline * 2)
        return bom + tail + joint + f"[{table}]{newline}" + "".join(added)
    end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
    last_key = start
    todo = dict(values)
    for index in range(start + 1, end):
        key = _key(lines[index])
        if key is None:
            continue
        if key in todo and todo[key] is None:
            lines[index] = ""
            del todo[key]
            continue
        last_key = index  # new keys go after the table's last key that stays
        if key in todo:
            lines[index] = _replaced(lines[index], todo.pop(key) or "", table, key)
    added = [f"{key} = {quoted(value)}{newline}" for key, value in todo.items() if value is not None]
    if added and not lines[last_key].endswith("\n"):
        lines[last_key] += newline
    lines[last_key + 1 : last_key + 1] = added
    return bom + "".join(lines)


def checked(before: str, after: str, table: str, values: dict[str, str | None]) -> dict[str, Any]:
    """The parsed `after`, when it is `before` with exactly those keys changed; else EditError."""
    import tomllib

    try:
        old = tomllib.loads(before.removeprefix(_BOM))
    except tomllib.TOMLDecodeError as exc:
        raise EditError(f"not valid TOML ({exc}); fix the file first") from None
    try:
        new = tomllib.loads(after.removeprefix(_BOM))
    except tomllib.TOMLDecodeError:
        new = None
    expected = dict(old.get(table, {})) if isinstance(old.get(table, {}), dict) else None
    if expected is not None:
        for key, value in values.items():
            if value is None:
                expected.pop(key, None)
            else:
                expected[key] = value
    others_kept = new is not None and {k: v for k, v in new.items() if k != table} == {
        k: v for k, v in old.items() if k != table
    }
    if new is None or expected is None or not others_kept or new.get(table, {}) != expected:
        raise EditError(
            f"[{table}] is written in a way evolve does not edit line by line (inline, dotted keys or "
            f"multi-line values); nothing was changed: edit [{table}] by hand"
        )
    return new


def header(line: str) -> str | None:
    """The name of the table `line` opens (`[name]`, a comment after it allowed), or None."""
    match = _HEADER.fullmatch(line.rstrip("\r\n"))
    return match.group(1) if match else None


def _key(line: str) -> str | None:
    match = _KEY.match(line)
    return match.group(1).strip("\"'") if match else None


def _replaced(line: str, value: str, table: str, key: str) -> str:
    """The key's line with its string value replaced; indentation and trailing comment kept."""
    head = _KEY.match(line)
    assert head is not None  # the caller found the key on this line
    rest = line[head.end() :]
    gap = len(rest) - len(rest.lstrip(" \t"))
    found = _STRING.match(rest, gap)
    if found is None:
        raise EditError(
            f"[{table}] {key} is not a one-line string; nothing was changed: edit [{table}] by hand"
        )
    return line[: head.end()] + rest[: found.start()] + quoted(value) + rest[found.end() :]


def remove_table(text: str, table: str) -> str:
    """`text` without `table`: its header line and every line up to the next header.

    The blank lines before the next table stay with it; the result is parsed again and must
    be the old document less that table, or EditError.
    """
    import tomllib

    bom = _BOM if text.startswith(_BOM) else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if header(line) == table), None)
    if start is None:
        return text
    end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # the blank lines that separate it from the next table stay
    after = bom + "".join(lines[:start] + lines[end:])
    try:
        old = tomllib.loads(text.removeprefix(_BOM))
        new = tomllib.loads(after.removeprefix(_BOM))
    except tomllib.TOMLDecodeError:
        new, old = None, {}
    if new is None or new != {k: v for k, v in old.items() if k != table}:
        raise EditError(f"[{table}] is not written as one table evolve can remove; nothing was changed")
    return after
