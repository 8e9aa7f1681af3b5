"""A person's hand on guards.toml: the guards with who wrote them, and an action changed.

`evolve guard NAME` lists what `listing` gives; `evolve guard NAME ID --deny|--remind|--off`
runs `set_action`: one commit with the person's git identity (`Evolve-Source: human`, so
authorship counts the line as theirs and no reflection touches that guard again), the
file edited line by line (tomledit: every other byte kept). Only a person makes a guard
`deny`; a reflection's always lands as `remind`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evolve.errors import UserError
from evolve.regular import read_regular
from evolve.store.history import Commit, build_message
from evolve.store.identity import person_identity
from evolve.workspace import guards
from evolve.workspace.agent import Agent, local_person
from evolve.workspace.authorship import line_authors, made_by_evolve


@dataclass(frozen=True)
class Listed:
    """One guard as `evolve guard` shows it."""

    guard: guards.Guard
    by_person: bool

    def to_dict(self) -> dict:
        g = self.guard
        return {
            "id": g.id,
            "tool": g.tool if isinstance(g.tool, str) else list(g.tool),
            "action": g.action,
            "project": g.project,
            "lesson": g.lesson,
            "pattern": g.pattern,
            "message": g.message,
            "by": "person" if self.by_person else "evolve",
        }


def text_of(agent: Agent) -> str:
    """guards.toml as it is on disk ("" when there is none)."""
    path = agent.path / guards.FILE
    try:
        return read_regular(path).decode("utf-8")  # a FIFO would wait forever
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} cannot be read ({exc}); fix it, then try again") from None


def authors_of(agent: Agent, text: str, commits: Mapping[str, Commit] | None = None) -> dict[str, bool]:
    """For each guard id: True when a person wrote a line of its table (fails closed: unknown = person)."""
    commits = {c.sha: c for c in agent.repo.log()} if commits is None else commits
    authors = line_authors(agent.repo, guards.FILE, commits, agent.evolve_emails)
    tip = agent.repo.tip()
    committed = agent.repo.read_blobs([f"{tip}:{guards.FILE}"]).get(f"{tip}:{guards.FILE}") if tip else None
    if committed != text.encode("utf-8"):  # edits not committed yet: the person's
        authors = None
    owners: dict[str, bool] = {}
    current = None
    for index, line in enumerate(text.splitlines()):
        header = guards.table_header(line)
        if header is not None:
            current = header
        if current is not None:
            person = True if authors is None or index >= len(authors) else authors[index]
            owners[current] = owners.get(current, False) or person
    return owners


def listing(agent: Agent) -> tuple[list[Listed], list[str]]:
    """Every usable guard with who wrote it, and the file's problems."""
    text = text_of(agent)
    found, problems = guards.parse(text, str(agent.path / guards.FILE))
    owners = authors_of(agent, text) if found else {}
    return [Listed(g, owners.get(g.id, True)) for g in found], problems


def set_action(agent: Agent, guard_id: str, action: str) -> tuple[str | None, str]:
    """(the commit, the action it had): the person changes one guard's action."""
    with agent.repo.locked():
        agent.commit_human_edits_held()
        text = text_of(agent)
        found, _ = guards.parse(text)
        current = next((g for g in found if g.id == guard_id), None)
        if current is None:
            known = ", ".join(g.id for g in found) or "none"
            raise UserError(
                f"agent {agent.name!r} has no usable guard {guard_id!r} (guards: {known}); "
                f"see `evolve guard {agent.name}`"
            )
        if current.action == action:
            return None, action
        try:
            after = guards.set_action(text, guard_id, action)
        except UserError as exc:
            raise UserError(f"{agent.path / guards.FILE}: {exc}") from None
        message = build_message(
            f"guard({agent.name}): {guard_id} {current.action} -> {action}",
            {"Evolve-Kind": "guard", "Evolve-Source": "human", "Evolve-Guard": guard_id},
        )
        person = person_identity(agent.path, local_person())
        sha = agent.repo.commit_changes({guards.FILE: after.encode("utf-8")}, message, person)
    return sha, current.action


def _tables(data: bytes | None) -> dict[str, str]:
    """Guard id -> its pattern, of one version of guards.toml (nothing when it does not parse)."""
    import tomllib

    try:
        doc = tomllib.loads((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    return {k: str(v.get("pattern")) for k, v in doc.items() if isinstance(v, dict)}


def undone(agent: Agent, commits: Mapping[str, Commit]) -> frozenset[str]:
    """Guard ids (and `guards.pattern_id`s) a person took out after evolve wrote them.

    The undo rule of every lesson (`workspace.undo`): a person's commit — `git revert`,
    `evolve revert`, an edit — that removes a guard a reflection wrote blocks it, under its
    id and its pattern, so the next reflection cannot bring it back; a person who writes it
    again lifts that.
    """
    tip = agent.repo.tip()
    if tip is None:
        return frozenset()
    shas = agent.repo.text("log", "--reverse", "--format=%H", tip, "--", guards.FILE).split()
    if not shas:
        return frozenset()
    history = [commits.get(sha) or agent.repo.log(sha, limit=1)[0] for sha in shas]
    specs = [f"{c.sha}:{guards.FILE}" for c in history] + [
        f"{c.parents[0]}:{guards.FILE}" for c in history if c.parents
    ]
    blobs = agent.repo.read_blobs(specs)
    learned: set[str] = set()
    blocked: dict[str, str] = {}  # id -> pattern id
    for commit in history:
        after = _tables(blobs.get(f"{commit.sha}:{guards.FILE}"))
        before = _tables(blobs.get(f"{commit.parents[0]}:{guards.FILE}")) if commit.parents else {}
        if made_by_evolve(commit, agent.evolve_emails):
            learned.update(after.keys() - before.keys())
            continue
        for gone in (before.keys() - after.keys()) & learned:
            blocked[gone] = guards.pattern_id(before[gone])
        for back in after.keys() & blocked.keys():  # the person wrote it again: theirs now
            del blocked[back]
    return frozenset(blocked) | frozenset(blocked.values())
