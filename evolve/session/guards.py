"""Guards at the tool call: which guards a call meets, and what the harness is told.

What the PreToolUse hooks run (evolve.hookmain), and what a plugin's hook can run the same
way: `load(path, cache)` gives the usable guards of a guards.toml, `verdict(payload, guards)`
the harness's output for one call. The hot path pays only for what it uses: the parsed
guards come from a marshal cache keyed by the file's (mtime_ns, size, inode), so tomllib is
imported only when the file changed; a guard's pattern is compiled (through the one door,
`evolve.patterns`: linear time) only when a call of its tool comes, in its project, whose
command or path holds the text every match of it holds (`patterns.required_text`): most
calls meet no guard and import no pattern code at all.

What both harnesses honour (checked with the pinned CLIs: docs/guards.md): `deny` prints
`permissionDecision: "deny"` with the guards' messages as `permissionDecisionReason`
(the call does not run; the model reads the reason); `remind` prints `additionalContext`
(the call runs; the model reads the message).
"""

# pathlib costs more than this hot path may (as evolve.hookmain): os.path it is.
# ruff: noqa: PTH100, PTH103, PTH105, PTH108, PTH110, PTH111, PTH116, PTH118, PTH120, PTH123
import marshal
import os

TYPE_CHECKING = False  # typing's own flag without importing typing (the hot path)
if TYPE_CHECKING:
    from evolve.patterns import LinearPattern

CACHE_VERSION = 2
SHELL_TOOLS = ("Bash", "exec_command", "shell", "local_shell", "container.exec")
PATH_KEYS = ("file_path", "notebook_path", "path")
MAX_SUBJECT = 8 << 20  # the hook reads no more (hookio.STDIN_CAP): a command is matched whole
_compiled: dict = {}


def signature(path: str) -> tuple[int, int, int] | None:
    """What tells one version of the file from another; None when there is no file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def load(path: str, cache: str | None = None) -> tuple[list[tuple], list[str], bool]:
    """(the usable guards as rows, problems, parsed now) of the guards.toml at `path`.

    Rows are `Guard.row()` and the text every match holds: (id, tools, pattern, project,
    action, message, required), `off` ones left out, each project resolved. `cache` (a file
    path) keeps them between calls; `parsed now` tells the caller the problems are new (log
    them once). No file: no guards.
    """
    key = signature(path)
    if key is None:
        return [], [], False
    if cache is not None:
        try:
            with open(cache, "rb") as handle:
                version, cached_key, rows, problems = marshal.loads(handle.read())
            if version == CACHE_VERSION and tuple(cached_key) == key:
                return rows, problems, False
        except (OSError, ValueError, EOFError, TypeError):
            pass
    rows, problems = parse_file(path)
    if cache is not None:
        _write(cache, marshal.dumps((CACHE_VERSION, key, rows, problems)))
    return rows, problems, True


def parse_file(path: str) -> tuple[list[tuple], list[str]]:
    """The file read and checked (evolve.workspace.guards), as rows."""
    from evolve.patterns import required_text
    from evolve.regular import open_regular
    from evolve.workspace.guards import MAX_FILE, parse

    try:
        with open_regular(path, encoding="utf-8") as handle:  # a FIFO would hold every tool call
            text = handle.read(MAX_FILE + 1)  # one more: a longer file is refused, not cut
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{path} cannot be read ({exc}): no guard applies"]
    guards, problems = parse(text, path)
    rows = []
    for guard in guards:
        if guard.action == "off":
            continue
        row = guard.row() + (required_text(guard.pattern),)
        if guard.project is not None:
            row = row[:3] + (os.path.realpath(os.path.expanduser(guard.project)),) + row[4:]
        rows.append(row)
    return rows, problems


def _write(path: str, data: bytes) -> None:
    """Atomically (another hook may read it meanwhile); a cache that cannot be written is skipped."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def subject(tool: str, tool_input: object) -> str | None:
    """What a guard's pattern is matched on: a shell call's command, a file call's path."""
    if not isinstance(tool_input, dict):
        return None
    if tool in SHELL_TOOLS:
        found = tool_input.get("command", tool_input.get("cmd"))
        if isinstance(found, list):  # Codex's older `shell`: an argv
            found = " ".join(str(part) for part in found)
    else:
        found = next((tool_input[k] for k in PATH_KEYS if isinstance(tool_input.get(k), str)), None)
    return found[:MAX_SUBJECT] if isinstance(found, str) else None


def inside(cwd: str | None, project: str | None) -> bool:
    """Whether a session in `cwd` is in the guard's project (a guard with none applies everywhere)."""
    if project is None:
        return True
    if not cwd:
        return False
    where = os.path.realpath(cwd)
    return where == project or where.startswith(project.rstrip("/") + "/")


def _pattern(source: str) -> "LinearPattern":
    found = _compiled.get(source)
    if found is None:
        from evolve import patterns

        found = _compiled[source] = patterns.compile(source)
    return found


def fired(payload: dict, guards: list[tuple]) -> list[tuple]:
    """The guards a tool call meets, in file order."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        return []
    text = None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    hits = []
    for row in guards:
        if tool not in row[1] or not inside(cwd, row[3]):
            continue
        if text is None:
            text = subject(tool, payload.get("tool_input"))
            if text is None:
                return []
        if len(row) > 6 and row[6] not in text:
            continue  # the text every match holds is not there: no need to compile the pattern
        if _pattern(row[2]).matches(text):
            hits.append(row)
    return hits


def verdict(payload: dict, guards: list[tuple]) -> dict | None:
    """The PreToolUse output for one call (None: say nothing, the call goes ahead).

    A `deny` guard refuses the call with the deny guards' messages as the reason; else the
    `remind` guards' messages go into the model's context.
    """
    return output(fired(payload, guards))


def output(hits: list[tuple]) -> dict | None:
    """The harness's output for the guards a call met."""
    denied = [row[5] for row in hits if row[4] == "deny"]
    if denied:
        decision = {"permissionDecision": "deny", "permissionDecisionReason": "\n".join(denied)}
    else:
        reminded = [row[5] for row in hits if row[4] == "remind"]
        if not reminded:
            return None
        decision = {"additionalContext": "\n".join(reminded)}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}
