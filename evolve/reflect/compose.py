"""How one answer's operations compose: what lands, what waits for a person, what is refused.

Operations apply in answer order, each to the files as the earlier ones left them: both
memo sections in one answer, several patches of one skill (each `old` must occur exactly
once in the body as patched so far), a create followed by a patch of it. Only an operation
that is itself invalid is refused, never its valid siblings.

A person's work wins, line by line (`SkillState` says who wrote each line): an update of a
memo section keeps every line a person wrote in place; a patch whose `old` text touches a
person's line, and a retire of a skill holding one, wait for review instead (a second pass
composes them on top of what lands). A lesson a person undid (`blocked` fingerprints,
from `workspace.undo`) is not written again: a skill operation bringing one back is
refused, a memo update leaves those lines out. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from evolve.reflect import evalcase
from evolve.reflect.authored import Authored, authored
from evolve.reflect.compose_guards import GuardComposer
from evolve.reflect.operations import (
    BLOCKED_REASON,
    CREATE,
    GUARD,
    MEMO,
    NOTHING,
    OPS,
    PATCH,
    RETIRE,
    SECTIONS,
    UNGUARD,
    AnswerError,
    Limits,
    Plan,
    Reject,
    Rejection,
    SkillState,
    Unchanged,
    ValidOp,
    check_text,
    clean_summary,
    fold,
    name_of,
    read_answer,
    reason_of,
    show,
    string,
    target_of,
)
from evolve.reflect.tokens import count_tokens
from evolve.store.history import clean_line
from evolve.transcripts.redact import find_secrets
from evolve.workspace import memo as memo_mod
from evolve.workspace.skills import CHARS_PER_TOKEN, SKILL_FILE, parse_skill, render_skill, split_frontmatter
from evolve.workspace.undo import keep_id, lesson_lines, lesson_text, relearned, retire_id

_HEADING_START = ("# ", "## ", "#\t", "##\t")


def _same_text(a: str, b: str) -> bool:
    """Equal but for the line endings (a CRLF memo holds the model's LF content as CRLF)."""

    def plain(text: str) -> str:
        return text.strip().replace("\r\n", "\n").replace("\r", "\n")

    return plain(a) == plain(b)


class _Composer:
    """Checks each operation against the files as composed so far; raises Reject with the reason."""

    def __init__(
        self,
        state: SkillState,
        limits: Limits,
        blocked: Mapping[str, str] | Collection[str],
        protect: bool,
        room: int | None = None,
    ) -> None:
        self.state, self.limits, self.protect = state, limits, protect
        # fingerprint → the lesson's text ("" when only fingerprints are known)
        self.blocked = dict(blocked) if isinstance(blocked, Mapping) else dict.fromkeys(blocked, "")
        self.room = room  # skills that may still be created (None: no cap)
        self.docs: dict[str, Authored | None] = {}  # skill → as composed so far; None: retired here
        self.changed: set[str] = set()  # skills this answer created or patched
        self.memo = authored(state.memo, state.memo_authors)
        self.guards = GuardComposer(state)

    def continued(self) -> _Composer:
        """A composer starting where this one ended, protecting nothing (a person reviews it)."""
        after = _Composer(self.state, self.limits, self.blocked, protect=False, room=self.room)
        after.docs, after.changed, after.memo = dict(self.docs), set(self.changed), self.memo
        after.guards = self.guards.continued()
        return after

    # -- checks ----------------------------------------------------------------------
    def _size(self, key: str, body: str) -> None:
        cap = self.limits.skill_body_tokens
        approx = len(body) // CHARS_PER_TOKEN  # the pre-commit hook's estimate, a cheap guard first
        if approx > cap:
            raise Reject(f"'{key}' is about {approx} tokens ({len(body)} chars); at most {cap}")
        used = count_tokens(body)
        if used > cap:
            raise Reject(f"'{key}' is {used} tokens; at most {cap}")

    def _current(self, name: str) -> Authored:
        if name in self.docs:
            doc = self.docs[name]
            if doc is None:
                raise Reject(f"skill '{name}' is retired earlier in this answer")
            return doc
        if self.state.skills_refusal:
            raise Reject(self.state.skills_refusal)
        skill = self.state.skills.get(name)
        if skill is None:
            raise Reject(f"there is no skill named '{name}'")
        if skill.symlink:
            raise Reject(f"skill '{name}' is a symbolic link; evolve never writes through one")
        if not skill.valid:
            raise Reject(f"skill '{name}' is broken; a person must fix it first")
        if skill.pinned:
            raise Reject(f"skill '{name}' is pinned; only a person may change it")
        if memo_mod.has_conflict_markers(skill.text, marker_size=skill.marker_size):
            raise Reject(f"skill '{name}' holds merge conflict markers; a person must resolve them first")
        return authored(skill.text, skill.authors)

    def _reparse(self, name: str, text: str, description: str | None = None) -> None:
        skill = parse_skill(text, name, Path("skills", name, SKILL_FILE), self.limits.skill_body_tokens)
        if skill.problems:
            raise Reject(f"the resulting SKILL.md would be invalid: {clean_line(skill.problems[0], 160)}")
        if description is not None and skill.description != description:
            raise Reject("the description does not survive YAML quoting")

    def _undone(self, text: str, before: str = "") -> list[str]:
        """Lines `text` adds (to `before`) that are lessons a person undid."""
        return relearned(text, before, self.blocked)

    def _kept_removed(self, before: str, after: str) -> list[str]:
        """Lines `after` removes from `before` that a person rejected removing."""
        remaining = set(lesson_lines(after))
        return [
            raw
            for fp, raw in lesson_lines(before).items()
            if fp not in remaining and keep_id(lesson_text(raw) or "") in self.blocked
        ]

    def _refuse_undone(self, text: str, before: str = "") -> None:
        undone = self._undone(text, before)
        if undone:
            more = f" and {len(undone) - 1} more line(s)" if len(undone) > 1 else ""
            raise Reject(f"{BLOCKED_REASON}: {show(undone[0], 60)}{more}")

    # -- the operations --------------------------------------------------------------
    def create(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        name = name_of(op)
        raw, body, cap = string(op, "description"), string(op, "body"), self.limits.description_chars
        description = " ".join(raw.split()) if len(raw) <= 4 * cap else raw  # one YAML line
        if not description or len(description) > cap:
            raise Reject(f"description must be 1-{cap} chars on one line (is {len(description)})")
        self._size("body", body)
        check_text("description", raw)
        check_text("body", body)
        if "<" in description or ">" in description:
            raise Reject("description may not contain '<' or '>'")
        if not body.strip():
            raise Reject("body is empty")
        if self.state.skills_refusal:
            raise Reject(self.state.skills_refusal)
        if name in self.state.skills or self.docs.get(name) is not None:
            raise Reject(f"skill '{name}' exists; use patch_skill")
        if name in self.docs:
            raise Reject(f"skill '{name}' is retired earlier in this answer; patch it instead")
        twin = next((s for s in (*self.state.skills, *self.docs) if fold(s) == fold(name)), None)
        if twin is not None:
            raise Reject(f"skill '{name}' collides with the existing folder {show(twin)}")
        self._refuse_undone(body)
        if self.room is not None and self.room <= 0:
            raise Reject(
                "max_skills is reached and no skill may be evicted (each is pinned, broken, or "
                "holds a person's lines); raise [limits] max_skills or prune"
            )
        text = render_skill(name, description, body)
        self._reparse(name, text, description)
        if self.room is not None:
            self.room -= 1
        self.docs[name] = Authored(text, [False] * len(memo_mod.lines(text)))
        self.changed.add(name)
        return ValidOp(index, CREATE, name, "", text, None, description=description)

    def patch(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        name, old, new = name_of(op), string(op, "old"), string(op, "new")
        if not old:
            raise Reject("'old' is empty")
        self._size("old", old)
        self._size("new", new)
        check_text("old", old)
        check_text("new", new)
        doc = self._current(name)
        raw, body = split_frontmatter(doc.text)
        if "\r\n" in body and "\r" not in old and old not in body:  # a CRLF file quoted with LF
            old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
        at = body.find(old)
        if at < 0:
            if raw and old in raw:
                raise Reject("'old' occurs only in the frontmatter; a patch changes the body only")
            where = "the body as patched so far" if name in self.changed else "the skill's body"
            raise Reject(f"'old' does not occur in {where}")
        if body.find(old, at + 1) >= 0:
            raise Reject("'old' occurs more than once in the body; quote more context")
        patched = body[:at] + new + body[at + len(old) :]
        if not patched.strip():
            raise Reject("the patch would empty the body; use retire_skill")
        self._size("patched body", patched)
        before = {body[s:e] for _k, s, e in find_secrets(body)}
        if any(patched[s:e] not in before for _k, s, e in find_secrets(patched)):
            raise Reject("the patched body would hold a secret")
        self._refuse_undone(patched, body)  # the lines as they would read, not the fragment
        kept = self._kept_removed(body, patched)
        if kept:
            raise Reject(f"a person rejected removing this line: {show(kept[0], 60)}")
        if patched == body:
            raise Unchanged("'new' is the same as 'old': the skill already says so")
        offset = len(doc.text) - len(body)
        text = doc.text[:offset] + patched  # frontmatter bytes kept
        self._reparse(name, text)
        valid = ValidOp(index, PATCH, name, "", text, doc.text)
        if self.protect and doc.person_lines_in(offset + at, offset + at + max(len(old), 1)):
            return replace(valid, why="its 'old' text touches lines a person wrote")
        self.docs[name] = doc.after(text)
        self.changed.add(name)
        return valid

    def retire(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        name, reason = name_of(op), reason_of(op)
        doc = self._current(name)
        if name in self.changed:
            raise Reject(f"skill '{name}' is created or patched earlier in this answer")
        if retire_id(name) in self.blocked:
            raise Reject(f"a person rejected retiring skill '{name}'; `evolve unblock` lifts that")
        valid = ValidOp(index, RETIRE, name, "", None, doc.text, reason=reason)
        snapshot = self.state.skills.get(name)
        if self.protect and (any(doc.authors) or (snapshot is not None and snapshot.person_files)):
            return replace(valid, why="the skill holds lines a person wrote")
        self.docs[name] = None
        return valid

    def update_memo(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        section, content, cap = op.get("section"), string(op, "content"), self.limits.memo_section_chars
        if section not in SECTIONS:
            raise Reject(f"section {show(section)} is not one of {', '.join(SECTIONS)}")
        if self.state.memo_refusal:
            raise Reject(self.state.memo_refusal)
        check_text("content", content)
        if any(
            line.lstrip(" ").startswith(_HEADING_START) or line.strip() in ("#", "##")
            for line in content.splitlines()
        ):
            raise Reject("content may not hold a '# ' or '## ' heading line (use '### ' or bullets)")
        renamed = _renamed_heading(self.memo.text, section)
        if renamed:  # a third section would be appended next to the person's renamed one
            raise Reject(
                f"memo.md has no '## {memo_mod.HEADINGS[section]}' but a '## {renamed}': a person "
                "renamed it; rename it back so evolve can write there"
            )
        current = memo_mod.section_content(self.memo.text, section)
        undone = set(self._undone(content, current))
        lines = [line for line in content.strip("\r\n").splitlines() if line.strip() not in undone]
        lines, kept = self._keep_person_lines(section, lines)  # in a proposal too: accept keeps them
        merged = "\n".join(lines)
        if undone and _same_text(merged, current):
            raise Reject(f"every new line is a lesson a person undid ({show(sorted(undone)[0], 60)})")
        if len(merged.strip()) > cap:
            if kept:
                raise Reject(
                    f"with the {kept} line(s) a person wrote or chose to keep there, the section would be "
                    f"{len(merged.strip())} chars; at most {cap} (a person may shorten it, or raise "
                    "[limits] memo_section_chars)"
                )
            raise Reject(f"content is {len(merged.strip())} chars; at most {cap}")
        text = memo_mod.replace_section(self.memo.text, section, merged)
        if text == self.memo.text:
            raise Unchanged("the section already says exactly this")
        if not _same_text(memo_mod.section_content(text, section), merged):
            raise Reject("content would spill out of its section (an unclosed code fence?)")
        new_problems = set(memo_mod.problems(text, cap)) - set(memo_mod.problems(self.memo.text, cap))
        if new_problems:
            raise Reject(f"the memo would become invalid: {sorted(new_problems)[0]}")
        valid = ValidOp(index, MEMO, "", section, text, self.memo.text, kept=kept, left_out=len(undone))
        self.memo = self.memo.after(text)
        return valid

    def _keep_person_lines(self, section: str, new: list[str]) -> tuple[list[str], int]:
        """`new` with every line a person wrote in the section kept where it stood; how many.

        A line whose removal a person rejected is kept the same way.
        """
        found = next(
            (s for s in memo_mod.sections(self.memo.text) if s.heading == memo_mod.HEADINGS[section]), None
        )
        if found is None:
            return new, 0
        position, old, mine = 0, [], []
        for index, line in enumerate(memo_mod.lines(self.memo.text)):
            if found.content_start <= position < found.content_end and line.strip():
                old.append(line.rstrip("\r\n"))
                person = index < len(self.memo.authors) and self.memo.authors[index]
                mine.append(person or keep_id(lesson_text(line) or "") in self.blocked)
            position += len(line)
        kept_new = {line.strip() for line in new}
        if all(line.strip() in kept_new for line, person in zip(old, mine, strict=True) if person):
            return new, 0
        out, kept = [], 0
        matcher = SequenceMatcher(None, [s.strip() for s in old], [s.strip() for s in new], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out += new[j1:j2]
                continue
            for k in range(i1, i2):  # what the model dropped or rewrote: a person's line stays
                if mine[k] and old[k].strip() not in kept_new:
                    out.append(old[k])
                    kept += 1
            out += new[j1:j2]
        return out, kept

    # -- eval cases ------------------------------------------------------------------
    def with_case(self, valid: ValidOp, op: Mapping[str, Any]) -> ValidOp:
        """The operation with its lesson's eval case: written beside it, or removed with it.

        A case a person wrote (or removed) is theirs: never overwritten nor removed. A refused
        case is named (`case_refused`); the lesson lands without it.
        """
        files: dict[str, str | None] = {}
        if valid.kind == RETIRE:
            files.update(self._drop(valid.name))
        elif valid.kind == MEMO:  # a bullet the update removes takes its case along
            before = {
                memo_mod.lesson_id(text)
                for _k, text, _f, _l in memo_mod.located_bullets(valid.previous or "")
            }
            after = {
                memo_mod.lesson_id(text) for _k, text, _f, _l in memo_mod.located_bullets(valid.text or "")
            }
            for lesson in sorted(before - after):
                files.update(self._drop(lesson))
        raw, written, refused = op.get("eval"), "", ""
        if raw is not None and valid.kind != RETIRE:
            try:
                lesson = self._lesson(valid, raw)
                problem = evalcase.lesson_problem(lesson)
                if problem:
                    raise evalcase.CaseError(problem)
                if self.state.cases.get(lesson, evalcase.CaseFiles()).person:
                    raise evalcase.CaseError("a person wrote or removed this lesson's case; it stays theirs")
                case = evalcase.from_answer(raw)
                files.update(self._drop(lesson))
                files.update(case.files(lesson))
                written = evalcase.case_folder(lesson)
            except evalcase.CaseError as exc:
                refused = str(exc)
        return replace(valid, files=tuple(files.items()), case=written, case_refused=refused)

    def _drop(self, lesson: str) -> dict[str, None]:
        """The files of a lesson's case evolve may remove (none of a person's case)."""
        known = self.state.cases.get(lesson)
        return {} if known is None or known.person else dict.fromkeys(known.paths)

    def _lesson(self, valid: ValidOp, raw: object) -> str:
        """The lesson a case tests: the skill, or the one bullet of the section its `lesson` names."""
        if valid.kind != MEMO:
            return valid.name
        named = raw.get("lesson") if isinstance(raw, Mapping) else None
        if not isinstance(named, str) or not memo_mod.normalise(named):
            raise evalcase.CaseError("an update_memo case must name its bullet in 'lesson'")
        wanted = memo_mod.normalise(named)
        found = {
            memo_mod.lesson_id(text)
            for key, text, _f, _l in memo_mod.located_bullets(valid.text or "")
            if key == valid.section and wanted in memo_mod.normalise(text)
        }
        if len(found) != 1:
            how = "no bullet" if not found else f"{len(found)} bullets"
            raise evalcase.CaseError(f"'lesson' {show(named)} names {how} of the section; quote one bullet")
        return found.pop()


def _handlers(composer: _Composer) -> dict[str, Callable[[int, Mapping[str, Any]], ValidOp]]:
    def cased(
        handler: Callable[[int, Mapping[str, Any]], ValidOp],
    ) -> Callable[[int, Mapping[str, Any]], ValidOp]:
        return lambda index, op: composer.with_case(handler(index, op), op)

    return {
        CREATE: cased(composer.create),
        PATCH: cased(composer.patch),
        RETIRE: cased(composer.retire),
        MEMO: cased(composer.update_memo),
        GUARD: composer.guards.set_guard,
        UNGUARD: composer.guards.retire_guard,
    }


def compose(
    raw: Any,
    state: SkillState,
    limits: Limits | None = None,
    blocked: Mapping[str, str] | Collection[str] = (),
    *,
    protect: bool = True,
    room: int | None = None,
    held: Mapping[int, str] | None = None,
) -> Plan:
    """Validate and compose an `apply_reflection` input (a dict, or its JSON text) into a Plan.

    `room`: how many skills may be created (what max_skills and the evictable skills allow).
    `held`: operation index → why it waits for a person whatever it touches (the write-path
    guard flagged it); a later operation on the same skill waits with it. The rest lands.
    """
    limits = limits or Limits()
    summary, operations = read_answer(raw, limits)
    first = _Composer(state, limits, blocked, protect, room)
    handlers = _handlers(first)
    valid: list[ValidOp] = []
    waiting: list[tuple[int, Mapping[str, Any], str]] = []
    rejected: list[Rejection] = []
    nothing: list[tuple[int, str]] = []
    unchanged: list[Rejection] = []  # valid, but the files already say so
    held_skills: dict[str, int] = {}  # skill → the held operation on it
    for index, op in enumerate(operations):
        kind = op.get("op") if isinstance(op, dict) else None
        op_name = kind if isinstance(kind, str) and kind in OPS else "unknown"
        target = target_of(op) if isinstance(op, dict) else ""
        try:
            if not isinstance(op, dict):
                raise Reject(f"operation is a {type(op).__name__}, not an object")
            if op_name == "unknown":
                raise Reject(f"unknown op {show(kind)} (one of {', '.join(OPS)})")
            if kind == NOTHING:
                nothing.append((index, reason_of(op)))
                continue
            skill = target if kind != MEMO else ""
            why = (held or {}).get(index) or (
                f"follows operation {held_skills[skill] + 1}, held for review" if skill in held_skills else ""
            )
            if why:  # on top of what lands, with the other waiting ones
                waiting.append((index, op, why))
                if skill:
                    held_skills.setdefault(skill, index)
                continue
            result = handlers[op_name](index, op)
            if result.why:
                waiting.append((index, op, result.why))
            else:
                valid.append(result)
        except Unchanged as exc:
            unchanged.append(Rejection(index, op_name, str(exc), target))
        except Reject as exc:
            rejected.append(Rejection(index, op_name, str(exc), target))
    proposed: list[ValidOp] = []
    second = _handlers(first.continued())
    for index, op, why in waiting:  # on top of what lands: a person reviews them as one change
        try:
            proposed.append(replace(second[op["op"]](index, op), why=why))
        except Reject as exc:
            rejected.append(Rejection(index, op["op"], str(exc), target_of(op)))
    if valid or proposed:
        rejected += [
            Rejection(i, NOTHING, "contradicts the other operations of this answer") for i, _ in nothing
        ]
    rejected.sort(key=lambda r: r.op_index)
    return Plan(
        summary=clean_summary(summary, valid + proposed, limits.summary_chars),
        operations=valid,
        rejected=rejected,
        nothing_to_save=not valid and not proposed and (bool(nothing) or not operations),
        nothing_reason="; ".join(r for _, r in nothing if r) if not (valid or proposed) else "",
        waiting=proposed,
        source={"summary": summary, "operations": operations},
        unchanged=unchanged,
    )


__all__ = ["AnswerError", "compose"]


def _renamed_heading(memo: str, section: str) -> str | None:
    """The `##` heading that took a standard one's place, when the standard one is gone."""
    headings = [found.heading for found in memo_mod.sections(memo)]
    if memo_mod.HEADINGS[section] in headings:
        return None
    return next((h for h in headings if h not in memo_mod.HEADINGS.values()), None)
