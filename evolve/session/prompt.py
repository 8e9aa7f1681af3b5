"""What an agent sees at the start of a session: its memo, a fix waiting for review, its skill index.

On the hot path (Claude Code's SessionStart hook runs it before every session), so it
imports the standard library and evolve's light modules only, reads the skill index and
the usage rates from small caches (`skillindex`, `metrics.write_rates_cache`), and
records impressions (the skills listed, the memo bullets shown whole, the branch's tip)
by appending ONE line to the hook spool, never by writing SQLite.
The ranking that decides who leaves an over-long index is pure (`leave_order`, `fit`).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from evolve.home import Home
from evolve.session.context import MEMO_TITLE, limits, memo_view, read_memo
from evolve.store.head import BRANCH, branch_tip, checked_out_elsewhere

MATURE_RUNS = 20  # runs shown before a skill's invocation rate may push it out
DESCRIPTION_CAP = 250  # chars of a description in the index (Claude Code also cuts)
WAITING_NAMES = 3  # skills named in the note on fixes waiting for review


@dataclass
class Injection:
    text: str
    listed: list[str]
    left_out: int
    chars: int
    session: str = ""
    budget: int = 0
    lessons: dict[str, list[str]] = field(default_factory=dict)  # memo section → bullet ids shown

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "listed": self.listed,
            "left_out": self.left_out,
            "chars": self.chars,
            "session": self.session,
            "budget": self.budget,
            "lessons": self.lessons,
        }


# -- pure: who leaves the index first ----------------------------------------------------
def leave_order(names: list[str], stats: dict[str, list], pinned: set[str]) -> list[str]:
    """The order in which skills leave an index that is over budget.

    First the skills shown in at least MATURE_RUNS runs, lowest invocation rate first
    (a new skill keeps its chance); then the others, most-shown first; pinned ones last.
    `stats`: name → [impressions, runs shown, invocation rate or None].
    """

    def key(name: str) -> tuple:
        _impressions, runs, rate = (stats.get(name) or [0, 0, None])[:3]
        runs = runs or 0
        if name in pinned:
            return (2, 0.0, -runs, name)
        if runs >= MATURE_RUNS:
            return (0, rate or 0.0, -runs, name)
        return (1, 0.0, -runs, name)

    return sorted(names, key=key)


def fit(lines: dict[str, str], order: list[str], room: int, note_room: int) -> tuple[list[str], int]:
    """Names kept (in name order) so that their lines fit `room` chars; and how many left.

    When anything must leave, `note_room` more chars are needed for the note saying so.
    """
    total = sum(len(line) + 1 for line in lines.values())
    if total <= room:
        return sorted(lines), 0
    out: set[str] = set()
    for name in order:
        if total <= room - note_room:
            break
        total -= len(lines[name]) + 1
        out.add(name)
    return sorted(n for n in lines if n not in out), len(out)


def index_line(name: str, description: str) -> str:
    text = " ".join(description.split())
    if len(text) > DESCRIPTION_CAP:
        text = text[: DESCRIPTION_CAP - 1].rstrip() + "…"
    return f"- {name}: {text}"


def waiting_note(home: Home, agent: str) -> str:
    """One line naming the skills whose fix waits for the person's review ("" when none)."""
    from evolve.session.waiting import waiting_fixes

    names = waiting_fixes(home.agent_dir(agent) / ".git", home.waiting_cache(agent))
    if not names:
        return ""
    shown = ", ".join(names[:WAITING_NAMES]) + (" and others" if len(names) > WAITING_NAMES else "")
    which = f"the skill {shown}" if len(names) == 1 else f"the skills {shown}"
    return (
        f"(A fix to {which} waits for the person's review: `evolve proposals {agent}`. "
        "Until it lands, where the memo and the skill differ, follow the memo.)"
    )


