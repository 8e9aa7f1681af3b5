"""`evolve status`, `pause`, `resume`, `remove`: where each agent stands, and stopping it."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

from evolve.clock import stamp
from evolve.commands.output import emit_json, say, table, warn
from evolve.errors import ConfigError, LockBusy, UserError
from evolve.home import Home
from evolve.names import check_name
from evolve.reflect import proposals
from evolve.schedule.rules import HOUR, ago
from evolve.store import ledger
from evolve.store.locks import FileLock, holder, is_locked
from evolve.store.repo import LOCK
from evolve.watch import service
from evolve.workspace.agent import Agent
from evolve.workspace.folders import broken_links, linked_folders, list_agents, lost_agents, misnamed_agents
from evolve.workspace.hold import hold_of


def _iso(value: float | None) -> str | None:
    return stamp(value) if value else None


def _last_in_history(agent: Agent) -> str | None:
    """When the newest reflection on main was committed (an agent joined with `init --from`).

    Its reflections came with the history, not through this machine's state.db.
    """
    grep = "--grep=^Evolve-Kind: reflection$"
    out = agent.repo.text("log", "-1", "--format=%ct", grep, agent.repo.branch, "--", check=False)
    return _iso(float(out)) if out.strip().isdigit() else None


def _agent_or_problem(
    conn: sqlite3.Connection, home: Home, name: str, row, synced=None, follows: dict | None = None
) -> dict | Exception:
    """The agent's status; one whose repository git cannot read says so, and the others still show.

    A `.git` git would not take for a repository is not asked at all: git would answer for
    whatever repository encloses the folder (a home kept in a dotfiles repository). Where
    git fails, its failure is returned, for `_checked` to ask git's check with the others'.
    """
    from evolve.store.diagnosis import no_repository_in
    from evolve.store.git import GitError, RepositoryDamaged, broken_branch_remedy, git_text
    from evolve.store.head import BRANCH, broken_branch, is_git_dir, shared_repository

    folder = home.agent_dir(name)
    if not is_git_dir(folder / ".git"):
        return _unreadable(name, row, no_repository_in(folder))
    shared = shared_repository(folder)
    if shared is not None:
        return _unreadable(name, row, shared)
    if broken_branch(folder / ".git"):  # else read as a branch with no commit yet
        return _unreadable(name, row, broken_branch_remedy(folder, BRANCH))
    # a tag's id (or a symref to one): git reads the history through it, and commits on none
    if git_text(folder, "cat-file", "-t", f"refs/heads/{BRANCH}", check=False) not in ("", "commit"):
        return _unreadable(name, row, broken_branch_remedy(folder, BRANCH))
    try:
        return _agent_status(conn, home, name, row, synced, follows)
    except (GitError, RepositoryDamaged) as exc:
        return exc


def _checked(found: list[dict | Exception], names: list[str], rows: dict) -> list[dict]:
    """Each agent's status; where git failed, the problem its check names.

    Git checks the failed agents' repositories side by side, each for QUICK_CHECK_S.
    """
    from evolve.store.diagnosis import QUICK_CHECK_S, repository_problems

    failures = {at: entry for at, entry in enumerate(found) if isinstance(entry, Exception)}
    problems = dict(zip(failures, repository_problems(list(failures.values()), QUICK_CHECK_S), strict=True))
    statuses = []
    for at, entry in enumerate(found):
        if isinstance(entry, Exception):
            problem = problems[at]
            if problem is None:  # a sound repository: evolve's own failure
                raise entry
            entry = _unreadable(names[at], rows.get(names[at]), problem)
        statuses.append(entry)
    return statuses


def _unreadable(name: str, row, problem: str) -> dict:
    """The status of an agent whose repository cannot be read: what state.db knows, and the problem."""
    return {
        "name": name,
        "dirty": bool(row and row["dirty"]),
        "dirty_since": _iso(row["dirty_at"]) if row else None,
        "pending_runs": 0,
        "pending_edits": 0,
        "pending_best_score": 0.0,
        "worth_reflecting": False,
        "last_reflection_at": _iso(row["last_reflection_at"] if row else None),
        "last_failure": None,
        "config_problem": None,
        "config_warnings": [],
        "paused": bool(row and row["paused"]),
        "busy": False,
        "held": None,
        "proposals": [],
        "sync": None,
        "watcher_cannot_reflect": None,
        "repository_problem": problem,
    }


def _agent_status(
    conn: sqlite3.Connection, home: Home, name: str, row, synced=None, follows: dict | None = None
) -> dict:
    from evolve.schedule import pending
    from evolve.sync.status import sync_state
    from evolve.watch.settings import cannot_reflect

    agent = Agent(home, name)
    problem = agent.config_problem()
    dirty = bool(row and row["dirty"])
    best, worth, count = 0.0, False, 0
    if dirty:  # only dirty agents have pending runs: cost follows them
        runs = pending.scored_runs(conn, name, agent.lenient_config, agent.memo_to_parse(), judge=agent)
        best = max((r.score for r in runs), default=0.0)
        worth, count = any(r.reflect for r in runs), len(runs)
    since = row["last_reflection_at"] if row else None
    kinds = [e["kind"] for e in ledger.events_since(conn, name, since)] if dirty else []
    failure = ledger.last_failure(conn, name)
    held = hold_of(agent)
    return {
        "name": name,
        "dirty": dirty,
        "dirty_since": _iso(row["dirty_at"]) if row else None,
        "pending_runs": count,
        "pending_edits": kinds.count("human_edit"),
        "pending_best_score": round(best, 3),
        "worth_reflecting": worth,
        "last_reflection_at": _iso(row["last_reflection_at"] if row else None) or _last_in_history(agent),
        "last_failure": (
            {"at": _iso(failure["at"]), "reason": json.loads(failure["data"]).get("reason", "")}
            if failure
            else None
        ),
        "config_problem": problem,
        "config_warnings": list(agent.lenient_config.warnings),  # read, but not applied where they stand
        "paused": bool(row and row["paused"]),
        "busy": is_locked(home.agent_dir(name) / ".git" / LOCK),
        "held": held.to_dict() if held else None,  # a person's git work: no evolve write until it ends
        "proposals": [p.id for p in proposals.pending(Agent(home, name))],  # waiting for a person
        "sync": sync_state(Agent(home, name), synced),  # None: no remote
        "watcher_cannot_reflect": cannot_reflect(follows, name, agent.lenient_config.model),
        "repository_problem": None,
    }


def _follows(home: Home, watcher: service.WatcherState, every: float) -> dict:
    """The schedule the running watcher follows, as it published it, and whether config.toml is applied."""
    from evolve.watch.settings import signature

    follows = service.published(home, watcher.pid) if watcher.running else None
    if follows is None:
        why = "the watcher is starting" if watcher.running else None
        return {"cycle_hours": every / HOUR, "next_cycle_at": None, "why": why, "config": None, "data": None}
    cycle_s = follows["timings"]["cycle_s"]
    config = follows["config"]
    if config["error"]:
        note = f"the watcher keeps the settings it had: {config['error']}"
    elif config["signature"] != signature(home.config_file):
        note = (
            "config.toml changed since the watcher read it: it applies it within seconds "
            "(if this stays, restart it: `evolve watch --stop && evolve watch --detach`)"
        )
    else:
        note = None
    return {
        "cycle_hours": cycle_s / HOUR if cycle_s else None,
        "next_cycle_at": follows["next_cycle_at"],
        "why": follows["next_cycle_why"],
        "config": note,
        "data": follows,
    }


def status(home: Home, as_json: bool = False) -> int:
    from evolve import config as config_mod

    watcher = service.state(home)
    try:
        every = config_mod.load(home.config_file).schedule.cycle_hours * HOUR
    except ConfigError as exc:  # the watcher's own view is below; the file's problem is said once
        sys.stderr.write(f"evolve: warning: {exc}\n")
        every = config_mod.ScheduleConfig.cycle_hours * HOUR
    follows = _follows(home, watcher, every)
    with ledger.opened(home.state_db) as conn:
        codex = _codex_states(conn, home)
        rows, syncs = ledger.agent_rows(conn), ledger.sync_rows(conn)
        names = sorted({*list_agents(home), *lost_agents(home)})
        agents = _checked(
            [
                _agent_or_problem(conn, home, name, rows.get(name), syncs.get(name), follows["data"])
                for name in names
            ],
            names,
            rows,
        )
        last = ledger.last_cycle_at(conn)
    next_at = follows["next_cycle_at"]
    data = {
        "watcher": watcher.to_dict(home),
        "cycle_hours": follows["cycle_hours"],
        "last_cycle_at": _iso(last),
        "next_cycle_at": _iso(next_at),
        "next_cycle_why": follows["why"],
        "watcher_config": follows["config"],  # None: the watcher follows config.toml as it is
        "agents": agents,
        "misnamed_folders": [folder.to_dict() for folder in misnamed_agents(home)],
        "linked_folders": [link.to_dict() for link in linked_folders(home)],
        "broken_links": [link.to_dict() for link in broken_links(home)],
        "codex": codex,
    }
    if as_json:
        emit_json(data)
        return 0
    _print_status(data, last, next_at)
    return 0


def _new_work(a: dict) -> str:
    """What waits for the next reflection, in words: '3 runs', '1 human edit', 'no'."""
    if not a["dirty"]:
        return "no"
    parts = [f"{a['pending_runs']} run{'s' * (a['pending_runs'] != 1)}"] if a["pending_runs"] else []
    if a["pending_edits"]:
        parts.append(f"{a['pending_edits']} edit{'s' * (a['pending_edits'] != 1)}")
    return ", ".join(parts) or ("a retry" if a["last_failure"] else "yes")  # STATE says it failed


def _codex_states(conn: sqlite3.Connection, home: Home) -> list[dict]:
    """Each Codex install and whether Codex runs its hooks (the spool drained first: its evidence)."""
    from evolve.integrations import codex
    from evolve.observe.records import drain_pending
    from evolve.workspace.links import UnreadableInstalls, load_installs

    try:
        if not load_installs(home, "codex"):
            return []
    except UnreadableInstalls as exc:  # status still answers; doctor names it too
        sys.stderr.write(f"evolve: warning: {exc}\n")
        return []
    drain_pending(conn, home)
    return codex.install_states(home)


def _print_status(data: dict, last: float | None, next_at: float | None) -> None:
    watcher, now = data["watcher"], time.time()
    if watcher["running"]:
        say(f"watcher: running (pid {watcher['pid'] or '?'}), log {watcher['log']}")
        if next_at is None:
            say(f"next cycle: {data['next_cycle_why'] or 'none (cycles are off)'}")
        else:
            due = "due now" if next_at <= now else f"in {ago(next_at - now)}"
            say(f"next cycle: {due} ({data['next_cycle_why']})")
        if data["watcher_config"]:
            say(data["watcher_config"])
    else:
        say(
            "watcher: not running — nothing is observed or reflected in the background; "
            "start it with `evolve watch --detach`"
        )
    say(f"last cycle: {ago(now - last) + ' ago' if last else 'never'}")
    for folder in [*data["misnamed_folders"], *data["linked_folders"], *data["broken_links"]]:
        say(folder["problem"])
    if not data["agents"]:
        say("no agents; create one with `evolve init NAME`")
        return
    rows, notes = [], []
    for a in data["agents"]:
        waiting = f"{len(a['proposals'])} proposal(s) to review" if a["proposals"] else ""
        flags = (
            ("paused", a["paused"]),
            (f"held by {a['held']['what']}" if a["held"] else "", a["held"]),
            ("busy", a["busy"]),
            ("repository broken", a["repository_problem"]),
            ("config broken", a["config_problem"]),
            ("last reflection failed", a["last_failure"]),
            (waiting, waiting),
        )
        state = ", ".join(word for word, on in flags if on)
        rows.append(
            [
                a["name"],
                _new_work(a),
                f"{a['pending_best_score']:.2f}" if a["pending_runs"] else "-",
                a["last_reflection_at"] or "never",
                state or "-",
            ]
        )
        if a["repository_problem"]:
            notes.append(f"{a['name']}: .git: {a['repository_problem']}")
        if a["held"]:
            notes.append(f"{a['name']}: nothing is written or reflected until then: {a['held']['reason']}")
        if a["config_problem"]:
            notes.append(f"{a['name']}: not reflected until its configuration loads: {a['config_problem']}")
        notes += [f"{a['name']}: {warning}" for warning in a["config_warnings"]]
        if a["last_failure"]:
            failure = a["last_failure"]
            notes.append(f"{a['name']}: the reflection at {failure['at']} failed: {failure['reason']}")
        if a["watcher_cannot_reflect"]:
            notes.append(
                f"{a['name']}: the watcher cannot reflect it: {a['watcher_cannot_reflect']} "
                "(a watcher has only the variables and PATH it was started with)"
            )
    say("")
    say(table(rows, ["AGENT", "NEW", "BEST", "LAST REFLECTION", "STATE"]))
    if notes:
        say("")
        for note in notes:
            say(note)
    for a in data["agents"]:
        if a["proposals"]:
            ids = ", ".join(a["proposals"])
            say(f"{a['name']}: waiting for review: {ids} (`evolve proposals {a['name']}`)")
        if a["sync"]:
            say(_sync_line(a["name"], a["sync"]))
            for branch in a["sync"]["kept"]:
                say(
                    f"{a['name']}: this machine's commits are kept on {branch} (they change what the "
                    f"server's main changed too): `git merge {branch}` shows both versions (keep what "
                    f"you want, then commit), then `git branch -d {branch}`"
                )
    for install in data["codex"]:
        say(f"codex: agent {install['agent']} in {install['folder']}: {install['state']}")


def _sync_line(name: str, sync: dict) -> str:
    """One line: the server and how the last sync went (offline: when it last worked; it is retried)."""
    state = sync["state"]
    if state in ("synced", "up to date"):
        how = f"synced {sync['at']}"
    elif state == "offline":
        last = f"; last synced {sync['ok_at']}" if sync["ok_at"] else ""
        how = f"offline ({sync['failures']} attempt(s) in a row{last}); evolve retries"
    else:
        how = f"{state}" + (f": {sync['detail']}" if sync["detail"] else "")
    manual = "" if sync["mode"] == "auto" else " (sync = manual: run `evolve sync`)"
    return f"{name}: remote {sync['url']}: {how}{manual}"


def _set_paused(home: Home, name: str, paused: bool) -> None:
    Agent.open(name, home)
    with ledger.opened(home.state_db) as conn:
        with ledger.transaction(conn):
            ledger.set_paused(conn, name, paused)


def pause(home: Home, name: str, as_json: bool = False) -> int:
    _set_paused(home, name, True)
    if as_json:
        emit_json({"agent": name, "paused": True})
        return 0
    say(
        f"paused learning for {name!r}: no reflections until `evolve resume {name}` "
        f"(its transcripts are still observed)"
    )
    return 0


def resume(home: Home, name: str, as_json: bool = False) -> int:
    _set_paused(home, name, False)
    if as_json:
        emit_json({"agent": name, "paused": False})
        return 0
    say(f"resumed learning for {name!r}")
    return 0


def _archive_target(home: Home, name: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target, number = f"{name}-{stamp}", 1
    while (home.archive_dir / target).exists():
        number += 1
        target = f"{name}-{stamp}-{number}"
    return target


def _keep_local_config(home: Home, name: str, archived: Path) -> None:
    """Move a synced agent's machine-local settings into its archive, over nothing of the agent's.

    Into its own `.git` folder; beside its files when that is lost, or a link (to another
    agent's repository, which is not this agent's to write in).
    """
    local = home.local_config(name)
    if not local.exists():
        return
    dot = archived / ".git"
    folder = dot if dot.is_dir() and not dot.is_symlink() else archived
    target, number = folder / local.name, 1
    while target.exists() or target.is_symlink():
        number += 1
        target = folder / f"{name}.local-{number}.toml"
    local.rename(target)


def _uninstall_all(home: Home, name: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Remove the agent's installs: hooks naming a removed agent fail in every session.

    Returns the hook files cleaned, and (command, reason) for each install that could not
    be removed (its record or settings file unreadable, say), so the person can finish it.
    """
    from evolve.commands.doctor_checks import uninstall_command
    from evolve.integrations import claude_code, codex
    from evolve.workspace import links

    done, left = [], []
    for harness, integration in (("claude-code", claude_code), ("codex", codex)):
        try:
            records = [r for r in links.load_installs(home, harness) if r.get("agent") == name]
        except links.UnreadableInstalls as exc:
            left.append((f"evolve uninstall {harness} --agent {name}", str(exc)))
            continue
        for record in records:
            try:
                result = integration.uninstall(  # under the agent's lock: its repository stays as it is
                    home, name, record.get("scope") or "project", record.get("project"), sources_too=False
                )
            except (UserError, OSError) as exc:
                left.append((uninstall_command(harness, record), str(exc)))
            else:
                done.append(f"{links.LABELS[harness]}: {result['settings']}")
    return done, left


