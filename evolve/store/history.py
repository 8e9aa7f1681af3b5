"""Commit messages and history as people read them: kinds, trailers, skill metadata.

Reading only (one `git log` process per question); writing lives in repo.py and commit.py.
Any model- or user-supplied text put into a subject or trailer is cleaned to one line first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from evolve import clock
from evolve.store.fixed import asked_once
from evolve.store.head import PROPOSALS as PROPOSALS  # re-exported: the proposals' branch prefix

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Repo

_TRAILER_JUNK = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


FORMAT = "Evolve-Format"  # 2: a list-valued trailer is one line per item
FORMAT_VERSION = "2"
FOR_REVIEW = " (for review)"  # how a proposal's subject ends; its accept's subject does not


@dataclass
class Commit:
    sha: str
    parents: list[str]
    author: str
    email: str
    date: str
    subject: str
    lines: dict[str, list[str]]  # every trailer line's value, by key, in order
    body: str = ""
    committer_email: str = ""

    @property
    def trailers(self) -> dict[str, str]:
        """Each trailer's value; a repeated key's lines joined with ', ' (as people read them)."""
        return {key: ", ".join(values) for key, values in self.lines.items()}

    def values(self, key: str) -> list[str]:
        """The items of a list-valued trailer: one per line, or the older comma-joined form."""
        if self.lines.get(FORMAT) == [FORMAT_VERSION]:
            return [v for v in self.lines.get(key, []) if v and v != "-"]
        return [item for value in self.lines.get(key, []) for item in list_values(value)]

    @property
    def kind(self) -> str:
        """Told apart by trailers; a person's plain commits are human edits."""
        kind = self.trailers.get("Evolve-Kind")
        if kind:
            return kind
        if "Evolve-Reverts" in self.trailers or self.reverts:
            return "revert"
        if not self.parents:
            return "init"
        return "human_edit"

    @property
    def reverts(self) -> str | None:
        """The sha this commit reverts: our trailer, or git's own 'This reverts commit'."""
        if "Evolve-Reverts" in self.trailers:
            return self.trailers["Evolve-Reverts"]
        match = re.search(r"This reverts commit ([0-9a-f]{40})", self.body)
        return match.group(1) if match else None

    def to_dict(self) -> dict:
        return {
            "sha": self.sha,
            "kind": self.kind,
            "summary": self.subject,
            "author": self.author,
            "email": self.email,
            "date": self.date,
            "parents": self.parents,
            "trailers": self.trailers,
            "reverts": self.reverts,
        }


@dataclass
class SkillHistory:
    created_at: str | None = None
    updated_at: str | None = None
    patch_count: int = 0
    commits: list[str] = field(default_factory=list)


