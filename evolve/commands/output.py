"""How commands print: JSON for machines, aligned text for people."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from typing import Any


def emit_json(data: Any) -> None:
    """`data` as JSON, always valid UTF-8.

    A path from the file system may hold bytes no UTF-8 decodes (a folder named "bad" and 0xff):
    Python keeps them as lone surrogates, which a UTF-8 terminal refuses (an internal error)
    or a C locale writes raw (no JSON reader takes it). Then the whole output is written in
    ASCII escapes, which give the same string back to a reader.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=2, default=str)
    sys.stdout.write(text + "\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned columns; the last column is never padded."""
    grid = [headers, *rows]
    widths = [max(len(str(r[i])) for r in grid) for i in range(len(headers) - 1)]
    lines = []
    for row in grid:
        cells = [str(c).ljust(w) for c, w in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, str(row[-1])]).rstrip())
    return "\n".join(lines)


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def warn(text: str) -> None:
    sys.stderr.write(f"evolve: {text}\n")
