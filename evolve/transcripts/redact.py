"""Secrets and invisible characters: found, redacted, stripped or made visible.

Transcripts carry tool output (`.env` dumps, `aws configure`, key files) and tool inputs
(a config file written, `curl -d '{"password": …}'`) that must not reach a model provider,
and a model's answer may carry secrets or hidden characters that must not reach git.
Standard library only; the rules are read and compiled on first use.

Secrets are matched by the named rules of `data/secrets.toml` (vendor prefixes, PEM armour,
JWT structure, credentials in URLs and command lines), each tried only on text holding one
of its keywords, and, for generic `password=` / `token:` / `"secret": "…"` assignments
(JSON-escaped too), by a key name from that file plus a value that does not look like code
or a placeholder — so ordinary prose and code (git shas, UUIDs, `task-list`, `password:
str`) are not flagged.

Secrets are looked for in the text as it reads, not as it is spelt: the rules see it without
its invisible characters and with compatibility forms folded (NFKC: full-width `ｇｈｐ＿`,
mathematical letters, ligatures), so a token split by a zero-width space or typed in
full-width letters is found; the spans found are those of the text as given. A value once
found as a secret is redacted wherever it appears again: in the same text always, and in
the later texts of a scope (a bundle: `remembered()`; a run: the `known` its builder
passes), when it is long and varied enough (`memorable`) that an ordinary word never is.

Invisible characters flagged (`INVISIBLE`): zero-width (U+200B-U+200D, U+2060-U+2064,
U+FEFF anywhere, also first: a field of model output is never the start of a file), bidi
controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069), Unicode tags (U+E0000-U+E007F),
every other format character (category Cf: soft hyphen, U+180E, U+206A-U+206F,
U+FFF9-U+FFFB, hieroglyph/shorthand/musical format controls), and a few that are not Cf but
hide text the same way: control characters other than tab/LF/CR (ANSI escapes rewrite a
terminal: an escape sequence goes whole, so no `[1m` is left glued to a token), U+2028/U+2029,
lone surrogates (unwritable as UTF-8), variation selectors other than the emoji ones
(U+FE0E/U+FE0F; the rest smuggle data), the combining grapheme joiner, Mongolian free
variation selectors and Hangul fillers. Deliberately allowed: the visible
prepended number marks of Arabic/Syriac/Kaithi (U+0600-U+0605, U+06DD, U+070F,
U+0890-U+0891, U+08E2, U+110BD, U+110CD), which render as glyphs.
"""

from __future__ import annotations

import os
import re
import tomllib
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache

from evolve.transcripts.literals import Literals

Finding = tuple[str, int, int]  # (kind, start, end)
Known = dict[str, str]  # a secret value found → its kind
RULES_FILE = os.path.dirname(__file__) + "/data/secrets.toml"  # noqa: PTH120 - pathlib costs ms of import
MARK = "[REDACTED:"  # the start of what `redact` puts in a secret's place
MIN_CHARS = 8  # a shorter text holds no secret with the context that tells it is one
MEMORABLE_CHARS = 8  # the shortest secret value whose later copies are redacted too
KNOWN_CAP = 64  # values a scope remembers: each costs a search of every later text

