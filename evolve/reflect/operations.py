"""The `apply_reflection` answer: its shape, the checks of one field, and what a plan holds.

The model's answer is untrusted input, checked before anything is written (pure, no I/O):
sizes are capped before costly scans; secrets and invisible characters refuse an
operation on its own; only a malformed answer as a whole raises `AnswerError`. How the
operations compose, what waits for review and what a person undid are `compose`'s.
Reasons quote model text only as short, visible, secret-free excerpts (they reach git).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from evolve.config import LimitsConfig
from evolve.errors import EvolveError
from evolve.names import name_problem
from evolve.reflect.evalcase import CaseFiles
from evolve.store.history import clean_line
from evolve.transcripts.redact import find_invisible, find_secrets, make_visible, redact
from evolve.workspace import memo as memo_mod
from evolve.workspace.memo import MARKER_SIZE
from evolve.workspace.skills import SKILL_FILE, Skill

CREATE, PATCH, RETIRE, MEMO, NOTHING, GUARD, UNGUARD = (
    "create_skill",
    "patch_skill",
    "retire_skill",
    "update_memo",
    "nothing_to_save",
    "set_guard",
    "retire_guard",
)
OPS = (CREATE, PATCH, RETIRE, MEMO, GUARD, UNGUARD, NOTHING)
GUARD_OPS = (GUARD, UNGUARD)
GUARDS_FILE = "guards.toml"
SECTIONS = (memo_mod.SELF, memo_mod.STRATEGIES)
MAX_ANSWER_CHARS = 2_000_000  # an answer given as JSON text
MAX_REASON_CHARS = 2_000
BLOCKED_REASON = "a person undid this lesson"


def kept_note(count: int) -> str:
    """What a memo update says of the lines it kept: a person's, or ones whose removal they rejected."""
    return f"kept {count} line(s) a person wrote or chose to keep"


_FIELDS = {
    "name": "Skill name: 1-64 chars of a-z, 0-9 and single '-'.",
    "description": "One line: what the skill does and when to use it (no '<' or '>').",
    "body": "The skill's Markdown: actionable rules with concrete triggers.",
    "old": "Exact text occurring once in the skill's body (as earlier operations of this answer left it).",
    "new": "Replacement for 'old'.",
    "content": "The whole new content of the memo section (bullets, no '#'/'##' headings).",
    "reason": "Why (retire_skill, retire_guard, nothing_to_save).",
    "guard": "Guard id (set_guard, retire_guard): 1-64 chars of a-z, 0-9 and single '-'.",
    "tool": "The tool the guard watches: Bash, Edit, Write, MultiEdit, Read, NotebookEdit, or shell.",
    "pattern": "What the guard matches on the command (shell) or file path (file tools): a regex "
    "without backreferences or lookaround.",
    "message": "What the agent is told at the call: the rule and what to do instead (one or two lines).",
    "lesson": "The ignored lesson the guard enforces: its id as the bundle shows it (memo bullet id or "
    "skill name).",
    "evidence": "The runs that ignored that lesson, as the bundle names them (run N of session S).",
    "project": "Optional: the folder (absolute path) the guard holds in; everywhere when left out.",
    "action": "Optional. A guard evolve writes always reminds; only a person turns one into deny.",
}
EVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Optional, beside a lesson you create or rewrite: a test that passes when the lesson "
    "is followed. 'prompt': a request like the one in the evidence (the person's words where possible); "
    "'graders': deterministic checks of what the agent then does; 'lesson' (update_memo only): the "
    "bullet it tests, copied from 'content'.",
    "required": ["prompt", "graders"],
    "properties": {
        "lesson": {"type": "string"},
        "prompt": {"type": "string"},
        "graders": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": {"type": "string", "enum": ["regex", "tool_used", "file_exists"]},
                    "name": {"type": "string", "description": "a-z, 0-9, '-': the grader's file name"},
                    "target": {"type": "string", "enum": ["trace", "last_message"]},
                    "match": {"type": "string", "description": "contains | not_contains | count:N"},
                    "pattern": {"type": "string", "description": "A regular expression (JavaScript's)."},
                    "flags": {"type": "string", "description": "Any of i, m, s."},
                    "tool": {"type": "string", "description": "A tool name: Bash, Edit, Write, Read, …"},
                    "input_match": {
                        "type": "string",
                        "description": "A regular expression on the call's input.",
                    },
                    "min": {"type": "integer"},
                    "max": {"type": "integer"},
                    "path": {"type": "string", "description": "A file the run must leave (relative)."},
                    "exists": {"type": "boolean"},
                },
            },
        },
    },
}
OP_KEYS = ("op", "section", *_FIELDS)  # what an operation may hold; evolve keeps nothing else (and `eval`)
TOOL_SCHEMA: dict[str, Any] = {
    "name": "apply_reflection",
    "description": "Record what to learn: create, patch or retire skills, rewrite a memo section, "
    "or say there is nothing to save. Each operation is validated on its own.",
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "One line for the commit subject."},
            "operations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["op"],
                    "properties": {
                        "op": {"type": "string", "enum": list(OPS)},
                        "section": {"type": "string", "enum": list(SECTIONS)},
                        **{key: {"type": "string", "description": text} for key, text in _FIELDS.items()},
                        "eval": EVAL_SCHEMA,
                    },
                },
            },
        },
        "required": ["summary", "operations"],
    },
}


