"""RunBuilder: an incremental state machine turning normalized events into runs with facts.

A run is one human request and everything the agent did until the next one. The builder is
fed events as a transcript grows, returns runs as they complete, exposes the still-open run
so the caller can store it provisionally, and saves a small JSON state so a restart resumes
exactly where it stopped. Every text a run keeps (request, replies, error texts, tool
inputs) is redacted here, invisible characters stripped with it: the facts in state.db hold
no secret. A value found as a secret in one of a run's texts is redacted in all of them
(known in memory only, never in the saved state: a run read across a restart forgets what
its first part held). Pure logic: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from evolve.transcripts import calls
from evolve.transcripts.acknowledged import (
    ACKNOWLEDGED,
    admission,
    answer_cue,
    asks_for_words,
    picks_an_option,
)
from evolve.transcripts.classify import BUILT_IN, Classifier
from evolve.transcripts.hearing import Heard, hear
from evolve.transcripts.model import (
    ANSWER,
    API_ERROR,
    ASSISTANT_TEXT,
    FILES_CAP,
    HUMAN,
    INTERRUPT,
    MARKER,
    REPLY,
    REQUEST_CAP,
    RUN_ERROR_TEXT_CAP,
    RUN_ERROR_TEXTS,
    RUN_REPLIES,
    RUN_REPLY_CAP,
    SAID_CAP,
    SKILL,
    SKILLS_CAP,
    TOOL_CALL,
    TOOL_INPUTS_CAP,
    TOOL_RESULT,
    Event,
    Run,
    cut,
    head_and_tail,
    judged_transient,
    meaningful_text,
)
from evolve.transcripts.redact import Known, redact, strip_invisible

TAILS_CAP = 1000  # tail uuids of completed runs remembered for rewind detection
PENDING_CAP = 64  # calls of the open run awaiting their result (the oldest go first)
FAILING_CAP = 8  # failed calls of the open run whose fix is looked for
FIX_WINDOW = 25  # successful calls after a failure that may be its fix (later ones moved on)
RUN_ERROR_CALL_CAP = 300  # chars of the call kept beside each error text
_NONE: tuple[Run, ...] = ()  # feed's usual answer, shared: no list per event

# Per run: how its tool results went. ok_after_error: a later call fixed a failed one
# (calls.fixes); failing: the failed calls' shapes (None: a call not known, e.g. an API
# error), while no fix was seen; tried: calls that did something since the last failure,
# looked at as its fix (FIX_WINDOW at most); `said` is the end of the agent's last text and `halted`
# whether the run's last event was an API error or an interruption (the person's next words
# are then judged as a possible retry).
_FRESH_TRACK: dict = {
    "had_error": False,
    "ok_after_error": False,
    "last_bad": False,
    "api": None,
    "failing": [],
    "tried": 0,
    "said": "",
    "halted": False,
    "answering": False,  # the agent's next text answers the person's words (no failed call between)
    "reply": "",  # those words, when they were a reply mid-run
    # what the agent answers may admit a correction: not after a session's first words (nothing to
    # correct yet), nor after its own question ("You're right" agrees with the person's pick)
    "may_admit": False,
}


class RunBuilder:
    """Feed events in transcript order; completed runs come back from `feed`.

    Rewinds: when a human event's parent_uuid is the tail_uuid of an earlier completed run j,
    the runs after j were abandoned. The open run is then returned with `superseded=True`, and
    the new run carries `superseded_from = j + 1`: the caller marks runs
    superseded_from .. new.index - 1 as superseded (some were returned by earlier calls).
    """

    def __init__(self, state: dict | None = None, classifier: Classifier = BUILT_IN):
        state = state or {}
        self._classifier = classifier  # the agent's [signals]: corrections, transient errors
        self._next: int = int(state.get("next", 0))
        run = state.get("run")
        self._run: Run | None = Run.from_dict(run) if run else None
        self._track: dict = {**_FRESH_TRACK, **(state.get("track") or {})}
        self._track["failing"] = [calls.from_list(saved) for saved in self._track["failing"] or ()]
        # the open run's calls awaiting a result: their event (after a restart, what was saved)
        self._pending: dict[str, Event | dict] = {
            k: v for k, v in (state.get("calls") or {}).items() if isinstance(v, dict)
        }
        self._tails: dict[str, int] = {u: int(i) for u, i in state.get("tails") or []}
        self._inputs: list[str] = []  # the open run's tool inputs not yet redacted (never saved)
        self._inputs_size = 0
        self._known: Known = {}  # the secret values found in the open run (never saved)
        self._known_before = 0  # how many of them its texts were last redacted with

    def state(self) -> dict:
        """JSON-serialisable, bounded state to resume after a restart."""
        return {
            "next": self._next,
            "run": self._settled(self._run).to_dict() if self._run else None,
            "track": {**self._track, "failing": [calls.to_list(found) for found in self._track["failing"]]},
            "calls": {key: _saved(call) for key, call in self._pending.items()},
            "tails": [[u, i] for u, i in self._tails.items()],
        }

    @property
    def next_index(self) -> int:
        """The index the next run will get."""
        return self._next

    def open_run(self) -> Run | None:
        """The current, still incomplete run (a copy), or None before the first request."""
        return Run.from_dict(self._settled(self._run).to_dict()) if self._run else None

    def _settled(self, run: Run) -> Run:
        """`run` with ended_in_error and recovered as its tool results so far make them.

        Set when a run is handed out (completed, open, saved), not after every event; so are
        its tool inputs, redacted here in one go (a call at a time would cost ~10x more).
        A secret found in the run is redacted from every text of it, also from those
        redacted before it was found.
        """
        track = self._track
        run.ended_in_error = track["last_bad"]
        run.recovered = track["had_error"] and track["ok_after_error"] and not track["last_bad"]
        known = self._known
        if self._inputs:
            text = run.tool_inputs_text + redact("".join(self._inputs), known)
            run.tool_inputs_text = cut(text, TOOL_INPUTS_CAP)
            self._inputs, self._inputs_size = [], 0
        if len(known) > self._known_before:
            self._known_before = len(known)
            run.request = redact(run.request, known)
            run.replies = [redact(reply, known) for reply in run.replies]
            run.error_texts = [redact(error, known) for error in run.error_texts]
            run.correction_reply = redact(run.correction_reply, known)
            run.tool_inputs_text = cut(redact(run.tool_inputs_text, known), TOOL_INPUTS_CAP)
        return run

    def feed(self, event: Event) -> Sequence[Run]:
        """Apply one event; return the runs it completed (at most one; most events: none)."""
        kind = event.kind
        if kind == HUMAN:
            return self._start(event)
        run = self._run
        if run is None:
            if kind == MARKER:
                return _NONE
            # Agent activity with no request before it (e.g. a subagent file whose prompt was
            # not logged): an implicit run with an empty request keeps its facts.
            self._start(
                Event(
                    HUMAN,
                    session_id=event.session_id,
                    timestamp=event.timestamp,
                    offset=event.offset,
                    end=event.offset,
                    uuid=event.uuid,
                )
            )
            run = self._run
            assert run is not None
        if event.uuid:
            run.tail_uuid = event.uuid
        if event.end > run.end_offset:
            run.end_offset = event.end
        if kind == MARKER:
            return _NONE  # markers do not count for ended_at: some carry no timestamp
        stamp = event.timestamp
        if stamp and (run.ended_at is None or stamp > run.ended_at):
            run.ended_at = stamp
        self._track["halted"] = kind in (API_ERROR, INTERRUPT)
        if kind == ASSISTANT_TEXT:
            if event.text.strip():
                if self._track["answering"]:
                    self._answered(run, event.text)
                self._track["said"] = event.text[-SAID_CAP:]
            return _NONE
        if kind == TOOL_CALL:
            self._tool_call(run, event)
        elif kind == TOOL_RESULT:
            self._tool_result(run, event)
        elif kind == SKILL:
            if len(run.skills) < SKILLS_CAP:
                run.skills.append({"name": event.name, "tool_use_id": event.tool_use_id})
        elif kind == INTERRUPT:
            run.aborted = True
            self._track["answering"] = False  # what it says next answers the stop, not the message
        elif kind == REPLY:
            self._reply(run, event)
        elif kind == API_ERROR:
            self._api_error(run, event)
        return _NONE

    # --- transitions ------------------------------------------------------------------------

    def _start(self, event: Event) -> list[Run]:
        done: list[Run] = []
        superseded_from = None
        j = self._tails.get(event.parent_uuid) if event.parent_uuid else None
        current = self._run
        if current is not None:
            self._settled(current).complete = True
            current.end_offset = max(current.end_offset, event.offset)
            if j is not None and j < current.index:
                superseded_from = j + 1
                current.superseded = True
            elif current.tail_uuid:
                self._tails[current.tail_uuid] = current.index
            done.append(current)
        elif j is not None and j < self._next:
            superseded_from = j + 1
        if superseded_from is not None:
            self._tails = {u: i for u, i in self._tails.items() if i < superseded_from}
        while len(self._tails) > TAILS_CAP:  # the oldest go first (a run adds at most one)
            del self._tails[next(iter(self._tails))]
        self._known, self._known_before = {}, 0
        text = redact(cut(event.text, REQUEST_CAP), self._known)
        before = self._track
        heard = hear(
            self._classifier.lexicons(),
            text,
            before["said"],  # only matched, never kept: the cue quotes the person's words
            first=self._next == 0,
            after_error=bool(before["halted"]),
            agent_did=current.tool_inputs_text if current is not None else "",
        )
        self._run = Run(
            session_id=event.session_id,
            index=self._next,
            started_at=event.timestamp,
            ended_at=event.timestamp,
            cwd=event.cwd,
            request=text,
            correction=heard.correction,
            correction_cue=heard.cue or "",
            correction_kind=heard.kind or "",
            start_offset=event.offset,
            end_offset=max(event.end, event.offset),
            head_uuid=event.uuid,
            tail_uuid=event.uuid,
            superseded_from=superseded_from,
        )
        self._heard_preference(self._run, heard, text)
        admits = self._next > 0 and not picks_an_option(before["said"], text)
        self._track = {**_FRESH_TRACK, "failing": [], "answering": True, "may_admit": admits}
        self._next += 1
        self._pending = {}
        return done

    def _tool_call(self, run: Run, event: Event) -> None:
        run.tool_calls += 1
        path = event.file_path
        if path and path not in run.files_written and len(run.files_written) < FILES_CAP:
            run.files_written.append(path)
        if event.tool_use_id:  # summarised and shaped only if its result is an error, or may fix one
            self._pending[event.tool_use_id] = event
            if len(self._pending) > PENDING_CAP:
                del self._pending[next(iter(self._pending))]
        room = TOOL_INPUTS_CAP - len(run.tool_inputs_text) - self._inputs_size
        if room > 0:  # summarised here (observing leaves inputs whole), redacted when settled
            values = meaningful_text(event.name, event.input)
            # counted without the invisible characters redaction drops (a write_stdin's ^C):
            # the room left is the same however the transcript is read in pieces
            piece = cut(strip_invisible(f"{event.name}: {values}\n" if values else f"{event.name}\n"), room)
            self._inputs.append(piece)
            self._inputs_size += len(piece)

    def _tool_result(self, run: Run, event: Event) -> None:
        track = self._track
        call = self._pending.pop(event.tool_use_id, None) if event.tool_use_id else None
        if event.rejected:
            run.aborted = True
            track["last_bad"] = False
        elif event.is_error:
            # its next words may admit its own failed call, a timed-out one too, not the person's point
            track["answering"] = False
            if judged_transient(event, self._classifier):
                run.transient_errors += 1
            else:
                run.errors += 1
                self._real_error(run, event.text, call)
        else:
            track["last_bad"] = False
            looked = isinstance(call, Event) and call.name in calls.LOOK_TOOLS
            if (
                track["failing"]
                and not track["ok_after_error"]
                and not looked
                and track["tried"] < FIX_WINDOW
            ):
                track["tried"] += 1
                later = _shape(call)
                if any(calls.fixes(failed, later) for failed in track["failing"]):
                    track["ok_after_error"], track["failing"] = True, []

    def _reply(self, run: Run, event: Event) -> None:
        """What the person typed mid-run (not an option they picked) is judged like a request.

        The agent's words before it are its question (an answer) or the call it proposed
        (rejection feedback): a reply is never a session's first words.
        """
        if not event.typed:
            return
        words = redact(event.typed, self._known)
        if len(run.replies) < RUN_REPLIES:
            run.replies.append(cut(words, RUN_REPLY_CAP))
        heard = hear(self._classifier.lexicons(), words, self._track["said"] or event.text)
        if heard.correction and not run.correction:
            run.correction = True
            run.correction_reply = cut(words, REQUEST_CAP)
            run.correction_cue, run.correction_kind = heard.cue or "", heard.kind or ""
        self._heard_preference(run, heard, words)
        track = self._track
        track["answering"], track["reply"] = True, words
        # typed into the agent's question form: its question, whatever its words before it said
        track["may_admit"] = event.name != ANSWER and not picks_an_option(track["said"] or event.text, words)

    def _answered(self, run: Run, text: str) -> None:
        """The agent's first words after the person's: an admission ("You're right") answered a correction."""
        track = self._track
        track["answering"] = False
        if run.correction or not track["may_admit"]:
            return
        said = admission(text)
        if said is not None and not asks_for_words(track["reply"] or run.request):  # rare: asked last
            run.correction = True
            run.correction_cue, run.correction_kind = answer_cue(said), ACKNOWLEDGED
            if track["reply"]:
                run.correction_reply = cut(track["reply"], REQUEST_CAP)

    @staticmethod
    def _heard_preference(run: Run, heard: Heard, words: str) -> None:
        """The first standing preference of a run is kept with its words (it fires once per run)."""
        if heard.preference and not run.preference:
            run.preference = True
            run.preference_text = cut(words, REQUEST_CAP)
            run.preference_cue = heard.preference_cue or ""

    def _api_error(self, run: Run, event: Event) -> None:
        track = self._track
        transient = judged_transient(event, self._classifier)
        if event.continued:
            was = track["api"]  # how the incident was counted: "transient" / "real" / None
            track["api"] = None
            if transient:
                return
            if was == "transient":
                run.transient_errors -= 1
                run.errors += 1
                self._real_error(run, event.text)
            elif was is None:
                run.errors += 1
                self._real_error(run, event.text)
            else:
                track["last_bad"] = True
            return
        if transient:
            run.transient_errors += 1
            track["api"] = "transient"
        else:
            run.errors += 1
            track["api"] = "real"
            self._real_error(run, event.text)

    def _real_error(self, run: Run, text: str, call: Event | dict | None = None) -> None:
        """A real error: its text, the call that caused it (kept beside it), and that call's shape.

        The next calls may be the shape's fix (None: an API error, a call not known).
        """
        track = self._track
        track["had_error"] = True
        track["last_bad"] = True
        if not track["ok_after_error"] and len(track["failing"]) < FAILING_CAP:
            track["failing"] = [*track["failing"], _shape(call)]
            track["tried"] = 0  # the calls after this failure may fix it
        if len(run.error_texts) < RUN_ERROR_TEXTS:
            # cut between words first, so only what is kept is redacted (a word is never split)
            run.error_texts.append(redact(head_and_tail(text or "error", RUN_ERROR_TEXT_CAP), self._known))
            run.error_calls.append(redact(_call_text(call), self._known) if call else "")


def _saved(call: Event | dict) -> dict:
    """A pending call as the builder's saved state keeps it: its shape and its summary, redacted."""
    if isinstance(call, dict):
        return call
    return {"shape": calls.to_list(_shape(call)), "text": redact(_call_text(call))}


def _shape(call: Event | dict | None) -> calls.Shape | None:
    """The shape of a pending call (an event, or what the saved state kept of it)."""
    if isinstance(call, Event):
        return calls.shape(call.name, call.input, call.file_path)
    return calls.from_list(call.get("shape")) if isinstance(call, dict) else None


def _call_text(call: Event | dict) -> str:
    """A call by its tool and meaningful input (`Bash: make test`), capped; not redacted yet."""
    if isinstance(call, dict):
        return str(call.get("text") or "")  # summarised when the builder's state was saved
    values = meaningful_text(call.name, call.input)
    return cut(f"{call.name}: {values}" if values else call.name, RUN_ERROR_CALL_CAP)


def mark_superseded(runs: list[Run]) -> list[Run]:
    """Apply the superseded_from markers of `runs` (all runs of one file, in index order)."""
    by_index = {run.index: run for run in runs}
    for run in runs:
        if run.superseded_from is not None:
            for index in range(run.superseded_from, run.index):
                if index in by_index:
                    by_index[index].superseded = True
    return runs
