"""What a tool call did, enough to tell an error's fix from the agent moving on.

A failing call is fixed by a later call that repeats or resembles it: the same command with
another prefix or other arguments (`pytest -x` → `uv run pytest -x`), the same program and
subcommand (`npm run lint` → `npm run lint -- --fix`, never `npm test`), a command named
like the script it replaces (`./scripts/migrate.sh` → `make migrate`), or a write to the
same file. A call that only looks (grep, ls, cat, git status, Read…) is never a fix. A call
is reduced to a `Shape` of hashed keys, so the failures of an open run are saved with the
observer's state without the command's text. Pure logic, standard library only.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple

SHELL, WRITE, LOOK, TOOL = "shell", "write", "look", "tool"

LOOK_TOOLS = frozenset(
    {
        "Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite",
        "TodoRead", "AskUserQuestion", "ExitPlanMode", "update_plan", "view_image", "read_file",
        "list_dir", "list_directory", "glob", "grep_search", "search_file_content", "read_many_files",
        "web_fetch", "google_web_search", "web_search",
    }
)  # fmt: skip
WRITE_KEYS = ("file_path", "notebook_path", "path")
LOOK_PROGRAMS = frozenset(
    {
        "grep", "egrep", "rg", "ag", "ack", "ls", "ll", "dir", "cat", "bat", "less", "more", "head",
        "tail", "find", "fd", "which", "where", "whereis", "type", "pwd", "echo", "printf", "wc",
        "file", "stat", "tree", "du", "df", "printenv", "awk", "sort", "uniq", "cut", "jq", "yq",
        "date", "whoami", "id", "uname", "hostname", "nl", "xxd", "hexdump", "od", "realpath",
        "readlink", "basename", "dirname", "diff", "cmp", "column", "tr", "ps", "lsof", "env",
    }
)  # fmt: skip
LOOK_GIT = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "grep",
        "reflog",
        "describe",
        "shortlog",
    }
)
SKIPPED = frozenset(
    {"cd", "pushd", "popd", "export", "set", "unset", "source", ".", "alias", "true", ":", "sleep"}
)
WRAPPERS = frozenset({"sudo", "time", "nice", "nohup", "command", "exec", "stdbuf", "caffeinate", "xargs"})
RUNNERS = frozenset({"npx", "pnpx", "bunx"})  # run the next word as the program
RUNNER_PAIRS = frozenset(
    {
        ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
        ("rye", "run"), ("yarn", "dlx"), ("pnpm", "dlx"), ("pnpm", "exec"), ("npm", "exec"),
        ("bundle", "exec"), ("python", "-m"), ("bash", "-c"), ("bash", "-lc"), ("sh", "-c"),
        ("zsh", "-c"), ("zsh", "-lc"), ("cmd", "/c"), ("powershell", "-command"), ("pwsh", "-command"),
    }
)  # fmt: skip
INTERPRETERS = frozenset(
    {"python", "node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "tsx", "ts-node"}
)
FAMILIES = {"pnpm": "npm", "yarn": "npm", "bun": "npm", "pip3": "pip", "py.test": "pytest"}
SCRIPT_RUNNERS = frozenset({"npm"})  # `npm run lint` is `npm lint`: the script is the subcommand
VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--prefix", "--filter", "--dir", "--cwd", "--workspace", "-w", "-f", "--file"}
)
STOP_TOPICS = frozenset(
    {"run", "exec", "start", "script", "scripts", "main", "index", "install", "test", "tests"}
)
MIN_TOPIC = 4  # letters of a word that names what a command is about ("migrate", "lint")
COMMAND_CHARS = 2000  # what a command is: its start (a heredoc's body is not its identity)

_PARTS = re.compile(r"&&|\|\||[;|\n]")
_TOKEN = re.compile(r"""[^\s'"`,\[\](){}]+""")
_ASSIGN = re.compile(r"[A-Za-z_]\w*=")
_PYTHON = re.compile(r"(?:python|py)(?:\d+(?:\.\d+)*)?$")
_WORD = re.compile(r"[A-Za-z][\w:.+-]*$")
_PIECES = re.compile(r"[A-Za-z]+")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)


