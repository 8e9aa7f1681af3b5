"""Which of a repository's files hold a merge's conflict markers, each by its own marker size.

git writes markers of the file's `conflict-marker-size` attribute (.gitattributes,
.git/info/attributes): with 4, a conflict is `<<<< HEAD` / `====` / `>>>> theirs`. Markers
shorter than git's 7 cannot be read everywhere (`>>>` quotes and `===` underlines are
ordinary text), so the attribute of that very file decides. It is asked of git only for a
file that could hold a short marker's conflict, in one `git check-attr --stdin` for all of
them, and never cached: a person may change .gitattributes at any moment.
"""

from __future__ import annotations

from evolve.workspace.memo import MARKER_SIZE, has_conflict_markers

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Mapping

    Root = str | os.PathLike[str]  # the repository's folder (the session hook passes a str: no pathlib)

PROBE = 8000  # a file with a NUL in its first PROBE bytes is binary: no markers to look for


def may_hold(raw: bytes | bytearray) -> bool:
    """Whether text bytes could hold a conflict of any marker size (most files cannot: never decoded)."""
    if b"\0" in raw[:PROBE] or b"<" not in raw or b">" not in raw:
        return False
    return b"=\n" in raw or b"=\r" in raw or raw.endswith(b"=")


def marker_sizes(root: Root, paths: Iterable[str]) -> dict[str, int]:
    """Each path's conflict-marker-size as git's merge reads it (7 when unset, not a number, or git fails)."""
    wanted = list(dict.fromkeys(paths))
    sizes = dict.fromkeys(wanted, MARKER_SIZE)
    if not wanted:
        return sizes  # no git, not even its module: the session-start hook comes here
    from pathlib import Path

    from evolve.store.git import git

    out = git(
        Path(root),
        "check-attr",
        "--stdin",
        "-z",
        "conflict-marker-size",
        input="".join(f"{path}\0" for path in wanted).encode("utf-8", "surrogateescape"),
        check=False,
        own=True,  # the agent's own repository, never one around it
    )
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    for at in range(0, len(fields) - 2, 3):  # path, attribute, value
        path, value = fields[at], fields[at + 2]
        if path in sizes:
            sizes[path] = _git_size(value)
    return sizes


def _git_size(value: str) -> int:
    """The size git takes from the attribute's value: its leading digits (C's atoi), 7 unless above 0."""
    stripped = value.lstrip()
    digits = stripped[: len(stripped) - len(stripped.lstrip("0123456789"))][:9]
    size = int(digits) if digits else 0
    return size if size > 0 else MARKER_SIZE


def conflicted(root: Root, texts: Mapping[str, str], in_fences: bool = False) -> set[str]:
    """The paths among `texts` (path → its text) holding a merge's markers of the file's own size."""
    found = {path for path, text in texts.items() if has_conflict_markers(text, in_fences)}
    smallest = smallest_markers(
        root, {path: text for path, text in texts.items() if path not in found}, in_fences
    )
    found.update(
        path
        for path, size in smallest.items()
        if size < MARKER_SIZE and has_conflict_markers(texts[path], in_fences, size)
    )
    return found


def smallest_markers(root: Root, texts: Mapping[str, str], in_fences: bool = False) -> dict[str, int]:
    """The smallest marker that counts in each text (path → text): git's 7, or the file's shorter size.

    git is asked only of a text that would hold a conflict were any marker size allowed.
    """
    unsure = [path for path, text in texts.items() if has_conflict_markers(text, in_fences, marker_size=1)]
    sizes = marker_sizes(root, unsure)
    return {path: min(sizes.get(path, MARKER_SIZE), MARKER_SIZE) for path in texts}
