"""The offline reflector: no model, conservative, deterministic.

It writes only what the user said explicitly: each correction (a request, or words the
person typed answering a question or rejecting a call) becomes a when-then rule in the
memo's strategies section, quoting the user's words and the request they corrected, and
each standing preference they stated becomes a rule quoting it.
Anything else is "nothing to save". Being deterministic, the same evidence always yields
the same rule, so a rule a person reverted is recognised (by fingerprint) and not re-learned.
"""

from __future__ import annotations

from pathlib import PurePath

from evolve.reflect.client import Answer, ReflectionRequest
from evolve.transcripts.redact import redact
from evolve.workspace import memo as memo_mod

QUOTE_CHARS = 220
PREFERENCE_LEAD = "- Always"  # how a stated preference's rule starts
CONTEXT_CHARS = 120


def _one_line(text: str, limit: int) -> str:
    line = " ".join(redact(text).replace('"', "'").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def correction_rules(bundle) -> list[str]:
    """One memo bullet per corrected run and per stated preference, in time order."""
    by_key = {(r.path, r.run): r for r in bundle.runs}
    rules = []
    for run in bundle.runs:
        if run.context:
            continue
        project = PurePath(run.cwd).name if run.cwd else ""
        where = f" in {project}" if project else ""
        stated = run.facts.get("preference_text") or ""
        if run.facts.get("preference") and stated and not run.facts.get("correction"):
            rules.append(f'{PREFERENCE_LEAD}{where}, as the user asked: "{_one_line(stated, QUOTE_CHARS)}"')
            continue
        if not run.facts.get("correction"):
            continue
        reply = run.facts.get("correction_reply") or ""
        quote = _one_line(reply or run.facts.get("request", ""), QUOTE_CHARS)
        if not quote:
            continue
        previous = by_key.get((run.path, run.run - 1))
        # A typed reply corrects its own run's request; a corrective request the run before it.
        corrected = run.facts.get("request") if reply else previous.facts.get("request") if previous else ""
        if corrected:
            asked = _one_line(corrected, CONTEXT_CHARS)
            rules.append(
                f'- When working{where} on a request like "{asked}", follow the user\'s correction: "{quote}"'
            )
        else:
            rules.append(f'- When working{where}, follow the user\'s correction: "{quote}"')
    return rules


def _counted(rules: list[str]) -> str:
    """How many corrections and preferences: '1 correction', '1 correction and 2 preferences'."""
    preferences = sum(rule.startswith(PREFERENCE_LEAD) for rule in rules)
    counts = [(len(rules) - preferences, "correction"), (preferences, "preference")]
    return " and ".join(f"{n} {noun}{'s' if n > 1 else ''}" for n, noun in counts if n)


class OfflineReflector:
    """A ReflectionClient that needs no model: corrections → memo rules."""

    name = "offline"

    def __init__(self, memo_text: str, section_chars: int) -> None:
        self.memo_text = memo_text
        self.section_chars = section_chars

    def reflect(self, request: ReflectionRequest) -> Answer:
        current = memo_mod.section_content(self.memo_text, memo_mod.STRATEGIES)
        lines = current.splitlines()
        added: list[str] = []
        for rule in correction_rules(request.bundle):
            if rule in lines or rule in added:
                continue
            candidate = "\n".join([*lines, *added, rule]).strip()
            if len(candidate) > self.section_chars:
                break
            added.append(rule)
        if not added:
            answer = {
                "summary": "nothing to save",
                "operations": [
                    {
                        "op": "nothing_to_save",
                        "reason": "no explicit user correction or preference to remember",
                    }
                ],
            }
        else:
            content = "\n".join([*lines, *added]).strip()
            answer = {
                "summary": f"remember {_counted(added)} from the user",
                "operations": [{"op": "update_memo", "section": memo_mod.STRATEGIES, "content": content}],
            }
        return Answer(answer, "offline", 0, 0)
