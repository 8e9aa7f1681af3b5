"""Transcript adapters → one normalized event model → runs with facts (see the package's docstring).

`ADAPTERS` maps a format name to its adapter. `follow` reads only the new bytes of a file and
resumes the adapter and RunBuilder from the cursor's parser_state; `parse_file` and
`parse_messages` do a whole file / a messages list at once. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from evolve.transcripts import claude_code, codex, generic
from evolve.transcripts.classify import BUILT_IN, Classifier
from evolve.transcripts.messages import message_events
from evolve.transcripts.model import Event, Run
from evolve.transcripts.reader import CHUNK, Cursor, LineReader
from evolve.transcripts.runs import RunBuilder, mark_superseded


class Adapter(Protocol):
    """Turns one raw line of a transcript into events, keeping a small JSON state."""

    name: str

    def new_state(self, session_id: str = "") -> dict:
        """Fresh, JSON-serialisable state for one file."""
        ...

    def parse_line(self, line: bytes, offset: int, state: dict) -> Sequence[Event]:
        """Events for one line (without newline) starting at byte `offset`; never raises."""
        ...


class _ModuleAdapter:
    """An adapter module (NAME, new_state, parse_line) seen as an `Adapter` object."""

    def __init__(self, module: ModuleType, name: str | None = None):
        self.name: str = name or module.NAME
        self.new_state = module.new_state
        self.parse_line = module.parse_line


# The format a file is observed with is also the source its runs are shown with: "api" is
# the generic format as evolve's Python API writes it (its sessions, not another agent's).
ADAPTERS: dict[str, Adapter] = {m.NAME: _ModuleAdapter(m) for m in (claude_code, codex, generic)}
ADAPTERS["api"] = _ModuleAdapter(generic, "api")
SOURCES = ("claude_code", "codex", "generic", "api")


@dataclass
class Update:
    """What one `follow` call learned about a file."""

    cursor: Cursor
    runs: list[Run] = field(default_factory=list)  # runs completed during this read
    open_run: Run | None = None  # the still-open last run (store provisionally)
    superseded: list[int] = field(default_factory=list)  # run indices abandoned by a rewind
    reset: bool = False  # the file was rewritten: drop every run stored for it, then store these
    bad_lines: int = 0  # corrupt lines skipped during this read
    over_cap: int = 0  # lines over the line cap, read with each text cut short (`overlong`)
    over_cap_skipped: int = 0  # lines over the line cap that could not be cut to fit: skipped
    more: bool = False  # stopped at `max_bytes`: complete lines may be left; call again


def _adapter(name: str) -> Adapter:
    try:
        return ADAPTERS[name]
    except KeyError:
        raise ValueError(f"unknown transcript format {name!r}; known: {sorted(ADAPTERS)}") from None


def follow(
    path: str | os.PathLike,
    cursor: Cursor | None = None,
    adapter: str = "claude_code",
    chunk_size: int = CHUNK,
    max_bytes: int | None = None,
    classifier: Classifier = BUILT_IN,
) -> Update:
    """Read the lines appended to `path` since `cursor` and advance the runs derived from it.

    With `max_bytes`, stop after the line that reaches that many bytes read (`more` is then
    True): a caller storing each Update in its own transaction keeps memory and
    transactions small whatever the file size. `classifier`: the agent's `[signals]`.
    """
    fmt = _adapter(adapter)
    reader = LineReader(path, cursor, chunk_size)
    lines = reader.lines()  # checks the file first: parser_state is dropped on a reset
    state = {} if reader.reset or cursor is None else cursor.parser_state
    adapter_state = state.get("adapter") or fmt.new_state(Path(path).stem)
    adapter_state["prose"] = False  # runs need facts only: adapters may skip rendering work
    bad_before = adapter_state.get("bad", 0)
    builder = RunBuilder(state.get("runs"), classifier)
    update = Update(cursor=Cursor())
    first_new = builder.next_index  # supersede markers of older runs were reported already
    parse, feed = fmt.parse_line, builder.feed  # the hot loop: no attribute lookups
    # The line that reaches `max_bytes` read is the last: it ends at or after `stop`.
    stop = float("inf") if max_bytes is None else reader.start + max_bytes - 1
    for offset, line in lines:
        for event in parse(line, offset, adapter_state):
            for run in feed(event):
                update.runs.append(run)
                _note_supersede(update, run, first_new)
        if offset + len(line) >= stop:
            update.more = True
            break
    close = getattr(lines, "close", None)
    if close is not None:
        close()  # a batch that stopped early: release the file now
    update.open_run = builder.open_run()
    _note_supersede(update, update.open_run, first_new)
    update.reset = reader.reset
    update.bad_lines = adapter_state.get("bad", 0) - bad_before
    update.over_cap, update.over_cap_skipped = reader.cut, reader.skipped
    cursor_out = reader.cursor
    cursor_out.parser_state = {"adapter": adapter_state, "runs": builder.state()}
    update.cursor = cursor_out
    return update


def _note_supersede(update: Update, run: Run | None, first_new: int) -> None:
    if run is None or run.superseded_from is None or run.index < first_new:
        return
    for index in range(run.superseded_from, run.index):
        if index not in update.superseded:
            update.superseded.append(index)


def parse_file(
    path: str | os.PathLike, adapter: str = "claude_code", classifier: Classifier = BUILT_IN
) -> list[Run]:
    """Every run of a whole file (the last one `complete=False`), rewinds applied."""
    update = follow(path, None, adapter, classifier=classifier)
    runs = update.runs + ([update.open_run] if update.open_run else [])
    return mark_superseded(runs)


def parse_messages(
    messages: Iterable[Any], session_id: str = "", classifier: Classifier = BUILT_IN, **options: Any
) -> list[Run]:
    """Every run of a Messages API conversation (see messages.message_events for options)."""
    builder = RunBuilder(classifier=classifier)
    runs: list[Run] = []
    for event in message_events(messages, session_id, **options):
        runs.extend(builder.feed(event))
    last = builder.open_run()
    return mark_superseded(runs + ([last] if last else []))
