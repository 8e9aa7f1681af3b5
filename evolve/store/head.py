"""What an agent repository has checked out, and its branch's tip: read from `.git` files.

evolve writes, and a session reads, only the agent's branch: another branch, a proposal
or a detached HEAD checked out means a person is looking at something else, and its files
are neither committed to the agent's branch nor shown to the agent. The session-start hook
asks too, and records the branch's tip (which commit the session's lessons came from), so
these stay small file reads, and so does its look at the proposal branches: no git
process, no pathlib.
"""

# pathlib costs the session-start hook as much as the rest of its work: os.path it is.
# ruff: noqa: PTH110, PTH112, PTH113, PTH114, PTH118, PTH119, PTH120, PTH123, PTH208
from __future__ import annotations

import os

BRANCH = "main"  # the branch an agent reads and evolve writes
PROPOSALS = "proposals/"  # the branches of what waits for a person's review
_HEX = frozenset("0123456789abcdef")


def _read(path: str) -> str | None:
    try:  # newline="": a CR stays a CR, as git reads it (a packed-refs line ending in one names no ref)
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    except OSError:
        return None


def checked_out(git_dir: str | os.PathLike[str]) -> str | None:
    """The branch HEAD names; "" for a detached HEAD; None when there is no HEAD to read."""
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    head = head.strip()
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""


def is_git_dir(git_dir: str | os.PathLike[str]) -> bool:
    """Whether git takes the folder for a repository: HEAD naming a ref or a commit, objects/, refs/.

    Else git looks further up, at any repository enclosing it.
    """
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return False
    named = head.strip()
    if not (named.startswith("ref: refs/") or (len(named) in (40, 64) and set(named) <= _HEX)):
        return False
    return os.path.isdir(os.path.join(git_dir, "objects")) and os.path.isdir(os.path.join(git_dir, "refs"))


def shared_repository(folder: str | os.PathLike[str]) -> str | None:
    """Why an agent folder's `.git` is another folder's repository, in words, or None.

    A `.git` linked to another work tree's `.git` (`ln -s ../other/.git .git`) puts two
    folders on one index: each commit takes the other's files for edits of its own, and
    `evolve sync` pushed one agent's memo and name into the other's history. A link to a
    repository kept alone (`/disk/agent.git`) is the folder's own.
    """
    dot = os.path.join(folder, ".git")
    if not os.path.islink(dot):
        return None
    target = os.path.realpath(dot)
    owner = os.path.dirname(target)
    if os.path.basename(target) != ".git" or owner == os.path.realpath(folder):
        return None
    return (
        f"is a link to {target}, the repository of the folder {owner}: two folders would commit "
        "into one history, each taking the other's files for edits, so nothing is committed, "
        f"observed or synced for this agent; remove the link (`rm {dot}`) and clone the agent's "
        "remote into a new folder, then copy back any file it lacks"
    )


def checked_out_elsewhere(git_dir: str | os.PathLike[str], branch: str) -> str | None:
    """What HEAD holds when it is not `branch` ("branch 'x'", "a detached HEAD"), or None."""
    name = checked_out(git_dir)
    if name is None or name == branch:
        return None  # None: not a repository (yet), others say so
    return f"branch '{name}'" if name else "a detached HEAD"


def worktree_branches(git_dir: str | os.PathLike[str]) -> dict[str, str]:
    """Branch → the folder of the linked worktree (`git worktree add`) that has it checked out.

    A worktree whose folder is gone (`rm -rf`) holds nothing, as `git worktree prune` sees it:
    nobody can work there, nor run a command in it to let go; a locked one (`--lock`: on a
    disk that is unplugged) still holds.
    """
    base = os.path.join(git_dir, "worktrees")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return {}
    found: dict[str, str] = {}
    for name in names:
        entry = os.path.join(base, name)
        branch = _worktree_branch(entry)
        if branch is None:
            continue
        gitdir = (_read(os.path.join(entry, "gitdir")) or "").strip()  # <worktree>/.git, maybe relative
        dot_git = os.path.join(entry, gitdir) if gitdir else ""
        if os.path.exists(dot_git) or os.path.exists(os.path.join(entry, "locked")):
            found.setdefault(branch, os.path.dirname(os.path.normpath(dot_git)) or name)
    return found


