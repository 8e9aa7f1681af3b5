r"""guards.toml: lessons a person chose to enforce at the tool call, parsed and checked (no I/O).

The file sits at the root of the agent repository, one table per guard, its name the id:

    [no-npm]
    tool = "Bash"                          # or a list; "shell" = every shell tool
    pattern = '\bnpm (install|i|add)\b'   # on the command (shell) or the file path (file tools)
    project = "~/code/web"                 # optional: only sessions whose folder is inside it
    action = "remind"                      # remind | deny | off
    lesson = "use-pnpm"                    # the memo bullet id or skill name it enforces
    message = "This repo uses pnpm, never npm."

A guard that breaks a rule is left out with one line naming it and what to do; the others
apply (a broken file never blocks the agent: the hook fails open). Every pattern goes
through the one door (`evolve.patterns`): matched in linear time, whoever wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass

from evolve import patterns, tomledit
from evolve.names import name_problem

FILE = "guards.toml"
ACTIONS = ("remind", "deny", "off")
SHELL = "shell"  # every shell tool, in either harness
SHELL_TOOLS = ("Bash", "exec_command", "shell", "local_shell", "container.exec")
FILE_TOOLS = ("Edit", "Write", "MultiEdit", "Read", "NotebookEdit")
TOOLS = (SHELL, *SHELL_TOOLS, *FILE_TOOLS)
KEYS = ("tool", "pattern", "project", "action", "lesson", "message")
MAX_PATTERN = 1_000
MAX_MESSAGE = 600
MAX_LESSON = 200
MAX_GUARDS = 200
MAX_FILE = 1 << 20  # characters: the hook reads no more, so a longer file is refused whole
# the Claude Code tool names a hook entry's matcher lists (a plain `a|b` list is an exact match)
MATCHER = "|".join(t for t in (*SHELL_TOOLS, *FILE_TOOLS) if t.isalnum() or "_" in t)


@dataclass(frozen=True)
class Guard:
    """One guard, checked: `tools` expanded ("shell" is every shell tool), `project` as written."""

    id: str
    tools: tuple[str, ...]
    pattern: str
    action: str
    message: str
    lesson: str | None = None
    project: str | None = None
    tool: str | tuple[str, ...] = ()  # as written, for showing

    def row(self) -> tuple:
        """The guard as plain data for the hook's cache: (id, tools, pattern, project, action, message)."""
        return (self.id, self.tools, self.pattern, self.project, self.action, self.message)

    def shown_tool(self) -> str:
        return self.tool if isinstance(self.tool, str) else ", ".join(self.tool)


class GuardProblem(ValueError):
    """Why one guard cannot be used, in one line."""


