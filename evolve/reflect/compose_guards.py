"""How an answer's guard operations compose: `set_guard` and `retire_guard` on guards.toml.

A guard is evolve's to write only for a lesson the agent had and ignored (the bundle lists
them), citing the runs; only as a reminder (a `deny` the model asks for lands as `remind`,
flagged); never over a table a person wrote a line of, a guard a person undid or turned
off. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evolve.names import name_problem
from evolve.reflect.authored import Authored, authored
from evolve.reflect.operations import (
    BLOCKED_REASON,
    GUARD,
    UNGUARD,
    Reject,
    SkillState,
    Unchanged,
    ValidOp,
    check_text,
    show,
    string,
)
from evolve.store.history import clean_line
from evolve.workspace import guards as guards_mod
from evolve.workspace import memo as memo_mod


class GuardComposer:
    """guards.toml as the answer's guard operations left it so far; raises Reject with the reason."""

    def __init__(self, state: SkillState) -> None:
        self.state = state
        self.guards: Authored = authored(state.guards or "", state.guards_authors)
        self.guards_exist = state.guards is not None

    def continued(self) -> GuardComposer:
        """A composer starting where this one ended."""
        after = GuardComposer(self.state)
        after.guards, after.guards_exist = self.guards, self.guards_exist
        return after

    def _guard_table(self, op: Mapping[str, Any]) -> tuple[str, guards_mod.Guard | None, str, str]:
        """(id, the guard as guards.toml has it now or None, the lesson, the evidence), checked.

        A guard is evolve's to write only for a lesson that was ignored at least once (the
        bundle's), citing the runs; a guard a person wrote (any line of its table) or undid
        is theirs.
        """
        if self.state.guards_refusal:
            raise Reject(self.state.guards_refusal)
        guard_id = op.get("guard")
        problem = name_problem(guard_id)
        if problem or not isinstance(guard_id, str):
            raise Reject(f"guard id {show(guard_id)} {problem}")
        lesson, evidence = string(op, "lesson"), string(op, "evidence")
        for key, value in (("lesson", lesson), ("evidence", evidence)):
            check_text(key, value)
            if not value.strip() or len(value) > guards_mod.MAX_MESSAGE:
                raise Reject(f"'{key}' must be 1-{guards_mod.MAX_MESSAGE} chars")
        ignored = self.state.ignored
        if ignored is not None and lesson not in ignored:
            raise Reject(
                f"lesson {show(lesson)} was never ignored: a guard is only for a lesson the agent had "
                "and ignored (the bundle lists them)"
            )
        text = self.guards.text
        found, problems = guards_mod.parse(text)
        if any("is not valid TOML" in p or f" [{guard_id}]: " in p for p in problems):
            raise Reject("guards.toml has a problem there; a person must fix it first")
        current = next((g for g in found if g.id == guard_id), None)
        if current is not None and self._person_guard(guard_id):
            raise Reject(f"guard '{guard_id}' holds lines a person wrote; only they change it")
        if guard_id in self.state.guards_blocked:
            raise Reject(f"{BLOCKED_REASON}: guard '{guard_id}'")
        return guard_id, current, lesson, evidence

    def _person_guard(self, guard_id: str) -> bool:
        inside = False
        for index, line in enumerate(memo_mod.lines(self.guards.text)):
            header = guards_mod.table_header(line)
            if header is not None:
                inside = header == guard_id
            if inside and index < len(self.guards.authors) and self.guards.authors[index]:
                return True
        return False

    def set_guard(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        guard_id, current, lesson, evidence = self._guard_table(op)
        table = {key: op[key] for key in ("tool", "pattern", "message", "project") if op.get(key) is not None}
        table.update(lesson=lesson, action="remind")
        try:
            guard = guards_mod.check(guard_id, table)
        except guards_mod.GuardProblem as exc:
            raise Reject(str(exc)) from None
        check_text("message", guard.message)
        check_text("pattern", guard.pattern)
        if guards_mod.matches_every_call(guard.pattern):
            raise Reject(
                f"pattern {show(guard.pattern, 40)} matches every call (ls, git status …); name the call"
            )
        if guards_mod.pattern_id(guard.pattern) in self.state.guards_blocked:
            raise Reject(f"{BLOCKED_REASON}: a guard on {show(guard.pattern, 60)}")
        if current is not None and current.action == "off":
            raise Reject(f"guard '{guard_id}' is off; only a person turns it on again")
        try:
            text = guards_mod.with_guard(self.guards.text, guard)
        except (guards_mod.GuardProblem, ValueError) as exc:
            raise Reject(clean_line(str(exc), 160)) from None
        if text == self.guards.text:
            raise Unchanged(f"guard '{guard_id}' already says exactly this")
        previous = self.guards.text if self.guards_exist else None
        self.guards, self.guards_exist = self.guards.after(text), True
        return ValidOp(
            index,
            GUARD,
            guard_id,
            "",
            text,
            previous,
            reason=clean_line(evidence),
            lesson=lesson,
            downgraded=op.get("action") == "deny",
        )

    def retire_guard(self, index: int, op: Mapping[str, Any]) -> ValidOp:
        guard_id, current, lesson, evidence = self._guard_table(op)
        if current is None:
            raise Reject(f"there is no guard '{guard_id}'")
        try:
            text = guards_mod.without_guard(self.guards.text, guard_id)
        except ValueError as exc:
            raise Reject(clean_line(str(exc), 160)) from None
        previous = self.guards.text
        self.guards = self.guards.after(text)
        return ValidOp(
            index, UNGUARD, guard_id, "", text, previous, reason=clean_line(evidence), lesson=lesson
        )
