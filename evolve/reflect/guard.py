"""The write-path guard: soft flags that send a reflection to review instead of the agent.

Hard failures (secrets, invisible characters, bad names) are rejected outright by
validation; these flags catch what validation cannot judge — a lesson that smuggles in a
URL nobody typed, an instruction to send data away, a command that downloads and runs
code, a rule that switches safety off, text hidden from a Markdown preview. Pure
functions: plan text and bundle in, flags out. A person's own edits are never blocked by it.

The shapes (evolve.reflect.threats) are matched against the text as the agent takes it
in: lines joined, inline code merged with the words around it, entities, full-width
letters and accents folded. So "turn" ending one line and "off" starting the next,
"`curl -o t URL`, then `chmod +x t`" and "&#99;url" read as what they say.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

from evolve.reflect import threats

MAX_PER_KIND = 10  # flags of one kind shown per text: enough to review, never a flood


@dataclass(frozen=True)
class Flag:
    kind: str  # url | send-data | remote-code | disable-safety | hidden-text
    evidence: str
    where: str = ""

    def line(self) -> str:
        return (
            f"{self.kind} in {self.where}: {self.evidence}" if self.where else f"{self.kind}: {self.evidence}"
        )


# --- the text as the agent reads it ----------------------------------------------------------

_LATIN = {
    code: base
    for code in range(0xC0, 0x250)
    if (base := unicodedata.normalize("NFD", chr(code))[0]) != chr(code) and base.isascii()
}
_FOLD = str.maketrans({0x2018: "'", 0x2019: "'", 0x02BC: "'", 0x201C: '"', 0x201D: '"', 0xA0: " ", **_LATIN})
_MARKS = re.compile("[\u0300-\u036f]")
# Cyrillic and Greek letters drawn like Latin ones: a word that mixes them with Latin letters
# ("Dіsable", its і Cyrillic) is read as the Latin word it shows; a word all of one script stays.
_CONFUSABLE = str.maketrans(
    "аеорсухіјѕԁһԛԝАВЕКМНОРСТХІЈЅΑΒΕΗΙΚΜΝΟΡΤΧΥΖοαιν",
    "aeopcyxijsdhqwABEKMHOPCTXIJSABEHIKMNOPTXYZoaiv",
)
_WORD = re.compile(r"[^\W\d_]{2,100}")
# A shell reads `b''ash`, `ba\sh` and `"ba"sh` as bash: quoting inside a word is dropped.
_SHELL_QUOTING = re.compile(
    r"(?<=\w)\\(?=[A-Za-z])|(?<=\w)(?:''|\"\")|(?:''|\"\")(?=\w)"
    r"|(?<=\w)(['\"])(\w{1,40})\1|(['\"])(\w{1,40})\3(?=\w)"
)
_CODE = "\x1f"  # a code span's backtick in the reading: whitespace to regex and split()
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_EMPHASIS = re.compile(r"(?<=\w)\*{1,3}(?=\w)")  # "dis**able**" renders "disable"
_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]{0,4}){1,8}")
_FENCE = re.compile(r"^[ \t]{0,3}(?:```|~~~)")
# a line that starts a new item: a list entry, heading, quote, table row, fence, HTML block
_ITEM = re.compile(r"^[ \t]{0,8}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|#|>|\||```|~~~|<|$)")
_TABLE = re.compile(r"^[ \t]{0,3}\|")


def fold(text: str) -> str:
    """Entities, compatibility forms (full-width letters), accents, quotes and look-alikes as plain text."""
    text = unicodedata.normalize("NFKC", html.unescape(text))
    text = _MARKS.sub("", text.translate(_FOLD))
    return text if text.isascii() else _WORD.sub(_latin, text)


def _latin(match: re.Match[str]) -> str:
    """A word mixing Latin letters with look-alikes of other scripts, as the Latin it shows."""
    word = match.group()
    if word.isascii() or not any("a" <= c.lower() <= "z" for c in word):
        return word
    return word.translate(_CONFUSABLE)


def _unquoted(match: re.Match[str]) -> str:
    return match.group(2) or match.group(4) or ""


def reading(text: str) -> str:
    """The text as the agent takes it in: one line per item, code spans merged into it."""
    lines = fold(text).split("\n")
    bodies = [_QUOTE.sub(" ", line) for line in lines]  # a quote's markers are not its words
    front = lines[0].strip() == "---"  # a SKILL.md's front matter: one key a line
    fenced = False
    parts: list[str] = []
    for i, line in enumerate(bodies):
        fence = bool(_FENCE.match(line))
        fenced ^= fence
        front = front and (i == 0 or line.strip() != "---")
        table = bool(_TABLE.match(line))
        if table:  # cells apart; `\|` is a pipe inside a cell
            line = line.replace("\\|", "\0").replace("|", "\u00a6").replace("\0", "|")
        line = _SHELL_QUOTING.sub(_unquoted, _EMPHASIS.sub("", _ESCAPE.sub(r"\1", line))).replace("`", _CODE)
        last = i + 1 == len(bodies)
        continued = line.endswith("\\")  # a shell line continued on the next
        soft = continued or not (
            fence or fenced or front or table or not line.strip() or last or _ITEM.match(bodies[i + 1])
        )
        parts.append((line[:-1] if continued else line) + ("" if last else " " if soft else "\n"))
    return "".join(parts)


# --- scanning ----------------------------------------------------------------------------------

# A bare domain is not a path's component or a file name: `scripts/build.sh` is a script,
# `get.example.sh/x` (a path after it) an address.
_URL = re.compile(
    r"(?i)\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]{1,2000}|(?<![/\w.-])[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){0,8}\."
    r"(?:com|net|org|io|dev|app|xyz|ru|cn|tk|top|info|biz|me|co|sh(?=/)|ai|cc|ws|site|online)\b(?:/[^\s\"'`]{0,2000})?"
)
# A bare IP or host:port: a URL only as the target of a fetch-and-run, never on its own
# ("start the dev server on localhost:5173" is an ordinary lesson).
_HOST = re.compile(
    r"(?i)(?<![\w.:/-])(?:\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?|[a-z0-9][a-z0-9.-]{0,253}:\d{2,5})"
    r"(?:/[^\s\"'`|;&)]{0,2000})?"
)
_LOOPBACK = re.compile(
    r"(?i)^(?:[a-z]{1,15}://)?(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?![\w.-])"
)
_HOST_REACH = 400  # how far around a fetch-and-run its host is looked for


def _foreign(address: str, human: str) -> bool:
    """An address nobody typed that leaves this machine (loopback never does)."""
    return address.lower() not in human and not _LOOPBACK.match(address)


def _snippet(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - 30) : min(end, start + 200) + 30].split())[:160]


class _Found:
    """Flags of one text, at most MAX_PER_KIND of each kind plus a count of the rest."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.flags: list[Flag] = []
        self.shown: dict[str, int] = {}
        self.more: dict[str, int] = {}

    def full(self, kind: str) -> bool:
        return self.shown.get(kind, 0) >= MAX_PER_KIND

    def add(self, kind: str, evidence: str) -> None:
        if self.full(kind):
            self.more[kind] = self.more.get(kind, 0) + 1
        else:
            self.shown[kind] = self.shown.get(kind, 0) + 1
            self.flags.append(Flag(kind, evidence, self.where))

    def all(self) -> list[Flag]:
        extra = [Flag(kind, f"… and {count} more", self.where) for kind, count in self.more.items()]
        return self.flags + extra


