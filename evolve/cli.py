"""The `evolve` command line: parse, call one command function, map errors to exit codes.

Exit codes: 0 ok · 1 user error (the message says what to do) · 2 usage error ·
3 internal error (a bug; traceback in <home>/logs/crash.log) · 75 busy, try again later ·
130 interrupted. Under `--json`, an error is one `{"error": …, "exit_code": …}` line on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from evolve.arguments import COMMANDS, build_parser, json_error, resolve, wants_json
from evolve.errors import (
    EXIT_BUG,
    EXIT_BUSY,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USER,
    Busy,
    EvolveError,
    UserError,
)
from evolve.home import Home

# Commands that write to an agent repository, an install or the home: before they run, what an
# older evolve installed is brought up to date (evolve.integrations.upgrade). doctor runs it too.
WRITING = frozenset(
    "init eval guard revert observe reflect accept reject unblock watch cycle model pause resume remove "
    "pin unpin restore prune install uninstall remote sync".split()
)


MODEL_CHOICES = ("backend", "model_name", "base_url", "key_env", "key_file")  # `evolve model` alone: reads


def run(argv: Sequence[str]) -> int:
    """Parse and dispatch; errors propagate (main maps them to exit codes)."""
    if "prompt" in argv[:3]:  # on the session-start hot path: no argparse
        code = _fast_prompt(list(argv))
        if code is not None:
            return code
    parser = build_parser(list(argv))
    namespace, extra = parser.parse_known_args(list(argv))
    if extra and namespace.command == "observe" and not any(e.startswith("-") for e in extra):
        namespace.paths += extra  # `evolve observe NAME --format generic FILE`
    elif extra:
        parser.commands[namespace.command].error(f"unrecognized arguments: {' '.join(extra)}")
    args = vars(namespace)
    command = args.pop("command")
    home = _checked_home(args.pop("home"))
    reading_only = (
        (command == "watch" and (args["status"] or args["print_service"]))
        or (command == "model" and all(args[k] is None for k in MODEL_CHOICES))
        or (command == "guard" and args["action"] is None)
    )
    if command in WRITING and not reading_only:
        if home.read_only():
            raise UserError(
                f"the evolve home is read-only: {home.root}; reading commands (status, skills, log, "
                f"report…) still work, `{command}` needs it writable"
            )
        _upgrade(home)
    elif command != "doctor":  # doctor checks it all, and says what it fixed
        _mend_agents_git(home)
    return resolve(COMMANDS[command][0])(home, **args)


def _checked_home(raw: str | None) -> Home:
    """The home, refused when it is given empty or is not a folder."""
    if raw is not None and not raw.strip():
        raise UserError("--home is empty; give the folder evolve keeps its state in")
    home = Home.resolve(raw)
    if home.root.exists() and not home.root.is_dir():
        raise UserError(
            f"the evolve home {home.root} is not a folder; point --home (or EVOLVE_HOME) at a folder"
        )
    return home


def _upgrade(home: Home) -> None:
    from evolve.integrations.upgrade import ensure_current

    for note in ensure_current(home):
        sys.stderr.write(f"evolve: {note}\n")


def _mend_agents_git(home: Home) -> None:
    from evolve.integrations.upgrade import mend_agents_git

    for note in mend_agents_git(home):
        sys.stderr.write(f"evolve: {note}\n")


def _fast_prompt(argv: list[str]) -> int | None:
    """`evolve [--home H] prompt NAME [--session ID] [--record] [--json]` without argparse; None: not sure."""
    args = list(argv)
    home = None
    if args[:1] == ["--home"] and len(args) > 1:
        home, args = args[1], args[2:]
    elif args and args[0].startswith("--home="):
        home, args = args[0].partition("=")[2], args[1:]
    if args[:1] != ["prompt"] or len(args) < 2 or args[1].startswith("-") or home == "":
        return None
    name, rest = args[1], args[2:]
    session, record, as_json = None, False, False
    while rest:
        item = rest.pop(0)
        if item == "--json":
            as_json = True
        elif item == "--record":
            record = True
        elif item == "--session" and rest and not rest[0].startswith("-"):
            session = rest.pop(0)
        elif item.startswith("--session=") and len(item) > len("--session="):
            session = item.partition("=")[2]
        else:
            return None
    from evolve.commands.prompt import prompt

    return prompt(Home.resolve(home), name, session=session, record=record, as_json=as_json)


def _home_arg(argv: Sequence[str]) -> str | None:
    """The `--home` given before the command (what every path, the crash log too, goes under)."""
    for index, arg in enumerate(argv):
        if arg == "--home" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--home="):
            return arg.partition("=")[2]
        if not arg.startswith("-"):
            return None  # the command: options after it are the command's
    return None


def _crash_log(exc: BaseException, argv: Sequence[str]) -> str:
    try:
        home = Home.resolve(_home_arg(argv))
        home.logs_dir.mkdir(parents=True, exist_ok=True)
        path = home.logs_dir / "crash.log"
        with path.open("a", encoding="utf-8") as handle:
            import traceback  # lazy: `evolve prompt` runs on every session start

            from evolve.transcripts.redact import redact  # an exception may quote a secret

            handle.write(redact("".join(traceback.format_exception(exc))) + "\n")
        return str(path)
    except Exception:
        return "(could not write the crash log)"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"] and argv[1:2] not in (["-h"], ["--help"]):
        from evolve.hookmain import main as hook_main  # agent hooks: no argparse, never a non-zero exit

        return hook_main(argv[1:])
    as_json = wants_json(argv)
    try:
        code = run(argv)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
        return code
    except BrokenPipeError:  # `evolve log | head`: the reader has what it wanted
        _silence_stdout()
        return EXIT_OK
    except Busy as exc:
        return _fail(f"busy: {exc}", EXIT_BUSY, as_json)
    except UserError as exc:
        return _fail(f"error: {exc}", EXIT_USER, as_json)
    except Exception as exc:
        damage = _damaged_repository(exc)
        if damage:
            return _fail(f"error: {damage}", EXIT_USER, as_json)
        if _read_only(exc):
            return _fail(
                f"error: the evolve home is read-only ({exc}); reading commands still work, this one "
                "needs it writable",
                EXIT_USER,
                as_json,
            )
        if not _disk_full(exc):
            return _bug(exc, argv, as_json)
        return _fail(
            f"error: no space left on the device, or it failed ({exc}); "
            "nothing was half-written — free some space and run the command again",
            EXIT_USER,
            as_json,
        )
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED, as_json)


def _damaged_repository(exc: Exception) -> str | None:
    """What to say when git failed for a reason of the person's (a damaged repository …), not evolve's bug."""
    cwd = getattr(exc, "cwd", None)
    if not isinstance(exc, EvolveError) or cwd is None:
        return None  # only a GitError carries where git ran; the git module is loaded only then
    from evolve.store.diagnosis import repository_problem

    problem = repository_problem(exc)
    return f"{cwd}: {problem}" if problem else None


def _fail(message: str, code: int, as_json: bool) -> int:
    """One line on stderr: `evolve: <message>`, or under --json `{"error": …, "exit_code": …}`."""
    if as_json:
        json_error(message.removeprefix("error: "), code)  # "error" is the key already
    else:
        sys.stderr.write(f"evolve: {message}\n")
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _disk_full(exc: BaseException) -> bool:
    """ENOSPC from the OS, SQLite's "disk is full", or git saying so (in any of its words)."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return any(
        words in text
        for words in ("disk is full", "no space left on device", "disk i/o error", "out of diskspace")
    )


def _read_only(exc: BaseException) -> bool:
    """EROFS from the OS, or SQLite refusing to write a database opened read-only."""
    import errno

    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return True
    text = str(exc).lower()
    return "readonly database" in text or "read-only file system" in text


def _bug(exc: BaseException, argv: Sequence[str], as_json: bool = False) -> int:
    log = _crash_log(exc, argv)
    if isinstance(exc, EvolveError):
        return _fail(f"error: {exc} (details in {log})", EXIT_BUG, as_json)
    return _fail(
        f"internal error: {type(exc).__name__}: {exc}; please report it with {log}", EXIT_BUG, as_json
    )


if __name__ == "__main__":
    sys.exit(main())