def _worktree_branch(entry: str) -> str | None:
    """The branch a linked worktree holds: checked out, or being rebased or bisected (HEAD detached).

    The rebase's end writes that branch again, and `git bisect reset` checks it out again, as
    git's own `git branch -d` knows (rebase-merge/ or rebase-apply/ `head-name`; BISECT_START,
    which names the branch without refs/heads/, while BISECT_LOG says a bisect is on).
    """
    for named in ("HEAD", "rebase-merge/head-name", "rebase-apply/head-name"):
        ref = (_read(os.path.join(entry, *named.split("/"))) or "").strip().removeprefix("ref: ")
        if ref.startswith("refs/heads/"):
            return ref.removeprefix("refs/heads/")
    if os.path.exists(os.path.join(entry, "BISECT_LOG")):
        start = (_read(os.path.join(entry, "BISECT_START")) or "").strip().removeprefix("refs/heads/")
        if start and _sha(start) is None:  # a commit id: the bisect began on a detached HEAD
            return start
    return None


def _sha(text: str) -> str | None:
    """The commit id a ref's text names as git writes it, else None (unsure: ask git)."""
    text = text.rstrip()  # a space before the id is no id to git
    return text if len(text) == 40 and set(text) <= _HEX else None


def branch_tip(git_dir: str | os.PathLike[str], branch: str = BRANCH) -> str | None:
    """The commit `refs/heads/<branch>` names (its loose file, else packed-refs), or None.

    None too (unsure: ask git) for a packed-refs git does not write, where git's own lookup
    may find another line or none (`packed_refs_damaged`).
    """
    loose = _read(os.path.join(git_dir, "refs", "heads", branch))
    if loose is not None:
        return _sha(loose)
    packed = _read(os.path.join(git_dir, "packed-refs")) or ""
    if not _packed_sound(packed):
        return None
    wanted = f" refs/heads/{branch}"
    for line in packed.split("\n"):
        if line.endswith(wanted):
            return _sha(line[: -len(wanted)])
    return None


def no_such_branch(git_dir: str | os.PathLike[str], branch: str) -> bool:
    """Whether `refs/heads/<branch>^{commit}` can name nothing: git would find no ref for it.

    Each ref git tries for that name (exactly it, then its `refs/…` readings) is neither a
    file of its own nor in packed-refs. False for anything unsure: a name git could read as
    more than a ref, a `.git` that is not a plain folder (a linked worktree's).
    """
    name = f"refs/heads/{branch}"
    if not _PLAIN.issuperset(branch) or ".." in branch or not os.path.isfile(os.path.join(git_dir, "HEAD")):
        return False
    if os.path.exists(os.path.join(git_dir, "commondir")):
        return False
    tried = [name, *(rule.format(name) for rule in _DWIM)]
    if any(os.path.lexists(os.path.join(git_dir, *ref.split("/"))) for ref in tried):
        return False
    if packed_refs_damaged(git_dir):  # cut short, overwritten, a folder: git says what it makes of it
        return False
    packed = _read(os.path.join(git_dir, "packed-refs")) or ""
    return not any(line.endswith(f" {ref}") for line in packed.splitlines() for ref in tried)


def packed_refs_damaged(git_dir: str | os.PathLike[str]) -> bool:
    """Whether `.git/packed-refs` is there but not as git writes it (cut, overwritten, a folder, unsorted).

    git may read such a file otherwise than a line-by-line read does (`_packed_sound`).
    """
    path = os.path.join(git_dir, "packed-refs")
    if not os.path.lexists(path):
        return False
    packed = _read(path)
    return packed is None or not _packed_sound(packed)


def _packed_sound(packed: str) -> bool:
    """Whether packed-refs is as git writes it, so git finds each ref on the line a read finds it.

    Its header (the first line only), then `<id> <ref>` lines, each ref after the one before
    (git looks a ref up by binary search in a file its header calls sorted: a line out of
    place it never finds, of a ref listed twice it finds the one it lands on), each line
    followed by at most one peeled `^<id>`; the last line ends. A ref holding a space, a
    control character or a byte that is not UTF-8 is unsure too (two spaces, a CR: git
    reads another name).
    """
    if packed and not packed.endswith("\n"):
        return False
    last, peelable = "", False
    for number, line in enumerate(packed.split("\n")[:-1]):
        if line.startswith("#"):
            if number or not line.startswith(_HEADER):
                return False
            continue
        if line.startswith("^"):
            if not peelable or not _is_id(line[1:]):
                return False
            peelable = False
            continue
        sha, _, ref = line.partition(" ")
        if not _is_id(sha) or not ref.startswith("refs/") or ref <= last or not _NOT_IN_A_REF.isdisjoint(ref):
            return False
        last, peelable = ref, True
    return True


