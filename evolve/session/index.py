"""The skill index the session-start hook lists: name, description, valid, pinned — fast.

Standard library only (hot path). Each SKILL.md is read once per change: a small JSON
cache under the home remembers every file's (mtime_ns, size) with what was read from it.
A changed file is read with a tiny line parser that understands the frontmatter evolve
writes (`key: value`, double-quoted values, a `metadata:` block) and checked with the
same rules as `evolve.workspace.skills`; anything it is unsure of goes to the full YAML parser, so
a skill is listed exactly when `evolve skills` calls it valid.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from evolve.regular import read_regular

VERSION = 1
SKILL_FILE = "SKILL.md"
_KEYS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`0123456789+. \t")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "="})
_BREAKS = ("\x85", "\u2028", "\u2029", "\ufeff", "\r", "\t")  # YAML is picky about tabs


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    description: str
    valid: bool
    pinned: bool


_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}  # the escapes evolve's own renderer writes


def _is_hex(digits: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in digits)


def _scalar(value: str) -> str | None:
    """A YAML scalar that reads as exactly this string, or None when unsure."""
    if not value:
        return None
    if value[0] == '"':
        if len(value) < 2 or value[-1] != '"':
            return None
        out, i, inner = [], 0, value[1:-1]
        while i < len(inner):
            char = inner[i]
            if char == '"':
                return None
            if char == "\\":
                escape = inner[i + 1 : i + 2]
                if escape in ("\\", '"'):
                    out.append(escape)
                    i += 2
                    continue
                digits = inner[i + 2 : i + 2 + _HEX_DIGITS.get(escape, 0)]
                if escape in _HEX_DIGITS and len(digits) == _HEX_DIGITS[escape] and _is_hex(digits):
                    code = int(digits, 16)
                    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                        return None
                    out.append(chr(code))
                    i += 2 + len(digits)
                    continue
                return None
            out.append(char)
            i += 1
        return "".join(out)
    if value[0] == "'":
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != "'" or "'" in inner.replace("''", ""):
            return None
        return inner.replace("''", "'")
    if (
        value[0] in _PLAIN_START
        or ": " in value
        or " #" in value
        or value.endswith(":")
        or value.lower() in _YAML_WORDS
        or "\t" in value
    ):
        return None
    return value


def simple_frontmatter(raw: str) -> dict | None:
    """Frontmatter of the simple kind → mapping; None sends it to the full parser."""
    if any(mark in raw for mark in _BREAKS) or _unprintable(raw):
        return None
    data: dict = {}
    block: dict | None = None
    indent = 0
    for line in raw.split("\n"):
        if not line.strip():
            continue
        if line[0] in " \t":
            width = len(line) - len(line.lstrip(" "))
            if block is None or line[0] == "\t" or (block and width != indent):
                return None
            indent = width
            key, sep, rest = line.strip().partition(":")
            if not sep or not key or key in block or not key.replace("-", "").replace("_", "").isalnum():
                return None
            value = _scalar(rest.strip()) if rest.startswith(" ") else None
            if value is None:
                return None
            block[key] = value
            continue
        block = None
        key, sep, rest = line.partition(":")
        if not sep or key not in _KEYS or key in data or (rest and not rest.startswith(" ")):
            return None
        if not rest.strip():
            if key != "metadata":
                return None
            block = data[key] = {}
            continue
        value = _scalar(rest.strip())
        if value is None:
            return None
        data[key] = value
    if data.get("metadata") == {}:
        return None
    return data


def _unprintable(raw: str) -> bool:
    return any(not c.isprintable() and c not in "\n\t" for c in raw)


def read_entry(folder: Path, max_body_tokens: int) -> Entry:
    """Read and check one skill folder (the tiny parser, else evolve.workspace.skills)."""
    from evolve.workspace import skills

    name = folder.name
    if os.path.islink(folder / SKILL_FILE):  # noqa: PTH114 - never followed (it may leave the repo)
        return Entry(name, "", False, False)
    try:
        text = read_regular(folder / SKILL_FILE).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return Entry(name, "", False, False)
    raw, body = skills.split_frontmatter(text)
    data = None
    if raw is not None and len(raw.encode("utf-8", "surrogatepass")) <= skills.MAX_FRONTMATTER_BYTES:
        data = simple_frontmatter(raw)
    if data is None:
        skill = skills.parse_skill(text, name, folder / SKILL_FILE, max_body_tokens)
        problems, data = skill.problems, skill.frontmatter
    else:
        problems = skills.frontmatter_problems(data, name) + skills.body_problems(body, max_body_tokens)
    if skills.name_problem(name):
        problems = ["bad folder name", *problems]
    found: dict = data or {}
    description = found.get("description")
    description = description if isinstance(description, str) else ""
    metadata = found.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    pinned = str(metadata.get("pinned", "")).lower() in {"true", "yes", "1"}
    return Entry(name, description, not problems, pinned)


def load(skills_dir: Path, cache_file: Path, max_body_tokens: int) -> list[Entry]:
    """Every skill folder's entry, sorted by name; the cache is rewritten when stale."""
    try:
        cached = json.loads(cache_file.read_bytes())
        if (
            cached.get("v") != VERSION
            or cached.get("dir") != str(skills_dir)
            or cached.get("tokens") != max_body_tokens
        ):
            cached = {}
    except (OSError, ValueError, AttributeError):
        cached = {}
    old = cached.get("skills") or {}
    fresh: dict[str, list] = {}
    changed = False
    try:
        if os.path.islink(skills_dir):  # noqa: PTH114 - a skills folder that is a link is never followed
            raise NotADirectoryError(skills_dir)
        with os.scandir(skills_dir) as scan:
            folders = sorted(
                (e.name, e.path, e.is_symlink())
                for e in scan
                # a link first: is_dir() raises ELOOP for a loop of links, which left every session bare
                if not e.name.startswith(".") and (e.is_symlink() or e.is_dir())
            )
    except (FileNotFoundError, NotADirectoryError):
        folders = []
    for name, path, link in folders:
        try:
            st = os.stat(path + "/" + SKILL_FILE)  # noqa: PTH116 - hot path, 200 files
            key = [st.st_mtime_ns, st.st_size, st.st_ino]
        except OSError:
            key = [0, -1, 0]
        if link:
            key = [0, -2, 0]
        item = old.get(name)
        if item is None or item[:3] != key:
            entry = Entry(name, "", False, False) if link else read_entry(Path(path), max_body_tokens)
            item = [*key, entry.description, entry.valid, entry.pinned]
            changed = True
        fresh[name] = item
    if changed or len(fresh) != len(old):
        write_cache(
            cache_file, {"v": VERSION, "dir": str(skills_dir), "tokens": max_body_tokens, "skills": fresh}
        )
    return [Entry(n, i[3], i[4], i[5]) for n, i in sorted(fresh.items())]


def write_cache(path: Path, data: dict) -> None:
    """Best effort (the cache is only a speed-up): temp file + rename."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
