"""Who commits: the person's git identity where they set one, else evolve's own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evolve.store.git import config_values


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    def env(self, when: str | None = None) -> dict[str, str]:
        """Git's author and committer variables for this identity (and `when`, a git date)."""
        env = {
            "GIT_AUTHOR_NAME": self.name,
            "GIT_AUTHOR_EMAIL": self.email,
            "GIT_COMMITTER_NAME": self.name,
            "GIT_COMMITTER_EMAIL": self.email,
        }
        if when:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        return env


def person_identity(path: Path, fallback: Identity) -> Identity:
    """The person's configured git identity, else evolve's fallback."""
    found = config_values(path, "user.name", "user.email")
    name = found.get("user.name", b"").decode().strip()
    email = found.get("user.email", b"").decode().strip()
    return Identity(name, email) if name and email else fallback


__all__ = ["Identity", "person_identity"]
