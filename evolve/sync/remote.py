"""Talking to the git server: which URLs evolve accepts, how they are shown, and the network calls.

Credentials are git's business (credential helpers, ssh agents): a URL carrying a password
(or a token where a user name goes, or in its query or fragment, percent-encoded or not) is
refused, and a URL's user name and any secret in it are never printed — not even inside
git's own error messages. Every network command runs with an allow-list of
transports (no `ext::`, no `fd::`), fsck of every object received, no tags, no automatic gc,
and a time limit; a server that is a local folder runs its receive side with its hooks
switched off, since those would run on this machine. Failures are sorted into transient
(offline, the server away: tried again later) and the rest (the person must act).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from evolve.errors import UserError
from evolve.store.git import GitError, git
from evolve.store.repo import Repo

REMOTE = "origin"
FETCHED = "refs/evolve/fetched/"  # the server's branches as the last fetch saw them
TIMEOUT_S = 120.0  # a server that stops answering: the watcher cannot wait on it for long
TRANSPORTS = ("file", "git", "ssh", "http", "https")
BEHIND = ("fetch first", "non-fast-forward", "stale")  # a push refused because the server moved
SCHEMES = ("ssh", "git+ssh", "ssh+git", "git", "http", "https", "file")
NETWORK = (
    *("-c", "protocol.allow=never"),
    *(
        arg
        for name in ("file", "git", "ssh", "http", "https")
        for arg in ("-c", f"protocol.{name}.allow=always")
    ),
    *("-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true"),
    *("-c", "gc.auto=0", "-c", "maintenance.auto=false"),
    *("-c", "http.lowSpeedLimit=1", "-c", "http.lowSpeedTime=60"),
)
# A server that is a folder runs its side here: none of its hooks or commands may run.
SAFE_SIDE = "git -c core.hooksPath=/dev/null -c core.alternateRefsCommand=true"
LOCAL_SIDES = {"fetch": "--upload-pack", "clone": "--upload-pack", "push": "--receive-pack"}
# What sits where a user name goes and is a token: a forge's prefix, a hex digest, a long random word
# (judged without its separators: `deploy-bot-01` or `Anna-Maria.Smith` are names, made of words).
FORGE_PREFIXES = (
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),  # GitHub
    *("glpat-", "gldt-", "glptt-", "gloas-", "glrt-"),  # GitLab
)
TOKEN_PREFIXES = (
    *FORGE_PREFIXES,
    *("x-access-token", "x-token-auth", "oauth2", "oauth-basic"),  # a token's stand-in user
)
_HEX_TOKEN = re.compile(r"[0-9a-fA-F]{32,}")
_SEPARATORS = re.compile(r"[-._~]+")
_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+|[0-9]{1,6}|[a-z]+[0-9]{1,4}")  # a part of a name
_RUN = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|.")  # a word's runs: words, capitals, digits
_RANDOM_MIN = 20  # characters, separators left out: shorter words are names whatever they mix
_QUERY_VALUE = re.compile(r"([?&#;][^=&#;\s'\"]{0,100}=)([^&#;\s'\"]+)")  # `?key=value`, `&key=value`
_TRANSPORT = re.compile(r"[A-Za-z0-9][A-Za-z0-9+.-]*::")  # git's `<transport>::<address>`
_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s'\"]+@")
# scp-like `user@host:path` (a user may hold ':' — `alice:token@host:path`; a host may be `[::1]`)
_SCP_USER = re.compile(r"(^|[\s'\"(])[^\s@/'\"(]+@(?=\[[^\]\s/@]*\]:|[^\s/:@\[]+:)")
_TRANSIENT = (
    "could not resolve host",
    "unable to connect",
    "connection refused",
    "connection reset",
    "connection timed out",
    "timed out",
    "network is unreachable",
    "no route to host",
    "the remote end hung up",
    "early eof",
    "unexpected disconnect",
    "broken pipe",
    "failed to connect",
    "couldn't connect",
    "could not connect",
    "temporary failure",
    "operation too slow",
    "rpc failed",
    "the requested url returned error: 5",
    "remote end hung up",
    "send-pack: unexpected",
    "read error",
)


class Offline(UserError):
    """The server cannot be reached now (transient): nothing changed, the next sync tries again."""


def redact(text: str) -> str:
    """`text` with every URL's user name (and anything else before '@') replaced by ***.

    And every secret redacted (a token in a query, `?access_token=…`), percent-encoded too, and
    every query or fragment value that mixes letters and digits shown as ***:
    a text that holds one only once decoded is shown decoded, with it redacted. A local path
    (no scheme, user part, query, fragment or escape) is shown as it is, without loading the
    rules: a sync with nothing to do stays light.
    """
    if not any(mark in text for mark in ("://", "@", "?", "#", "%")):
        return text
    from evolve.transcripts.redact import find_secrets  # rules load on first use
    from evolve.transcripts.redact import redact as hide

    shown = _SCP_USER.sub(r"\1***@", _USERINFO.sub(r"\1***@", hide(text)))
    shown = _QUERY_VALUE.sub(_hidden_value, shown)
    return hide(unquote(shown)) if "%" in shown and find_secrets(unquote(shown)) else shown


def _hidden_value(match: re.Match[str]) -> str:
    """A query's or fragment's value as shown: *** when it mixes letters and digits (a credential's)."""
    from evolve.transcripts.redact import MARK, memorable, strip_invisible

    value = match.group(2)
    hidden = memorable(strip_invisible(unquote(value))) and not value.startswith(MARK)
    return match.group(1) + ("***" if hidden else value)


def check_url(raw: str, cwd: Path | None = None) -> str:
    """The URL as evolve stores it (a local path made absolute); UserError names what is wrong.

    The URL is shown redacted (`redact`) only in a refusal: a sync checks its URL every time,
    and one that holds no user part, query or fragment is judged without loading a secret rule.
    """
    url = raw.strip()
    if not url:
        raise UserError("the remote URL is empty; give the URL of a git repository")
    try:
        return _checked(url, cwd)
    except _Refusal as refusal:
        raise UserError(refusal.say(redact(url))) from None


class _Refusal(Exception):
    """Why a URL is refused, worded once the URL is shown redacted: `say(shown)`."""

    def __init__(self, say: Callable[[str], str]) -> None:
        super().__init__()
        self.say = say


def _checked(url: str, cwd: Path | None) -> str:
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise _Refusal(lambda shown: f"{shown!r} holds spaces or control characters; give a plain git URL")
    if url.startswith("-"):
        raise _Refusal(
            lambda shown: f"{shown!r} starts with '-' (git would read it as an option); give a git URL"
        )
    if transport := _TRANSPORT.match(url):  # as git reads it: a helper's name, then '::'
        name = transport.group()[:-2]
        raise _Refusal(
            lambda shown: (
                f"{shown!r}: the transport {name!r}:: is not allowed "
                "(evolve talks ssh, https, http, git:// and local paths)"
            )
        )
    scheme, sep, _ = url.partition("://")
    if sep:
        return _check_scheme_url(url, scheme.lower())
    colon, slash = url.find(":"), url.find("/")
    if colon > 0 and (slash < 0 or colon < slash):  # scp-like: [user@]host:path
        user, host = _scp_parts(url)
        if (user and (_is_secret(user) or ":" in unquote(user))) or _holds_secret(url):
            raise _Refusal(_credential)
        if not host or host.startswith("-"):
            raise _Refusal(lambda shown: f"{shown!r}: the host may not be empty or start with '-'")
        return url
    path = Path(url).expanduser()
    return str(path if path.is_absolute() else ((cwd or Path.cwd()) / path).resolve())


def _scp_parts(url: str) -> tuple[str, str]:
    """(user, host) of an scp-like `[user@]host:path`.

    The host ends at a ':' after the last '@' followed by one (`alice:token@host:path` is the
    user `alice:token`, not the host `alice`); a bracketed host (`[::1]`) is kept whole.
    """
    head = url.split("/", 1)[0]
    at = len(head)
    while (at := head.rfind("@", 0, at)) >= 0:
        rest = head[at + 1 :]
        host = rest[: rest.find("]") + 1] if rest.startswith("[") and "]" in rest else rest.split(":", 1)[0]
        if rest[len(host) : len(host) + 1] == ":":
            return url[:at], host
    host = head[: head.find("]") + 1] if head.startswith("[") and "]" in head else head.split(":", 1)[0]
    return "", host


def _check_scheme_url(url: str, scheme: str) -> str:
    if scheme not in SCHEMES:
        raise _Refusal(
            lambda shown: (
                f"{shown!r}: {scheme}:// is not allowed (evolve talks ssh, https, http, git://, file://)"
            )
        )
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        password = parts.password
    except ValueError as exc:
        why = str(exc)
        raise _Refusal(lambda shown: f"{shown!r} is not a valid URL ({why})") from None
    user = unquote(parts.username or "")  # `%3A` is a colon to the server: a password all the same
    if password is not None or ":" in user or (user and _is_secret(user)):
        raise _Refusal(_credential)
    if _holds_secret(url) or _credential_in_query(parts.query, parts.fragment):
        raise _Refusal(_credential)
    if scheme != "file" and (not host or host.startswith("-")):
        raise _Refusal(lambda shown: f"{shown!r}: the host may not be empty or start with '-'")
    return url


def _holds_secret(url: str) -> bool:
    """Whether a forge's token is anywhere in the URL (path and port too), percent-decoded.

    Judged without loading a secret rule unless a forge's prefix is there: a sync checks its
    URL every time.
    """
    decoded = unquote(url)
    if not any(prefix in decoded for prefix in FORGE_PREFIXES):
        return False
    from evolve.transcripts.redact import find_secrets

    return bool(find_secrets(decoded))


def _credential_in_query(*parts: str) -> bool:
    """Whether a query or fragment value is a credential.

    No git host needs a query: a value mixing letters and digits is a credential's. Judged
    without loading a secret rule when there is no value.
    """
    values = [value for part in parts if part for _key, value in parse_qsl(part)]
    if not values:
        return False
    from evolve.transcripts.redact import memorable, strip_invisible

    return any(_is_secret(value) or memorable(strip_invisible(value)) for value in values)


def _is_secret(user: str) -> bool:
    """Whether a URL's user name is a token: a known prefix, a long hex digest or random word."""
    lowered = user.lower()
    if lowered.startswith(TOKEN_PREFIXES) or _HEX_TOKEN.fullmatch(user) or _holds_secret(user):
        return True
    parts = [part for part in _SEPARATORS.split(user) if part]
    if len(parts) > 1 and all(_WORD.fullmatch(part) for part in parts):
        return False  # words joined by '-', '.' or '_': a name (`jenkins-build-agent-01`)
    return _random_looking("".join(parts))


def _random_looking(word: str) -> bool:
    """Whether a long word (separators left out) is random rather than words run together.

    It mixes kinds of characters, spreads over many of them (entropy) and is no run of words:
    a name's capitals start its words (`AnnaMariaSmith`), its digits come in a place or two
    (`buildAgent01`); a token's are everywhere, in short runs.
    """
    if len(word) < _RANDOM_MIN:
        return False
    kinds = sum(any(test(ch) for ch in word) for test in (str.isdigit, str.islower, str.isupper))
    entropy = -sum(n / len(word) * math.log2(n / len(word)) for n in Counter(word).values())
    if kinds < 2 or entropy < 3.5:
        return False
    runs = _RUN.findall(word)
    in_words = sum(len(run) for run in runs if len(run) >= 3 and not run.isdigit())
    digit_runs = sum(run.isdigit() for run in runs)
    return len(runs) * 3 > len(word) or digit_runs >= 3 or in_words * 4 < len(word) * 3


def _credential(shown: str) -> str:
    return (
        f"{shown}: the URL carries a password or token; evolve never stores credentials — give the URL "
        "without it and let git's credential helper or your ssh agent provide it"
    )


@dataclass
class Pushed:
    """What a push did: the refs the server took, and why it refused the others."""

    ok: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # ref → reason (git's words)

    @property
    def behind(self) -> bool:
        """The server moved since the fetch (someone pushed first): fetch, integrate, try again."""
        return any(
            word in why
            for why in self.rejected.values()
            for word in ("fetch first", "non-fast-forward", "stale")
        )


def checked_reach(repo: Repo, url: str) -> str:
    """`url` checked (`check_url`), once every URL git fetches from and pushes to passes too.

    `local_side` keeps a folder server's hooks off as `url` says; a push URL set by hand
    (`git remote set-url --push`) or an insteadOf / pushInsteadOf rewrite has git reach
    another server: a UserError when that one is a folder and `url` is not, or the reverse.
    """
    checked = check_url(url)
    fetched = repo.text("remote", "get-url", REMOTE).splitlines()
    pushed = repo.text("remote", "get-url", "--push", "--all", REMOTE).splitlines()
    for reached in (*fetched, *pushed):
        if _is_folder(check_url(reached)) != _is_folder(checked):
            raise UserError(
                f"git would reach {redact(reached)!r}, not {redact(url)!r} "
                "(a push URL or an insteadOf rewrite set by hand)"
            )
    return checked


def _is_folder(url: str) -> bool:
    return url.startswith(("/", "file://"))


def local_side(command: str, url: str) -> list[str]:
    """`--upload-pack` / `--receive-pack` options that keep a folder server's hooks and commands off."""
    if not _is_folder(url):
        return []
    program = "receive-pack" if command == "push" else "upload-pack"
    return [LOCAL_SIDES[command], f"{SAFE_SIDE} {program}"]


def failure(exc: GitError, what: str) -> UserError:
    """A failed network command as one line: Offline when it is worth trying again later."""
    text = redact(exc.stderr)
    lines = [line.removeprefix("fatal: ").strip() for line in text.splitlines() if line.strip()]
    ended = f"git was stopped by signal {-exc.code}" if exc.code < 0 else f"git exited with {exc.code}"
    reason = "; ".join(lines[-2:])[:300] or ended
    lowered = text.lower()
    if any(word in lowered for word in _TRANSIENT) or exc.timed_out:
        return Offline(f"cannot reach the server to {what} ({reason}); evolve tries again later")
    return UserError(f"could not {what} ({reason})")


def fetch(repo: Repo, url: str, machine: str = "") -> None:
    """Fetch the server's branches into refs/evolve/fetched/ (not other machines' `machine/`).

    With `machine`: main, `proposals/*` and that machine's own `machine/<machine>*` branches
    (so a push to one is leased on what the server really holds there); without, every
    branch but `machine/*`. A failure is one line (`failure`): Offline when worth trying later.
    """
    if machine:  # globs: a server without one of them (an empty one) is no error
        names = ("main", "proposals/", f"machine/{machine}")
        wanted = [f"+refs/heads/{name}*:{FETCHED}{name}*" for name in names]
    else:
        wanted = [f"+refs/heads/*:{FETCHED}*", "^refs/heads/machine/*"]
    try:
        repo.git(
            *NETWORK,
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            *local_side("fetch", url),
            REMOTE,
            *wanted,
            timeout=TIMEOUT_S,
        )
    except GitError as exc:
        raise failure(exc, "fetch") from None


def push(repo: Repo, url: str, updates: list[tuple[str, str | None, str | None]]) -> Pushed:
    """Push (branch, new sha or None to delete, what the server must hold now or None: absent).

    Every update is leased on the server's value, so nothing anyone pushed is overwritten;
    atomic when the server can (all or nothing), one by one otherwise.
    """
    base = ["push", "--porcelain", *local_side("push", url)]
    leases = [f"--force-with-lease=refs/heads/{branch}:{old or ''}" for branch, _new, old in updates]
    specs = [f"{new or ''}:refs/heads/{branch}" for branch, new, _old in updates]
    try:
        out = repo.git(*NETWORK, *base, "--atomic", *leases, REMOTE, *specs, timeout=TIMEOUT_S)
    except GitError as exc:
        if "does not support --atomic" in exc.stderr:
            out = _push_each(repo, base, leases, specs)
        elif _porcelain(exc.stderr + "\n" + exc.stdout).rejected:
            return _porcelain(exc.stderr + "\n" + exc.stdout)
        else:
            raise failure(exc, "push") from None
    return _porcelain(out.decode("utf-8", "replace"))


def _push_each(repo: Repo, base: list[str], leases: list[str], specs: list[str]) -> bytes:
    out = b""
    for lease, spec in zip(leases, specs, strict=True):
        try:
            out += repo.git(*NETWORK, *base, lease, REMOTE, spec, timeout=TIMEOUT_S)
        except GitError as exc:
            if not _porcelain(exc.stdout).rejected:
                raise failure(exc, "push") from None
            out += exc.stdout.encode()
    return out


def _porcelain(text: str) -> Pushed:
    """`git push --porcelain` lines: flag, from:to, summary (and the reason in brackets)."""
    result = Pushed()
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        ref = parts[1].rpartition(":")[2].removeprefix("refs/heads/")
        if parts[0] == "!":
            result.rejected[ref] = parts[2]
        else:
            result.ok.append(ref)
    return result


def clone(url: str, target: Path) -> None:
    """A bare-bones clone of `url` into `target` (no checkout, no template hooks, no tags)."""
    try:
        git(
            target.parent,
            *NETWORK,
            "clone",
            "--quiet",
            "--no-checkout",
            "--no-tags",
            "--template=",
            *local_side("clone", url),
            "--origin",
            REMOTE,
            "--",
            url,
            str(target),
            timeout=TIMEOUT_S,
        )
    except GitError as exc:
        raise failure(exc, "clone") from None
