"""The `apply_reflection` answer: parsed, validated against the agent's state, planned.

The model's answer is untrusted input, checked here before anything is written (pure, no
I/O): sizes are capped before costly scans; secrets, invisible characters and reverted
lessons refuse an operation on its own; only a malformed answer raises `AnswerError`.
Reasons quote model text only as short, visible, secret-free excerpts (they reach git).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from evolve.config import LimitsConfig
from evolve.errors import EvolveError
from evolve.names import name_problem
from evolve.reflect.tokens import count_tokens
from evolve.store.history import clean_line
from evolve.transcripts.redact import find_invisible, find_secrets, make_visible, redact, strip_invisible
from evolve.workspace import memo as memo_mod
from evolve.workspace.skills import (
    CHARS_PER_TOKEN,
    SKILL_FILE,
    Skill,
    parse_skill,
    render_skill,
    split_frontmatter,
)

CREATE, PATCH, RETIRE, MEMO, NOTHING = (
    "create_skill",
    "patch_skill",
    "retire_skill",
    "update_memo",
    "nothing_to_save",
)
OPS = (CREATE, PATCH, RETIRE, MEMO, NOTHING)
SECTIONS = (memo_mod.SELF, memo_mod.STRATEGIES)
MAX_ANSWER_CHARS = 2_000_000  # an answer given as JSON text
MAX_REASON_CHARS = 2_000
BLOCKED_REASON = "a person reverted this lesson"
_HEADING = re.compile(r"^ {0,3}#{1,2}(?:[ \t]|$)", re.MULTILINE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_FIELDS = {
    "name": "Skill name: 1-64 chars of a-z, 0-9 and single '-'.",
    "description": "One line: what the skill does and when to use it (no '<' or '>').",
    "body": "The skill's Markdown: actionable rules with concrete triggers.",
    "old": "Exact text occurring once in the skill's body.",
    "new": "Replacement for 'old'.",
    "content": "The whole new content of the memo section (bullets, no '#'/'##' headings).",
    "reason": "Why (retire_skill, nothing_to_save).",
}
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
    """One skill folder as the validator needs it (`text` is the whole SKILL.md)."""

    name: str
    valid: bool
    pinned: bool
    body: str
    text: str


@dataclass(frozen=True)
class SkillState:
    """The agent's skills (by folder name) and memo text when the reflection started."""

    skills: Mapping[str, SkillSnapshot] = field(default_factory=dict)
    memo: str = ""

    @classmethod
    def build(cls, skills: Iterable[Skill | SkillSnapshot], memo: str) -> SkillState:
        snaps = [
            s if isinstance(s, SkillSnapshot) else SkillSnapshot(s.name, s.valid, s.pinned, s.body, s.text)
            for s in skills
        ]
        return cls({s.name: s for s in snaps}, memo)


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


@dataclass(frozen=True)
class ValidOp:
    """One write for the apply step, in order: `text` is the file's whole new content.

    The rendered SKILL.md (create), the patched SKILL.md (patch), the memo (cumulative over
    an answer's memo operations), None for retire; `previous` is what it replaces.
    """

    index: int
    kind: str
    name: str
    section: str
    text: str | None
    previous: str | None
    fingerprints: tuple[str, ...]
    description: str = ""
    reason: str = ""

    @property
    def path(self) -> str:
        """Repository-relative path, built only from a validated name or section."""
        if self.kind == MEMO:
            return memo_mod.MEMO_FILE
        folder = PurePosixPath("skills") / self.name
        return str(folder if self.kind == RETIRE else folder / SKILL_FILE)


@dataclass(frozen=True)
class Plan:
    """What a reflection would write; `--dry-run` prints it, apply commits it."""

    summary: str
    operations: list[ValidOp]
    rejected: list[Rejection]
    nothing_to_save: bool
    nothing_reason: str = ""

    @property
    def fingerprints(self) -> list[str]:
        return [fp for op in self.operations for fp in op.fingerprints]


class _Reject(Exception):
    pass


