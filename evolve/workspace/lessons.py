"""The agent's lessons: every bullet of the memo's two sections and every skill, with its origin.

A lesson's id is stable and names it for whoever refers to it (the runs that ignored it, a
reflection's `Evolve-Escalated` trailer, a person): a memo bullet's is `memo.lesson_id` of
its text — what the session-start hook records as shown, so a reworded bullet is a new
lesson —, a skill's is its name. Where one came from is read from git: the commit that
last wrote it (blame of the bullet's lines; the skill's last commit), when it landed (that
commit, for a bullet; the skill's creation, for a skill) and whether a person or evolve
wrote it (`authorship.made_by_evolve`). Lessons as a session saw them are read at the
commit its start recorded (`at_commit`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from evolve.store.fixed import asked_once
from evolve.store.git import GitError
from evolve.store.history import Commit, read_commits
from evolve.store.repo import Repo
from evolve.workspace import authorship, conflicts
from evolve.workspace import memo as memo_mod
from evolve.workspace.cases import EVALS, case_folder, case_lesson
from evolve.workspace.skills import SKILL_FILE

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.workspace.agent import Agent

MEMO, SKILL = "memo", "skill"
EVOLVE, PERSON, BOTH = "evolve", "person", "both"


@dataclass(frozen=True)
class Lesson:
    """One lesson: a memo bullet (`where`: its section key) or a skill (`where`: its name)."""

    kind: str
    id: str
    where: str
    text: str
    position: int = 0  # a bullet's place in its section (0: the first)

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.id)


@dataclass(frozen=True)
class Origin:
    """Where a lesson came from: the commit that last wrote it, when it landed, who wrote it."""

    commit: str | None = None
    landed_at: str | None = None
    by: str = PERSON  # not committed yet: a person's edit

    def to_dict(self) -> dict:
        return {"commit": self.commit, "landed_at": self.landed_at, "written_by": self.by}


def memo_lessons(memo_text: str) -> list[Lesson]:
    """The bullets of the memo's two sections, in order (a bullet repeated is one lesson)."""
    found: dict[str, Lesson] = {}
    positions: dict[str, int] = {}
    for key, text, _, _ in memo_mod.located_bullets(memo_text):
        lesson_id = memo_mod.lesson_id(text)
        position = positions.get(key, 0)
        positions[key] = position + 1
        found.setdefault(lesson_id, Lesson(MEMO, lesson_id, key, text, position))
    return list(found.values())


def skill_lesson(name: str, text: str) -> Lesson:
    """A skill as a lesson: its whole SKILL.md (its description says when; its body what)."""
    return Lesson(SKILL, name, name, text)


def current(agent: Agent) -> list[Lesson]:
    """The agent's lessons as its files hold them now: memo bullets, then skills by name."""
    memo_text = agent.memo_to_parse()
    if conflicts.conflicted(agent.path, {memo_mod.MEMO_FILE: memo_text}):
        memo_text = ""  # both sides of a merge are no lesson
    return memo_lessons(memo_text) + [skill_lesson(s.name, s.text) for s in agent.skills()]


@dataclass
class Snapshot:
    """The lessons at one commit, read on demand: memo bullets by id, skills by name."""

    repo: Repo
    rev: str
    _memo: dict[str, Lesson] | None = None
    _skills: dict[str, Lesson | None] | None = None

    def memo(self) -> dict[str, Lesson]:
        if self._memo is None:
            text = self.repo.read_blobs([f"{self.rev}:{memo_mod.MEMO_FILE}"]).get(
                f"{self.rev}:{memo_mod.MEMO_FILE}"
            )
            decoded = (
                (text or b"").decode("utf-8", "replace") if len(text or b"") <= memo_mod.MEMO_CAP else ""
            )
            if conflicts.conflicted(self.repo.path, {memo_mod.MEMO_FILE: decoded}):
                decoded = ""
            self._memo = {lesson.id: lesson for lesson in memo_lessons(decoded)}
        return self._memo

    def skills(self, names: Iterable[str]) -> dict[str, Lesson]:
        """The named skills that exist at this commit (read in one `cat-file --batch`)."""
        known = self._skills if self._skills is not None else {}
        wanted = [n for n in dict.fromkeys(names) if n not in known]
        if wanted:
            blobs = self.repo.read_blobs([f"{self.rev}:skills/{n}/{SKILL_FILE}" for n in wanted])
            for name in wanted:
                data = blobs.get(f"{self.rev}:skills/{name}/{SKILL_FILE}")
                text = data.decode("utf-8", "replace") if data is not None else None
                known[name] = skill_lesson(name, text) if text is not None else None
        self._skills = known
        return {n: lesson for n in names if (lesson := known.get(n)) is not None}


def at_commit(repo: Repo, rev: str) -> Snapshot:
    return Snapshot(repo, rev)