def _is_id(text: str) -> bool:
    return len(text) in (40, 64) and _HEX.issuperset(text)


_HEADER = "# pack-refs with:"
# what no ref git writes holds: space, control characters, a byte read as not UTF-8 (U+FFFD)
_NOT_IN_A_REF = frozenset(" \x7f\ufffd" + "".join(map(chr, range(32))))


# how git reads a name that is not a full ref (refs.c's rev-parse rules), after the name itself
_DWIM = ("refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD")


def broken_branch(git_dir: str | os.PathLike[str], branch: str = BRANCH) -> bool:
    """Whether `refs/heads/<branch>` names no commit although it had one.

    Its file emptied or overwritten (a crash), or gone while its reflog still names where it
    was (a file deleted by hand or a sync tool). git takes the first for broken, the second
    for a branch without commits, on which a person's `git commit` would start a history of
    its own: both wait for a person to point the branch at its commit again.
    """
    path = os.path.join(git_dir, "refs", "heads", branch)
    loose = _read(path)
    if loose is None:
        return not os.path.lexists(path) and _lost(git_dir, branch)
    text = loose.rstrip()  # as git reads it: a space before the id breaks it, one after does not
    if text.startswith("ref:"):
        return _dangling(git_dir, text)
    return not (len(text) == _id_length(git_dir) and set(text.lower()) <= _HEX)


def _id_length(git_dir: str | os.PathLike[str]) -> int:
    """The length of the repository's object ids: 64 where it uses SHA-256, else 40."""
    config = (_read(os.path.join(git_dir, "config")) or "").lower()
    return 64 if "objectformat" in config and "sha256" in config else 40


def _dangling(git_dir: str | os.PathLike[str], symref: str) -> bool:
    """Whether a branch file's `ref: …` leads to no ref at all: to itself, round a loop, or to nothing.

    git ignores such a branch quietly ("dangling symref") and reads it as holding no commits.
    """
    seen: set[str] = set()
    while symref.startswith("ref:"):
        target = symref[4:].strip()
        if target in seen or len(seen) >= 4 or not target.startswith("refs/"):  # git follows 4 hops
            return True
        seen.add(target)
        loose = _read(os.path.join(git_dir, *target.split("/")))
        if loose is None:
            return not _packed_holds(git_dir, target)
        symref = loose.strip()
    return False


def _lost(git_dir: str | os.PathLike[str], branch: str) -> bool:
    """Whether the branch is in no ref file while its reflog's last entry names a commit."""
    if packed_refs_damaged(git_dir):
        return False  # named as what it is (`Repo.tip`)
    if _packed_holds(git_dir, f"refs/heads/{branch}"):
        return False
    entries = (_read(os.path.join(git_dir, "logs", "refs", "heads", branch)) or "").splitlines()
    last = entries[-1].split(" ", 2) if entries else []
    return len(last) == 3 and len(last[1]) in (40, 64) and _HEX.issuperset(last[1]) and set(last[1]) != {"0"}


def _packed_holds(git_dir: str | os.PathLike[str], ref: str) -> bool:
    """Whether `.git/packed-refs` has a line for `ref`."""
    packed = _read(os.path.join(git_dir, "packed-refs")) or ""
    return any(line.endswith(f" {ref}") for line in packed.splitlines())


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/.")


def branch_tips(git_dir: str | os.PathLike[str], prefix: str) -> dict[str, str]:
    """Branch name → tip of the branches named `<prefix><name>` (a loose ref wins over a packed one)."""
    tips: dict[str, str] = {}
    full = f"refs/heads/{prefix}"
    for line in (_read(os.path.join(git_dir, "packed-refs")) or "").splitlines():
        sha, _, ref = line.partition(" ")
        if ref.startswith(full) and "/" not in ref[len(full) :]:
            tips[ref.removeprefix("refs/heads/")] = sha
    folder = os.path.join(git_dir, *full.rstrip("/").split("/"))
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        sha = (_read(os.path.join(folder, name)) or "").strip()  # a folder reads as None
        if sha:
            tips[prefix + name] = sha
    return tips