INVISIBLE = (
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"  # control characters except \t \n \r
    "\u00ad\u034f\u061c\u115f\u1160\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ud800-\udfff\ufe00-\ufe0d\ufeff\uffa0\ufff9-\ufffb"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_PLACEHOLDER = re.compile(
    r"""(?ix)
    \$\{?[A-Za-z_][A-Za-z0-9_]*\}? | \$\(.*\) | %\(?\w+\)?[s%]? | \{\{.*\}\} | \{[A-Za-z_]\w*\}
    | <[^<>]*> | \[[^\[\]]*\] | [*xX.•…_-]+ | \.\.\.[\w-]* | [\w-]+\.\.\.
    | (?:your|my|example|sample|dummy|fake|placeholder|redacted|changeme)[A-Za-z_-]*  # MyS3cret is real
    | pass | passwd | pwd | user | username
    | none | null | nil | undefined | true | false | empty | required | optional | hidden | masked
    | str | string | int | integer | number | bool | boolean | text | secret | password | token
    """
)
_VARIABLE_NAME = re.compile(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
    r"|(?i:(?:[a-z0-9]+[_-])*(?:token|key|secret|password|passwd|passphrase)(?:[_-][a-z0-9]+)*)"
)
_SENTENCE = re.compile(r"[A-Za-z]+,?(?: [A-Za-z]+,?){2,}[.!?:]?")
_WORD = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+(?:_[A-Z]+)*")  # prose, or a placeholder: KEY, API_KEY


@dataclass(frozen=True)
class Rule:
    """One named secret format of data/secrets.toml."""

    kind: str
    pattern: re.Pattern[str]
    group: int
    keywords: tuple[str, ...]
    checks: tuple[str, ...]


@dataclass(frozen=True)
class Assignments:
    """The generic `key = value` rule: its pattern, key kinds and the keywords gating it.

    The pattern starts at the name a key ends in (`password`, `_KEY` …): searching for a
    literal is fast, and the rest of the key is read back from the text only for a match.
    """

    pattern: re.Pattern[str]
    kinds: dict[str, str]  # key suffix (lower case, `_` for `-`) → kind
    env: frozenset[str]  # the suffixes of environment variable names (upper case only)
    keywords: tuple[str, ...]


@cache
def _data() -> dict:
    with open(RULES_FILE, "rb") as handle:
        return tomllib.load(handle)


@cache
def rules() -> tuple[Rule, ...]:
    """The named rules, in file order (earlier ones win an overlap of equal extent)."""
    return tuple(
        Rule(
            entry["id"],
            re.compile(entry["regex"]),
            int(entry.get("group", 0)),
            tuple(entry.get("keywords", ())),
            tuple(entry.get("value", ())),
        )
        for entry in _data()["rule"]
    )


_KEY_PREFIX = re.compile(r"[A-Za-z0-9_.-]{0,40}\Z")
_ENV_PREFIX = re.compile(r"[A-Z][A-Z0-9_]{0,40}\Z")


@cache
def _assignments() -> Assignments:
    """`key = value`, `KEY=value`, `"key": "value"` (JSON-escaped once or twice too), `key: value`."""
    table = _data()["assignment"]
    kinds = {key.lower(): kind for key, kind in table["kinds"].items()}
    kinds |= {suffix.lower(): kind for suffix, kind in table["env_suffixes"].items()}
    longest_first = sorted(table["kinds"], key=len, reverse=True)
    names = "|".join(re.escape(k).replace("_", "[_-]?") for k in longest_first)
    env = "|".join(re.escape(k) for k in sorted(table["env_suffixes"], key=len, reverse=True))
    pattern = re.compile(
        rf"(?P<key>(?i:{names})|{env})(?P<kq>\\{{0,3}}[\"']?)"
        r"(?P<sep>[ \t]*(?:=>|=(?!=)|:(?![:=]))[ \t]*)"
        r"(?:(?P<q>\\{0,3}[\"'])(?P<quoted>(?:[^\"'\\\r\n]|\\[^\"'])*)(?P=q)|(?P<bare>[^\s\"'`\\]+))"
    )
    return Assignments(pattern, kinds, frozenset(table["env_suffixes"]), _assignment_keywords())


@cache
def _assignment_keywords() -> tuple[str, ...]:
    """The keywords gating the `key = value` rule: a key's spellings, then a quote, space or sign."""
    table = _data()["assignment"]
    spelled = {form for k in table["kinds"] for form in (k, k.replace("_", ""), k.replace("_", "-"))}
    spelled |= {suffix.lower() for suffix in table["env_suffixes"]}
    return tuple(sorted(word + after for word in spelled for after in "\"'\\ \t=:"))


def _bare_value_is_secret(value: str, sep: str, key: str, trailer: bool) -> bool:
    """A bare value is a secret unless it looks like code, a template or a type name."""
    if value[0] in "$%{<([=&|!" or any(c in value for c in "()[]{}"):
        return False
    identifier = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", value)
    if identifier and (trailer or value.lower() in key.lower()):
        return False  # `f(token=token)`, `login(password=pw, ...)`
    tight = sep in ("=", ":")  # no spaces: a .env line, a CLI flag, a URL query
    if identifier and not any(c.isdigit() for c in value) and not (sep == "=" and len(value) >= 8):
        return False  # `password: str`, `token = tokens`, `secret = os.environ`
    return len(value) >= (4 if tight else 6)


def _value_is_secret(kind: str, value: str, quoted: bool) -> bool:
    """Shape rules per kind: lexer tokens, env var names and masked values are not secrets."""
    if (
        len(value) < 4
        or "***" in value
        or _PLACEHOLDER.fullmatch(value.strip())
        or (quoted and _SENTENCE.fullmatch(value))
    ):
        return False
    if _VARIABLE_NAME.fullmatch(value) and not any(c.isdigit() for c in value):
        return False  # the name of a variable, not its value: "ANTHROPIC_API_KEY", "refresh_token"
    if kind != "password" and (" " in value or len(value) < 8):
        return False  # keys and tokens have no spaces and some length
    # a token or an env `_KEY` holds a digit or is long: `SORT_KEY=created_at` is code
    return kind not in ("token", "key") or len(value) >= 20 or any(c.isdigit() for c in value)


def _assignment_findings(text: str) -> list[Finding]:
    rule = _assignments()
    found = []
    for match in rule.pattern.finditer(text):
        suffix = match.group("key")
        before = text[max(0, match.start() - 41) : match.start()]
        if suffix in rule.env:
            prefix = _ENV_PREFIX.search(before)  # `X_KEY`: an upper-case variable name
            if prefix is None:
                continue
        else:
            prefix = _KEY_PREFIX.search(before)
        key = (prefix.group() if prefix else "") + suffix
        quoted = match.group("quoted")
        group = "quoted" if quoted is not None else "bare"
        value = match.group(group)
        if quoted is None:
            trailer = value[-1] in ",;)"
            value = value.rstrip(",;)")
            if not value or not _bare_value_is_secret(value, match.group("sep"), key, trailer):
                continue
        kind = rule.kinds[suffix.lower().replace("-", "_")]
        if _value_is_secret(kind, value, quoted is not None):
            start = match.start(group)
            found.append((kind, start, start + len(value)))
    return found


def _plausible(checks: tuple[str, ...], value: str) -> bool:
    """A rule's value checks: not a placeholder (`${TOKEN}`, `<pass>`), holds a digit."""
    if "not-placeholder" in checks and (_PLACEHOLDER.fullmatch(value) or value.startswith(MARK)):
        return False
    if "not-number" in checks and value.isdigit():
        return False
    if "not-word" in checks and _WORD.fullmatch(value):
        return False
    return "has-digit" not in checks or any(c.isdigit() for c in value)


@cache
def _keywords() -> Literals:
    """Every keyword of every rule, looked for together: most texts hold none.

    Read from the rules' file, not the compiled rules: a text holding none (a memo, most
    skills: the pre-commit hook's usual case) costs no rule's regex (~60 of them, ~50 ms).
    """
    named = [k for entry in _data()["rule"] for k in entry.get("keywords", ())]
    return Literals(named + list(_assignment_keywords()))


def _keywords_in(lowered: str) -> frozenset[str]:
    """The keywords `lowered` holds (none, for most texts): only the rules holding one are run."""
    return _keywords().present(lowered)


_SCOPE: ContextVar[Known | None] = ContextVar("evolve_known_secrets", default=None)


@contextmanager
def remembered() -> Iterator[Known]:
    """A scope (one bundle): a secret found in one text is redacted in every later one too."""
    known: Known = {}
    token = _SCOPE.set(known)
    try:
        yield known
    finally:
        _SCOPE.reset(token)


def memorable(value: str) -> bool:
    """Whether copies of a secret value are redacted too: long, and no plain word or number.

    It mixes two kinds of characters (lower, upper, digits, others): `Pg5ecretPassw0rdZ`
    and `correct-horse` are, `postgres` (a password, but also the name of the database
    everywhere around it) is not.
    """
    if len(value) < MEMORABLE_CHARS:
        return False
    kinds = (str.islower, str.isupper, str.isdigit)
    present = sum(any(test(c) for c in value) for test in kinds)
    return present + (not all(c.isalnum() for c in value)) >= 2


_CONTROLS = bytes([*range(9), 11, 12, *range(14, 32), 127])  # ASCII's invisible characters
# A terminal's escape sequence (CSI: colours, cursor moves; OSC: a hyperlink's hidden address;
# a charset switch, `tput sgr0`'s `\x1b(B`) goes whole, not only its ESC: `\x1b[1mghp_…`
# would leave `[1mghp_…`, a token no rule starts at.
ANSI = "\x1b(?:\\[[0-?]{0,32}[ -/]{0,8}[@-~]|\\][^\x07\x1b]{0,2048}(?:\x07|\x1b\\\\)|[!-/]{1,4}[0-~])"
_ANSI = re.compile(ANSI)
# runs of what is not printable ASCII, an escape sequence as one run
_UNUSUAL = re.compile(f"(?P<ansi>{ANSI})|[^\\t\\n\\r\\x20-\\x7e\\x1b]+|\x1b")
Moves = list[tuple[int, int, int]]  # (start in the view, index in the text, length in the view)


def _reading(text: str) -> tuple[str, str]:
    """(the text without its invisible characters, the text as the rules read it: folded too).

    `text` itself (the same object) when that changes nothing: ASCII without control
    characters (most text) or text already in that form.
    """
    stripped = strip_invisible(text)
    if stripped.isascii() or unicodedata.is_normalized("NFKC", stripped):
        return stripped, stripped
    return stripped, unicodedata.normalize("NFKC", stripped)


@cache
def _folded(char: str) -> str:
    return "" if _invisible().match(char) else unicodedata.normalize("NFKC", char)


def _view(text: str) -> tuple[str, Moves]:
    """`_reading` a character at a time, with each character that changed as one move.

    Only for a text whose reading holds a secret: its spans are found again here, where
    they can be told in the text's own offsets.
    """
    parts: list[str] = []
    moves: Moves = []
    done = size = 0  # characters of the text copied, of the view written
    for run in _UNUSUAL.finditer(text):
        chars = run.group()
        escape = run.group("ansi") is not None
        if not escape and not _invisible().search(chars) and unicodedata.is_normalized("NFKC", chars):
            continue
        for at, char in enumerate(chars, run.start()):
            folded = "" if escape else _folded(char)
            if folded == char:
                continue
            parts.append(text[done:at])
            size += at - done
            moves.append((size, at, len(folded)))
            parts.append(folded)
            size += len(folded)
            done = at + 1
    parts.append(text[done:])
    return "".join(parts), moves


def _in_text(moves: Moves, starts: list[int], start: int, end: int) -> tuple[int, int]:
    """The span of the text the view's span [start, end) was read from (whole characters)."""

    def origin(position: int) -> tuple[int, int]:
        i = bisect_right(starts, position) - 1
        if i < 0:
            return position, position + 1
        view_start, at, length = moves[i]
        if position < view_start + length:
            return at, at + 1
        at += 1 + position - view_start - length
        return at, at + 1

    return origin(start)[0], origin(end - 1)[1]


def _merged(candidates: list[tuple[int, int, int, str]]) -> list[Finding]:
    """(start, -end, priority, kind) candidates → non-overlapping findings in text order."""
    candidates.sort()
    found: list[Finding] = []
    last_end = -1
    for start, neg_end, _priority, kind in candidates:
        if start >= last_end:
            found.append((kind, start, -neg_end))
        elif -neg_end > last_end:  # a partial overlap: one span covers both, nothing leaks
            found[-1] = (found[-1][0], found[-1][1], -neg_end)
        last_end = max(last_end, -neg_end)
    return found


def _by_rules(text: str) -> list[tuple[int, int, int, str]]:
    present = _keywords_in(text.lower())
    if not present:
        return []
    candidates: list[tuple[int, int, int, str]] = []  # start, -end, priority, kind
    for priority, rule in enumerate(rules()):
        if present.isdisjoint(rule.keywords):
            continue
        for match in rule.pattern.finditer(text):
            start, end = match.span(rule.group)
            if end > start and _plausible(rule.checks, text[start:end]):
                candidates.append((start, -end, priority, rule.kind))
    if not present.isdisjoint(_assignments().keywords):
        for kind, start, end_ in _assignment_findings(text):
            candidates.append((start, -end_, 1000, kind))
    return candidates


def _find(view: str, known: Known | None) -> list[Finding]:
    """The secrets of a view: by the rules, then every copy of a value found or `known`."""
    if len(view) < MIN_CHARS:
        return []
    candidates = _by_rules(view)
    if not candidates and not known:
        return []
    found = _merged(candidates)
    values = {view[s:e]: kind for kind, s, e in found if memorable(view[s:e])}
    if known is not None:
        for value, kind in values.items():
            if len(known) < KNOWN_CAP:
                known.setdefault(value, kind)
        values = values | known
    copies = []
    for value, kind in values.items():
        at = view.find(value)
        while at >= 0:
            copies.append((at, -(at + len(value)), 2000, kind))
            at = view.find(value, at + len(value))
    return _merged(candidates + copies) if copies else found


def _scan(text: str, known: Known | None) -> tuple[list[Finding], str]:
    """The secrets of `text` (spans of `text` itself), and the text without invisible characters."""
    known = _SCOPE.get() if known is None else known
    stripped, reading = _reading(text)
    found = _find(reading, known)
    if reading is text or not found:
        return found, stripped
    view, moves = _view(text)
    starts = [move[0] for move in moves]
    spans = [(*_in_text(moves, starts, s, e), kind) for kind, s, e in _find(view, known)]
    return _merged([(s, -e, 0, kind) for s, e, kind in spans]), stripped


def find_secrets(text: str, known: Known | None = None) -> list[Finding]:
    """Non-overlapping (kind, start, end) spans of secrets, in text order.

    Overlapping matches are merged: the longest match at the earliest start names the kind.
    `known` (default: the open `remembered()` scope's) collects the values found, and
    every copy of one of its values is a secret too.
    """
    return _scan(text, known)[0]


def redact(text: str, known: Known | None = None) -> str:
    """The text without invisible characters, each secret replaced by `[REDACTED:<kind>]`.

    Assignment keys stay readable. Secrets are found in the text as it reads (`_view`), so
    stripping the invisible characters can never join a token back together.
    """
    findings, stripped = _scan(text, known)
    if not findings:
        return stripped
    parts, position = [], 0
    for kind, start, end in findings:
        parts += [text[position:start], f"{MARK}{kind}]"]
        position = end
    parts.append(text[position:])
    return "".join(parts) if stripped is text else strip_invisible("".join(parts))


def secret_warnings(text: str) -> list[str]:
    """One line per secret in a person's own text (a skill, the memo): where, and what kind.

    The text is left as the person wrote it; `doctor` and the pre-commit hook only warn.
    """
    return [
        f"line {text.count(chr(10), 0, start) + 1} holds what looks like a secret ({kind}); "
        "remove it if it should not be there: evolve redacts it from what it sends to a model, "
        "but leaves a person's words as written, and the agent reads them"
        for kind, start, _end in find_secrets(text)
    ]


@cache
def _invisible() -> re.Pattern[str]:
    return re.compile(f"[{INVISIBLE}]")


def _name(char: str) -> str:
    point = ord(char)
    label = unicodedata.name(char, "")
    if not label:
        category = unicodedata.category(char)
        label = {"Cc": "CONTROL", "Cs": "SURROGATE", "Cn": "UNASSIGNED"}.get(category, category)
        if 0xE0000 <= point <= 0xE007F:
            label = "TAG"
    return f"U+{point:04X} {label}"


def find_invisible(text: str) -> list[tuple[str, int]]:
    """(`U+200B ZERO WIDTH SPACE`, index) for each invisible character."""
    return [(_name(m.group()), m.start()) for m in _invisible().finditer(text)]


def strip_invisible(text: str) -> str:
    """The text without its invisible characters and escape sequences (`text` itself when none).

    ASCII text without control characters, most text, is told in C at memory speed.
    """
    if text.isascii() and len(text.encode().translate(None, _CONTROLS)) == len(text):
        return text
    return _invisible().sub("", _ANSI.sub("", text) if "\x1b" in text else text)


def make_visible(text: str) -> str:
    """Render each invisible character as `<U+200B>`, for a review diff."""
    return _invisible().sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
