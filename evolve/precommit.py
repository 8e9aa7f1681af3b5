"""The agent repository's pre-commit hook: refuse a person's commit of a broken skill, eval case or guard.

A guards.toml that is not TOML, or holds a guard the hook would leave out (an unknown tool,
a pattern the one door refuses, no message …), is refused with one line per problem.

It also refuses any staged text file that holds a merge's conflict markers (the full
`<<<<<<<` / `=======` / `>>>>>>>` triple, outside code fences): they must never reach the
branch the agent reads.

Run by `.git/hooks/pre-commit` as `python -m evolve.precommit`. Reads the staged
content (respecting GIT_INDEX_FILE, as `git commit -a` sets it), approximates tokens by
characters (no tiktoken here: it must stay fast), and exits 65 to refuse. A secret in a
person's own skill or memo is only warned about: their words are theirs to change.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection
from pathlib import Path

from evolve.workspace.conflicts import PROBE  # a NUL in a file's first PROBE bytes: binary, no check reads on

TYPE_CHECKING = False  # typing's own flag without importing typing (~3 ms of each commit's hook)
if TYPE_CHECKING:
    from typing import IO

REFUSED = 65


def _staged_names(root: Path) -> list[str]:
    from evolve.store.git import git

    names = git(root, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR", keep_index=True)
    return [name for name in names.decode("utf-8", "surrogateescape").split("\0") if name]


class Staged:
    """The staged content of the paths the checks read, asked of git once (b"": not staged).

    One `git cat-file --batch` for all of them: a process per file and per check was six
    processes for a commit of the memo and one skill. Read as git writes it; a file outside
    `whole` (the paths a check parses) is looked at for conflict markers as it arrives and
    kept to its first PROBE bytes: a commit of big files held them all in memory at once.
    """

    def __init__(
        self, root: Path, paths: list[str], whole: Collection[str] = (), in_fences: bool = False
    ) -> None:
        self.root = root
        self.in_fences = in_fences  # markers inside code blocks count too (`has_conflict_markers`)
        self.blobs: dict[str, bytes] = {}
        self._conflicted: dict[str, bool] = {}  # path → whether it holds a merge's markers
        self.marker_sizes: dict[str, int] = {}  # of the files that could hold short markers only
        self._unsure: dict[str, str] = {}  # path → text that may hold a conflict of shorter markers
        # a line per path, which git reads without its trailing CR: such a name is read alone
        batched = [p for p in dict.fromkeys(paths) if "\n" not in p and not p.endswith("\r")]
        if batched:
            # `:0:` names the index entry even of a file named like `1:notes.md` (`:1:notes.md`
            # would be the first stage of a conflicted `notes.md`)
            specs = "".join(f":0:{path}\n" for path in batched).encode("utf-8", "surrogateescape")
            self._read_batch(batched, specs, set(whole))

    def _read_batch(self, batched: list[str], specs: bytes, whole: set[str]) -> None:
        import subprocess
        import threading

        from evolve.store.git import GitError, spawn

        args = ("cat-file", "--batch")
        proc = spawn(self.root, args, subprocess.PIPE, keep_index=True)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        # fed beside the reading: git answers as it reads, and both pipes fill
        feeder = threading.Thread(target=_feed, args=(proc.stdin, specs), daemon=True)
        feeder.start()
        out = proc.stdout
        for path in batched:
            header = out.readline()
            if not header:
                break
            if header.endswith((b" missing\n", b" ambiguous\n")):
                self.blobs[path] = b""
                continue
            size = int(header.split()[2])
            blob = out.read(min(size, PROBE))
            if path in whole:
                blob += out.read(size - len(blob))
                self._judge(path, blob)
            elif b"\0" in blob:  # binary: no markers to look for
                _skip(out, size - len(blob))
                self._conflicted[path] = False
            else:
                self._judge(path, _read_whole(out, blob, size))
            self.blobs[path] = blob
            out.read(1)
        self._settle()
        feeder.join()
        out.close()
        stderr = proc.stderr.read()
        proc.stderr.close()
        if proc.wait() != 0 or len(self.blobs) < len(batched):
            raise GitError(args, proc.returncode, stderr.decode("utf-8", "replace"), cwd=self.root)

    def __getitem__(self, path: str) -> bytes:
        """The staged bytes; of a file no check parses (outside `whole`), the first PROBE only."""
        if path not in self.blobs:
            from evolve.store.git import git

            self.blobs[path] = git(self.root, "cat-file", "-p", f":0:{path}", check=False, keep_index=True)
        return self.blobs[path]

    def conflicted(self, path: str) -> bool:
        """Whether the staged file is text holding a merge's conflict markers."""
        if path not in self._conflicted:
            self._judge(path, self[path])
            self._settle()
        return self._conflicted[path]

    def marker_size(self, path: str) -> int:
        """The smallest conflict marker that counts in the staged file (its conflict-marker-size below 7)."""
        from evolve.workspace.memo import MARKER_SIZE

        self.conflicted(path)
        return self.marker_sizes.get(path, MARKER_SIZE)

    def _judge(self, path: str, raw: bytes | bytearray) -> None:
        """Decide whether `raw` holds markers; a file that could hold only shorter ones waits for _settle."""
        from evolve.workspace import conflicts, memo

        text = raw.decode("utf-8", "replace") if conflicts.may_hold(raw) else ""
        if memo.has_conflict_markers(text, self.in_fences):
            self._conflicted[path] = True
        elif text:
            self._unsure[path] = text
        else:
            self._conflicted[path] = False

    def _settle(self) -> None:
        """The waiting files judged by their own marker size: one `git check-attr` for all of them."""
        if not self._unsure:
            return
        from evolve.workspace import conflicts, memo

        sizes = conflicts.smallest_markers(self.root, self._unsure, self.in_fences)
        for path, text in self._unsure.items():
            self.marker_sizes[path] = sizes[path]
            self._conflicted[path] = sizes[path] < memo.MARKER_SIZE and memo.has_conflict_markers(
                text, self.in_fences, sizes[path]
            )
        self._unsure.clear()