# -- rendering ---------------------------------------------------------------------------
def _rates(home: Home, agent: str) -> dict[str, list]:
    try:
        data = json.loads(home.rates_cache(agent).read_bytes())
        skills = data.get("skills")
        return skills if isinstance(skills, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def render(
    home: Home | str | os.PathLike,
    agent_name: str,
    *,
    session: str | None = None,
    record: bool = True,
    include_index: bool = True,
) -> Injection:
    """The memo and skill index for a new session, under `[limits] prompt_chars`.

    With `record`, records one impression per listed skill for `session` (a fresh id when
    None); a preview (`record` off) records nothing and has no session. Broken skills are
    never listed. Without the index (Claude Code lists linked skills itself)
    every valid skill still counts as shown.
    """
    from evolve.errors import UserError
    from evolve.names import check_name
    from evolve.session import index as skillindex

    home = home if isinstance(home, Home) else Home.resolve(home)
    check_name(agent_name, "agent")
    path = home.agent_dir(agent_name)
    if not (path / ".git").is_dir():
        raise UserError(f"no agent {agent_name!r} in {home.root}; create it with `evolve init {agent_name}`")
    budget, body_tokens = limits(str(home.config_file), str(path / "agent.toml"))
    session = session or (os.urandom(16).hex() if record else "")
    skills_dir = path / "skills"
    elsewhere = checked_out_elsewhere(path / ".git", BRANCH)
    if elsewhere:  # a person looks at another checkout: its files are not the agent's
        note = (
            f"{MEMO_TITLE}\n\n(left out, with the skills: {path} has {elsewhere} checked out, not "
            f"{BRANCH}; `git switch {BRANCH}` there brings them back)\n"
        )
        return Injection(note, [], 0, len(note), session, budget)
    entries = (
        []
        if skills_dir.is_symlink()
        else skillindex.load(skills_dir, home.skill_index_cache(agent_name), body_tokens)
    )
    entries = [e for e in entries if e.valid]
    memo_file = path / "memo.md"
    header = (
        f"## Skills\n\nYour skills are in {skills_dir} (one folder per skill, each with a "
        "SKILL.md). When a task matches a description below, read that SKILL.md first "
        "and follow it."
    )
    reserve = len(header) + 400 if include_index and entries else 0
    waiting = waiting_note(home, agent_name)
    if len(waiting) + 2 > budget - reserve:
        waiting = ""  # a prompt budget too small for it: the memo comes first
    room = budget - reserve - (len(waiting) + 2 if waiting else 0)
    shows = max(0, room - 1)  # + newline
    memo_part, lessons = memo_view(read_memo(memo_file, shows), shows, memo_file)
    listed = [e.name for e in entries]
    left_out = 0
    blocks = [part for part in (memo_part, waiting) if part]
    if include_index and entries:
        lines = {e.name: index_line(e.name, e.description) for e in entries}
        note = (
            "({n} more skills are not listed here, to stay within the prompt budget; "
            f"they are all in {skills_dir}.)"
        )
        room = budget - len("\n\n".join([*blocks, header])) - 3
        order = leave_order(listed, _rates(home, agent_name), {e.name for e in entries if e.pinned})
        listed, left_out = fit(lines, order, room, len(note) + 8)
        body = "\n".join(lines[n] for n in listed)
        skills_part = f"{header}\n\n{body}" if body else header
        if left_out:
            skills_part += "\n\n" + note.format(n=left_out)
        blocks.append(skills_part)
    text = "\n\n".join(blocks) + ("\n" if blocks else "")
    if record and (listed or lessons) and not home.read_only():  # a read-only home records nothing
        from evolve.store import spool

        spool.append(
            home.spool_dir,
            {
                "event": "impressions",
                "agent": agent_name,
                "session_id": session,
                "skills": listed,
                "memo": lessons,
                "tip": branch_tip(path / ".git"),
                "at": time.time(),
            },
        )
    return Injection(text, listed, left_out, len(text), session, budget, lessons)