def remove(home: Home, name: str, purge: bool = False, as_json: bool = False) -> int:
    """Move the repo to `<home>/archive/`, mark the agent removed; delete state only on --purge."""
    check_name(name, "agent")
    path = home.agent_dir(name)
    with ledger.opened(home.state_db) as conn:
        known = ledger.agent_row(conn, name) is not None
        # an agent's folder whose .git is lost (status says "repository broken") is archived as it is
        lost = name in lost_agents(home)
        if not (path / ".git").is_dir() and not lost and not (purge and known):
            raise UserError(f"no agent {name!r} in {home.root}; see `evolve agents`")
        archived = None
        uninstalled: list[str] = []
        left: list[tuple[str, str]] = []
        if (path / ".git").is_dir() or lost:
            lock = FileLock(path / ".git" / LOCK, timeout=0) if not lost else None
            try:
                if lock is not None:
                    lock.acquire()
            except LockBusy:
                who = holder(path / ".git" / LOCK) or "another process"
                raise UserError(
                    f"agent {name!r} is busy ({who} holds its lock: a reflection is "
                    f"running); try again when it finishes"
                ) from None
            try:
                uninstalled, left = _uninstall_all(home, name)
                home.archive_dir.mkdir(parents=True, exist_ok=True)
                archived = home.archive_dir / _archive_target(home, name)
                path.rename(archived)
                _keep_local_config(home, name, archived)
            finally:
                if lock is not None:
                    lock.release()
            with ledger.transaction(conn):
                ledger.mark_removed(conn, name)
        else:  # removed before: installs an older evolve left behind go now
            uninstalled, left = _uninstall_all(home, name)
        purged = ledger.purge_agent(conn, name) if purge else 0
    if as_json:
        emit_json(
            {
                "name": name,
                "archived_to": str(archived) if archived else None,
                "purged": purge,
                "rows_deleted": purged,
                "uninstalled": uninstalled,
                "installs_left": left,
            }
        )
        return 0
    for settings in uninstalled:
        say(f"uninstalled its hooks and skill links ({settings})")
    for command, why in left:
        warn(f"could not uninstall ({why}); its hooks will fail until you run `{command}`")
    if archived:
        say(f"archived agent {name!r} to {archived}")
    if purge:
        say(
            f"deleted its state from {home.state_db} ({purged} row(s)); archived repositories "
            f"stay in {home.archive_dir} until you delete them"
        )
    else:
        say(f"its observed state is kept; `evolve remove {name} --purge` deletes it")
    return 0