def _show(value: object, limit: int = 40) -> str:
    """A short excerpt of model text for a reason: no secret, nothing invisible."""
    text = value if isinstance(value, str) else type(value).__name__
    if find_secrets(text[:2000]):
        return "<text holding a secret>"
    text = make_visible(text[: limit * 2])
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def normalise(text: str) -> str:
    """Lesson text for fingerprints: NFKC, case-folded, punctuation gone, spaces collapsed."""
    return " ".join(re.sub(r"[^\w\s]|_", "", _fold(text)).split())


def _digest(tag: str, *parts: str) -> str:
    return hashlib.sha256("\x1f".join((tag, *parts)).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _memo_lines(content: str) -> list[str]:
    return [ln for ln in (normalise(_LIST_MARKER.sub("", raw)) for raw in content.splitlines()) if ln]


def fingerprints(op: Mapping[str, Any], memo: str = "") -> list[str]:
    """Stable digests of an operation's lesson (`_blocking` says which ones block).

    create → [name, body]; patch → [name+new]; retire → [name]; update_memo → one per line
    added compared with the section in `memo` (the current memo), without the section's
    name, so a reverted bullet moved to the other section is still caught.
    """
    kind, name = op.get("op"), str(op.get("name", ""))
    if kind == CREATE:
        return [_digest("create-name", name), _digest("skill-body", normalise(str(op.get("body", ""))))]
    if kind == PATCH:
        return [_digest("patch", name, normalise(str(op.get("new", ""))))]
    if kind == RETIRE:
        return [_digest("retire", name)]
    if kind == MEMO:
        section = op.get("section")
        before = set(_memo_lines(memo_mod.section_content(memo, section))) if section in SECTIONS else set()
        added = dict.fromkeys(ln for ln in _memo_lines(str(op.get("content", ""))) if ln not in before)
        return [_digest("memo-line", line) for line in added]
    return []


def _blocking(kind: str, prints: list[str]) -> list[str]:
    # A created skill is blocked by its body, not its name: a name is a topic, not a lesson.
    # After a person reverts a wrong rule under `git-rebase`, a different rule under that
    # name may be right; the same body under any name is the reverted lesson again.
    return prints[1:] if kind == CREATE else prints


def _string(op: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = op.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise _Reject(f"'{key}' is missing" if value is None else f"'{key}' must be a string")
    return value


def _check_text(key: str, value: str) -> None:
    hidden = find_invisible(value)
    if hidden:
        more = f" and {len(hidden) - 1} more" if len(hidden) > 1 else ""
        raise _Reject(f"'{key}' holds invisible characters ({hidden[0][0]} at {hidden[0][1]}{more})")
    secrets = find_secrets(value)
    if secrets:
        raise _Reject(f"'{key}' holds a secret ({', '.join(sorted({k for k, _, _ in secrets}))})")


def _reason(op: Mapping[str, Any]) -> str:
    reason = _string(op, "reason", required=False)
    if len(reason) > MAX_REASON_CHARS:
        raise _Reject(f"'reason' is {len(reason)} chars; at most {MAX_REASON_CHARS}")
    _check_text("reason", reason)
    return clean_line(reason)


def _name(op: Mapping[str, Any]) -> str:
    name = op.get("name")
    if not isinstance(name, str) or name_problem(name):
        raise _Reject(f"skill name {_show(name)} {name_problem(name)}")
    _check_text("name", name)
    return name


class _Validator:
    """Checks each kind of operation against the state; raises _Reject with the reason."""

    def __init__(self, state: SkillState, limits: Limits) -> None:
        self.state, self.limits = state, limits
        self.memo = state.memo  # advanced by each accepted update_memo

    def _size(self, key: str, body: str) -> None:
        cap = self.limits.skill_body_tokens
        approx = len(body) // CHARS_PER_TOKEN  # the pre-commit hook's estimate, a cheap guard first
        if approx > cap:
            raise _Reject(f"'{key}' is about {approx} tokens ({len(body)} chars); at most {cap}")
        used = count_tokens(body)
        if used > cap:
            raise _Reject(f"'{key}' is {used} tokens; at most {cap}")

    def _existing(self, name: str) -> SkillSnapshot:
        skill = self.state.skills.get(name)
        if skill is None:
            raise _Reject(f"there is no skill named '{name}'")
        if not skill.valid:
            raise _Reject(f"skill '{name}' is broken; a person must fix it first")
        if skill.pinned:
            raise _Reject(f"skill '{name}' is pinned; only a person may change it")
        return skill

    def _reparse(self, name: str, text: str, description: str | None = None) -> None:
        skill = parse_skill(text, name, Path("skills", name, SKILL_FILE), self.limits.skill_body_tokens)
        if skill.problems:
            raise _Reject(f"the resulting SKILL.md would be invalid: {clean_line(skill.problems[0], 160)}")
        if description is not None and skill.description != description:
            raise _Reject("the description does not survive YAML quoting")

    def create(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        name = _name(op)
        raw, body, cap = _string(op, "description"), _string(op, "body"), self.limits.description_chars
        description = " ".join(raw.split()) if len(raw) <= 4 * cap else raw  # one YAML line
        if not description or len(description) > cap:
            raise _Reject(f"description must be 1-{cap} chars on one line (is {len(description)})")
        self._size("body", body)
        _check_text("description", raw)
        _check_text("body", body)
        if "<" in description or ">" in description:
            raise _Reject("description may not contain '<' or '>'")
        if not body.strip():
            raise _Reject("body is empty")
        if name in self.state.skills:
            raise _Reject(f"skill '{name}' exists; use patch_skill")
        twin = next((s for s in self.state.skills if _fold(s) == _fold(name)), None)
        if twin is not None:
            raise _Reject(f"skill '{name}' collides with the existing folder {_show(twin)}")
        text = render_skill(name, description, body)
        self._reparse(name, text, description)
        return ValidOp(index, CREATE, name, "", text, None, tuple(fingerprints(op)), description=description)

    def patch(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        name, old, new = _name(op), _string(op, "old"), _string(op, "new")
        if not old:
            raise _Reject("'old' is empty")
        self._size("old", old)
        self._size("new", new)
        _check_text("old", old)
        _check_text("new", new)
        skill = self._existing(name)
        at = skill.body.find(old)
        if at < 0:
            raw, _ = split_frontmatter(skill.text)
            if raw and old in raw:
                raise _Reject("'old' occurs only in the frontmatter; a patch changes the body only")
            raise _Reject("'old' does not occur in the skill's body")
        if skill.body.find(old, at + 1) >= 0:
            raise _Reject("'old' occurs more than once in the body; quote more context")
        body = skill.body[:at] + new + skill.body[at + len(old) :]
        if not body.strip():
            raise _Reject("the patch would empty the body; use retire_skill")
        self._size("patched body", body)
        before = {skill.body[s:e] for _k, s, e in find_secrets(skill.body)}
        if any(body[s:e] not in before for _k, s, e in find_secrets(body)):
            raise _Reject("the patched body would hold a secret")
        text = skill.text[: len(skill.text) - len(skill.body)] + body  # frontmatter bytes kept
        self._reparse(name, text)
        return ValidOp(index, PATCH, name, "", text, skill.text, tuple(fingerprints(op)))

    def retire(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        name, reason = _name(op), _reason(op)
        skill = self._existing(name)
        return ValidOp(index, RETIRE, name, "", None, skill.text, tuple(fingerprints(op)), reason=reason)

    def update_memo(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        section, content, cap = op.get("section"), _string(op, "content"), self.limits.memo_section_chars
        if section not in SECTIONS:
            raise _Reject(f"section {_show(section)} is not one of {', '.join(SECTIONS)}")
        if len(content.strip()) > cap:
            raise _Reject(f"content is {len(content.strip())} chars; at most {cap}")
        _check_text("content", content)
        if _HEADING.search(content):
            raise _Reject("content may not hold a '# ' or '## ' heading line (use '### ' or bullets)")
        renamed = _renamed_heading(self.memo, section)
        if renamed:  # a third section would be appended next to the person's renamed one
            raise _Reject(
                f"memo.md has no '## {memo_mod.HEADINGS[section]}' but a '## {renamed}': a person "
                "renamed it; rename it back so evolve can write there"
            )
        text = memo_mod.replace_section(self.memo, section, content)
        if memo_mod.section_content(text, section) != content.strip():
            raise _Reject("content would spill out of its section (an unclosed code fence?)")
        new_problems = set(memo_mod.problems(text, cap)) - set(memo_mod.problems(self.memo, cap))
        if new_problems:
            raise _Reject(f"the memo would become invalid: {sorted(new_problems)[0]}")
        return ValidOp(index, MEMO, "", section, text, self.memo, tuple(fingerprints(op, self.memo)))


def _renamed_heading(memo: str, section: str) -> str | None:
    """The `##` heading that took a standard one's place, when the standard one is gone."""
    headings = [found.heading for found in memo_mod.sections(memo)]
    if memo_mod.HEADINGS[section] in headings:
        return None
    return next((h for h in headings if h not in memo_mod.HEADINGS.values()), None)


def _target(op: Mapping[str, Any]) -> str:
    """The skill name or memo section an operation names, when it is safe to show."""
    section, name = op.get("section"), op.get("name")
    if op.get("op") == MEMO:
        return section if section in SECTIONS else ""
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


def _summary(summary: str | None, ops: list[ValidOp], limit: int) -> str:
    """One safe line: secrets redacted, invisible characters gone; derived when empty."""
    line = clean_line(redact(strip_invisible((summary or "")[: limit * 10])), limit)
    if line or not ops:
        return line or "nothing to save"
    return clean_line("; ".join(f"{op.kind.replace('_', ' ')} {op.name or op.section}" for op in ops), limit)


def parse_answer(
    raw: Any, state: SkillState, limits: Limits | None = None, blocked: Iterable[str] = ()
) -> Plan:
    """Validate an `apply_reflection` input (a dict, or its JSON text) into a Plan."""
    limits, blocked = limits or Limits(), frozenset(blocked)
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
    validator = _Validator(state, limits)
    handlers = {
        CREATE: validator.create,
        PATCH: validator.patch,
        RETIRE: validator.retire,
        MEMO: validator.update_memo,
    }
    valid: list[ValidOp] = []
    rejected: list[Rejection] = []
    nothing: list[tuple[int, str]] = []
    claimed: dict[tuple[str, str], int] = {}
    for index, op in enumerate(operations):
        kind = op.get("op") if isinstance(op, dict) else None
        op_name = kind if isinstance(kind, str) and kind in OPS else "unknown"
        target = _target(op) if isinstance(op, dict) else ""
        try:
            if not isinstance(op, dict):
                raise _Reject(f"operation is a {type(op).__name__}, not an object")
            if op_name == "unknown":
                raise _Reject(f"unknown op {_show(kind)} (one of {', '.join(OPS)})")
            if kind == NOTHING:
                nothing.append((index, _reason(op)))
                continue
            result = handlers[op_name](index, op)
            key = ("memo" if kind == MEMO else "skill", target)
            if key in claimed:
                raise _Reject(f"'{target}' already has an operation in this answer (#{claimed[key]})")
            if blocked.intersection(_blocking(op_name, list(result.fingerprints))):
                raise _Reject(BLOCKED_REASON)
            claimed[key] = index
            valid.append(result)
            if kind == MEMO:
                validator.memo = result.text or ""
        except _Reject as exc:
            rejected.append(Rejection(index, op_name, str(exc), target))
    if valid:
        rejected += [
            Rejection(i, NOTHING, "contradicts the other operations of this answer") for i, _ in nothing
        ]
        rejected.sort(key=lambda r: r.op_index)
    return Plan(
        summary=_summary(summary, valid, limits.summary_chars),
        operations=valid,
        rejected=rejected,
        nothing_to_save=not valid and (bool(nothing) or not operations),
        nothing_reason="; ".join(r for _, r in nothing if r) if not valid else "",
    )
