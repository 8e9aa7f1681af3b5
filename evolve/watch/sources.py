"""Where an agent's transcripts are, as the watcher sees them: folders to watch, matching.

Pure path logic (no I/O beyond stat): a source glob gives the folder to watch (the part
before the first wildcard; recursively when the wildcard spans folders), and a changed
path is matched back to the agents whose globs may cover it. Matching is a hint; the
reconciliation scan uses the real glob.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from glob import has_magic
from pathlib import Path

from evolve.config import SourcesConfig
from evolve.store import codex_rollouts
from evolve.transcripts.classify import BUILT_IN, Classifier


def watch_root(pattern: str) -> tuple[str, bool]:
    """The folder to watch for a source glob, and whether recursively (`a/*/x` or `a/**`)."""
    parts = Path(pattern).expanduser().absolute().parts
    fixed: list[str] = []
    for part in parts[:-1]:
        if has_magic(part):
            return str(Path(*fixed)), True
        fixed.append(part)
    return str(Path(*fixed)), False


def glob_match(pattern: str, path: str) -> bool:
    """Whether `path` may be one of the files `pattern` globs (a hint; rescans use glob)."""
    name = path.rpartition(os.sep)[2]
    if name.startswith(".") and not pattern.rpartition(os.sep)[2].startswith("."):
        return False
    return fnmatchcase(path, pattern) or fnmatchcase(path, pattern.replace("/**/", "/"))


def minimal_watches(wanted: set[tuple[str, bool]]) -> set[tuple[str, bool]]:
    """Drop watches a recursive watch of an ancestor (or of the same folder) already covers."""
    recursive = {path for path, rec in wanted if rec}

    def covered(path: str, rec: bool) -> bool:
        if not rec and path in recursive:
            return True
        return any(str(parent) in recursive for parent in Path(path).parents)

    return {(p, r) for p, r in wanted if not covered(p, r)}


def stat_sig(path: str) -> tuple[int, int] | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


@dataclass
class AgentWatch:
    name: str
    path: Path
    sources: SourcesConfig
    stamp: tuple
    classifier: Classifier = BUILT_IN  # the agent's [signals]: what its facts are judged by
    synced: bool = False  # it has a remote and `[git] sync = "auto"`: the watcher syncs it

    @property
    def patterns(self) -> list[tuple[str, str]]:
        """(format, absolute glob) of every source pattern; Codex's: every rollout (see `owns`)."""
        found = [
            (fmt, str(Path(p).expanduser().absolute()))
            for fmt, globs in (("claude_code", self.sources.claude_code), ("generic", self.sources.generic))
            for p in globs
        ]
        if self.sources.codex:
            found.append(("codex", f"{codex_rollouts.sessions_dir()}/**/rollout-*.jsonl"))
        return found

    def owns(self, fmt: str, path: str) -> bool | None:
        """Whether a file its pattern matched is this agent's (None: not known yet).

        Only Codex needs more than the glob: a rollout is the agent's when its first line
        names a folder one of the agent's `codex` rules covers.
        """
        if fmt != "codex":
            return True
        return codex_rollouts.belongs(path, [codex_rollouts.rule_folder(r) for r in self.sources.codex])
