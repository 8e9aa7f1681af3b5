"""What an agent's hook reads and writes: arguments, stdin's JSON, a spool line, stdout, the log.

The hook's cost is paid on every turn (evolve.hookmain), so this imports only what a bare
interpreter has loaded already (os, sys, time) and C modules (`_json`, select): a JSON value
is read with json's C scanner as soon as it is complete (stdin may stay open), a record is
encoded with its C encoder; a problem is a `Problem` (one line in the log), and `log` never
raises.
"""

# pathlib (with re, fnmatch, urllib) costs as much as the whole hook may: os.path it is.
# ruff: noqa: PTH100, PTH103, PTH105, PTH110, PTH111, PTH112, PTH116, PTH118
import os
import time

from evolve.regular import open_regular

STDIN_CAP = 8 << 20
STDIN_WAIT_S = 2.0
LOG_CAP = 1 << 20
MANIFESTS = (".claude-plugin/plugin.json", ".codex-plugin/plugin.json")  # where a plugin names itself
MANIFEST_CAP = 1 << 16


class Problem(Exception):
    """Something to log in one line (no traceback): a usage error, bad input, no agent."""


# -- arguments and input ---------------------------------------------------------------------
def parse_args(argv: list[str]) -> dict:
    """`claude-code|codex <event> [--home DIR] [--agent NAME] [--linked] [--plugin DIR]`, parsed by hand."""
    opts: dict = {"event": None, "home": None, "agent": None, "linked": False, "plugin": None}
    words: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        key, eq, value = arg.partition("=")
        if key in ("--home", "--agent", "--plugin"):
            if not eq:
                index += 1
                value = argv[index] if index < len(argv) else ""
            opts[key[2:]] = value
        elif arg == "--linked":
            opts["linked"] = True
        elif arg.startswith("-"):
            opts.setdefault("unknown", arg)
        else:
            words.append(arg)
        index += 1
    if len(words) > 1:
        opts["event"] = words[1]
    opts["harness"] = words[0] if words else None
    opts["words"] = words
    return opts


def plugin_name(root: str) -> str:
    """The agent a plugin folder holds: the `name` of its manifest (Claude Code's, else Codex's)."""
    for manifest in MANIFESTS:
        path = os.path.join(root, manifest)
        try:
            with open_regular(path) as handle:
                raw = handle.read(MANIFEST_CAP)
        except OSError:
            continue
        try:
            data = decode_json(raw, final=True)
        except Problem:
            raise Problem(
                f"{path} is not valid JSON; fix it or take it from the agent's git history"
            ) from None
        name = data.get("name") if isinstance(data, dict) else None
        if not valid_name(name):
            raise Problem(f"{path} names no agent ({name!r}); its name is the agent's")
        return name  # type: ignore[return-value]  # valid_name checked it is a str
    raise Problem(f"{root} holds no plugin manifest ({' or '.join(MANIFESTS)})")


def valid_name(name: object) -> bool:
    """evolve.names' rule (a-z, 0-9, single '-' inside, 1-64 chars), without `re`."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= 64
        and name[0] != "-"
        and name[-1] != "-"
        and "--" not in name
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in name)
    )


def resolve_home(explicit: str | None) -> str:
    if explicit and not os.environ.get("EVOLVE_FORBID_HOME"):
        return os.path.abspath(os.path.expanduser(explicit))
    from evolve.home import Home  # the default home and the tests' guard live there

    return str(Home.resolve(explicit).root)


def _scanner():
    import _json

    class Context:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {
            "NaN": float("nan"),
            "Infinity": float("inf"),
            "-Infinity": float("-inf"),
        }.__getitem__
        memo: dict = {}

    return _json.make_scanner(Context())  # type: ignore[arg-type]  # a duck-typed JSONDecoder


def decode_json(data: bytes, final: bool):
    """The JSON value at the start of `data`, or None while it is incomplete."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if final:
            raise Problem("stdin is not UTF-8") from None
        return None
    start = len(text) - len(text.lstrip(" \t\r\n\ufeff"))
    try:
        value, _end = _scanner()(text, start)
    # SystemError: before 3.12, the C scanner cannot raise its error while json.decoder is not
    # imported (the hook never imports it): an object cut short then fails this way.
    except (StopIteration, ValueError, SystemError):
        if final:
            raise Problem(f"stdin is not JSON: {text[:80]!r}") from None
        return None
    return value


