"""The agent repository as a plugin for Claude Code and Codex: its files, and older agents given them.

A new agent gets them from the template (`template_workspace/`): `.claude-plugin/plugin.json`
(its name is the agent's), `.claude-plugin/marketplace.json` (a marketplace listing the agent
itself, `"source": "./"`, so a teammate can `claude plugin marketplace add <the agent's git
URL>`), `.codex-plugin/plugin.json`, and `hooks/hooks.json`, whose SessionStart runs the
launcher `hooks/evolve-hook` (POSIX sh: evolve's interpreter, isolated, with
`evolve hook … --plugin <folder>`; without evolve one line on stderr and exit 0). Both
harnesses list a plugin's `skills/` themselves, so the hook shows the memo only.

No `version` in either manifest, on purpose: Claude Code (and Codex) freeze an installed
plugin at its manifest's version ("if you set version you must bump it every time you want
users to receive changes"; without one the git commit is the version). An agent learns at
every reflection, and a version evolve rewrote on each of its commits would be a line every
machine of a synced agent changes at once: a conflict in each sync for nothing. Without it,
each commit on main is a new version, and `claude plugin update` brings the latest lessons.

An agent made by an older evolve gets the files it lacks through the versioned upgrade
(`integrations.upgrade`, layouts 5 and 6) as ONE commit of evolve's, and evolve's own older
text of a file (every commit that touched it evolve's, nothing of the person's uncommitted or
staged there) is brought up to date in the same commit: layout 6 gave hooks.json its
PreToolUse entry, which checks the agent's guards.toml. A file a person wrote or changed
there (tracked or not) is theirs: it stays as it is, and the note says so. The upgrade waits
at most `LOCK_WAIT_S` for the agent's lock (a reflection may hold it for minutes): a busy
agent is left for the next command, which tries again. What a server's main brings to these
files (or to any other part that makes a harness run a command, `template.PLUGIN_PARTS`) is
held by `sync.screen` unless it is evolve's own text.
"""

from __future__ import annotations

from pathlib import Path

from evolve.store.history import build_message, read_commits
from evolve.workspace.agent import Agent
from evolve.workspace.authorship import made_by_evolve
from evolve.workspace.template import PLUGIN_FILES as FILES
from evolve.workspace.template import plugin_files

LOCK_WAIT_S = 2.0


def add_plugin(agent: Agent, wait: float = LOCK_WAIT_S) -> list[str]:
    """Commit the plugin files `agent` lacks as one commit of evolve's; the notes to show.

    Raises Busy (LockBusy too) when a reflection, another evolve writer or a person's git
    work holds the repository now: nothing is written, and the caller tries again later.
    """
    wanted = plugin_files(agent.name)
    repo = agent.repo
    with repo.locked(timeout=wait):
        tip = repo.tip()
        tracked = repo.tree_entries(tip, FILES) if tip else {}
        staged = repo.staged_paths()
        changes: dict[str, bytes | None] = {}
        theirs = []
        for path, data in wanted.items():
            target = agent.path / path
            if path in tracked or path in staged or target.exists() or target.is_symlink():
                if path in tracked and path not in staged and _same(target, data):
                    continue
                if tip and path in tracked and path not in staged and _evolves(agent, tip, path, target):
                    changes[path] = data  # evolve's older text of it: brought up to date
                    continue
                theirs.append(path)
                continue
            changes[path] = data
        notes = []
        if changes:
            renewed = sorted(path for path in changes if path in tracked)
            subject = (
                f"plugin({agent.name}): the plugin's files brought up to date ({', '.join(renewed)})"
                if renewed
                else f"plugin({agent.name}): the agent is a Claude Code and Codex plugin"
            )
            message = build_message(
                subject,
                {"Evolve-Kind": "upgrade", "Evolve-Files": sorted(changes)},
            )
            sha = repo.commit_changes(changes, message, agent.evolve_identity)
            notes.append(
                f"{agent.name}: plugin files brought up to date ({', '.join(renewed)}; commit {sha[:7]})"
                if renewed
                else f"{agent.name}: shared as a plugin from now on ({len(changes)} files, commit {sha[:7]})"
            )
        if theirs:
            notes.append(
                f"{agent.name}: your own {', '.join(theirs)} left as they are (the plugin uses them)"
            )
    return notes


def _evolves(agent: Agent, tip: str, path: str, target: Path) -> bool:
    """Whether `path` holds evolve's own text, to be brought up to date.

    Every commit that touched it is evolve's, and the work tree holds the tip's bytes (no
    uncommitted edit of a person's).
    """
    repo = agent.repo
    blob = repo.read_blobs([f"{tip}:{path}"]).get(f"{tip}:{path}")
    if blob is None or not _same(target, blob):
        return False
    shas = repo.text("log", "--format=%H", tip, "--", path).split()
    commits = read_commits(repo, shas)
    return bool(shas) and all(made_by_evolve(commits.get(sha), agent.evolve_emails) for sha in shas)


def _same(target: Path, data: bytes) -> bool:
    try:
        return not target.is_symlink() and target.read_bytes() == data
    except OSError:
        return False
