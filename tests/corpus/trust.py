"""Replaying a case's steps: recorded answers and a scripted person, measured as a person sees it.

A case with `[[steps]]` in its case.toml is replayed in order on one agent: each `answer`
step is a reflection (`evolve reflect --force --json`, the real anthropic SDK against the
local fake Messages API, answered with the recorded tool input), each `person` step is
what a person does at their terminal (real git commands, their own identity and messages,
or an evolve command). What is measured is what the issue promises:

- operations proposed, landed, waiting for review, unchanged, and rejected by reason; a
  rejection that is not a person's undo at work is a *valid operation rejected* (target 0);
- a person's lines lost: a line a person wrote that is on no file of main (target 0);
- lessons re-learned after an undo: an undone lesson back on main (target 0);
- wrong blocks: a block on a lesson no person undid, or on one that is on main (target 0).
  Editing a line by hand undoes its old wording, as the issue defines an undo.

Person steps (`person = …`):

    edit           path, replace = [old, new] or append = text; message
    git-revert     the last reflection (`git revert --no-edit`, then their own message)
    evolve-revert  the last reflection (`evolve revert`)
    delete-skill   name: `git rm -r skills/<name>` and commit
    delete-line    path, line: the line removed by hand and committed
    move-line      line, path, to: cut and committed, then pasted and committed (two saves)
    reject         the last reflection's proposal (`evolve reject`)
    accept         the last reflection's proposal (`evolve accept`)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field

from evolve.cli import main as evolve
from evolve.home import Home
from evolve.reflect.operations import BLOCKED_REASON
from evolve.workspace import undo
from tests.corpus.loader import Case
from tests.fake_messages_server import FakeMessagesAPI

UNDO_REASONS = (BLOCKED_REASON, "a person rejected", "lesson a person undid")
API_KEY = "sk-ant-test-key-for-the-fake-server-only"


@dataclass
class TrustReport:
    """What one replay of a case's steps did, in the terms of the issue's measures."""

    case: str
    proposed: int = 0
    landed: int = 0
    waiting: int = 0
    unchanged: int = 0
    rejected: dict[str, int] = field(default_factory=dict)  # reason → count
    valid_rejected: list[str] = field(default_factory=list)
    person_lines_lost: list[str] = field(default_factory=list)
    relearned: list[str] = field(default_factory=list)
    wrong_blocks: list[str] = field(default_factory=list)
    left_out: int = 0  # memo lines left out because a person undid them
    kept: int = 0  # a person's memo lines kept in place by an update

    def row(self) -> list[str]:
        undo_rejected = sum(n for reason, n in self.rejected.items() if _undoing(reason))
        return [
            self.case,
            str(self.proposed),
            f"{self.landed}/{self.waiting}/{self.unchanged}",
            f"{undo_rejected} undo, {len(self.valid_rejected)} valid",
            str(self.kept),
            str(self.left_out),
            str(len(self.person_lines_lost)),
            str(len(self.relearned)),
            str(len(self.wrong_blocks)),
        ]


HEADER = [
    "case",
    "ops",
    "landed/review/unchanged",
    "rejected",
    "person kept",
    "undone left out",
    "person lost",
    "re-learned",
    "wrong blocks",
]


def _undoing(reason: str) -> bool:
    return any(marker in reason for marker in UNDO_REASONS)


class _Replay:
    def __init__(self, case: Case, home: Home, api: FakeMessagesAPI) -> None:
        self.case, self.home, self.api = case, home, api
        self.agent = case.setup(home)
        self.report = TrustReport(case.name)
        self.mine: set[str] = set()  # lines a person wrote (stripped), still meant to be there
        self.undone: dict[str, str] = {}  # fingerprint → lesson a person undid
        self.last: dict = {}  # the last reflection's --json
        if case.start_author == "person":
            for data in case.start_files().values():
                self.mine |= {line.strip() for line in data.decode().splitlines() if _worth(line)}

    # -- the two kinds of step -------------------------------------------------------
    def answer(self, path: str) -> None:
        self.api.reply_tool(self.case.answer(self.case.folder / path))
        code, out = _run("reflect", self.agent.name, "--force", "--json")
        self.last = json.loads(out)
        if code not in (0, 1):
            raise AssertionError(f"{self.case.name}/{path}: exit {code}: {self.last}")
        for op in self.last.get("operations", []):
            self.report.proposed += 1
            status = op["status"]
            if status == "landed":
                self.report.landed += 1
            elif status in ("waiting", "proposed"):
                self.report.waiting += 1
            elif status == "unchanged":
                self.report.unchanged += 1
            elif status == "rejected":
                reason = op["reason"]
                self.report.rejected[reason] = self.report.rejected.get(reason, 0) + 1
                if not _undoing(reason):
                    self.report.valid_rejected.append(f"{path}: {op['op']} {op['target']}: {reason}")
            self.report.kept += op.get("kept") or 0
            self.report.left_out += op.get("left_out") or 0
        self._check(after=path)

    def person(self, step: dict) -> None:
        what = step["person"]
        before, lines_before = self._main_lessons(), self._main_text_lines()
        if what == "edit":
            target = self.agent.path / step["path"]
            text = target.read_text(encoding="utf-8")
            before_lines = set(text.splitlines())
            if "replace" in step:
                old, new = step["replace"]
                assert old in text, f"{self.case.name}: {old!r} is not in {step['path']}"
                text = text.replace(old, new, 1)
            else:
                text += step["append"]
            self.mine |= {
                line.strip() for line in text.splitlines() if line not in before_lines and _worth(line)
            }
            target.write_text(text, encoding="utf-8")
            self._git("commit", "-qam", step.get("message", "my edit"))
        elif what == "git-revert":
            self._git("revert", "--no-commit", self._last_commit())
            self._git("commit", "-qm", step.get("message", "no, not that"))
        elif what == "evolve-revert":
            assert _run("revert", self.agent.name, self._last_commit())[0] == 0
        elif what == "delete-skill":
            self._git("rm", "-rq", f"skills/{step['name']}")
            self._git("commit", "-qm", step.get("message", f"drop {step['name']}"))
        elif what == "delete-line":
            self._cut(step["path"], step["line"])
            self._git("commit", "-qam", step.get("message", "not this line"))
        elif what == "move-line":
            self._cut(step["path"], step["line"])
            self._git("commit", "-qam", "cut")  # the watcher commits between the two saves
            target = self.agent.path / step["to"]
            target.write_text(target.read_text(encoding="utf-8") + step["line"] + "\n", encoding="utf-8")
            self._git("commit", "-qam", "paste")
        elif what in ("reject", "accept"):
            proposal = (self.last.get("proposal") or "").removeprefix("proposals/")
            assert proposal, f"{self.case.name}: no proposal to {what}"
            if what == "reject":
                shown = self._proposal_lessons(proposal)
            assert _run(what, self.agent.name, proposal)[0] == 0
            if what == "reject":
                self.undone.update(shown)
        else:
            raise ValueError(f"{self.case.name}: unknown person step {what!r}")
        after = self._main_lessons()
        if what in ("edit", "git-revert", "evolve-revert", "delete-skill", "delete-line"):  # undo by hand too
            present = _joined(after.values())
            self.undone.update(
                {fp: t for fp, t in before.items() if fp not in after and f" {t} " not in present}
            )
        if what != "accept":  # what the person's own step took away is theirs to take
            self.mine -= lines_before - self._main_text_lines()
        self._check(after=f"person {what}")

    # -- what the person sees ----------------------------------------------------------
    def _check(self, after: str) -> None:
        lines = self._main_text_lines()
        for line in sorted(self.mine - lines):
            self.report.person_lines_lost.append(f"after {after}: {line}")
        self.mine &= lines
        present = _joined(lines)
        for text in self.undone.values():
            if f" {text} " in present:
                self.report.relearned.append(f"after {after}: {text}")
        for fp, block in undo.blocks(self.agent.repo).items():
            if block.line.startswith((undo.RETIRE, undo.KEEP)):
                continue
            if fp not in self.undone or f" {block.lesson} " in present:
                self.report.wrong_blocks.append(f"after {after}: {block.line}")
        self.undone = {fp: t for fp, t in self.undone.items() if f" {t} " not in present}

    def _main_files(self) -> dict[str, str]:
        repo = self.agent.repo
        listed = repo.text("ls-tree", "-r", "--name-only", "-z", "main", "--", "memo.md", "skills/")
        paths = [p for p in listed.split("\0") if p.endswith(".md")]
        blobs = repo.read_blobs([f"main:{p}" for p in paths])
        return {key: (blob or b"").decode("utf-8", "replace") for key, blob in blobs.items()}

    def _main_text_lines(self) -> set[str]:
        return {line.strip() for text in self._main_files().values() for line in text.splitlines()}

    def _main_lessons(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for text in self._main_files().values():
            for fp, raw in undo.lesson_lines(text).items():
                found[fp] = undo.lesson_text(raw) or ""
        return found

    def _proposal_lessons(self, proposal: str) -> dict[str, str]:
        patch = self.agent.repo.text("show", "--format=", f"proposals/{proposal}", "--")
        added = [
            line[1:] for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")
        ]
        return {fp: undo.lesson_text(raw) or "" for fp, raw in undo.lesson_lines("\n".join(added)).items()}

    def _last_commit(self) -> str:
        sha = self.last.get("commit")
        assert sha, (
            f"{self.case.name}: the last reflection made no commit to undo ({self.last.get('status')})"
        )
        return sha

    def _cut(self, path: str, line: str) -> None:
        target = self.agent.path / path
        text = target.read_text(encoding="utf-8")
        assert line + "\n" in text, f"{self.case.name}: {line!r} is not a line of {path}"
        target.write_text(text.replace(line + "\n", "", 1), encoding="utf-8")

    def _git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.agent.path, check=True, capture_output=True)


def _worth(line: str) -> bool:
    return undo.lesson_text(line) is not None


def _joined(lines) -> str:  # noqa: ANN001 - any iterable of text
    return " " + " ".join(undo.normalise(line) for line in lines if line.strip()) + " "


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = evolve(list(argv))
    return code, out.getvalue()


@contextlib.contextmanager
def _backend(home: Home, api: FakeMessagesAPI) -> Iterator[None]:
    home.root.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f'[model]\nbackend = "anthropic"\nbase_url = "{api.url}"\nmax_retries = 0\n')
    saved = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = API_KEY
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("ANTHROPIC_API_KEY", None)
        else:
            os.environ["ANTHROPIC_API_KEY"] = saved


def replay(case: Case, home: Home) -> TrustReport:
    """Replay `case`'s steps in `home` (the process's evolve home) and measure them."""
    api = FakeMessagesAPI()
    try:
        with _backend(home, api):
            run = _Replay(case, home, api)
            for step in case.steps:
                if "answer" in step:
                    run.answer(step["answer"])
                else:
                    run.person(step)
            return run.report
    finally:
        api.close()


def table(reports: list[TrustReport]) -> str:
    rows = [HEADER] + [r.row() for r in reports]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    for report in reports:
        for kind, items in (
            ("valid operation rejected", report.valid_rejected),
            ("a person's line lost", report.person_lines_lost),
            ("re-learned after an undo", report.relearned),
            ("wrong block", report.wrong_blocks),
        ):
            lines += [f"  {report.case}: {kind}: {item}" for item in items]
    return "\n".join(lines)


def replay_all(selected: list[Case], fresh_home) -> list[TrustReport]:  # noqa: ANN001 - eval's context
    reports = []
    for case in selected:
        if case.steps and case.available:
            with fresh_home() as home:
                reports.append(replay(case, home))
    return reports
