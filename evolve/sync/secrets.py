"""A secret a person wrote into memo.md or a skill: named in one line, never pushed without their word.

A person's text is theirs: evolve never rewrites it (it only redacts what it sends to a
model). But a token pasted into the memo would reach the server with the next sync: evolve
commits a person's edits itself (plumbing, so the repository's pre-commit hook never runs)
and the watcher pushes soon after. So the lines a commit or a push brings to memo.md and
`skills/` are checked with the pre-commit hook's rules (`transcripts.redact.find_secrets`,
`precommit.staged_warnings`): the watcher's log names each one when it commits the edit,
and a push that would bring one to the server — in any commit it sends, not only at its
tip — is held until the person takes it out of those commits or says so (`evolve sync
--push-anyway NAME`). Each finding names the file, the line and the rule, never the secret.
"""

from __future__ import annotations

import re

from evolve.store.repo import Repo
from evolve.transcripts.redact import find_secrets
from evolve.workspace import memo as memo_mod

MAX_BYTES = 4 << 20  # a larger hunk is no memo or skill text a person wrote
SCANNED = (memo_mod.MEMO_FILE, "skills/", "agent.toml")  # what a session reads, and the settings that travel
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def scanned(path: str) -> bool:
    """The files a session reads (memo.md, everything under skills/) and agent.toml, which travels too."""
    return path in (SCANNED[0], SCANNED[2]) or path.startswith(SCANNED[1])


def added_secrets(repo: Repo, old: str | None, new: str) -> list[str]:
    """Secrets in the lines `old..new` adds to memo.md, skills/ or agent.toml, or in its messages.

    Every commit counts, not only the end result: a push sends the whole history, so a token
    added and then removed again would still reach the server. A line the server's version
    (`old`) already holds is not new there.
    """
    if old == new:
        return []
    out = repo.git(
        "log",
        "--reverse",
        "--diff-merges=first-parent",
        "-p",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        "--format=%x00",
        f"{old}..{new}" if old else new,
        "--",
        *SCANNED,
    )
    found: list[tuple[str, str, str]] = []  # (path, the line, the finding)
    path, first, left, added = "", 0, 0, []  # left: the hunk's lines still to come (-U0: - and +)
    for raw in out.decode("utf-8", "replace").split("\n"):
        if left:
            if raw.startswith("\\"):  # "\ No newline at end of file"
                continue
            left -= 1
            if raw.startswith("+"):
                added.append(raw[1:].rstrip("\r"))
            if not left and added:
                text = "\n".join(added)
                if scanned(path) and len(text) < MAX_BYTES:
                    found += [(path, line, finding) for line, finding in _numbered(path, text, first)]
                added = []
        elif raw.startswith("+++ "):
            path = raw[4:].strip('"').removeprefix("b/")
        elif hunk := _HUNK.match(raw):
            first = int(hunk[2])
            left = int(hunk[1] or 1) + int(hunk[3] or 1)
    if old and found:  # what the server has already is not brought by this push
        blobs = repo.read_blobs(sorted({f"{old}:{p}" for p, _line, _finding in found}))
        there = {
            spec: {line.rstrip("\r") for line in (data or b"").decode("utf-8", "replace").splitlines()}
            for spec, data in blobs.items()
        }
        found = [item for item in found if item[1] not in there.get(f"{old}:{item[0]}", ())]
    return list(dict.fromkeys(finding for _path, _line, finding in found)) + _in_messages(repo, old, new)


def _in_messages(repo: Repo, old: str | None, new: str) -> list[str]:
    """A secret in the message of a commit the push would send (a person typed it there too)."""
    out = repo.git("log", "--format=%H%x00%B%x00", f"{old}..{new}" if old else new, "--")
    fields = out.decode("utf-8", "replace").split("\0")
    found = []
    for sha, body in zip(fields[0::2], fields[1::2], strict=False):
        found += [
            f"the message of commit {sha.strip()[:12]} holds what looks like a secret ({kind})"
            for kind, _start, _end in find_secrets(body)
        ]
    return found


def _numbered(path: str, text: str, first: int) -> list[tuple[str, str]]:
    """(its line, the finding) for each secret in a hunk's added `text` (its first line: `first`)."""
    found = []
    for kind, start, _end in find_secrets(text):
        begin = text.rfind("\n", 0, start) + 1
        end = text.find("\n", start)
        number = first + text.count("\n", 0, start)
        line = text[begin : end if end >= 0 else len(text)]
        found.append((line, f"{path} line {number} holds what looks like a secret ({kind})"))
    return found


def held_push_message(name: str, found: list[str], base: str) -> str:
    """The one line `evolve sync` (and `evolve status`) gives when a person's secret holds the push.

    `base`: what the person rebases on to take it out of the commits not yet pushed.
    """
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f"{found[0]}{more}: a person's text is pushed with their word only, and a push takes every "
        f"commit, so nothing was pushed. Take it out of the commits not yet pushed (remove the line, "
        f"then `git commit --amend -a`, or `git rebase -i {base}`; evolve never rewrites your text), "
        f"or push it as it is with `evolve sync --push-anyway {name}`"
    )
