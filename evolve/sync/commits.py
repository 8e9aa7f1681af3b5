"""Commit objects as sync reads and re-makes them: who made one, its message and identities.

Whose a commit is comes from `made_by_evolve` (one rule for replay, replan and blame): a
reflection evolve's identity both authored and committed is the model's; every other commit — a
person's, their amend of a reflection, a reflection's message reused with `git commit -C`,
their revert, an evolve command they ran — is a person's. A replayed commit keeps its
message byte for byte and its author (`commit_env`).
"""

from __future__ import annotations

from collections.abc import Collection

from evolve.store.history import Commit
from evolve.workspace.authorship import ON_REQUEST, made_by_evolve


def from_model(commit: Commit, evolve: Collection[str]) -> bool:
    """A reflection evolve made (the model's lessons); every other commit is a person's or their command's.

    A reflection a person re-committed (`--amend`, a rebase, `commit -C`: they are its committer,
    and with `--reset-author` its author) is theirs here; `Replayer` also takes an unchanged copy
    of one as the model's. `evolve`: evolve's e-mails (`Agent.evolve_emails`).
    """
    return commit.trailers.get("Evolve-Kind") == "reflection" and made_by_evolve(commit, evolve)


def rewritten(commit: Commit, evolve: Collection[str]) -> bool:
    """A commit dressed as evolve's that a person made (an amend, a rebase, `commit -C`, typed trailers).

    Evolve's trailers, and it would be `made_by_evolve` but for a person as its author or committer.
    """
    kind = commit.trailers.get("Evolve-Kind")
    if not kind or kind in ON_REQUEST or commit.trailers.get("Evolve-Source") == "human":
        return False
    return not made_by_evolve(commit, evolve)


def commit_env(raw: bytes, keep_committer_date: bool = False) -> dict[str, str]:
    """GIT_AUTHOR_* (name, email, date) and GIT_COMMITTER_NAME/EMAIL of a raw commit object."""
    env: dict[str, str] = {}
    for line in raw.split(b"\n\n", 1)[0].decode("utf-8", "surrogateescape").splitlines():
        role, _, rest = line.partition(" ")
        if role not in ("author", "committer"):
            continue
        name, _, tail = rest.partition(" <")
        email, _, when = tail.partition("> ")
        key = "GIT_AUTHOR" if role == "author" else "GIT_COMMITTER"
        env[f"{key}_NAME"], env[f"{key}_EMAIL"] = name, email
        if role == "author" or keep_committer_date:
            env[f"{key}_DATE"] = when
    return env


def persons_env(raw: bytes) -> dict[str, str]:
    """A raw commit's committer as its author and committer (a person who rewrote evolve's commit)."""
    env = commit_env(raw, keep_committer_date=True)
    name, email = env.get("GIT_COMMITTER_NAME", ""), env.get("GIT_COMMITTER_EMAIL", "")
    if not (name and email):
        return commit_env(raw)
    when = env.pop("GIT_COMMITTER_DATE", "")
    return {**env, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when}


def message_of(raw: bytes) -> str:
    """The message as its bytes are (`build_commit` writes a stray non-UTF-8 byte back as it was)."""
    return raw.split(b"\n\n", 1)[1].decode("utf-8", "surrogateescape") if b"\n\n" in raw else ""
