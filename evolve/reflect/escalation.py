"""Which ignored lessons a reflection rewrote: read from its operations, never from the model's words.

A lesson the bundle showed first (one that made its own eval worse, or one the agent had
and ignored) is escalated by an operation that changes it: for a memo bullet, an
`update_memo` after which its section no longer holds the bullet as it was (reworded,
shortened, removed, moved to the other section) or holds it first where it was not; for a
skill, a patch, a retirement or a creation under its name; for either, a guard set or
retired for it (`set_guard`'s `lesson`). The commit says
so in its `Evolve-Escalated` trailer (one lesson id per line). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from evolve.reflect.operations import MEMO, ValidOp
from evolve.workspace.lessons import MEMO as MEMO_LESSON
from evolve.workspace.lessons import memo_lessons

TRAILER = "Evolve-Escalated"


def escalated(ops: Iterable[ValidOp], ignored: Iterable[tuple[str, str]]) -> list[str]:
    """The ids of the `ignored` lessons ((kind, id)) that `ops` rewrite, in the order given."""
    ops = list(ops)
    memo_ops = [op for op in ops if op.kind == MEMO]
    touched = {op.name for op in ops if op.kind != MEMO and not op.lesson}
    guarded = {op.lesson for op in ops if op.lesson}  # a guard set or retired for the lesson
    before = after = {}
    if memo_ops:
        before = {lesson.id: lesson for lesson in memo_lessons(memo_ops[0].previous or "")}
        after = {lesson.id: lesson for lesson in memo_lessons(memo_ops[-1].text or "")}
    found = []
    for kind, ref in dict.fromkeys(ignored):
        if ref in guarded:
            found.append(ref)
            continue
        if kind != MEMO_LESSON:
            if ref in touched:
                found.append(ref)
            continue
        was, now = before.get(ref), after.get(ref)
        if was is None or not memo_ops:
            continue  # not in the memo the answer changed: nothing rewrote it
        moved_up = now is not None and now.position == 0 < was.position
        if now is None or now.where != was.where or moved_up:
            found.append(ref)
    return found
