"""Whether git's index file holds only plain entries: read from the file, not asked of git.

Two questions evolve asks at every write (which own files a person flagged assume-unchanged
or skip-worktree; what `git diff --cached` lists, which hides intent-to-add entries) have
one answer whenever no entry carries a flag: version 2 of the format has no room for the
extended flags (skip-worktree, intent-to-add), so it is enough to read each entry's
assume-valid bit there. Anything else answers False, and git is asked as before:
version 3 or 4, a split index, a file git would refuse; an index holding a submodule
(`git diff-index` may be told to ignore one, so "nothing staged" would not prove its entry
is the tip's); one whose trailer is not the SHA-1 of its bytes (a SHA-256 repository's,
whose entries hold 32-byte ids this reader would misparse; one written with
`index.skipHash`; a torn or garbage file).
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

_ENTRY_FIXED = 62  # ctime, mtime, dev, ino, mode, uid, gid, size (4 bytes each, times 8), oid, flags
_ASSUME_VALID = 0x8000
_EXTENDED = 0x4000
_NAME_MASK = 0x0FFF
_GITLINK = 0o160000  # a submodule: `diff-index` may be told to ignore it (`ignore = all` in .gitmodules)


def plain_entries(git_dir: Path) -> bool:
    """Whether `git_dir`'s index is a version 2 index no entry of which carries a flag.

    False when unsure: a missing or unreadable index, another version, a split index
    (its shared part holds entries this file does not), or one whose entries do not parse.
    """
    if split_index(git_dir):
        return False
    try:
        data = (git_dir / "index").read_bytes()
    except OSError:
        return False
    return plain_data(data)


def split_index(git_dir: Path) -> bool:
    """Whether the index may be split (`core.splitIndex`): its entries partly in a `sharedindex` file.

    True when unsure (a linked worktree's `.git` file, an unreadable folder).
    """
    try:
        return any(git_dir.glob("sharedindex.*"))
    except OSError:
        return True


def plain_data(data: bytes) -> bool:
    """`plain_entries` of an index file's bytes (a split index's own part looks plain: check apart)."""
    if len(data) < 32 or data[:4] != b"DIRC" or hashlib.sha1(data[:-20]).digest() != data[-20:]:
        return False
    version, count = struct.unpack(">II", data[4:12])
    if version != 2:
        return False
    position = 12
    for _ in range(count):
        if position + _ENTRY_FIXED > len(data):
            return False
        (mode,) = struct.unpack(">I", data[position + 24 : position + 28])
        (flags,) = struct.unpack(">H", data[position + 60 : position + 62])
        if flags & (_ASSUME_VALID | _EXTENDED) or mode & 0o170000 == _GITLINK:
            return False
        length = flags & _NAME_MASK
        if length == _NAME_MASK:  # a name this long is measured up to its NUL
            end = data.find(b"\0", position + _ENTRY_FIXED)
            if end < 0:
                return False
            length = end - position - _ENTRY_FIXED
        position += (_ENTRY_FIXED + length + 8) & ~7  # the name and 1 to 8 NULs: a multiple of 8
    return position <= len(data) - 20


__all__ = ["plain_data", "plain_entries", "split_index"]
