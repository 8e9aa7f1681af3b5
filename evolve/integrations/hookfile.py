"""What installing into any harness shares: its JSON hook file and evolve's entries in it.

A harness keeps its hooks in a person's JSON file (Claude Code's settings, Codex's
hooks.json) of the same shape: `{"hooks": {EVENT: [{"matcher": …, "hooks": [{"type":
"command", "command": …, "timeout": …}]}]}}`. Each write keeps every other key and hook,
backs the old file up under the home and is skipped when nothing changes; uninstall gives
back the original bytes when nothing else changed since. evolve's commands run
`evolve.hookmain` with `--home`: that is how its own entries are recognised. They run
evolve's interpreter isolated (`-I`, evolve.launch): nothing of the session's folder or of
the variables a project sets runs in a hook.
"""

from __future__ import annotations

import copy
import json
import shlex
import time
from collections.abc import Callable
from pathlib import Path

from evolve import launch
from evolve.errors import UserError
from evolve.home import Home, moved_here_from
from evolve.regular import NotRegular, TooLarge, read_regular
from evolve.store.files import atomic_write
from evolve.workspace import links

SETTINGS_CAP = 8 << 20  # a settings file is kilobytes; the session's hooks read no more (hookio.STDIN_CAP)

TYPE_CHECKING = False  # typing's own flag without importing typing
if TYPE_CHECKING:
    pass

MARK = "evolve.hookmain"

# (harness event, matcher or None, the command, timeout in seconds)
Entry = tuple[str, str | None, str, int]
Ours = Callable[[object], bool]


def hook_command(python: str, harness: str, event: str, home: Home, *extra: str) -> str:
    """The command a hook entry runs: evolve's interpreter, isolated, the hook entry point."""
    return shlex.join(launch.argv(python, launch.HOOK, harness, event, "--home", str(home.root), *extra))


def guard_command(python: str, harness: str, home: Home, files: str, *extra: str) -> str:
    """PreToolUse's command: a POSIX-sh launcher that starts Python only when there are guards.

    Every tool call runs it, so without a guard it costs no interpreter: it reads `files`
    (a shell word, a glob for Codex) for a line starting with `[` (a TOML table: a guard; after
    a byte-order mark too) and
    only then runs the hook, isolated like every other. The file is read on fd 9 (the hook's
    stdin is the payload); whatever happens, the shell exits 0 (exit 2 would block the call).
    """
    hook = hook_command(python, harness, "pre-tool-use", home, *extra)
    return (
        f'(for f in {files}; do while read -r l <&9 || [ -n "$l" ]; do '
        f"case $l in '['*|'\ufeff['*) exec {hook} ;; esac; "
        f'done 9<"$f"; done) 2>/dev/null; exit 0'
    )


def python_of(command: str) -> str:
    """The interpreter one of evolve's hook commands runs (the guard launcher's too)."""
    argv = shlex.split(command)
    return argv[argv.index("exec") + 1] if "exec" in argv else argv[0]


def owner(command: object) -> tuple[str | None, str | None] | None:
    """(home, agent) of one of evolve's hook commands; None for anyone else's."""
    if not isinstance(command, str) or MARK not in command:
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    found: dict[str, str] = {}
    for flag, value in zip(argv, argv[1:], strict=False):
        if flag in ("--home", "--agent"):
            found.setdefault(flag, value)
    return found.get("--home"), found.get("--agent")


def names_home(command: object, home: Home, agent: str | None) -> bool:
    """Whether a hook command is `agent`'s of `home`, or of the place `home` was moved from.

    The install records moved with the home, so entries naming an old path where no home
    is any more are its own (rewritten, or removed by uninstall); a copy's original keeps its own,
    and so does another home moved elsewhere (`home.moved_here_from`).
    """
    found = owner(command)
    if found is None:
        return _garbled(command, home, agent)
    if found[1] != agent:
        return False
    return found[0] == str(home.root) or moved_here_from(home.root, found[0], agent)


def unreadable(command: object) -> bool:
    """Whether a command naming evolve's hook entry point cannot be split into words (a quote deleted)."""
    if not isinstance(command, str) or MARK not in command:
        return False
    try:
        shlex.split(command)
    except ValueError:
        return True
    return False


def _garbled(command: object, home: Home, agent: str | None) -> bool:
    """Whether an `unreadable` command is still recognisably `agent`'s of `home`.

    A person who broke a quote left it naming the hook entry point, this home and the agent:
    it is evolve's entry (doctor says it cannot run; `--force` replaces it, not adds beside it).
    """
    if not unreadable(command) or not _says_home(str(command), home):
        return False
    words = str(command).split()
    agents = {name.strip("'\"") for flag, name in zip(words, words[1:], strict=False) if flag == "--agent"}
    return agents == {agent} if agent else not agents


def _says_home(command: str, home: Home) -> bool:
    """Whether `command` holds `--home HOME` as `hook_command` writes it, the path ending there.

    Not a bare substring: `~/.evolve` is inside `~/.evolve-work`'s command too.
    """
    written = f"--home {shlex.quote(str(home.root))}"
    return any(rest[:1] in ("", " ", "\t") for rest in command.split(written)[1:])