def _read_whole(stream: IO[bytes], head: bytes, size: int) -> bytearray:
    """A blob of `size` bytes whose `head` was read: the rest read into one buffer, not copied after."""
    whole = bytearray(size)
    whole[: len(head)] = head
    done = len(head)
    with memoryview(whole) as view:
        while done < size:
            got = stream.readinto(view[done:])  # type: ignore[attr-defined]
            if not got:  # git ended early: the next header is missing, and that is said
                break
            done += got
    del whole[done:]  # (a buffer in use by a view cannot be cut)
    return whole


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except OSError:  # git stopped reading: its exit code and stderr say why
        pass


def _skip(stream: IO[bytes], size: int) -> None:
    while size > 0:
        chunk = stream.read(min(size, 1 << 20))
        if not chunk:  # git ended early: the next header is missing, and that is said
            return
        size -= len(chunk)


def _checks(names: list[str]) -> list[tuple[str, str]]:
    """(kind, path) of the skills and memo among `names`: "skill" + its SKILL.md, or "memo"."""
    from evolve.workspace import memo as memo_mod

    checks: list[tuple[str, str]] = []
    for path in names:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] == "skills":
            check = ("skill", f"skills/{parts[1]}/SKILL.md")
        elif path == memo_mod.MEMO_FILE:
            check = ("memo", path)
        else:
            continue
        if check not in checks:
            checks.append(check)
    return checks


