"""Names of agents and skills: validated before they ever touch a path.

The rules are the Agent Skills spec's: 1-64 chars of a-z, 0-9 and '-', no leading,
trailing or doubled '-'. ASCII-only by construction, so look-alikes, NFD/NFC twins and
case collisions cannot exist.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

from evolve.errors import NameRefused

MAX_NAME = 64
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def name_problem(name: object) -> str | None:
    """Why `name` is not a valid skill/agent name, or None when it is."""
    if not isinstance(name, str) or not name:
        return "must be a non-empty string"
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long; at most {MAX_NAME} are allowed"
    if not _NAME.fullmatch(name):
        return "may only hold a-z, 0-9 and single '-' between them (not at either end)"
    return None


def suggested_name(name: str, taken: Collection[str] = ()) -> str:
    """A valid name near `name`, offered where a folder's name is refused ('My Agent' -> 'my-agent').

    Accents go, not their letters ('Ünïcode' -> 'unicode'). Never one of `taken`, in any case:
    renaming 'Helper' onto the 'helper' beside it would move it inside that agent ('helper-2').
    """
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    base = "-".join(re.findall(r"[a-z0-9]+", plain))[:MAX_NAME].strip("-") or "agent"
    folded = {other.lower() for other in taken}
    offered, number = base, 1
    while offered in folded:
        number += 1
        offered = f"{base[: MAX_NAME - len(str(number)) - 1].rstrip('-')}-{number}"
    return offered


def check_name(name: object, what: str = "skill") -> str:
    """Return `name` if valid, else raise NameRefused with the remedy."""
    problem = name_problem(name)
    if problem:
        shown = repr(name)[:80]
        example = "helper" if what == "agent" else "fix-flaky-tests"
        raise NameRefused(f"{what} name {shown} {problem}; choose e.g. {example!r}")
    return name  # type: ignore[return-value]


def own_skill(agent: str, skill: str) -> str:
    """`skill` as the agent names it: without the `<agent>:` a harness puts before a plugin's skill.

    Every agent repository is a plugin named like its agent, so Claude Code and Codex list (and
    load) its skills as `<agent>:<skill>` wherever it is loaded as one (Codex even names a skill
    linked from it so); any other plugin's prefix stays.
    """
    return skill[len(agent) + 1 :] if skill.startswith(f"{agent}:") else skill
