"""What a person undid: lines evolve learned that a person's commit took out of the repository.

A lesson is fingerprinted line by line (list markers, case, punctuation and spacing aside;
headings, fences and trivial lines skipped), whatever operation wrote it and in whichever
skill or memo section, so the same text cannot come back through retire + create or under
another name. A line counts as undone when a person's commit removed it (`evolve revert`,
`git revert` with or without their own message, deleting a skill folder, editing or
deleting lines by hand) or a person rejected a proposal holding it — and only when that
commit leaves its text nowhere in the repository: moving or re-wrapping text is not an
undo. Blocks are derived from git history (rejections and `evolve unblock` are commits of
their own), so they travel with the repository. A block is lifted by a later unblock, or
when a person's commit writes the line again (they changed their mind, or moved it in two
saves). A blocked lesson of several words is recognised re-wrapped over lines too.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evolve.store.fixed import asked_once
from evolve.store.git import PLAIN_CONFIG
from evolve.store.history import Commit
from evolve.store.repo import Repo
from evolve.workspace.memo import MEMO_FILE, normalise

BLOCKS = "Evolve-Blocks"  # on a reject commit: one fingerprint per line
LEARNED = "Evolve-Learned"  # on an accept commit (a proposal merged on the server): its lesson lines
UNBLOCKS = "Evolve-Unblocks"  # on an unblock commit
LEARNING = frozenset({"reflection"})  # commits whose added lines are lessons evolve learned
UNDOING = frozenset({"human_edit", "revert"})  # a person's commits (and no Evolve-Kind at all)
MIN_WORDS, MIN_CHARS = 2, 6  # "Use uv." is a lesson; "Done." is not
WRAP_WORDS, WRAP_LINES = 4, 3  # a blocked lesson this long is found wrapped over up to 3 lines
_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_SKIP = re.compile(
    r"^\s*(?:#|```|~~~|\||---|===|<!--|-->)"  # headings, fences, tables, rules, comments
    r"|^(?:name|description|license|compatibility|metadata|allowed-tools)\s*:"  # a SKILL.md's frontmatter
    r"|^\s+[\w-]+:\s"  # its metadata entries
)


@dataclass(frozen=True)
class Block:
    """One undone lesson line: its id (fingerprint), its text, and the commit that undid it."""

    id: str
    line: str
    commit: str
    kind: str  # how it was undone: human_edit, revert, reject

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "line": self.line, "commit": self.commit, "undone_by": self.kind}

    @property
    def lesson(self) -> str:
        """The normalised lesson text (what a re-wrapped copy is matched against).

        "" for the blocks of a rejected removal: they stop a removal, not a line.
        """
        if self.line.startswith((RETIRE, KEEP)):
            return ""
        return lesson_text(self.line) or ""


def lesson_text(line: str) -> str | None:
    """The normalised lesson a line holds, or None for a heading, fence or trivial line."""
    if _SKIP.match(line):
        return None
    text = normalise(_MARKER.sub("", line))
    return text if len(text) >= MIN_CHARS and len(text.split()) >= MIN_WORDS else None


def without_marker(line: str) -> str:
    """A line as its lesson reads in a list of them: its own list marker (`- `, `1. `) gone."""
    return _MARKER.sub("", line, count=1)


def fingerprint(text: str, what: str = "lesson-line") -> str:
    return hashlib.sha256((what + "\x1f" + text).encode("utf-8", "surrogatepass")).hexdigest()[:16]


# A rejected proposal can also undo a removal: retiring a skill, or deleting lines of one.
RETIRE, KEEP = "retire_skill ", "keep: "  # how such blocks read (their text's first words)


def retire_id(name: str) -> str:
    return fingerprint(unicodedata.normalize("NFKC", name).casefold(), "retire-skill")


def keep_id(lesson: str) -> str:
    return fingerprint(lesson, "keep-line")


def lesson_lines(text: str) -> dict[str, str]:
    """Fingerprint → the original line, for every lesson line of `text`."""
    found: dict[str, str] = {}
    for raw in text.splitlines():
        lesson = lesson_text(raw)
        if lesson is not None:
            found.setdefault(fingerprint(lesson), raw.strip())
    return found


def _undoing(commit: Commit) -> str | None:
    """How a commit undoes what it removes, or None when it does not (evolve's own choices)."""
    kind = commit.trailers.get("Evolve-Kind")
    if kind is None and len(commit.parents) == 1:
        return "revert" if commit.reverts else "human_edit"
    return kind if kind in UNDOING else None


def _learned_paths(path: str) -> bool:
    return path == MEMO_FILE or (path.startswith("skills/") and path.endswith("/SKILL.md"))


def _changes(repo: Repo, tip: str | None) -> list[tuple[str, dict[str, list[str]], dict[str, list[str]]]]:
    """(sha, added lines by path, removed lines by path) for every commit up to `tip`, oldest first."""
    if tip is None:
        return []
    answer = asked_once(repo, tip, ("undo-changes",), lambda: _log_patches(repo, tip))
    token, _, raw = answer.decode("utf-8", "replace").partition("\n")
    out = []
    for record in raw.split(token)[1:]:
        sha, _, patch = record.partition("\n")
        added: dict[str, list[str]] = {}
        removed: dict[str, list[str]] = {}
        path, header = "", False
        for line in patch.splitlines():
            if line.startswith("diff --git "):
                path, header = "", True  # until the first hunk: `--- a/x` is a header, not a line
                continue
            if header:
                if line.startswith(("+++ ", "--- ")) and line[4:] != "/dev/null":
                    path = line[6:] if line[4:6] in ("a/", "b/") else line[4:]
                header = not line.startswith("@@")
                continue
            if not _learned_paths(path):
                continue
            if line.startswith("+"):
                added.setdefault(path, []).append(line[1:])
            elif line.startswith("-"):
                removed.setdefault(path, []).append(line[1:])
        out.append((sha.strip(), added, removed))
    return out


def _log_patches(repo: Repo, tip: str) -> bytes:
    """A random token, a newline, then per commit up to `tip`: the token, its id, its patch (memo, skills)."""
    token = secrets.token_hex(8)
    raw = repo.git(
        "log",
        "--reverse",
        "--no-renames",
        "--no-merges",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--text",  # a .gitattributes `-diff` or `binary` must not hide what a commit removed
        "--src-prefix=a/",
        "--dst-prefix=b/",
        f"--format={token}%H",
        "-p",
        tip,
        "--",
        MEMO_FILE,
        "skills/",
        env=PLAIN_CONFIG,
    )
    return token.encode() + b"\n" + raw


def tree_text(repo: Repo, sha: str) -> str:
    """Every lesson line the tree of `sha` holds, normalised and joined by spaces.

    Read once per Repo and commit (`fixed.asked_once`): what a commit's tree holds never
    changes, and one command reads the blocks more than once (a reflection's bundle and plan).
    """
    return asked_once(repo, sha, ("lesson-text",), lambda: _tree_text(repo, sha).encode()).decode()


def _tree_text(repo: Repo, sha: str) -> str:
    listed = repo.text("ls-tree", "-r", "--name-only", "-z", sha, "--", MEMO_FILE, "skills/")
    paths = [p for p in listed.split("\0") if p and _learned_paths(p)]
    blobs = repo.read_blobs([f"{sha}:{p}" for p in paths])
    return _joined(
        raw for blob in blobs.values() for raw in (blob or b"").decode("utf-8", "replace").splitlines()
    )


def blocks(repo: Repo, commits: Iterable[Commit] | None = None, tip: str | None = None) -> dict[str, Block]:
    """Every lesson line a person undid and nobody unblocked since, by fingerprint.

    `tip`: as of that commit (default: the branch tip); `commits` are its history.
    """
    tip = tip or repo.tip()
    history = list(reversed(list(repo.log(tip) if commits is None else commits)))  # oldest first
    changes = {sha: (added, removed) for sha, added, removed in _changes(repo, tip)}
    learned: dict[str, str] = {}  # fingerprint → lesson text evolve wrote
    found: dict[str, Block] = {}
    for commit in history:
        kind = commit.trailers.get("Evolve-Kind")
        added, removed = changes.get(commit.sha, ({}, {}))
        if kind in LEARNING:
            for raw in (line for lines in added.values() for line in lines):
                lesson = lesson_text(raw)
                if lesson is not None:
                    learned.setdefault(fingerprint(lesson), lesson)
        elif kind == "accept":  # merged on the server (a squash has no trailers): still evolve's lessons
            for item in commit.values(LEARNED):
                fp, _, text = item.partition(" ")
                learned.setdefault(fp, lesson_text(text) or normalise(text))
        elif kind == "reject":
            for item in commit.values(BLOCKS):
                fp, _, text = item.partition(" ")
                found[fp] = Block(fp, text, commit.sha, "reject")
        elif kind == "unblock":
            for fp in commit.values(UNBLOCKS):
                found.pop(fp, None)
        elif (how := _undoing(commit)) is not None:
            found.update(_undone(repo, commit.sha, how, removed, learned))
            for raw in (line for lines in added.values() for line in lines):
                lesson = lesson_text(raw)
                if lesson is not None:
                    found.pop(fingerprint(lesson), None)  # the person wrote it again: theirs now
    return found


def _undone(
    repo: Repo, sha: str, how: str, removed: dict[str, list[str]], learned: dict[str, str]
) -> dict[str, Block]:
    """The learned lines commit `sha` removed and left nowhere in the repository."""
    candidates = {}
    for raw in (line for lines in removed.values() for line in lines):
        lesson = lesson_text(raw)
        if lesson is not None and fingerprint(lesson) in learned:
            candidates[fingerprint(lesson)] = raw.strip()
    if not candidates:
        return {}
    present = tree_text(repo, sha)
    return {
        fp: Block(fp, raw, sha, how) for fp, raw in candidates.items() if f" {learned[fp]} " not in present
    }


def rejected_removals(removed: Iterable[str], retired: Iterable[str]) -> list[str]:
    """The `Evolve-Blocks` items of a rejected proposal's removals: retired skills, deleted lines."""
    items = [f"{retire_id(name)} {RETIRE}{name}" for name in retired]
    for raw in lesson_lines("\n".join(removed)).values():
        lesson = lesson_text(raw) or ""
        items.append(f"{keep_id(lesson)} {KEEP}{raw}")
    return items


def relearned(text: str, before: str, blocked: Mapping[str, str]) -> list[str]:
    """The lines `text` adds to `before` that teach again a lesson a person undid.

    `blocked`: fingerprint → the lesson's normalised text ("" when unknown). The same line
    counts, and so does a lesson of WRAP_WORDS or more words inside a longer line or
    re-wrapped over a few lines.
    """
    old = set(lesson_lines(before))
    found = [line for fp, line in lesson_lines(text).items() if fp in blocked and fp not in old]
    long = [lesson for lesson in blocked.values() if len(lesson.split()) >= WRAP_WORDS]
    if long:
        had = _joined(before.splitlines())
        raws = [raw for raw in text.splitlines() if raw.strip()]
        for start in range(len(raws)):
            for end in range(start + 1, min(start + WRAP_LINES, len(raws)) + 1):  # one line holding it too
                window, inner = (
                    _joined(raws[start:end]),
                    (_joined(raws[start + 1 : end]), _joined(raws[start : end - 1])),
                )
                for lesson in long:  # spanning every line of the window: its neighbours are not it
                    wanted = f" {lesson} "
                    if wanted in window and wanted not in had and not any(wanted in part for part in inner):
                        found += [raw.strip() for raw in raws[start:end] if raw.strip() not in found]
    return found


def _joined(lines: Iterable[str]) -> str:
    parts = (normalise(_MARKER.sub("", raw)) for raw in lines)
    return " " + " ".join(part for part in parts if part) + " "