def _negated(read: str, start: int, end: int, shape: threats.Shape, negated_end: int | None) -> bool:
    """Whether a negation governs this match: "never disable …", "… nicht", "… or skip …"."""
    if threats.NEGATED_BEFORE.search(read, max(0, start - 80), start):
        return not threats.GERUND_SUBJECT.match(read, start, min(len(read), end + 60))
    if negated_end is not None and 0 <= start - negated_end <= 80:
        if threats.OR_NEGATED.fullmatch(read, negated_end, start):
            return True
    if shape.negated_within and shape.negated_within.search(read, start, end):
        return True
    return bool(shape.negated_after and shape.negated_after.match(read, end, min(len(read), end + 40)))


def _shapes(read: str, human: str, found: _Found) -> None:
    low = read.lower()  # as long as `read`: fold() leaves no İ, the one letter lower() lengthens
    hits = sorted(
        (start, end, i)
        for i, shape in enumerate(threats.SHAPES)
        for start, end in threats.spans(shape, read if shape.cased else low)
    )
    hits += [(start, end, -1) for start, end in threats.downloads_run(low)]
    negated_end: int | None = None
    for start, end, i in hits:
        shape = threats.SHAPES[i] if i >= 0 else None
        if shape is not None and shape.negatable:
            if _negated(low, start, end, shape, negated_end):
                negated_end = end  # "never skip the tests", "never copy a token into …": safety rules
                continue
        kind = shape.kind if shape is not None else "remote-code"
        if found.full(kind):
            found.add(kind, "")
            continue
        found.add(kind, _snippet(read, start, end))
        if kind == "remote-code":
            _fetched_hosts(read, start, end, human, found)