def staged_problems(root: Path, names: list[str], staged: Staged) -> list[str]:
    """Why the staged files (`names`, their content in `staged`) may not be committed."""
    from evolve.workspace import memo as memo_mod
    from evolve.workspace.cases import case_lesson

    problems: list[str] = []
    for path in names:
        # the memo's own check (below) says it, but for a merge's conflict inside a code block
        said_below = path == memo_mod.MEMO_FILE and (
            not staged.in_fences
            or memo_mod.has_conflict_markers(
                staged[path].decode("utf-8", "replace"), marker_size=staged.marker_size(path)
            )
        )
        if not said_below and staged.conflicted(path):
            problems.append(f"{path}: holds merge conflict markers (<<<<<<< ======= >>>>>>>); resolve them")
        if case_lesson(path) is not None:
            from evolve.reflect import evalcase  # here: only a commit of a case loads its checks

            problems += evalcase.file_problems(path, staged[path].decode("utf-8", "replace"))
    if "guards.toml" in names:
        from evolve.workspace import guards

        raw = staged[guards.FILE]
        try:
            problems += guards.problems(raw.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(f"{guards.FILE}: not UTF-8 text")
    checks = _checks(names)
    if checks:
        problems += _skill_and_memo_problems(root, checks, staged)
    return problems


def _skill_and_memo_problems(root: Path, checks: list[tuple[str, str]], staged: Staged) -> list[str]:
    """What the staged skills and memo break of their rules and of the configured limits.

    The config is read here, not for every commit: its import and parse (~15 ms of the hook's
    ~60) are needless for a commit that stages no skill and no memo.
    """
    from evolve import config as config_mod
    from evolve.home import Home
    from evolve.workspace import memo as memo_mod
    from evolve.workspace import skills as skills_mod

    try:
        cfg = config_mod.load(Home.resolve().config_file, root / "agent.toml")
    except Exception:  # a broken config must not block a commit that may fix it
        cfg = config_mod.Config()
    problems: list[str] = []
    for kind, path in checks:
        raw = staged[path]
        if kind == "skill":
            folder = path.split("/")[1]
            if not raw:
                problems.append(f"{path}: SKILL.md is missing from the skill folder")
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.append(f"{path}: not UTF-8 text")
                continue
            skill = skills_mod.parse_skill(text, folder, root / path, cfg.limits.skill_body_tokens)
            problems += [f"{path}: {p}" for p in skill.problems]
        elif len(raw) > memo_mod.MEMO_CAP:  # a log added by mistake: one line, not ~0.1 s a MB parsed
            problems.append(f"{path}: {memo_mod.over_cap(len(raw))} (a log added by mistake?); cut it back")
        else:
            text = raw.decode("utf-8", "replace")
            size = staged.marker_size(path)
            problems += [f"{path}: {p}" for p in memo_mod.problems(text, cfg.limits.memo_section_chars, size)]
    return problems


def staged_warnings(names: list[str], staged: Staged) -> list[str]:
    """What does not refuse a commit but a person should know: secrets in their own text."""
    from evolve.workspace.cases import case_lesson

    checked = [p for _kind, p in _checks(names)] + [p for p in names if case_lesson(p) is not None]
    if not checked:
        return []  # the secret rules are not loaded for nothing
    from evolve.transcripts.redact import secret_warnings

    warnings: list[str] = []
    for path in checked:
        text = staged[path].decode("utf-8", "replace")
        warnings += [f"{path}: {w}" for w in secret_warnings(text)]
    return warnings


def _merging(root: Path) -> bool:
    """Whether the commit ends a merge, cherry-pick, revert or rebase: git may have marked a conflict."""
    dot = root / ".git"
    git_dir = Path(os.environ.get("GIT_DIR") or dot)
    if dot.is_file():  # a linked worktree's: "gitdir: <its folder in the main repository>"
        line = dot.read_text(encoding="utf-8", errors="replace").strip()
        if line.startswith("gitdir:"):
            git_dir = root / line.removeprefix("gitdir:").strip()
    names = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply")
    return any(os.path.lexists(git_dir / name) for name in names)


def _one_line(text: str) -> str:
    """`text` with its control characters escaped: a name's CR would wipe the line it heads."""
    return "".join(c if c >= " " or c == "\t" else repr(c)[1:-1] for c in text)


def main() -> int:
    root = Path.cwd()
    names = _staged_names(root)
    if not names:
        return 0
    from evolve.workspace.cases import case_lesson

    # every staged file is looked at (conflict markers), the skills' SKILL.md and guards.toml too;
    # those a check parses are read whole, binary or not
    checked = [path for _kind, path in _checks(names)]
    parsed = checked + [p for p in names if p == "guards.toml" or case_lesson(p) is not None]
    staged = Staged(root, names + checked, parsed, in_fences=_merging(root))
    for warning in staged_warnings(names, staged):
        sys.stderr.write(f"evolve: warning: {_one_line(warning)}\n")
    problems = staged_problems(root, names, staged)
    if not problems:
        return 0
    sys.stderr.write("evolve: this commit was refused:\n")
    for problem in problems:
        sys.stderr.write(f"  {_one_line(problem)}\n")
    sys.stderr.write("Fix the files and commit again, or commit anyway with `git commit --no-verify`.\n")
    return REFUSED


if __name__ == "__main__":
    sys.exit(main())
