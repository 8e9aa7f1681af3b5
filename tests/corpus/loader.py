"""The replay corpus: recorded histories and the answers a capable reflector gave them.

One folder per case under tests/corpus/ (the format: tests/corpus/README.md). Used by
`make eval` (tests/corpus/eval.py) and by replay tests, which set a case up in a test's
home and send its recorded answers through the real reflection path.

    cases()                 every case, by folder name
    load(name)              one case
    case.available          False when a shared transcript it names is missing (skip it)
    case.transcripts(into)  the history: shared transcripts, then the case's own (copied into
                            `into` with their planted secrets filled in, when there are any)
    case.answers()          the recorded `apply_reflection` inputs, each an alternative answer
    case.answer(path)       one of them, as a dict
    case.setup(home)        a fresh agent in `home`: agent.toml additions, the start skills and
                            memo committed (by evolve, or by a person), the history observed
                            (a case with a timeline: played in its order, see `play`)
    case.steps              answers and a person's acts in order, replayed by tests/corpus/trust.py
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from evolve import hookmain
from evolve.home import Home
from evolve.observe import ingest
from evolve.observe.records import drain_pending
from evolve.store import ledger
from evolve.store.history import build_message
from evolve.workspace.agent import Agent
from tests.agent_template import new_agent
from tests.helpers import EVOLVE, commit_all, evolve_commit, git
from tests.shared_data import CLAUDE_DATA

CORPUS = Path(__file__).resolve().parent
AUTHORS = ("evolve", "person")


@dataclass(frozen=True)
class Case:
    """One recorded history and its recorded answers (see the module docstring)."""

    name: str
    folder: Path
    description: str
    agent: str = "demo"
    shared: tuple[str, ...] = ()  # paths under ../shared/data/claude-code
    own: tuple[str, ...] = ()  # paths under the case folder
    agent_toml: str = ""  # appended to the agent's agent.toml
    start_author: str = "evolve"  # who committed skills/ and memo.md: "evolve" or "person"
    secrets: dict[str, str] = field(default_factory=dict)  # {{NAME}} in its transcripts → the secret
    expect: dict = field(default_factory=dict)  # free-form, for replay tests; the eval ignores it
    steps: tuple[dict, ...] = ()  # recorded answers and a person's acts, in order (tests/corpus/trust.py)
    timeline: tuple[dict, ...] = ()  # commits and sessions in time order (`play`)
    start_at: str = ""  # when the start skills and memo were committed (a timeline's first date)

    @property
    def available(self) -> bool:
        return all((CLAUDE_DATA / name).is_file() for name in self.shared)

    def transcripts(self, into: Path) -> list[Path]:
        missing = [name for name in self.shared if not (CLAUDE_DATA / name).is_file()]
        if missing:
            raise FileNotFoundError(f"case {self.name}: {CLAUDE_DATA / missing[0]} is missing")
        own = [self.folder / name for name in self.own]
        if self.secrets:  # the corpus holds placeholders only: no scanner mistakes it for a leak
            into.mkdir(parents=True, exist_ok=True)
            for number, path in enumerate(own):
                text = path.read_text(encoding="utf-8")
                for name, secret in self.secrets.items():
                    text = text.replace("{{" + name + "}}", secret)
                own[number] = into / path.name
                own[number].write_text(text, encoding="utf-8")
        return [CLAUDE_DATA / name for name in self.shared] + own

    def answers(self) -> list[Path]:
        return sorted((self.folder / "answers").glob("*.json"))

    def answer(self, path: Path) -> dict:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("operations"), list):
            raise ValueError(f"{path}: not an apply_reflection input (no 'operations' list)")
        return data

    def start_files(self) -> dict[str, bytes]:
        """Repository path → bytes of the skills and memo the agent starts with."""
        files = {}
        skills = self.folder / "skills"
        for path in sorted(skills.rglob("*")) if skills.is_dir() else []:
            if path.is_file():
                files[path.relative_to(self.folder).as_posix()] = path.read_bytes()
        memo = self.folder / "memo.md"
        if memo.is_file():
            files["memo.md"] = memo.read_bytes()
        return files

    def setup(self, home: Home) -> Agent:
        """A fresh agent in `home` with this case's start and its history observed."""
        agent = new_agent(self.agent, home)  # Agent.create's, copied in a test (tests.agent_template)
        changes = self.start_files()
        if self.agent_toml:
            toml = (agent.path / "agent.toml").read_text(encoding="utf-8")
            changes["agent.toml"] = (toml.rstrip("\n") + "\n\n" + self.agent_toml.strip() + "\n").encode()
        if changes:
            commit(agent, changes, f"start of the {self.name} case", self.start_author, self.start_at)
        if self.timeline:
            self.play(home, agent)
            return agent
        history = self.transcripts(home.root / "corpus" / self.name)
        files = [(str(path), ingest.guess_format(path)) for path in history]
        with ledger.opened(home.state_db) as conn:
            ingest.observe(conn, agent.name, files)
        return agent

    def play(self, home: Home, agent: Agent) -> None:
        """The timeline in order: each lesson landing (a commit at its date), each session.

        `{commit = {"memo.md" = "landed/memo.md"}, at = "…Z", author = "evolve", message = "…"}`
        commits the case's files at their repository paths; `{sessions = ["transcripts/a.jsonl"]}`
        starts each session as the Claude Code hook does (what its context carried is spooled:
        the memo bullets shown, the skills listed), then observes its transcript.
        """
        with ledger.opened(home.state_db) as conn:
            for step in self.timeline:
                if "commit" in step:
                    files = {repo: (self.folder / own).read_bytes() for repo, own in step["commit"].items()}
                    commit(agent, files, step["message"], step.get("author", "evolve"), step["at"])
                for name in step.get("sessions", ()):
                    path = self.folder / name
                    session = json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])["sessionId"]
                    hookmain.agent_context(str(home.root), agent.name, True, session)
                    drain_pending(conn, home)
                    ingest.observe(conn, agent.name, [(str(path), ingest.guess_format(path))])