def read_payload(fd: int = 0, cap: int = STDIN_CAP, wait_s: float = STDIN_WAIT_S) -> dict:
    """Exactly one JSON object from `fd`; returns as soon as it is complete (no EOF needed)."""
    import select

    buf = bytearray()
    deadline = time.monotonic() + wait_s
    while True:
        left = deadline - time.monotonic()
        try:
            ready = select.select([fd], [], [], max(0.0, left))[0]
        except (OSError, ValueError) as exc:
            raise Problem(f"cannot read stdin: {exc}") from None
        if not ready:
            raise Problem(f"no complete JSON value on stdin within {wait_s:g} s ({len(buf)} bytes)")
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > cap:
            raise Problem(f"stdin is over {cap} bytes")
        if buf.rstrip().endswith(b"}"):
            value = decode_json(bytes(buf), final=False)
            if value is not None:
                break
    if not buf.strip():
        raise Problem("stdin was empty")
    value = decode_json(bytes(buf), final=True)
    if not isinstance(value, dict):
        raise Problem(f"stdin holds a JSON {type(value).__name__}, not an object")
    return value


# -- output: spool, stdout, log ---------------------------------------------------------------
def json_encoder():
    """A JSON encoder (one object to one compact line) from json's C half, where there is one."""
    try:
        import _json

        def refuse(obj):
            raise TypeError(f"not JSON: {type(obj).__name__}")

        encode = _json.make_encoder(None, refuse, _json.encode_basestring, None, ":", ",", False, False, True)
        return lambda record: "".join(encode(record, 0))
    except (ImportError, TypeError):  # another interpreter: the pure-Python json
        import json

        return lambda record: json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def append_record(home: str, record: dict) -> None:
    """One line in the spool (`evolve.store.spool.write_line`), encoded without json's Python half."""
    from evolve.store import spool

    record.setdefault("at", time.time())
    data = (json_encoder()(record) + "\n").encode("utf-8", "replace")
    if len(data) > spool.MAX_LINE:
        raise Problem(f"a {record.get('event')} record of {len(data)} bytes is too long for the spool")
    spool.write_line(os.path.join(home, "spool"), data)


def write_stdout(text: str) -> None:
    data = text.encode("utf-8", "replace")
    try:
        while data:
            data = data[os.write(1, data) :]
    except OSError:
        pass  # Claude Code stopped listening: nothing to add to a session that is gone


def log(home: str | None, opts: dict, exc: BaseException) -> None:
    """One line (a traceback for bugs) in `<home>/logs/hooks.log`; never raises."""
    try:
        if home is None:
            home = resolve_home(None)
        if not os.path.isdir(home):  # moved away, or a teammate's plugin: a hook never makes a home
            if not opts.get("plugin"):
                os.write(
                    2, f"evolve: no evolve home at {home}; run `evolve doctor` where it is now\n".encode()
                )
            return
        folder = os.path.join(home, "logs")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "hooks.log")
        try:
            if os.stat(path).st_size > LOG_CAP:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        what = str(exc) if isinstance(exc, Problem) else f"{type(exc).__name__}: {exc}"
        harness, event, agent = opts.get("harness"), opts.get("event"), opts.get("agent")
        line = f"{when} pid {os.getpid()} {harness} {event} agent={agent}: {what}\n"
        if not isinstance(exc, Problem | SystemExit | KeyboardInterrupt):
            import traceback

            line += "".join(traceback.format_exception(exc))
        from evolve.transcripts.redact import redact  # an exception may quote a transcript's secret

        # a FIFO there with no reader: refused at once (ENXIO), never waited on
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o600)
        try:
            os.write(fd, redact(line).encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except BaseException:  # noqa: S110 - logging must never be why a hook fails
        pass
