"""A remote's URL, read from git's config once per change of `.git/config`, not per question."""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing's own flag without importing typing (a command's start)
if TYPE_CHECKING:
    from evolve.store.repo import Repo

_URLS: dict[tuple[str, str, int, int, int], str | None] = {}  # .git/config stat → a remote's URL
RACY_NS = 2_000_000_000  # a file younger than this may change again without its stat showing it


def remote_url(repo: Repo, remote: str) -> str | None:
    """The URL `remote` points at (git's config), or None.

    One git process per change of `.git/config` (git rewrites it whole, by rename), not per
    question: the watcher syncs every agent at each rescan. A file written in the last
    seconds is asked every time (as git treats a racy index entry): another write within
    the same clock tick could keep its size, mtime and even its inode number.
    """
    try:
        st = (repo.git_dir / "config").stat()
    except OSError:
        st = None
    settled = st is not None and time.time_ns() - st.st_mtime_ns > RACY_NS and _config_alone(repo)
    key = (str(repo.git_dir), remote, st.st_ino, st.st_size, st.st_mtime_ns) if st and settled else None
    if key is not None and key in _URLS:
        return _URLS[key]
    out = repo.git("config", "--get", f"remote.{remote}.url", check=False)
    url = out.decode("utf-8", "replace").strip() or None
    if key is not None:
        if len(_URLS) > 4096:
            _URLS.clear()
        _URLS[key] = url
    return url


def _config_alone(repo: Repo) -> bool:
    """Whether `.git/config` alone holds the repository's settings, so its stat tells their change.

    Not when it includes another file (`[include]`, `[includeIf]`: a person's own remotes file),
    has git read `.git/config.worktree` too (extensions.worktreeConfig), or `.git/commondir`
    names the folder git reads its config from.
    """
    try:
        text = (repo.git_dir / "config").read_bytes().lower()
    except OSError:
        return False
    if b"include" in text or b"worktreeconfig" in text:
        return False
    return not (repo.git_dir / "commondir").exists()