class Shape(NamedTuple):
    """A call by what it did: its kind and hashed keys (JSON-serialisable as a list)."""

    kind: str  # SHELL, WRITE, LOOK or TOOL
    text: int  # the whole call, normalised: the same text again is a retry
    heads: tuple[int, ...] = ()  # shell: program and subcommand of each command
    topics: tuple[int, ...] = ()  # shell: words naming what a command is about
    paths: tuple[int, ...] = ()  # write: its file (whole and base name); shell: the files it names


def _key(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def shape(tool: str, tool_input: Any, file_path: str | None = None) -> Shape:
    """The shape of a call from its tool name, its input (raw or summarised) and the file it writes."""
    command = _command(tool_input)
    if tool in LOOK_TOOLS:
        return Shape(LOOK, _key(f"{tool}\0{_flat(tool_input)}"))
    path = file_path or _written(tool, tool_input)
    if path is not None:
        name = path.replace("\\", "/").rstrip("/")
        return Shape(WRITE, _key(f"{tool}\0{_flat(tool_input)}"), paths=(_key(name), _key(_base(name))))
    if command is None:
        key = tool_input.get("skill") if tool == "Skill" and isinstance(tool_input, Mapping) else ""
        return Shape(TOOL, _key(f"{tool}\0{key}"))
    return _shell(command[:COMMAND_CHARS])


def _command(tool_input: Any) -> str | None:
    """The shell command a call runs (`command` / `cmd`, a string or an argv), else None."""
    if not isinstance(tool_input, Mapping):
        return None
    for key in ("command", "cmd"):
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return " ".join(str(item) for item in value)
    return None


def _written(tool: str, tool_input: Any) -> str | None:
    """The file a write tool writes, or the file a patch updates (Codex's apply_patch)."""
    if not isinstance(tool_input, Mapping):
        return None
    text = tool_input.get("input")
    if isinstance(text, str) and "*** " in text:
        found = _PATCH_FILE.search(text)
        return found.group(1) if found else None
    if tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        for key in WRITE_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def _flat(tool_input: Any) -> str:
    if isinstance(tool_input, Mapping):
        return "\0".join(f"{k}={tool_input[k]}" for k in sorted(tool_input, key=str))
    return "" if tool_input is None else str(tool_input)


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@lru_cache(maxsize=4096)  # a session runs the same few programs over and over
def _program(token: str) -> str:
    r"""`.venv/bin/python3.11` → `python`, `C:\\x\\npm.cmd` → `npm`: the program a token names."""
    name = _base(token.replace("\\", "/")).lower()
    for suffix in (".exe", ".cmd", ".bat"):
        name = name.removesuffix(suffix)
    if _PYTHON.match(name):
        return "python"
    return FAMILIES.get(name, name)


def _shell(command: str) -> Shape:
    heads: list[int] = []
    topics: list[int] = []
    paths: list[int] = []
    texts: list[str] = []
    look = True
    for part in _PARTS.split(command):
        tokens = _strip_prefix(_TOKEN.findall(part))
        if not tokens or _program(tokens[0]) in SKIPPED:
            continue
        program, sub, about = _head(tokens)
        texts.append(" ".join([program, *tokens[1:]]))
        heads.append(_key(f"{program} {sub}"))
        topics.extend(_key(word) for word in _topics(about))
        paths.extend(_key(_base(t)) for t in tokens[1:] if "/" in t or "." in t.strip("."))
        look = look and _looks(program, sub, tokens)
    text = _key(" ; ".join(texts))
    if look:
        return Shape(LOOK, text)
    return Shape(SHELL, text, tuple(heads), tuple(dict.fromkeys(topics)), tuple(dict.fromkeys(paths)))


def _strip_prefix(tokens: list[str]) -> list[str]:
    """The command without what only changes how it runs (`FOO=1`, `sudo`, `timeout 60`, `uv run`)."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        program = _program(token)
        if _ASSIGN.match(token):
            index += 1
            continue
        step = 0
        if program in WRAPPERS or program in RUNNERS or program == "env":
            step = 1
        elif program == "timeout":
            step = 2  # the duration
        elif index + 1 < len(tokens) and (program, tokens[index + 1].lower()) in RUNNER_PAIRS:
            step = 2
        if not step:
            break
        index += step
        while index < len(tokens) and tokens[index].startswith("-") and len(tokens[index]) > 1:
            index += 1
    return tokens[index:]


def _head(tokens: list[str]) -> tuple[str, str, list[str]]:
    """(program, subcommand, the words naming what it is about) of one simple command."""
    program = _program(tokens[0])
    rest = tokens[1:]
    about: list[str] = []
    script = "/" in tokens[0] or program.endswith((".sh", ".py", ".js", ".ts", ".rb", ".pl", ".ps1"))
    if program in INTERPRETERS and rest and not rest[0].startswith("-"):
        program, rest, script = _program(rest[0]), rest[1:], True
    index, flagged = 0, False
    while index < len(rest) and rest[index].startswith("-"):  # options before the subcommand
        flagged = flagged or rest[index] not in VALUE_OPTIONS
        index += 2 if rest[index] in VALUE_OPTIONS else 1
    # after an option not known to take a value, the next word may be that value (`pytest -p
    # no:cacheprovider`): no subcommand then; `git -C dir commit` names its option's value
    sub = rest[index] if index < len(rest) and not flagged and _WORD.match(rest[index]) else ""
    if program in SCRIPT_RUNNERS and sub in ("run", "run-script") and index + 1 < len(rest):
        sub = rest[index + 1] if _WORD.match(rest[index + 1]) else ""
    if sub:
        about.append(sub)
    elif script:  # `./scripts/migrate.sh`: the script's name says what it is about
        about.append(program.rsplit(".", 1)[0])
    return program, sub.lower(), about


def _topics(words: Iterable[str]) -> list[str]:
    return [
        piece.lower()
        for word in words
        for piece in _PIECES.findall(word)
        if len(piece) >= MIN_TOPIC and piece.lower() not in STOP_TOPICS
    ]


def _looks(program: str, sub: str, tokens: list[str]) -> bool:
    """Whether one simple command only reads: lists, searches, shows, prints."""
    if program == "git":
        return sub in LOOK_GIT
    if program == "sed":
        return not any(t.startswith("-i") or t == "--in-place" for t in tokens)
    if program == "find":
        return not any(t in ("-delete", "-exec", "-execdir") for t in tokens)
    return program in LOOK_PROGRAMS


def fixes(failing: Shape | None, later: Shape | None) -> bool:
    """Whether a successful `later` call is the fix of the `failing` one; None is a call not known.

    A look is never a fix. When the failing call is not known (an API error, a transcript
    without the call), any later call that does something counts.
    """
    if later is not None and later.kind == LOOK:
        return False
    if failing is None or later is None:
        return failing is None
    if failing.kind == LOOK:
        return False
    if failing.text == later.text:
        return True
    if failing.kind == SHELL:
        return later.kind == SHELL and bool(
            set(failing.heads) & set(later.heads) or set(failing.topics) & set(later.topics)
        )
    if failing.kind == WRITE:
        if later.kind == WRITE:
            return failing.paths[0] == later.paths[0]
        return later.kind == SHELL and failing.paths[1] in later.paths
    return False  # another tool: only the same call again (same tool, same skill) is its fix


def to_list(found: Shape | None) -> list | None:
    """A shape as JSON (lists of numbers), for the observer's saved state."""
    return None if found is None else [found.kind, found.text, *map(list, found[2:])]


def from_list(data: Any) -> Shape | None:
    """The inverse of `to_list`; None for anything else (an older state, a call not known)."""
    try:
        kind, text, heads, topics, paths = data
        return Shape(
            str(kind), int(text), tuple(map(int, heads)), tuple(map(int, topics)), tuple(map(int, paths))
        )
    except (TypeError, ValueError):
        return None
