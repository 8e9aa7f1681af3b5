"""`evolve classify`: the correction and preference detector as a command.

For people ("why did this count?", "why didn't it?") and for measurement: JSON lines in on
stdin, one verdict per line out, in order. Nothing is stored and no model is asked.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator

from evolve.commands.output import warn
from evolve.errors import UserError
from evolve.home import Home
from evolve.transcripts import classify
from evolve.transcripts.acknowledged import answered
from evolve.transcripts.hearing import Heard, hear
from evolve.transcripts.lexicons import Lexicons
from evolve.workspace.agent import Agent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def classify_lines(lexicons: Lexicons, lines: Iterable[str]) -> Iterator[tuple[Heard | None, str]]:
    """(verdict, problem) per input line: a verdict, or None and why the line was not read."""
    for number, line in enumerate(lines, 1):
        try:
            item = json.loads(line.removeprefix("\ufeff") if number == 1 else line)  # a file Notepad saved
        except ValueError:
            yield None, f"line {number}: not JSON"
            continue
        except RecursionError:  # json's decoder recurses: "[[[[…" a hundred thousand deep
            yield None, f"line {number}: nested too deep"
            continue
        problem = _problem(item)
        if problem:
            yield None, f"line {number}: {problem}"
            continue
        first, before, text = (
            bool(item.get("first")),
            _writable(item.get("agent_before") or ""),
            _writable(item["text"]),
        )
        heard = hear(lexicons, text, before, first=first, after_error=bool(item.get("after_error")))
        yield answered(heard, _writable(item.get("agent_after") or ""), before, first, text), ""


def _writable(text: str) -> str:
    r"""Lone surrogates (a JSON "\ud800") as U+FFFD: no UTF-8 output can write a cue that quotes one."""
    return _LONE_SURROGATE.sub("\ufffd", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _problem(item: Any) -> str:
    """What is wrong with one input object ('' when it can be judged)."""
    if not isinstance(item, dict):
        return 'expected an object like {"text": "…"}'
    if not isinstance(item.get("text"), str):
        return '"text" must be a string'
    for key in ("agent_before", "agent_after"):
        if not isinstance(item.get(key, ""), (str, type(None))):
            return f'"{key}" must be a string'
    for key in ("first", "after_error"):
        if not isinstance(item.get(key, False), bool):
            return f'"{key}" must be true or false'
    return ""


def verdict(heard: Heard | None, problem: str = "") -> dict:
    """The JSON line for one input: correction, preference, cue (and error, for a bad line)."""
    if heard is None:
        return {"correction": False, "preference": False, "cue": None, "error": problem}
    return {"correction": heard.correction, "preference": heard.preference, "cue": heard.why}


def explain(number: int, heard: Heard | None, problem: str) -> str:
    """One line in words: what was heard and why."""
    if heard is None:
        return f"{number}: not read ({problem.split(': ', 1)[-1]})"
    parts = []
    if heard.correction:
        parts.append(f"correction ({heard.kind.replace('_', ' ') if heard.kind else 'said'}): {heard.cue}")
    if heard.preference:
        parts.append(f"preference: {heard.preference_cue}")
    return f"{number}: " + ("; ".join(parts) if parts else "nothing heard (no correction, no preference)")


def classify_command(home: Home, agent: str | None = None, explain_cues: bool = False) -> int:
    """Judge each JSON line of stdin; exit 1 when a line could not be read (it still gets its line)."""
    if sys.stdin is None or sys.stdin.isatty():  # None: started with stdin closed
        raise UserError(
            'classify reads JSON lines on stdin, e.g. echo \'{"text": "still failing"}\' | evolve classify'
        )
    config = Agent.open(agent, home).config if agent else None
    for warning in config.warnings if config else ():  # a phrase it dropped, which it will not hear
        warn(warning)
    signals = config.signals if config else None
    lexicons = classify.for_signals(signals).lexicons() if signals else classify.BUILT_IN.lexicons()
    bad = 0
    out = sys.stdout
    for number, (heard, problem) in enumerate(classify_lines(lexicons, sys.stdin), 1):
        if problem:
            bad += 1
            warn(problem)
        out.write(
            explain(number, heard, problem)
            if explain_cues
            else json.dumps(verdict(heard, problem), ensure_ascii=False)
        )
        out.write("\n")
    return 1 if bad else 0