class AnswerError(EvolveError):
    """The answer as a whole is malformed (str(exc) is the reason): nothing applies."""


@dataclass(frozen=True)
class SkillSnapshot:
    """One skill folder as the plan needs it (`text` is the whole SKILL.md).

    `authors`: per line of `text`, True when a person wrote it; `person_files`: a person
    wrote another file of the folder; `symlink`: SKILL.md (or its folder) is a link;
    `marker_size`: its `conflict-marker-size` when below git's 7 (workspace.conflicts).
    """

    name: str
    valid: bool
    pinned: bool
    body: str
    text: str
    authors: tuple[bool, ...] = ()
    person_files: bool = False
    symlink: bool = False
    marker_size: int = MARKER_SIZE


@dataclass(frozen=True)
class SkillState:
    """The agent's skills (by folder name) and memo as they are, and who wrote which line."""

    skills: Mapping[str, SkillSnapshot] = field(default_factory=dict)
    memo: str = ""
    memo_authors: tuple[bool, ...] = ()
    memo_refusal: str = ""  # why memo.md cannot be written (a symbolic link, a folder), or ""
    skills_refusal: str = ""  # why nothing under skills/ can be written, or ""
    cases: Mapping[str, CaseFiles] = field(default_factory=dict)  # lesson id → its eval case
    guards: str | None = None  # guards.toml (None: no such file)
    guards_authors: tuple[bool, ...] = ()
    guards_blocked: frozenset[str] = frozenset()  # guard ids and patterns a person undid
    guards_refusal: str = ""  # why guards.toml cannot be written (a link, a folder), or ""
    ignored: frozenset[str] | None = frozenset()  # lessons ever ignored (None: a replay, checked when made)

    @classmethod
    def build(cls, skills: Iterable[Skill | SkillSnapshot], memo: str, **extra: Any) -> SkillState:
        snaps = [
            s if isinstance(s, SkillSnapshot) else SkillSnapshot(s.name, s.valid, s.pinned, s.body, s.text)
            for s in skills
        ]
        return cls({s.name: s for s in snaps}, memo, **extra)


@dataclass(frozen=True)
class Limits:
    """Caps on one answer (the first two come from `[limits]` in the config)."""

    skill_body_tokens: int = LimitsConfig.skill_body_tokens
    memo_section_chars: int = LimitsConfig.memo_section_chars
    max_operations: int = 20
    description_chars: int = 1024
    summary_chars: int = 200

    @classmethod
    def from_config(cls, limits: LimitsConfig, **overrides: int) -> Limits:
        return cls(
            skill_body_tokens=limits.skill_body_tokens,
            memo_section_chars=limits.memo_section_chars,
            **overrides,
        )


