"""A run as evidence: its events turned into the lines a reviewer reads.

The person's words (the request, answers to the agent's questions, rejection feedback, the
message after an interrupt) are lines of their own. A real error is shown with the call that
caused it (the tool and its meaningful argument) and, when a later call of that tool
succeeded, with that call too; the same error repeated is one line with a count. Tool inputs
are summarised by their meaningful keys, never as cut JSON: bulky values (file contents,
edit strings, todo lists) are dropped or shortened. Transient errors stay labelled as the
environment. Each line carries the token caps it may be shown at; fitting picks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from evolve.transcripts import model as m
from evolve.transcripts.classify import Classifier
from evolve.transcripts.redact import redact, strip_invisible

HEAD, USER, ERROR, CALL, AGENT = "head", "user", "error", "call", "agent"
# (full, tight) token caps of a line's text; 0 as tight: shown whole or not at all
CAPS = {HEAD: (200, 0), USER: (1500, 300), ERROR: (450, 120), CALL: (80, 0), AGENT: (250, 60)}
READ_CAP = 8 << 20  # bytes of one run read back from its transcript
VALUE_CHARS = 160  # a summarised input value shown in a call line
BULKY_CHARS = 50  # the start of a bulky value (an edit string) shown
MAX_CAUSES = 3  # distinct calls named for one repeated error
_SPACES = re.compile(r"\s+")
_QUESTION = re.compile(r"""'question': (?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")


@dataclass
class Line:
    """One line of evidence; `shown` and `tokens` are set when it is fitted into the bundle."""

    kind: str
    text: str
    position: int
    words: bool = False  # the person's own words (a request, a reply, a message after an interrupt)
    follows: bool = False  # the message after an interrupt: the next run's request
    real: bool = False  # an error that is not the environment's
    caused: bool = False  # an error shown with the call that caused it
    count: int = 1  # an error: how many times it happened
    causes: list[str] = field(default_factory=list)
    recovery: str = ""  # an error: the call of the same tool that succeeded afterwards
    shown: str = ""
    tokens: int = 0

    @property
    def caps(self) -> tuple[int, int]:
        return CAPS[self.kind]


def call_summary(tool: str, tool_input: object) -> str:
    """`Bash: make test`, `Edit: /app/x.py · old_string="def f(…"`: a call by what it did."""
    if not isinstance(tool_input, dict) or not tool_input:
        return tool or "a tool"
    keys = m.meaningful_keys(tool, tool_input)
    parts: list[str] = []
    for key in keys:
        value = tool_input.get(key)
        if value is None or value == "":
            continue
        shown = _questions(value) if key == "questions" else _value(value, key in m.BULKY)
        parts.append(shown if not parts else f"{key}={shown}")
    dropped = [k for k in tool_input if k not in keys and (k in m.BULKY or m.bulky(tool_input[k]))]
    if dropped:
        parts.append(f"({', '.join(dropped)} not shown)")
    return f"{tool}: {' · '.join(parts)}" if parts else tool


def _value(value: object, bulky: bool) -> str:
    text = value if isinstance(value, str) else str(value)
    if bulky:
        first = text.strip().split("\n", 1)[0]
        cut = len(first) > BULKY_CHARS or "\n" in text.strip()
        return repr(first[:BULKY_CHARS] + "…" if cut else first)
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _questions(value: object) -> str:
    """AskUserQuestion's questions, from its summarised input (a repr of the list)."""
    text = value if isinstance(value, str) else str(value)
    found = [a or b for a, b in _QUESTION.findall(text)]
    return " / ".join(found) if found else _value(text, True)


def read_events(run, fmt: str) -> list[m.Event] | None:
    """The run's events from its transcript bytes (inputs summarised), None if the file is gone."""
    from evolve.transcripts import ADAPTERS

    start, end = run.facts.get("start_offset", 0), run.facts.get("end_offset", 0)
    try:
        with Path(run.path).open("rb") as handle:
            handle.seek(start)
            data = handle.read(max(0, min(end - start, READ_CAP)))
    except OSError:
        return None
    adapter = ADAPTERS.get(fmt) or ADAPTERS["claude_code"]
    state = adapter.new_state(run.session)
    events: list[m.Event] = []
    offset = start
    for line in data.split(b"\n"):
        events.extend(adapter.parse_line(line, offset, state))
        offset += len(line) + 1
    return events


def run_lines(run, fmt: str, classifier: Classifier) -> list[Line]:
    """The run's evidence in time order (its facts only when the transcript is gone).

    Safe for the model: secrets redacted, invisible characters removed.
    """
    lines = [Line(HEAD, head_text(run), 0)]
    if run.facts.get("request"):
        lines.append(Line(USER, f"USER: {run.facts['request']}", 1, words=True))
    events = read_events(run, fmt)
    if events is None:
        lines.append(Line(CALL, f"tool calls: {run.facts.get('tool_inputs_text', '')}", len(lines)))
        for text in run.facts.get("error_texts", []):
            line = Line(ERROR, text, len(lines), real=True)
            line.causes = ["a call not known (the transcript is gone)"]
            lines.append(line)
    else:
        lines += _event_lines(events, classifier, start=len(lines))
    if run.next_request and _ends_interrupted(events):
        text = f"USER (after interrupting the agent): {run.next_request}"
        lines.append(Line(USER, text, len(lines), words=True, follows=True))
    for line in lines:
        # Calls are told by tool input values redacted as they were read (summarize_input);
        # the rest is redacted here.
        line.text = strip_invisible(line.text if line.kind in (HEAD, CALL) else redact(line.text))
        line.causes = [strip_invisible(cause) for cause in line.causes]
        line.recovery = strip_invisible(line.recovery)
    return lines


def _ends_interrupted(events: list[m.Event] | None) -> bool:
    """The run ended with the person stopping the agent (its next request is their reaction)."""
    last = next((e for e in reversed(events or []) if e.kind != m.MARKER), None)
    return last is not None and last.kind == m.INTERRUPT


def head_text(run) -> str:
    signals = ", ".join(f"{k} {v:g}" for k, v in run.signals.items()) or "none"
    role = " (the run the next correction reacts to)" if run.context else ""
    facts = run.facts
    heard = "".join(
        f"\n{what}: {facts[key]}"
        for what, key in (
            ("the user corrected the agent", "correction_cue"),
            ("the user stated a preference", "preference_cue"),
        )
        if facts.get(key)
    )
    heard += "".join(
        f"\nit ignored a lesson it had: {item['kind']} {item['lesson']} ({item['place']})"
        for item in getattr(run, "ignored", ())
    )
    return (
        f"### Run {run.run} of session {run.session[:12]}{role}\n"
        f"project: {run.cwd or 'unknown'} · started: {run.started_at or '?'} · "
        f"signals: {signals} · tool calls: {facts.get('tool_calls', 0)}, "
        f"real errors: {facts.get('errors', 0)}, transient (environment, not lessons): "
        f"{facts.get('transient_errors', 0)}"
        + (" · the user aborted" if facts.get("aborted") else "")
        + heard
    )


def _event_lines(events: list[m.Event], classifier: Classifier, start: int) -> list[Line]:
    lines: list[Line] = []
    calls: dict[str, Line] = {}  # tool_use_id → its call line
    seen: dict[tuple[str, str], Line] = {}  # (tool, error text) → its line
    failing: dict[str, Line] = {}  # tool → its last real error, until a call of it succeeds

    def add(kind: str, text: str, **extra) -> Line:
        line = Line(kind, text, 0, **extra)
        lines.append(line)
        return line

    for event in events:
        kind = event.kind
        if kind == m.ASSISTANT_TEXT and event.text:
            add(AGENT, f"AGENT: {event.text}")
        elif kind == m.TOOL_CALL:
            calls[event.tool_use_id] = add(CALL, call_summary(event.name, event.input))
        elif kind == m.TOOL_RESULT:
            call = calls.pop(event.tool_use_id, None)
            cause = call.text if call else ""
            if call is not None and (event.rejected or event.is_error):
                lines.remove(call)  # the rejection or error line names its call
            if event.rejected:
                add(USER, f"REJECTED BY USER: {cause or event.name or 'a tool call'}")
            elif event.is_error:
                _error(event, cause, classifier, seen, failing, add)
            elif call is not None and event.name in failing:
                failing.pop(event.name).recovery = cause
        elif kind == m.REPLY:
            how = "answering the agent's question" if event.name == m.ANSWER else "rejecting the call"
            add(USER, f"USER ({how}): {event.text}", words=True)
        elif kind == m.INTERRUPT:
            add(USER, "[the user interrupted the agent]")
        elif kind == m.API_ERROR and not event.continued:
            line = add(ERROR, event.text, real=not m.judged_transient(event, classifier), caused=True)
            line.causes = ["the model API"]
    for position, line in enumerate(lines, start):
        line.position = position
        if line.kind == CALL:
            line.text = f"CALL {line.text}"
    return lines


def _error(event: m.Event, cause: str, classifier: Classifier, seen: dict, failing: dict, add) -> None:
    """A tool's error: a new line, or one more of the same error (another cause named)."""
    transient = m.judged_transient(event, classifier)
    key = (event.name, _SPACES.sub(" ", event.text).strip())
    line = seen.get(key)
    if line is None:
        line = seen[key] = add(ERROR, squeeze(event.text), real=not transient, caused=bool(cause))
        line.causes = [cause or f"{event.name or 'a tool'} (its call is not in this run)"]
    else:
        line.count += 1
        if cause and cause not in line.causes and len(line.causes) < MAX_CAUSES:
            line.causes.append(cause)
    if not transient:
        failing[event.name] = line


def squeeze(text: str) -> str:
    """Runs of three or more identical lines (a test failing the same way) as one, counted."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        end = index
        while end + 1 < len(lines) and lines[end + 1] == lines[index]:
            end += 1
        out.append(lines[index])
        if end - index >= 2:
            out.append(f"[… the line above {end - index} more times …]")
        elif end > index:
            out.append(lines[index])
        index = end + 1
    return "\n".join(out)


def frame_error(line: Line, output: str) -> str:
    """An error line: label, how often, the call(s) that caused it, its output, the recovery."""
    label = "ERROR" if line.real else "TRANSIENT ERROR (environment)"
    times = f" ×{line.count}" if line.count > 1 else ""
    text = f"{label}{times} in {' | '.join(line.causes)}\n{output}"
    if line.recovery:
        text += f"\nTHEN SUCCEEDED: {line.recovery}"
    return text


def measure(runs: list[list[Line]]) -> dict:
    """What of the evidence in `runs` (each a run's lines) is shown: counts and percentages."""
    lines = [line for run in runs for line in run]
    errors = [line for line in lines if line.kind == ERROR and line.real]
    words = [line for line in lines if line.words and not line.follows]  # a follower is its run's request
    found: dict[str, float | None] = {
        "real_errors": sum(e.count for e in errors),
        "errors_shown": sum(e.count for e in errors if e.shown),
        "errors_with_cause": sum(e.count for e in errors if e.shown and e.caused),
        "user_words": len(words),
        "user_words_shown": sum(1 for w in words if w.shown),
    }
    found["errors_with_cause_pct"] = _pct(found["errors_with_cause"] or 0, found["real_errors"] or 0)
    found["user_words_pct"] = _pct(found["user_words_shown"] or 0, found["user_words"] or 0)
    return found


def _pct(part: float, whole: float) -> float | None:
    return round(100 * part / whole, 1) if whole else None
