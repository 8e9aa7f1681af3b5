"""The skills in question, in full: their current text in the bundle, so a patch can quote it.

Which: every skill a run ignored (`lesson_ignored`), every skill the bundled runs invoked,
every skill a run's `skill_ineffective` signal names, and every skill whose ineffective or
post-use-edit rate is high. How much: whole
sections (a Markdown heading and the lines up to the next one) while they fit ~1,500 tokens
per skill and ~30 % of the budget for all bodies together; the rest of a long body is named
by its headings. Nothing is cut mid-line, so every line shown is a true `old` for
`patch_skill`. Pinned and broken skills are left out: the model may not touch them. A skill
holding lines a person wrote says so in its heading (all of it, or the sections they are in):
a patch touching them waits for that person's review.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evolve.reflect.tokens import count_tokens
from evolve.workspace.skills import Skill

SKILL_TOKENS = 1500  # per skill body shown
BODIES_SHARE = 0.30  # of the bundle budget, for all bodies together
HIGH_RATE = 0.3  # an ineffective or post-use-edit rate this high puts a skill in question
MIN_USES = 3  # invocations before a rate counts
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")

# Why a skill is in question, strongest first (the order bodies get the budget in).
WORSE, IGNORED, INEFFECTIVE, INVOKED, HIGH_INEFFECTIVE, HIGH_EDITS = (
    "its own eval scores lower with it than without (evolve eval)",
    "the agent had it and ignored it (lesson_ignored)",
    "its run ended in a real error (skill_ineffective)",
    "invoked in the runs below",
    "often ends in a real error",
    "often corrected after use",
)
_ORDER = (WORSE, IGNORED, INEFFECTIVE, INVOKED, HIGH_INEFFECTIVE, HIGH_EDITS)
INTRO = (
    "\n## Skills in question (each body as it is now, between <skill-body> tags: quote "
    "`old` for patch_skill from here exactly; never patch text that is not shown)\n\n"
)


PERSONS = "a person wrote {what}: a patch touching their lines waits for their review"


@dataclass
class SkillBody:
    """What the bundle shows of one skill: `text` is a byte-exact prefix of its body."""

    name: str
    reasons: list[str]
    text: str
    omitted: list[str] = field(default_factory=list)  # headings of the sections not shown
    tokens: int = 0
    persons: str = ""  # which of its lines a person wrote (PERSONS), "" when none

    @property
    def complete(self) -> bool:
        return not self.omitted

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "reasons": self.reasons,
            "complete": self.complete,
            "tokens": self.tokens,
            "persons": bool(self.persons),
        }


def in_question(
    runs: Iterable,
    skills: Iterable[Skill],
    usage: Mapping[str, Mapping],
    ignored: Iterable[str] = (),
    worse: Iterable[str] = (),
) -> list[tuple[Skill, list[str]]]:
    """(skill, reasons) for the agent's own skills worth showing, strongest reason first.

    `runs`: BundleRun-like objects (facts with `skills`, signals); `skills`: the agent's
    Skill objects; `usage`: name → rates (metrics.rates.skill_usage); `ignored`: the skills
    a run ignored; `worse`: those that made their own eval worse (metrics.proven).
    """
    reasons: dict[str, set[str]] = {name: {IGNORED} for name in ignored}
    for name in worse:
        reasons.setdefault(name, set()).add(WORSE)
    for run in runs:
        names = [s.get("name") for s in run.facts.get("skills") or [] if isinstance(s, dict)]
        for name in filter(None, names):
            reasons.setdefault(name, set()).add(INVOKED)
            if "skill_ineffective" in run.signals:
                reasons[name].add(INEFFECTIVE)
    for name, use in usage.items():
        if (use.get("invocations") or 0) < MIN_USES:
            continue
        if (use.get("ineffective_rate") or 0) >= HIGH_RATE:
            reasons.setdefault(name, set()).add(HIGH_INEFFECTIVE)
        if (use.get("post_use_edit_rate") or 0) >= HIGH_RATE:
            reasons.setdefault(name, set()).add(HIGH_EDITS)
    chosen = []
    for skill in skills:
        why = reasons.get(skill.name)
        if why and skill.valid and not skill.pinned:
            chosen.append((skill, [r for r in _ORDER if r in why]))
    chosen.sort(key=lambda pair: (_ORDER.index(pair[1][0]), pair[0].name))
    return chosen


def sections(body: str) -> list[tuple[str, str]]:
    """(heading line or "" for the text before the first heading, the section's text).

    Headings inside fenced code blocks are text. Joined, the sections are the body.
    """
    found: list[tuple[str, list[str]]] = [("", [])]
    fence = ""
    for line in body.splitlines(keepends=True):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
        elif opening:
            fence = opening.group(1)
        elif _HEADING.match(line):
            found.append((line.strip(), []))
        found[-1][1].append(line)
    return [(heading, "".join(lines)) for heading, lines in found if lines]


def excerpt(body: str, max_tokens: int) -> tuple[str, list[str]]:
    """The longest run of whole leading sections within `max_tokens`, and the rest's headings.

    When even the first section does not fit, its whole lines that fit are shown.
    """
    parts = sections(body)
    shown: list[str] = []
    used = 0
    for number, (_heading, text) in enumerate(parts):
        cost = count_tokens(text)
        if used + cost > max_tokens:
            if not shown:
                shown.append(_whole_lines(text, max_tokens))
            omitted = [h or "(the text before the first heading)" for h, _ in parts[number:]]
            if shown[0] and number == 0:
                omitted[0] = f"the rest of {parts[0][0] or 'the first section'}"
            return "".join(shown), omitted
        shown.append(text)
        used += cost
    return "".join(shown), []


def persons_part(body: str, text: str, authors: Sequence[bool]) -> str:
    """Which of the body's lines a person wrote, in words ("" for none).

    `text` is the whole SKILL.md (frontmatter and body) and `authors` says for each of its
    lines whether a person wrote it (workspace.authorship.text_authors).
    """
    start = text.count("\n", 0, len(text) - len(body)) if text.endswith(body) else 0
    mine = list(authors[start:])
    if not any(mine):
        return ""
    if all(mine[: body.count("\n") + (0 if body.endswith("\n") else 1)]):
        return PERSONS.format(what="all of it")
    theirs: list[str] = []
    line = 0
    for heading, part in sections(body):
        count = part.count("\n") + (0 if part.endswith("\n") else 1)
        if any(mine[line : line + count]):
            theirs.append(heading or "the text before the first heading")
        line += count
    return PERSONS.format(what=f"its lines under {'; '.join(theirs)}")


def _whole_lines(text: str, max_tokens: int) -> str:
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        cost = count_tokens(line)
        if used + cost > max_tokens:
            break
        kept.append(line)
        used += cost
    return "".join(kept)


def choose(
    candidates: list[tuple[Skill, list[str]]],
    budget: int,
    fence: str,
    clean: Callable[[str], str],
    persons: Mapping[str, str] | None = None,
) -> list[SkillBody]:
    """Bodies in order of `candidates`, each within ~SKILL_TOKENS, all within `budget` tokens.

    `clean` makes text safe for the model (redacted, invisible characters removed); a body
    that loses characters to it is still shown, though its patched lines may then not match.
    `persons`: skill name → which of its lines a person wrote (`persons_part`).
    """
    bodies: list[SkillBody] = []
    left = budget
    for skill, reasons in candidates:
        body = SkillBody(skill.name, reasons, "", persons=clean((persons or {}).get(skill.name, "")))
        room = min(SKILL_TOKENS, left - count_tokens(render_one(body, fence)))
        while room > 0:
            body.text, body.omitted = excerpt(clean(skill.body), room)
            body.tokens = count_tokens(render_one(body, fence))
            if body.tokens <= left or not body.text:
                break
            room -= body.tokens - left  # the list of headings not shown took the difference
        if body.text.strip() and body.tokens <= left:
            bodies.append(body)
            left -= body.tokens
    return bodies


def render_one(body: SkillBody, fence: str) -> str:
    """One skill's block: a heading with the reasons, the fenced text, what was left out."""
    text = body.text if body.text.endswith("\n") or not body.text else body.text + "\n"
    omitted = f"(not shown: {'; '.join(body.omitted)})\n" if body.omitted else ""
    persons = f" · {body.persons}" if body.persons else ""
    return (
        f"### {body.name} · {'; '.join(body.reasons)}{persons}\n"
        f"<skill-body {fence}>\n{text}</skill-body {fence}>\n{omitted}"
    )


def render(bodies: list[SkillBody], fence: str) -> str:
    """The bundle's "Skills in question" section ("" when there are none)."""
    if not bodies:
        return ""
    return INTRO + "".join(render_one(body, fence) for body in bodies)
