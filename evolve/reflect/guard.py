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


_URL = re.compile(
    r"(?i)\b(?:https?|ftp|wss?)://[^\s<>\"'`)\]]+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|"
    r"dev|app|xyz|ru|cn|tk|top|info|biz|me|co|sh|ai|cc|ws|site|online)\b(?:/[^\s\"'`]*)?"
)


@cache
def _patterns() -> list[tuple[str, re.Pattern[str]]]:
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
        ),
        (
            "send-data",
            re.compile(
                r"\bcurl\b[^\n|]*\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|"
                r"--upload-file)[\s=]"
            ),
        ),
        ("send-data", re.compile(r"(?i)\b(?:scp|rsync)\b[^\n]*\s\S+@\S+:|\bnc\s+-?\w*\s*\S+\s+\d{2,5}\b")),
        (
            "remote-code",
            re.compile(
                r"(?i)\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n]*\|\s*(?:sudo\s+)?"
                r"(?:ba|z|k|da)?sh\b|\b(?:curl|wget)\b[^\n]*\|\s*(?:python3?|perl|ruby|node)\b"
            ),
        ),
        (
            "remote-code",
            re.compile(
                r"(?i)(?:ba)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)|"
                r"(?:ba)?sh\s+<\(\s*(?:curl|wget)|\biex\b\s*\(|downloadstring\s*\("
            ),
        ),
        (
            "remote-code",
            re.compile(r"(?i)\b(?:eval|exec)\b[^\n]{0,20}\b(?:curl|wget|requests\.get|urlopen)\b"),
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


def scan_text(text: str, human: str, where: str) -> list[Flag]:
    flags = []
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(".,;:")
        if url.lower() not in human:
            flags.append(Flag("url", f"{url} (in no message the user wrote)", where))
    for kind, pattern in _patterns():
        for match in pattern.finditer(text):
            if kind == "disable-safety" and _NEGATED.search(text[max(0, match.start() - 25) : match.start()]):
                continue  # "never skip the tests" is a safety rule, not a threat
            flags.append(Flag(kind, _snippet(text, *match.span()), where))
    return flags


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