def check(guard_id: object, table: object) -> Guard:
    """`table` as a Guard, or GuardProblem saying what is wrong."""
    problem = name_problem(guard_id)
    if problem:
        raise GuardProblem(f"the id {str(guard_id)[:80]!r} {problem}")
    if not isinstance(table, dict):
        raise GuardProblem("is not a table of keys (tool, pattern, action, message …)")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise GuardProblem(f"unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    tool = table.get("tool")
    named = [tool] if isinstance(tool, str) else tool
    if not isinstance(named, list) or not named or not all(isinstance(t, str) for t in named):
        raise GuardProblem(f"tool must be a tool name or a list of them ({', '.join(TOOLS)})")
    wrong = [t for t in named if t not in TOOLS]
    if wrong:
        raise GuardProblem(f"tool {wrong[0][:60]!r} is not one evolve guards (use one of {', '.join(TOOLS)})")
    tools = tuple(dict.fromkeys(x for t in named for x in (SHELL_TOOLS if t == SHELL else (t,))))
    pattern = table.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise GuardProblem("pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN:
        raise GuardProblem(f"pattern is {len(pattern)} characters long; at most {MAX_PATTERN} are allowed")
    try:
        patterns.compile(pattern)
    except patterns.PatternError as exc:
        raise GuardProblem(f"pattern refused: {exc}") from None
    action = table.get("action", "remind")
    if action not in ACTIONS:
        raise GuardProblem(f"action {str(action)[:40]!r} is not one of {', '.join(ACTIONS)}")
    message = table.get("message")
    if not isinstance(message, str) or not message.strip():
        raise GuardProblem("message must say what to do instead (a non-empty string)")
    if len(message) > MAX_MESSAGE:
        raise GuardProblem(f"message is {len(message)} characters long; at most {MAX_MESSAGE} are allowed")
    lesson = table.get("lesson")
    if lesson is not None and (not isinstance(lesson, str) or not 0 < len(lesson) <= MAX_LESSON):
        raise GuardProblem(
            f"lesson must be a memo bullet id or a skill name (at most {MAX_LESSON} characters)"
        )
    project = table.get("project")
    if project is not None and (
        not isinstance(project, str) or not (project.startswith("/") or project.startswith("~"))
    ):
        raise GuardProblem("project must be a folder's absolute path (or start with ~)")
    return Guard(
        guard_id,  # type: ignore[arg-type]  # name_problem checked it is a str
        tools,
        pattern,
        action,
        message,
        lesson,
        project,
        tool if isinstance(tool, str) else tuple(tool),  # type: ignore[arg-type]
    )


def parse(text: str, where: str = FILE) -> tuple[list[Guard], list[str]]:
    """The usable guards of a guards.toml text, and one line per problem (nothing raised)."""
    import tomllib

    if len(text) > MAX_FILE:
        return [], [
            f"{where} is longer than {MAX_FILE} characters, all the hook reads: no guard applies "
            "until you shorten it"
        ]
    try:
        doc = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        return [], [f"{where} is not valid TOML ({exc}): no guard applies until you fix it"]
    if doc and not launcher_starts(text):
        return [], [
            f"{where}: no line starts with '[' (the guards are written inline or with dotted keys), so "
            "the hook never starts for this file: write each guard as a table, [id] on a line of its own"
        ]
    guards: list[Guard] = []
    problems: list[str] = []
    for guard_id, table in doc.items():
        if len(guards) >= MAX_GUARDS:
            problems.append(f"{where}: more than {MAX_GUARDS} guards; the rest are left out")
            break
        try:
            guards.append(check(guard_id, table))
        except GuardProblem as exc:
            problems.append(
                f"{where} [{str(guard_id)[:64]}]: {exc}; fix or remove it (the other guards apply)"
            )
    return guards, problems


def launcher_starts(text: str) -> bool:
    """Whether the hooks' shell launchers start evolve for this file, as they read it.

    Each reads the file line by line (`read -r`: blanks before the line dropped) and starts
    Python only at a line starting with `[` (or a BOM and `[`): a table's header.
    """
    return any(line.lstrip(" \t").startswith(("[", "\ufeff[")) for line in text.split("\n"))


# Calls no lesson is about: a pattern that matches them all matches every call
EVERY_CALL = ("ls", "x", "git status", "cd /tmp && make", "/home/me/notes.md")


def matches_every_call(pattern: str) -> bool:
    """Whether `pattern` matches any command or path whatever it is (`.*`, `.`, `[a-z]`, `^` …)."""
    try:
        compiled = patterns.compile(pattern)
    except patterns.PatternError:
        return False
    return all(compiled.matches(probe) for probe in EVERY_CALL)


def sweeping(text: str, where: str = FILE) -> list[str]:
    """One line per `deny` guard of `text` that would refuse every call of its tools."""
    return [
        f"{where} [{guard.id}]: a deny on {guard.pattern[:40]!r} refuses every call of {guard.shown_tool()}"
        for guard in parse(text, where)[0]
        if guard.action == "deny" and matches_every_call(guard.pattern)
    ]


def problems(text: str, where: str = FILE) -> list[str]:
    """What is wrong with a guards.toml text (empty: every guard is usable)."""
    return parse(text, where)[1]


def pattern_id(pattern: str) -> str:
    """What names a guard's pattern whatever its id (a person's undo blocks it under any name)."""
    import hashlib

    return "pattern:" + hashlib.sha256(pattern.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def table_header(line: str) -> str | None:
    """The table a line opens (`[id]`), or None."""
    return tomledit.header(line)


def table_text(guard: Guard) -> dict[str, str | None]:
    """The keys of a guard as tomledit writes them (one-line strings; None: no such key)."""
    return {
        "tool": guard.shown_tool(),
        "pattern": guard.pattern,
        "project": guard.project,
        "action": guard.action,
        "lesson": guard.lesson,
        "message": guard.message,
    }


def set_action(text: str, guard_id: str, action: str) -> str:
    """`text` with one guard's action changed; every other byte kept (tomledit), checked after."""
    if action not in ACTIONS:
        raise GuardProblem(f"action {action!r} is not one of {', '.join(ACTIONS)}")
    after = tomledit.set_keys(text, guard_id, {"action": action})
    tomledit.checked(text, after, guard_id, {"action": action})
    return after


def with_guard(text: str, guard: Guard) -> str:
    """`text` with `guard` written (a new table appended, or its keys set); every other byte kept."""
    if not isinstance(guard.tool, str):
        raise GuardProblem("a guard written by evolve names one tool")
    values = table_text(guard)
    after = tomledit.set_keys(text, guard.id, values)
    tomledit.checked(text, after, guard.id, values)
    return after


def without_guard(text: str, guard_id: str) -> str:
    """`text` without `guard_id`'s table (its header, keys and the comments inside it)."""
    return tomledit.remove_table(text, guard_id)