def remove_entries(settings: dict, ours: Ours) -> dict:
    """A copy without the hooks `ours` recognises; containers only they filled go too."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(ours(h) for h in inner):
                rest = [h for h in inner if not ours(h)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            kept.append(group)
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del result["hooks"]
    return result


def entries_of(settings: dict, ours: Ours) -> list:
    """(event, matcher, hook) of each hook `ours` recognises, in order (to compare two versions)."""
    found = settings.get("hooks")
    hooks: dict = found if isinstance(found, dict) else {}
    return [
        (event, group.get("matcher"), hook)
        for event, groups in hooks.items()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for hook in group["hooks"]
        if ours(hook)
    ]


def add_entries(settings: dict, ours: Ours, entries: list[Entry]) -> dict:
    """A copy with `entries`, each its own matcher group (replacing what `ours` recognises)."""
    result = remove_entries(settings, ours)
    if not entries:
        return result
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UserError('the hook file\'s "hooks" is not an object; fix it, then install again')
    for event, matcher, command, timeout in entries:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise UserError(f"the hook file's hooks.{event} is not a list; fix it, then install again")
        group: dict = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        groups.append(group)
    return result


# -- a person's edits ------------------------------------------------------------------------
CHANGED, REMOVED, UNREADABLE = "changed", "removed", "unreadable"


def said(why: str) -> str:
    """How doctor and install tell what a person did to evolve's entry (`by_hand`'s values)."""
    if why == UNREADABLE:
        return "made unreadable by hand (its quotes do not pair: it cannot run)"
    return f"{why} by hand"


def wanted_entries(entries: list[Entry]) -> list[list]:
    """[event, matcher, hook] of each entry as evolve writes it: the install record keeps this form."""
    return [
        [event, matcher, {"type": "command", "command": command, "timeout": timeout}]
        for event, matcher, command, timeout in entries
    ]


def _looks_evolves(event: str, matcher: object, hook: dict, wanted: list[list], pythons: set[str]) -> bool:
    """An entry of an install that recorded nothing yet (older evolve): evolve's own only in evolve's shape.

    Its matcher and timeout, no key of the person's, and one of the interpreters evolve installed
    run first: a wrapped command (`nice …`), a raised timeout or a matcher are the person's.
    """
    want = next((w for w in wanted if w[0] == event), None)
    if want is None or matcher != want[1] or set(hook) != {"type", "command", "timeout"}:
        return False
    try:
        return hook["timeout"] == want[2]["timeout"] and python_of(hook["command"]) in pythons
    except (ValueError, IndexError):  # an unbalanced quote, an `exec` with nothing after it
        return False


def by_hand(settings: dict, ours: Ours, wanted: list[list], written: list | None, pythons: set[str]) -> dict:
    """{event: CHANGED, UNREADABLE or REMOVED}: evolve's entries a person edited or removed since written.

    `written` is what the install recorded writing (None: an older evolve's install recorded
    nothing; then an entry in evolve's shape is evolve's, and a missing one is not told apart
    from one a newer evolve adds). What it wrote for another home (a copy's records are its
    original's; a former place on a disk not mounted) is not this home's to call removed.
    """
    last = None
    if written is not None:
        last = {event: [matcher, hook] for event, matcher, hook in written if ours(hook)}
    found: dict[str, str] = {}
    for event, matcher, hook in entries_of(settings, ours):
        mine = (
            last.get(event) == [matcher, hook]
            if last is not None
            else _looks_evolves(event, matcher, hook, wanted, pythons)
        )
        if not mine:
            found[event] = UNREADABLE if unreadable(hook.get("command")) else CHANGED
    present = {event for event, _matcher, _hook in entries_of(settings, ours)}
    found.update({event: REMOVED for event in last or () if event not in present})
    return found


def wrote_here(written: list | None, ours: Ours) -> bool:
    """Whether evolve recorded writing an entry of this home (a copy's records are its original's)."""
    return any(ours(hook) for _event, _matcher, hook in written or ())


def refresh(  # noqa: PLR0913 - the file, what is evolve's, and what evolve knows of it
    settings: dict,
    ours: Ours,
    wanted: list[list],
    written: list | None,
    pythons: set[str],
    home: Home,
    force: bool,
) -> tuple[dict, dict]:
    """(a copy with evolve's entries in today's form, {event: why} of those left to the person).

    What a person changed or removed since evolve wrote it (`by_hand`) stays as they left it
    unless `force` (`evolve install --force`). Their part of an entry stays byte for byte, but
    not evolve's: the command evolve last wrote, found whole in it (a raised timeout, a `nice`
    before it), becomes today's, or it would run an older evolve's command forever (one not
    isolated, one naming a home since moved); else, after a move, the home's path where it
    stands as evolve wrote it (`follow_home`): an entry naming the old place runs against a
    home that is gone, and learning stops unseen.
    """
    left = {} if force else by_hand(settings, ours, wanted, written, pythons)
    present = [[event, matcher, hook] for event, matcher, hook in entries_of(settings, ours)]
    persons = [hook for event, _matcher, hook in present if event in left]
    current = [entry for entry in wanted if entry in present and entry[0] not in left]  # stay in place
    result = add_entries(
        settings,
        lambda hook: ours(hook) and hook not in persons and hook not in [h for _e, _m, h in current],
        [
            (e, m, h["command"], h["timeout"])
            for e, m, h in wanted
            if e not in left and [e, m, h] not in current
        ],
    )
    evolves = {event: hook["command"] for event, _matcher, hook in written or () if ours(hook)}
    todays = {event: hook["command"] for event, _matcher, hook in wanted}
    for event, _matcher, hook in entries_of(result, lambda hook: ours(hook) and hook in persons):
        before, now = evolves.get(event), todays.get(event)
        if before and now and before in hook["command"]:
            hook["command"] = hook["command"].replace(before, now)
        else:
            hook["command"] = follow_home(hook["command"], home)
    return result, left


def follow_home(command: str, home: Home) -> str:
    """`command` naming `home` where it names the place the home was moved from.

    The old path is found as evolve wrote it (`shlex.quote`): a plain word, which the new
    path quoted takes the place of; or, in quotes (a space, a quote, a letter beyond ASCII:
    macOS's default home), an opening quote and the path, which the new path opened the
    same way takes the place of, the rest of each word (`/agents/…'`) kept as it is.
    """
    named = (owner(command) or (None, None))[0]
    new = str(home.root)
    if named is None or named == new:
        return command
    import re

    if shlex.quote(named) == named:
        old, following, replacement = named, r"[/\s'\";)]|$", shlex.quote(new)
    else:
        old, following, replacement = _opened(named), "[/']", _opened(new)
    return re.sub(re.escape(old) + f"(?={following})", lambda _match: replacement, command)


def _opened(path: str) -> str:
    """`path` in single quotes not yet closed: how every word evolve quoted that begins with it begins."""
    return "'" + path.replace("'", "'\"'\"'")


# -- the file ----------------------------------------------------------------------------
def read(path: Path) -> tuple[bytes | None, dict]:
    """(the file's bytes or None when missing, its JSON object)."""
    try:
        raw = read_regular(path, SETTINGS_CAP)
    except FileNotFoundError:
        return None, {}
    except TooLarge as exc:  # a log, or a file that never ends: nothing is read further or written
        raise UserError(f"{exc}, more than a settings file holds; fix it, then run evolve again") from None
    except NotRegular:
        raise UserError(
            f"{path} is not a regular file (a FIFO or a device?); put the file back, then run evolve again"
        ) from None
    try:
        doc = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise UserError(f"{path}: not valid JSON ({exc}); fix it, then run evolve again") from None
    if not isinstance(doc, dict):
        raise UserError(f"{path}: expected a JSON object; fix it, then run evolve again")
    return raw, doc


def _indent(raw: bytes | None) -> int | str:
    for line in (raw or b"").decode("utf-8", "replace").split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def dumps(doc: dict, raw: bytes | None) -> bytes:
    """The document in the file's own indentation, with a final newline."""
    text = json.dumps(doc, indent=_indent(raw), ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def _backup(home: Home, harness: str, path: Path, raw: bytes) -> Path:
    folder = home.root / "backups" / harness
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    slug = "".join(c if c.isalnum() else "-" for c in str(path)).strip("-")[-120:]
    target = folder / f"{stamp}-{time.monotonic_ns() % 10**6:06d}-{slug}"
    target.write_bytes(raw)
    return target


def write(home: Home, harness: str, record: dict, path: Path, raw: bytes | None, new: bytes | None) -> None:
    """Replace the file (None deletes it), backing up what was there into `record`.

    Never past the bound `read` keeps to: evolve could not read such a file back (nor the
    session's hooks), so install, doctor and uninstall would each refuse it after.
    """
    if new is not None and len(new) > SETTINGS_CAP:
        raise UserError(
            f"{path} would be over {SETTINGS_CAP:,} bytes with evolve's entries, more than a settings "
            "file holds; nothing was written: make it smaller, then run evolve again"
        )
    if raw is not None:
        backup = _backup(home, harness, path, raw)
        record.setdefault("backup", str(backup))  # the file as it was before the first install
    record.setdefault("settings_created", raw is None)
    if new is None:
        path.unlink(missing_ok=True)
        return
    links.make_dirs(path.parent, record)
    atomic_write(path, new)


def restored(record: dict, cleaned: dict, raw: bytes | None) -> bytes | None:
    """The file's new bytes without evolve's entries: the original ones when nothing else changed."""
    backup = record.get("backup")
    if backup:
        try:
            before = read_regular(backup)
            if (json.loads(before) if before.strip() else {}) == cleaned:
                return before
        except (OSError, ValueError):
            pass
    if record.get("settings_created") and cleaned == {}:
        return None
    return dumps(cleaned, raw)