@dataclass(frozen=True)
class Rejection:
    """An operation refused on its own; `reason` and `target` are safe to store and show."""

    op_index: int
    op_name: str
    reason: str
    target: str = ""

    def line(self) -> str:
        return f"{self.op_name} {self.target}: {self.reason}".replace("  ", " ").strip()


@dataclass(frozen=True)
class ValidOp:
    """One operation that passed, in answer order: `text` is its file's whole new content.

    For skills and the memo, `text` is the file after this operation and every earlier one
    of the answer (they compose), `previous` the file before it; None for retire. `why`:
    the reason it waits for review; `kept`: lines a person wrote that it keeps in place;
    `left_out`: lines it would have brought back although a person undid them.
    """

    index: int
    kind: str
    name: str
    section: str
    text: str | None
    previous: str | None
    description: str = ""
    reason: str = ""
    why: str = ""
    kept: int = 0
    left_out: int = 0
    files: tuple[tuple[str, str | None], ...] = ()  # an eval case's files it writes (None: removes)
    case: str = ""  # the eval case it writes (its folder), or ""
    case_refused: str = ""  # why the eval case it came with is not written, or ""
    lesson: str = ""  # a guard operation: the ignored lesson it enforces
    downgraded: bool = False  # a guard the answer asked to deny lands as remind

    @property
    def target(self) -> str:
        return self.name or self.section

    @property
    def path(self) -> str:
        """Repository-relative path, built only from a validated name or section."""
        if self.kind == MEMO:
            return memo_mod.MEMO_FILE
        if self.kind in GUARD_OPS:
            return GUARDS_FILE
        folder = PurePosixPath("skills") / self.name
        return str(folder if self.kind == RETIRE else folder / SKILL_FILE)

    def line(self) -> str:
        return f"{self.kind} {self.target}"


@dataclass(frozen=True)
class Plan:
    """What an answer does: `operations` land, `waiting` go to a proposal, `rejected` do nothing.

    Each in answer order, with its reason (a person decides on a proposal). `source` is the
    answer itself: apply plans it again under the agent's lock, against the files as they
    are then. `--dry-run` prints a plan; apply commits one.
    """

    summary: str
    operations: list[ValidOp]
    rejected: list[Rejection]
    nothing_to_save: bool
    nothing_reason: str = ""
    waiting: list[ValidOp] = field(default_factory=list)
    source: Mapping[str, Any] = field(default_factory=dict)
    unchanged: list[Rejection] = field(default_factory=list)  # valid, but nothing to write

    @property
    def proposed(self) -> int:
        """Operations the answer proposed (nothing_to_save aside)."""
        refused = len([r for r in self.rejected if r.op_name != NOTHING])
        return len(self.operations) + len(self.waiting) + refused + len(self.unchanged)

    def subject(self, limit: int = 200) -> str:
        """What landed, for the commit subject: the model's summary only when all of it did."""
        if self.operations and not self.waiting and not self.rejected:
            return self.summary
        landed = "; ".join(f"{op.kind.replace('_', ' ')} {op.target}" for op in self.operations)
        rest = [
            f"{n} {what}"
            for n, what in ((len(self.waiting), "waiting for review"), (len(self.rejected), "rejected"))
            if n
        ]
        return clean_line(f"{landed} ({', '.join(rest)})" if rest else landed, limit)


class Reject(Exception):
    """One operation is refused; str(exc) is the reason (safe to show)."""


class Unchanged(Reject):
    """A valid operation that changes nothing: the files already say so (not a refusal)."""