def _fetched_hosts(read: str, start: int, end: int, human: str, found: _Found) -> None:
    """Bare IPs and host:port on the line(s) of a fetch-and-run, as URLs nobody typed."""
    low = max(read.rfind("\n", max(0, start - _HOST_REACH), start) + 1, start - _HOST_REACH, 0)
    high = read.find("\n", end, end + _HOST_REACH)
    high = min(end + _HOST_REACH, len(read)) if high < 0 else high
    for host in _HOST.finditer(read, low, high):
        target = host.group(0).rstrip(".,;:")
        if _foreign(target, human) and not any(
            f.kind == "url" and target.lower() in f.evidence.lower() for f in found.flags
        ):
            found.add("url", f"{target} (in no message the user wrote)")


_SPAN = re.compile(r"`[^`\n]{1,1000}`")


def _outside_code(text: str) -> str:
    """`text` with inline code and fenced blocks blanked (a preview shows markup there as text)."""
    lines, fenced = [], False
    for line in text.split("\n"):
        fence = bool(_FENCE.match(line))
        lines.append(" " * len(line) if fenced or fence else _SPAN.sub(lambda m: " " * len(m.group(0)), line))
        fenced ^= fence
    return "\n".join(lines)


def _hidden(text: str, found: _Found) -> None:
    """HTML comments, hidden elements and link definitions: invisible in a Markdown preview.

    Any of them in a model's text is flagged, whatever it holds: what a reviewer cannot see
    in the preview, the agent still reads raw. (Markup inside code is shown as text, so it
    is not hidden.) A person's own comments are never scanned: only added lines are.
    """
    for match in threats.HIDDEN.finditer(_outside_code(text)):
        if found.full("hidden-text"):
            found.add("hidden-text", "")
            continue
        end = text.find("-->", match.end(), match.end() + 2000)
        shown = text[match.start() : end + 3 if end >= 0 else match.end() + 120]
        found.add("hidden-text", f"{' '.join(shown.split())[:160]} (invisible in a Markdown preview)")


def scan_text(text: str, human: str, where: str) -> list[Flag]:
    found = _Found(where)
    human = fold(human).lower()
    _hidden(text, found)
    read = reading(text)
    for match in _URL.finditer(read):
        url = match.group(0).rstrip(".,;:*")
        if _foreign(url, human):
            found.add("url", f"{url} (in no message the user wrote)")
    _shapes(read, human, found)
    return found.all()


def _human_text(bundle) -> str:
    parts = []
    for run in getattr(bundle, "runs", []):
        parts.append(run.facts.get("request", ""))
        parts += [p.text for p in getattr(run, "pieces", []) if p.kind == "human"]
    return "\n".join(parts)


def flags_for(plan, bundle) -> list[Flag]:
    """Flags for every text a plan would write (what is new in a patch or memo; an eval case whole)."""
    human = _human_text(bundle)
    found: list[Flag] = []
    for op in [*plan.operations, *plan.waiting]:
        if op.text is not None:
            found += scan_text(_added(op.previous or "", op.text), human, op.path)
        for path, text in op.files:  # its eval case: a prompt an agent will run, graders
            if text is not None:
                found += scan_text(text, human, path)
    unique: dict[tuple[str, str], Flag] = {}
    for flag in found:
        unique.setdefault((flag.kind, flag.evidence), flag)
    return list(unique.values())


def _added(old: str, new: str) -> str:
    """The lines of `new` that `old` does not have (a person's existing text is not re-judged)."""
    before = set(old.splitlines())
    return "\n".join(line for line in new.splitlines() if line not in before)