def clean_line(text: object, limit: int = 300) -> str:
    """Any model- or user-supplied text → one safe line for a subject or trailer."""
    line = _TRAILER_JUNK.sub(" ", str(text)).strip()
    line = " ".join(line.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def build_message(subject: str, trailers: Mapping[str, object], body: str = "") -> str:
    """Subject, body, trailers: a list value is one trailer line per item (its items hold ', ')."""
    parts = [clean_line(subject, 200)]
    if body.strip():
        parts.append(body.strip())
    lines = []
    for key, value in trailers.items():
        if key == FORMAT:
            continue
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        lines += [f"{key}: {clean_line(item, 1000) or '-'}" for item in items or ["-"]]
    if lines:
        if any(isinstance(value, (list, tuple)) for value in trailers.values()):
            lines.append(f"{FORMAT}: {FORMAT_VERSION}")  # how `Commit.values` reads the lists
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def parse_trailers(text: str) -> dict[str, list[str]]:
    """Trailer lines (`Key: value`) by key, every line kept."""
    trailers: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key and " " not in key.strip():
            trailers.setdefault(key.strip(), []).append(value.strip())
    return trailers


def list_values(value: str | None) -> list[str]:
    """The older comma-joined form of a list trailer → items."""
    return [v.strip() for v in (value or "").split(",") if v.strip() and v.strip() != "-"]


def _skill_of(path: str, prefix: str) -> str | None:
    if not path.startswith(prefix):
        return None
    rest = path[len(prefix) :]
    return rest.split("/", 1)[0] if "/" in rest else None


_LOG_FIELDS = ["%H", "%P", "%an", "%ae", "%ce", "%at", "%s", "%(trailers:only,unfold)", "%b"]


def read_log(repo: Repo, rev: str | None = None, limit: int | None = None) -> list[Commit]:
    """Every commit from `rev` (default: the branch tip), newest first, trailers parsed."""
    from_tip = rev is None and repo.refs_in_files
    if from_tip:  # the tip's id, from its ref file: its history is asked once
        rev = repo.tip()
        if rev is None:
            return []

    def ask() -> bytes:
        # separators with a random token: a person's message may hold \x1e or \x1f itself
        token = os.urandom(8).hex()
        args = ["log", _log_format(token)]
        if limit:
            args.append(f"-n{limit}")
        out = repo.git(*args, rev, "--") if rev else repo.at_tip(*args)
        return token.encode() + b"\n" + (out or b"")

    token, _, out = asked_once(repo, rev or "", ("log", limit), ask).partition(b"\n")
    if from_tip and not out and rev:  # a commit logs itself: the branch file names a tree or a blob
        repo.refuse_non_commit(rev)
    return _parse_log(out.decode("utf-8", "replace"), token.decode()) if out else []


def read_commits(repo: Repo, shas: list[str]) -> dict[str, Commit]:
    """The commits `shas` name (each once, none of their ancestors): one `git log` process."""
    if not shas:
        return {}
    token = os.urandom(8).hex()
    wanted = "\n".join(dict.fromkeys(shas)) + "\n"
    raw = repo.git("log", "--no-walk=unsorted", "--stdin", _log_format(token), input=wanted.encode())
    return {c.sha: c for c in _parse_log(raw.decode("utf-8", "replace"), token)}


def _log_format(token: str) -> str:
    return "--format=" + f"%x1f{token}".join(_LOG_FIELDS) + f"%x1e{token}"


def _parse_log(raw: str, token: str) -> list[Commit]:
    commits = []
    for record in raw.split(f"\x1e{token}"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, author, email, committer, when, subject, trailers, body = record.split(
            f"\x1f{token}", 8
        )
        commits.append(
            Commit(
                sha,
                parents.split(),
                author,
                email,
                clock.stamp(int(when)),
                subject,
                parse_trailers(trailers),
                body,
                committer,
            )
        )
    return commits


def read_skill_history(repo: Repo, skills_dir: str = "skills") -> dict[str, SkillHistory]:
    """created/updated/patch_count for every skill, in ONE `git log` pass.

    Follows a skill folder through renames; a deletion (retire/evict) ends an
    incarnation, so a restored skill's counts start again at its restore.
    """
    if repo.tip() is None:
        return {}
    token = os.urandom(8).hex()  # a file name may hold \x1e itself
    raw = repo.git(
        "log",
        "--reverse",
        "-z",
        f"--format=%x1e{token}%H %at",
        "--name-status",
        "-M",
        repo.tip() or "",
        "--",
        f"{skills_dir}/",
    ).decode("utf-8", "surrogateescape")
    history: dict[str, SkillHistory] = {}
    prefix = skills_dir + "/"
    for record in raw.split(f"\x1e{token}")[1:]:
        head, _, rest = record.partition("\0")
        sha, when = head.split()
        stamp = clock.stamp(int(when))
        fields = rest.strip("\0\n").split("\0")
        touched: set[str] = set()
        ended: set[str] = set()  # skills whose SKILL.md this commit deleted
        index = 0
        while index < len(fields):
            status = fields[index].strip()
            if status.startswith(("R", "C")):
                old, new = fields[index + 1], fields[index + 2]
                index += 3
                old_skill, new_skill = _skill_of(old, prefix), _skill_of(new, prefix)
                if (
                    status.startswith("R")
                    and old_skill
                    and new_skill
                    and old_skill != new_skill
                    and old.endswith("/SKILL.md")
                    and old_skill in history
                ):
                    history[new_skill] = history.pop(old_skill)
                touched.update(s for s in (new_skill,) if s)
                continue
            path = fields[index + 1] if index + 1 < len(fields) else ""
            index += 2
            skill = _skill_of(path, prefix)
            if not skill:
                continue
            if status == "D" and path.endswith("/SKILL.md"):
                history.pop(skill, None)
                ended.add(skill)
                continue
            touched.add(skill)
        # other files deleted with SKILL.md (scripts/, references/) must not revive it
        for skill in touched - ended:
            entry = history.setdefault(skill, SkillHistory())
            if entry.created_at is None:
                entry.created_at = stamp
            else:
                entry.patch_count += 1
            entry.updated_at = stamp
            entry.commits.append(sha)
    return history