def show(value: object, limit: int = 40) -> str:
    """A short excerpt of model text for a reason: no secret, nothing invisible."""
    text = value if isinstance(value, str) else type(value).__name__
    if find_secrets(text[:2000]):
        return "<text holding a secret>"
    text = make_visible(text[: limit * 2])
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def string(op: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = op.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise Reject(f"'{key}' is missing" if value is None else f"'{key}' must be a string")
    return value


def check_text(key: str, value: str) -> None:
    hidden = find_invisible(value)
    if hidden:
        more = f" and {len(hidden) - 1} more" if len(hidden) > 1 else ""
        raise Reject(f"'{key}' holds invisible characters ({hidden[0][0]} at {hidden[0][1]}{more})")
    secrets = find_secrets(value)
    if secrets:
        raise Reject(f"'{key}' holds a secret ({', '.join(sorted({k for k, _, _ in secrets}))})")


def reason_of(op: Mapping[str, Any]) -> str:
    reason = string(op, "reason", required=False)
    if len(reason) > MAX_REASON_CHARS:
        raise Reject(f"'reason' is {len(reason)} chars; at most {MAX_REASON_CHARS}")
    check_text("reason", reason)
    return clean_line(reason)


def name_of(op: Mapping[str, Any]) -> str:
    name = op.get("name")
    if not isinstance(name, str) or name_problem(name):
        raise Reject(f"skill name {show(name)} {name_problem(name)}")
    check_text("name", name)
    return name


def target_of(op: Mapping[str, Any]) -> str:
    """The skill name or memo section an operation names, when it is safe to show."""
    section, name = op.get("section"), op.get("name")
    if op.get("op") == MEMO:
        return section if section in SECTIONS else ""
    if op.get("op") in GUARD_OPS:
        name = op.get("guard")
    return name if isinstance(name, str) and not name_problem(name) and not find_secrets(name) else ""


def _load(raw: Any) -> Any:
    """A dict passes through; JSON text (bytes or str, e.g. from `claude -p`) is parsed."""
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise AnswerError("the answer is not UTF-8 text") from None
    if isinstance(raw, str):
        if len(raw) > MAX_ANSWER_CHARS:
            raise AnswerError(f"the answer is {len(raw)} chars of text; at most {MAX_ANSWER_CHARS}")
        try:
            return json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise AnswerError(f"the answer is not valid JSON: {clean_line(exc, 120)}") from None
    return raw


def read_answer(raw: Any, limits: Limits) -> tuple[str, list[Any]]:
    """(the model's summary, its operations) of a well-formed answer; AnswerError otherwise."""
    answer = _load(raw)
    if not isinstance(answer, dict):
        raise AnswerError(f"the answer must be a JSON object, not {type(answer).__name__}")
    operations = answer.get("operations")
    if not isinstance(operations, list):
        raise AnswerError("the answer has no 'operations' list")
    if len(operations) > limits.max_operations:
        raise AnswerError(f"the answer has {len(operations)} operations; at most {limits.max_operations}")
    summary = answer.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise AnswerError(f"'summary' must be a string, not {type(summary).__name__}")
    return summary or "", operations


def answer_of(raw: Any, limits: Limits) -> dict[str, Any]:
    """The answer as a dict of its summary and operations (what a Plan keeps as `source`)."""
    summary, operations = read_answer(raw, limits)
    return {"summary": summary, "operations": operations}


def kept_op(op: Mapping[str, Any]) -> dict[str, Any]:
    """An operation as evolve keeps it (a git note): its schema's text fields, secrets redacted.

    Fields an operation's kind checks hold no secret already; the rest (a `reason` on a
    create, a field the schema does not know) are not checked, so nothing is kept raw.
    """
    kept: dict[str, Any] = {
        key: redact(value) for key, value in op.items() if key in OP_KEYS and isinstance(value, str)
    }
    case = op.get("eval")
    if isinstance(case, dict):
        kept["eval"] = _redacted(case)
    return kept


def _redacted(value: Any) -> Any:
    """A JSON value with every string in it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {str(k): _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def clean_summary(summary: str, ops: list[ValidOp], limit: int) -> str:
    """One safe line: secrets redacted, invisible characters gone; derived when empty."""
    line = clean_line(redact(summary[: limit * 10]), limit)
    if line or not ops:
        return line or "nothing to save"
    return clean_line("; ".join(f"{op.kind.replace('_', ' ')} {op.target}" for op in ops), limit)
