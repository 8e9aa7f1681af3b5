"""A run as evidence: its events turned into the lines a reviewer reads.

The person's words (the request, answers to the agent's questions, rejection feedback, the
message after an interrupt) are lines of their own. A real error is shown with the call that
caused it (the tool and its meaningful argument) and with its fix: the later call like it
that worked (transcripts.calls; a look never is one), named there instead of in a line of
its own, or a word that the agent moved on; the same error repeated is one line with a
count. Tool inputs are summarised by their meaningful keys, never as cut JSON: bulky values
(todo lists, prompts) are dropped, an edit's new text is shortened. Transient errors stay
labelled as the environment. Each line carries the token caps it may be shown at; fitting
picks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from evolve.transcripts import calls
from evolve.transcripts import model as m
from evolve.transcripts.classify import Classifier
from evolve.transcripts.redact import find_secrets, redact

HEAD, USER, ERROR, CALL, AGENT = "head", "user", "error", "call", "agent"
# (full, tight) token caps of a line's text; 0 as tight: shown whole or not at all
CAPS = {HEAD: (200, 0), USER: (1500, 300), ERROR: (450, 120), CALL: (80, 0), AGENT: (250, 60)}
READ_CAP = 8 << 20  # bytes of one run read back from its transcript
VALUE_CHARS = 160  # a summarised input value shown in a call line
BULKY_CHARS = 50  # the start of a bulky value (an edit string) shown
MAX_CAUSES = 3  # distinct calls named for one repeated error
MAX_EDITS = 2  # files named as edited between an error and its fix
RECOVERY_CHARS = 200  # of the fix named in an error's frame (an edit's new text is cut first)
MOVED_ON = "THEN SUCCEEDED: other calls (no fix named)"
_SPACES = re.compile(r"\s+")
_NEW_STRING = re.compile(r"""'new_string': (?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")
NEW_TEXT_KEYS = ("new_string", "content", "new_source")  # Edit, Write, NotebookEdit
NEW_CHARS = 160  # of an edit's new text shown in its call line
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
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
    recovery: str = ""  # an error: the later call like the failing one that worked (calls.fixes)
    moved_on: bool = False  # an error: later calls worked, none of them like the failing one
    shown: str = ""
    tokens: int = 0

    @property
    def caps(self) -> tuple[int, int]:
        return CAPS[self.kind]


def call_summary(tool: str, tool_input: object, new_text: bool = True) -> str:
    """`Bash: make test`, `Edit: /app/x.py · old_string='def f(…' · new_string='def g(x):'`.

    A call by what it did: its meaningful arguments, and (`new_text`) the new text an edit
    writes (its start, as summarised: capped and redacted), so a fix made by an edit is
    evidence too. A call that failed or was refused wrote nothing: it is named without it.
    """
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
    dropped = []
    for key in tool_input:
        if key in keys or not (key in m.BULKY or m.bulky(tool_input[key])):
            continue
        new = _new_text(key, tool_input[key]) if new_text else ""
        if new:
            parts.append(new)
        else:
            dropped.append(key)
    if dropped:
        parts.append(f"({', '.join(dropped)} not shown)")
    return f"{tool}: {' · '.join(parts)}" if parts else tool


def _new_text(key: str, value: object) -> str:
    """The text an edit writes (`new_string='…'`), or "" for an input that writes none."""
    text = value if isinstance(value, str) else str(value)
    if key in NEW_TEXT_KEYS:
        return f"{key}={_quoted(text)}"
    if key == "edits":  # MultiEdit: a summarised list of {old_string, new_string}
        found = [a or b for a, b in _NEW_STRING.findall(text)]
        return " | ".join(f"new_string={_quoted(_unescape(f))}" for f in found)
    if key == "input" and "*** " in text:  # Codex's apply_patch: its files, the lines it adds
        files = [f.strip() for f in _PATCH_FILE.findall(text)]
        added = [ln[1:] for ln in text.split("\n") if ln.startswith("+") and not ln.startswith("+++")]
        return " · ".join([*files[:MAX_EDITS], *([f"added={_quoted(chr(10).join(added))}"] if added else [])])
    return ""


def _quoted(text: str) -> str:
    """`text` as a quoted literal within NEW_CHARS (cut between words, the cut marked)."""
    short = m.cut(text, NEW_CHARS)
    return repr(short + "…" if len(short) < len(text) and not short.endswith("…") else short)


def _value(value: object, bulky: bool) -> str:
    text = value if isinstance(value, str) else str(value)
    if bulky:
        first = text.strip().split("\n", 1)[0]
        cut = len(first) > BULKY_CHARS or "\n" in text.strip()
        return repr(first[:BULKY_CHARS] + "…" if cut else first)
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace("\\'", "'").replace('\\"', '"')


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
    for event in events or ():
        if event.kind == m.HUMAN:  # shown from its facts, redacted before: its secrets are learnt here
            find_secrets(event.text)
    if events is None:
        lines.append(Line(CALL, f"tool calls: {run.facts.get('tool_inputs_text', '')}", len(lines)))
        for text in run.facts.get("error_texts", []):
            line = Line(ERROR, text, len(lines), real=True)
            line.causes = ["a call not known (the transcript is gone)"]
            lines.append(line)
    else:
        lines += _event_lines(events, classifier, start=len(lines), cwd=run.cwd)
    if run.next_request and _ends_interrupted(events):
        text = f"USER (after interrupting the agent): {run.next_request}"
        lines.append(Line(USER, text, len(lines), words=True, follows=True))
    return redact_lines(lines)


def redact_lines(lines: list[Line]) -> list[Line]:
    """Each line's text, causes and recovery redacted, their invisible characters gone.

    Tool input values were redacted one by one as they were read (summarize_input); a
    call's line is redacted again whole, where a value sits next to its key.
    """
    for line in lines:
        line.text = redact(line.text)
        line.causes = [redact(cause) for cause in line.causes]
        line.recovery = redact(line.recovery)
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


def _event_lines(
    events: list[m.Event], classifier: Classifier, start: int, cwd: str | None = None
) -> list[Line]:
    lines: list[Line] = []
    calls: dict[str, tuple[Line, m.Event]] = {}  # tool_use_id → its call line and event
    seen: dict[tuple[str, str], Line] = {}  # (tool, error text) → its line
    open_errors: list[_Open] = []  # real tool errors whose fix is looked for, oldest first

    def add(kind: str, text: str, **extra) -> Line:
        line = Line(kind, text, 0, **extra)
        lines.append(line)
        return line

    for event in events:
        kind = event.kind
        if kind == m.ASSISTANT_TEXT and event.text:
            add(AGENT, f"AGENT: {event.text}")
        elif kind == m.TOOL_CALL:
            calls[event.tool_use_id] = (add(CALL, call_summary(event.name, event.input)), event)
        elif kind == m.TOOL_RESULT:
            call, call_event = calls.pop(event.tool_use_id, (None, None))
            cause = call_summary(call_event.name, call_event.input, new_text=False) if call_event else ""
            if call is not None and (event.rejected or event.is_error):
                lines.remove(call)  # the rejection or error line names its call
            if event.rejected:
                add(USER, f"REJECTED BY USER: {cause or event.name or 'a tool call'}")
            elif event.is_error:
                line = _error(event, cause, classifier, seen, add)
                if line.real:
                    open_errors.append(_Open(line, _shape(call_event)))
            elif call is not None and open_errors:
                _succeeded(call, _shape(call_event), call_event, open_errors, lines, cwd)
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


@dataclass
class _Open:
    """A real error waiting for its fix: the calls that failed, the files written since."""

    line: Line
    shape: calls.Shape | None
    edited: list[str] = field(default_factory=list)


def _shape(event: m.Event | None) -> calls.Shape | None:
    return None if event is None else calls.shape(event.name, event.input, event.file_path)


def _succeeded(
    call: Line, later: calls.Shape | None, event, open_errors: list[_Open], lines: list[Line], cwd: str | None
) -> None:
    """A call worked: the fix of the errors it repeats or resembles (named once: its own line goes).

    Files it writes are noted on the errors still open: the fix a later retry proves.
    """
    fixed = [o for o in open_errors if o.shape is not None and calls.fixes(o.shape, later)]
    for item in fixed:
        # the same call again: what changed between is the files edited, so they are named
        retried = later is not None and item.shape is not None and item.shape.text == later.text
        edits = f" (after editing {', '.join(item.edited[:MAX_EDITS])})" if item.edited and retried else ""
        short = m.cut(call.text, RECOVERY_CHARS)
        item.line.recovery = (short + "…" if len(short) < len(call.text) else short) + edits
        open_errors.remove(item)
    if fixed:
        lines.remove(call)
        return
    for item in open_errors:
        # a failed look (grep, ls, a Read) has no fix to name: the agent moving on says nothing
        if later is not None and later.kind != calls.LOOK and item.shape and item.shape.kind != calls.LOOK:
            item.line.moved_on = True
        path = _relative(event.file_path, cwd) if event.file_path else ""
        if path and path not in item.edited:
            item.edited.append(path)


def _relative(path: str, cwd: str | None) -> str:
    """`path` relative to the run's folder, else its name: short (its edit's call line has it whole)."""
    folder = (cwd or "").rstrip("/")
    return path[len(folder) + 1 :] if folder and path.startswith(folder + "/") else path.rsplit("/", 1)[-1]


def _error(event: m.Event, cause: str, classifier: Classifier, seen: dict, add) -> Line:
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
    return line


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
    elif line.moved_on:
        text += f"\n{MOVED_ON}"
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