def memo_commits(repo: Repo, rev: str | None = None) -> dict[str, list[str]]:
    """Bullet id → the commits that last wrote its lines, in the memo at `rev` (the tip)."""
    tip = rev or repo.tip()
    if tip is None:
        return {}
    blobs = repo.read_blobs([f"{tip}:{memo_mod.MEMO_FILE}"])
    data = blobs.get(f"{tip}:{memo_mod.MEMO_FILE}")
    if data is not None and len(data) > memo_mod.MEMO_CAP:  # a log, no lessons: never blamed
        return {}
    shas = authorship.line_commits(repo, memo_mod.MEMO_FILE, tip) if data is not None else None
    if data is None or shas is None:
        return {}
    found: dict[str, list[str]] = {}
    for _key, text, first, last in memo_mod.located_bullets(data.decode("utf-8", "replace")):
        found.setdefault(memo_mod.lesson_id(text), list(dict.fromkeys(shas[first : last + 1])))
    return found


def skill_commit(repo: Repo, name: str, rev: str) -> str | None:
    """The commit that last wrote the skill's SKILL.md as of `rev`."""
    try:
        out = repo.text("rev-list", "-1", rev, "--", f"skills/{name}/{SKILL_FILE}").strip()
    except GitError:
        return None
    return out or None


def _by(commits: Iterable[Commit | None], evolve: Collection[str]) -> str:
    made = {authorship.made_by_evolve(c, evolve) for c in commits}
    return EVOLVE if made == {True} else PERSON if made == {False} else BOTH


def origins(agent: Agent, lessons: list[Lesson]) -> dict[tuple[str, str], Origin]:
    """Each lesson's origin at the branch tip: one blame, one history pass, one log of commits."""
    repo, evolve = agent.repo, agent.evolve_emails
    memo_shas = memo_commits(repo) if any(lesson.kind == MEMO for lesson in lessons) else {}
    history = repo.skill_history() if any(lesson.kind == SKILL for lesson in lessons) else {}
    wanted = [sha for shas in memo_shas.values() for sha in shas]
    for lesson in lessons:
        entry = history.get(lesson.id) if lesson.kind == SKILL else None
        if entry and entry.commits:
            wanted += [entry.commits[0], entry.commits[-1]]
    commits = read_commits(repo, wanted)
    found: dict[tuple[str, str], Origin] = {}
    for lesson in lessons:
        if lesson.kind == MEMO:
            shas = [s for s in memo_shas.get(lesson.id, []) if s in commits]
            if shas:
                newest = max(shas, key=lambda sha: commits[sha].date)
                found[lesson.key] = Origin(
                    newest, commits[newest].date, _by((commits[s] for s in shas), evolve)
                )
            continue
        entry = history.get(lesson.id)
        if entry and entry.commits:
            first, last = commits.get(entry.commits[0]), commits.get(entry.commits[-1])
            found[lesson.key] = Origin(entry.commits[-1], entry.created_at, _by([first, last], evolve))
    return found


def by_key(lessons: Iterable[Lesson]) -> Mapping[tuple[str, str], Lesson]:
    return {lesson.key: lesson for lesson in lessons}


@dataclass(frozen=True)
class CaseFiles:
    """A lesson's eval case as the tip holds it: its files; whether a person wrote or removed any."""

    paths: tuple[str, ...] = ()
    person: bool = False


def case_folders(repo: Repo, rev: str | None = None) -> dict[str, str]:
    """Lesson id → its eval case's folder, for each case at `rev` (the tip) that has a prompt."""
    tip = rev or repo.tip()
    if tip is None:
        return {}
    found = {}
    for path in repo.tree_entries(tip, [EVALS]):
        lesson = case_lesson(path)
        if lesson is not None and path == f"{case_folder(lesson)}/prompt.md":
            found[lesson] = case_folder(lesson)
    return found


def case_files(agent: Agent, commits: Mapping[str, Commit], rev: str | None = None) -> dict[str, CaseFiles]:
    """Each lesson's eval case at `rev` (the tip): its files, and whether a person's commit touched it.

    A case a person wrote, edited or removed (their commit, their revert) is theirs: a
    reflection neither rewrites nor removes it. One `git log` over `evals/`.
    """
    repo = agent.repo
    tip = rev or repo.tip()
    if tip is None:
        return {}
    paths: dict[str, list[str]] = {}
    for path in repo.tree_entries(tip, [EVALS]):
        lesson = case_lesson(path)
        if lesson is not None:
            paths.setdefault(lesson, []).append(path)
    persons: set[str] = set()
    sha = ""
    args = ("log", "--format=%x00%H", "--name-only", tip, "--", EVALS)
    listed = asked_once(repo, tip, args, lambda: repo.git(*args)).decode("utf-8", "replace").strip()
    for line in listed.split("\n"):
        if line.startswith("\0"):
            sha = line[1:]
            continue
        lesson = case_lesson(line.strip())
        commit = commits.get(sha)
        if lesson is not None and (
            commit is None or not authorship.made_by_evolve(commit, agent.evolve_emails)
        ):
            persons.add(lesson)
    return {
        lesson: CaseFiles(tuple(sorted(paths.get(lesson, ()))), lesson in persons)
        for lesson in set(paths) | persons
    }
