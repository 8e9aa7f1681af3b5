"""Secrets and invisible characters: found, redacted, stripped or made visible.

Transcripts carry tool output (`.env` dumps, `aws configure`, key files) that must not reach
a model provider, and a model's answer may carry secrets or hidden characters that must not
reach git. Standard library only; each pattern is compiled once.

Secrets are matched by shape (vendor prefixes, PEM armour, JWT structure) and, for generic
`password=`/`token:` assignments, by the key name plus a value that does not look like code
or a placeholder — so ordinary prose and code (git shas, UUIDs, `task-list`, `password: str`)
are not flagged.

Invisible characters flagged (`INVISIBLE`): zero-width (U+200B-U+200D, U+2060-U+2064,
U+FEFF anywhere, also first: a field of model output is never the start of a file), bidi
controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069), Unicode tags (U+E0000-U+E007F),
every other format character (category Cf: soft hyphen, U+180E, U+206A-U+206F,
U+FFF9-U+FFFB, hieroglyph/shorthand/musical format controls), and a few that are not Cf but
hide text the same way: control characters other than tab/LF/CR (ANSI escapes rewrite a
terminal), U+2028/U+2029, lone surrogates (unwritable as UTF-8), variation selectors other
than the emoji ones (U+FE0E/U+FE0F; the rest smuggle data), the combining grapheme joiner,
Mongolian free variation selectors and Hangul fillers. Deliberately allowed: the visible
prepended number marks of Arabic/Syriac/Kaithi (U+0600-U+0605, U+06DD, U+070F,
U+0890-U+0891, U+08E2, U+110BD, U+110CD), which render as glyphs.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

Finding = tuple[str, int, int]  # (kind, start, end)

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
    | (?:your|my|example|sample|dummy|fake|placeholder|redacted|changeme)[\w-]*
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
_ASSIGN_KEY = r"""(?i:[A-Za-z0-9_.-]{0,40}?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey))"""


@cache
def _secret_patterns() -> list[tuple[str, re.Pattern[str], int]]:
    """(kind, pattern, group to redact); earlier entries win an overlap of equal extent."""
    left = r"(?<![A-Za-z0-9_-])"
    right = r"(?![A-Za-z0-9_-])"
    return [
        (
            "private-key",
            re.compile(
                r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                r"(?:(?:[^-]|-(?!----BEGIN)){0,20000}?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                r"|(?:(?:\r?\n|\\r\\n|\\n)(?:[A-Za-z][A-Za-z-]*: [^\r\n\\]*"
                r"|[A-Za-z0-9+/=]*(?=\r?\n|\\n|\\r|[\"']|\Z)))*)",
                re.DOTALL,
            ),
            0,
        ),
        ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}"), 0),
        ("openai-key", re.compile(left + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"), 0),
        ("openai-key", re.compile(left + r"sk-[A-Za-z0-9]{20,}" + right), 0),
        (
            "aws-access-key-id",
            re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
            0,
        ),
        (
            "aws-secret-key",
            re.compile(
                r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*(?:=|:|=>)\s*[\"']?"
                r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
            ),
            1,
        ),
        ("github-token", re.compile(left + r"gh[pousr]_[A-Za-z0-9]{30,255}" + right), 0),
        ("github-token", re.compile(left + r"github_pat_[A-Za-z0-9_]{22,255}" + right), 0),
        ("slack-token", re.compile(left + r"xox[abprs]-[A-Za-z0-9-]{10,}"), 0),
        (
            "slack-webhook",
            re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,}"),
            0,
        ),
        ("google-api-key", re.compile(left + r"AIza[0-9A-Za-z_-]{35}" + right), 0),
        ("jwt", re.compile(left + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), 0),
        ("bearer-token", re.compile(r"(?i:\bbearer)\s+([A-Za-z0-9._~+/-]{20,}=*)"), 1),
        (
            "url-password",
            re.compile(
                r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://[^/\s:@\"'<>]{1,100}:([^/\s@\"'<>]{1,200})@"
            ),
            1,
        ),
    ]


@cache
def _assignment() -> re.Pattern[str]:
    """`key = value`, `KEY=value`, `"key": "value"`, `key: value` (value quoted or bare)."""
    return re.compile(
        r"(?<![A-Za-z0-9_.-])(?P<key>" + _ASSIGN_KEY + r")(?P<kq>[\"']?)"
        r"(?P<sep>[ \t]*(?:=>|=(?!=)|:(?![:=]))[ \t]*)"
        r"(?:(?P<q>[\"'])(?P<quoted>[^\"'\r\n]*)(?P=q)|(?P<bare>[^\s\"'`]+))"
    )


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


_KIND = {"passwd": "password", "passphrase": "password", "apikey": "api-key", "api_key": "api-key"}


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
    return kind != "token" or len(value) >= 20 or any(c.isdigit() for c in value)


def _assignments(text: str) -> list[Finding]:
    found = []
    for match in _assignment().finditer(text):
        quoted = match.group("quoted")
        group = "quoted" if quoted is not None else "bare"
        value = match.group(group)
        key = match.group("key")
        if quoted is None:
            trailer = value[-1] in ",;)"
            value = value.rstrip(",;)")
            if not value or not _bare_value_is_secret(value, match.group("sep"), key, trailer):
                continue
        lowered = key.lower().replace("-", "_")
        kind = next(
            k
            for k in ("password", "passwd", "passphrase", "secret", "token", "api_key", "apikey")
            if lowered.endswith(k)
        )
        kind = _KIND.get(kind, kind)
        if _value_is_secret(kind, value, quoted is not None):
            start = match.start(group)
            found.append((kind, start, start + len(value)))
    return found


def _plausible(kind: str, value: str) -> bool:
    """Captured values of loose patterns must not be placeholders; bearer tokens hold digits."""
    if kind not in ("bearer-token", "url-password"):
        return True
    if _PLACEHOLDER.fullmatch(value):
        return False
    return kind != "bearer-token" or any(c.isdigit() for c in value)


def find_secrets(text: str) -> list[Finding]:
    """Non-overlapping (kind, start, end) spans of secrets, in text order.

    Overlapping matches are merged: the longest match at the earliest start names the kind.
    """
    if not text:
        return []
    candidates: list[tuple[int, int, int, str]] = []  # start, -end, priority, kind
    for priority, (kind, pattern, group) in enumerate(_secret_patterns()):
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if end > start and _plausible(kind, text[start:end]):
                candidates.append((start, -end, priority, kind))
    for start, end_, kind in ((s, e, k) for k, s, e in _assignments(text)):
        candidates.append((start, -end_, 100, kind))
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


def redact(text: str) -> str:
    """Replace each secret by `[REDACTED:<kind>]`; assignment keys stay readable."""
    findings = find_secrets(text)
    if not findings:
        return text
    parts, position = [], 0
    for kind, start, end in findings:
        parts += [text[position:start], f"[REDACTED:{kind}]"]
        position = end
    parts.append(text[position:])
    return "".join(parts)


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
    """The text without its invisible characters."""
    return _invisible().sub("", text)


def make_visible(text: str) -> str:
    """Render each invisible character as `<U+200B>`, for a review diff."""
    return _invisible().sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
