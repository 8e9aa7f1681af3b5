"""The write-path guard: soft flags that send a reflection to review instead of the agent.

Hard failures (secrets, invisible characters, bad names) are rejected outright by
validation; these flags catch what validation cannot judge — a lesson that smuggles in a
URL nobody typed, an instruction to send data away, a command that downloads and runs
code, a rule that switches safety off. Pure functions: plan text and bundle in, flags out.
A person's own edits are never blocked by it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Flag:
    kind: str  # url | send-data | remote-code | disable-safety
    evidence: str
    where: str = ""

    def line(self) -> str:
        return (
            f"{self.kind} in {self.where}: {self.evidence}" if self.where else f"{self.kind}: {self.evidence}"
        )


# A bare domain is not a path's component or a file name: `scripts/build.sh` is a script,
# `get.example.sh/x` (a path after it) an address.
_URL = re.compile(
    r"(?i)\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]+|(?<![/\w.-])(?:[a-z0-9-]+\.)+(?:com|net|org|io|"
    r"dev|app|xyz|ru|cn|tk|top|info|biz|me|co|sh(?=/)|ai|cc|ws|site|online)\b(?:/[^\s\"'`]*)?"
)


@cache
def _patterns() -> list[tuple[str, re.Pattern[str], bool]]:
    """(kind, pattern, negatable) for each shape of threat.

    A negatable one inside a rule that forbids it ("never send tokens to …") is a safety
    rule, not a threat; a concrete command never is.
    """
    verbs = r"(?:send|upload|post|exfiltrate|forward|e-?mail|transmit|copy|sync|push|share|report|leak)"
    things = (
        r"(?:files?|data|credentials?|secrets?|keys?|tokens?|passwords?|\.env|env(?:ironment)?"
        r"(?: variables)?|ssh|history|logs?|source(?: code)?|repo(?:sitory)?|contents?|cookies?)"
    )
    return [
        (
            "send-data",
            re.compile(
                rf"(?i)\b{verbs}\b[^\n]{{0,60}}?(?<!\w){things}(?!\w)[^\n]{{0,80}}?"
                r"\b(?:to|at|into|via)\b"
            ),
            True,
        ),
        (
            "send-data",
            re.compile(
                r"\bcurl\b[^\n|]*\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|"
                r"--upload-file)[\s=]"
            ),
            False,
        ),
        (
            "send-data",
            re.compile(r"(?i)\b(?:scp|rsync)\b[^\n]*\s\S+@\S+:|\bnc\s+-?\w*\s*\S+\s+\d{2,5}\b"),
            False,
        ),
        (  # anything piped into a shell: a download, `base64 -d`, an echo of an encoded blob
            "remote-code",
            re.compile(
                r"(?i)\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/(?:usr/)?bin/)?(?:ba|z|k|da|fi)?sh\b(?!-)"
                r"|\b(?:curl|wget)\b[^\n]*\|\s*(?:python3?|perl|ruby|node)\b"
            ),
            False,
        ),
        (  # a download made executable (and run): `curl … -o f && chmod +x f && ./f`
            "remote-code",
            re.compile(
                r"(?is)\b(?:curl|wget|fetch|aria2c|iwr|invoke-webrequest|scp)\b[^`]{0,300}?"
                r"\bchmod\s+(?:-\S+\s+)*(?:[ugoa]*\+[rw]*x|[0-7]?[0-7]*[1357]\b)"
            ),
            False,
        ),
        (
            "remote-code",
            re.compile(
                r"(?i)(?:ba)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)|"
                r"(?:ba)?sh\s+<\(\s*(?:curl|wget)|\biex\b\s*\(|downloadstring\s*\("
            ),
            False,
        ),
        (
            "remote-code",
            re.compile(
                r"(?i)\b(?:eval|exec)\b[^\n]{0,20}\b(?:curl|wget|requests\.get|urlopen|base64|b64decode)\b"
            ),
            False,
        ),
        (
            "disable-safety",
            re.compile(
                r"(?i)--no-verify\b|--dangerously-skip-permissions|bypasspermissions|"
                r"\b(?:disable|turn off|switch off|bypass|skip|ignore|remove)\b[^.\n]{0,40}"
                r"\b(?:safety|security|"
                r"sandbox|permission(?:s| prompts?)?|checks?|hooks?|confirmations?|guardrails?|review|"
                r"tests?|linters?|signature verification|ssl|tls|certificate)|"
                r"\bchmod\s+(?:-R\s+)?777\b|\brm\s+-rf\s+(?:/|~)(?:\s|$)|verify\s*=\s*false|"
                r"\bgit\s+push\s+(?:-f|--force)\b"
            ),
            True,
        ),
    ]


_NEGATED = re.compile(r"(?i)\b(?:never|not|don't|do not|no|avoid|without)\b[^.;\n]*$")


def _human_text(bundle) -> str:
    parts = []
    for run in getattr(bundle, "runs", []):
        parts.append(run.facts.get("request", ""))
        parts += [p.text for p in getattr(run, "pieces", []) if p.kind == "human"]
    return "\n".join(parts).lower()


def _snippet(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - 30) : end + 30].split())[:160]


# A bare IP or host:port: a URL only as the target of a fetch-and-run, never on its own
# ("start the dev server on localhost:5173" is an ordinary lesson).
_HOST = re.compile(
    r"(?i)(?<![\w.:/-])(?:\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?|[a-z0-9][a-z0-9.-]*:\d{2,5})(?:/[^\s\"'`|;&)]*)?"
)


_LOOPBACK = re.compile(r"(?i)^(?:[a-z]+://)?(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?![\w.-])")


def _foreign(address: str, human: str) -> bool:
    """An address nobody typed that leaves this machine (loopback never does)."""
    return address.lower() not in human and not _LOOPBACK.match(address)


def scan_text(text: str, human: str, where: str) -> list[Flag]:
    flags = []
    urls = set()
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(".,;:*")
        urls.add(url.lower())
        if _foreign(url, human):
            flags.append(Flag("url", f"{url} (in no message the user wrote)", where))
    for kind, pattern, negatable in _patterns():
        for match in pattern.finditer(text):
            if negatable and _NEGATED.search(text[max(0, match.start() - 25) : match.start()]):
                continue  # "never skip the tests", "never copy a token into …": safety rules
            flags.append(Flag(kind, _snippet(text, *match.span()), where))
            if kind == "remote-code":
                flags += _fetched_hosts(text, match, human, urls, where)
    return flags


def _fetched_hosts(text: str, match: re.Match[str], human: str, urls: set[str], where: str) -> list[Flag]:
    """Bare IPs and host:port on the line(s) of a fetch-and-run, as URLs nobody typed."""
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    found = []
    for host in _HOST.finditer(text[start : end if end >= 0 else len(text)]):
        target = host.group(0).rstrip(".,;:")
        if _foreign(target, human) and not any(target.lower() in url for url in urls):
            found.append(Flag("url", f"{target} (in no message the user wrote)", where))
    return found


def flags_for(plan, bundle) -> list[Flag]:
    """Flags for every text a plan would write (only what is new in it, for patches/memo)."""
    human = _human_text(bundle)
    found: list[Flag] = []
    for op in [*plan.operations, *plan.waiting]:
        if op.text is None:
            continue
        new = _added(op.previous or "", op.text)
        found += scan_text(new, human, op.path)
    unique: dict[tuple[str, str], Flag] = {}
    for flag in found:
        unique.setdefault((flag.kind, flag.evidence), flag)
    return list(unique.values())


def _added(old: str, new: str) -> str:
    """The lines of `new` that `old` does not have (a person's existing text is not re-judged)."""
    before = set(old.splitlines())
    return "\n".join(line for line in new.splitlines() if line not in before)