def commit(agent: Agent, changes: dict[str, bytes], message: str, author: str, at: str = "") -> None:
    """The files committed by evolve (a reflection) or by a person, at `at` (default: now)."""
    if author == "person":
        for name, data in changes.items():
            (agent.path / name).parent.mkdir(parents=True, exist_ok=True)
            (agent.path / name).write_bytes(data)
        if not at:
            commit_all(agent.path, message)
            return
        git(agent.path, "add", "-A")
        git(agent.path, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": at, "GIT_COMMITTER_DATE": at})
    elif not at:
        evolve_commit(agent, changes, f"reflect({agent.name}): {message}")
    else:
        trailers = {"Evolve-Kind": "reflection"}
        with agent.repo.locked():
            agent.repo.commit_changes(
                changes, build_message(f"reflect({agent.name}): {message}", trailers), EVOLVE, when=at
            )


def load(name: str) -> Case:
    folder = CORPUS / name
    spec = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
    history = spec.get("history", {})
    own = history.get("transcripts")
    if own is None:
        own = [p.relative_to(folder).as_posix() for p in sorted((folder / "transcripts").glob("*.jsonl"))]
    author = spec.get("start_author", "evolve")
    if author not in AUTHORS:
        raise ValueError(f"{folder / 'case.toml'}: start_author must be one of {AUTHORS}, not {author!r}")
    return Case(
        name=name,
        folder=folder,
        description=spec.get("description", ""),
        agent=spec.get("agent", "demo"),
        shared=tuple(history.get("shared", ())),
        own=tuple(own),
        agent_toml=spec.get("agent_toml", ""),
        start_author=author,
        secrets={name: "".join(parts) for name, parts in spec.get("secrets", {}).items()},
        expect=spec.get("expect", {}),
        steps=tuple(spec.get("steps", ())),
        timeline=tuple(spec.get("timeline", ())),
        start_at=spec.get("start_at", ""),
    )


def cases() -> list[Case]:
    return [load(path.parent.name) for path in sorted(CORPUS.glob("*/case.toml"))]
