"""`evolve remote` and `evolve sync`: an agent shared through a git server."""

from __future__ import annotations

from evolve.clock import stamp
from evolve.commands.output import emit_json, say
from evolve.errors import EXIT_BUSY, EXIT_USER, UserError
from evolve.home import Home
from evolve.store import ledger
from evolve.sync.remote import REMOTE, redact
from evolve.sync.run import Outcome
from evolve.sync.run import sync as sync_agent
from evolve.workspace.agent import Agent
from evolve.workspace.folders import list_agents, lost_agents


def remote(home: Home, name: str, url: str | None = None, remove: bool = False, as_json: bool = False) -> int:
    """Show the agent's server, set it (and sync once), or forget it."""
    from evolve.sync import join  # lazily: `evolve sync` does not need it

    agent = Agent.open(name, home)
    if remove and url is not None:
        raise UserError(f"give a URL or --remove, not both: `evolve remote {name} --remove`")
    if remove:
        old = join.remove_remote(agent)
        if as_json:
            emit_json({"agent": name, "removed": redact(old) if old else None})
        elif old:
            say(
                f"{name}: no remote any more (was {redact(old)}); its history stays here, and "
                f"[sources] and [model] stay this machine's own in {agent.local_config_path}"
            )
        else:
            say(f"{name}: had no remote")
        return 0
    if url is None:
        return _show(agent, as_json)
    had = agent.repo.remote_url(REMOTE)
    stored = join.set_remote(agent, url)
    outcome = sync_agent(agent)
    if outcome.state == "refused" and had is None:
        join.remove_remote(agent)  # an unrelated history: the agent is left as it was
    if as_json:
        emit_json({"agent": name, "url": redact(stored), "sync": outcome.to_dict()})
    else:
        if outcome.state != "refused" or had is not None:
            say(f"{name}: remote {redact(stored)}")
        say(outcome.line())
    return _code([outcome]) if outcome.state in ("refused", "busy") else 0


def _show(agent: Agent, as_json: bool) -> int:
    url = agent.repo.remote_url(REMOTE)
    with ledger.opened(agent.home.state_db) as conn:
        row = ledger.sync_rows(conn).get(agent.name)
    data = {
        "agent": agent.name,
        "url": redact(url) if url else None,
        "machine": agent.home.machine(),
        "sync": agent.config.git.sync,
        "last_sync": None
        if row is None
        else {
            "at": stamp(row["at"]),
            "state": row["state"],
            "detail": row["detail"],
            "failures": row["failures"],
        },
    }
    if as_json:
        emit_json(data)
        return 0
    if url is None:
        say(f"{agent.name}: no remote; set one with `evolve remote {agent.name} URL`")
        return 0
    say(f"{agent.name}: remote {data['url']} (this machine: {data['machine']}, sync {data['sync']})")
    if row is not None:
        say(
            f"last sync: {stamp(row['at'])}: {row['state']}" + (f": {row['detail']}" if row["detail"] else "")
        )
    return 0


def sync(
    home: Home,
    names: list[str],
    accept_rewrite: bool = False,
    as_json: bool = False,
    accept_held: bool = False,
    push_anyway: bool = False,
) -> int:
    """Fetch, integrate, push for each agent (default: every agent with a remote)."""
    if names:
        targets: list[Agent | Outcome] = [_named(home, name) for name in names]
    else:
        targets = _shared(home)
    for flag, given in (
        ("--accept-rewrite", accept_rewrite),
        ("--accept-held", accept_held),
        ("--push-anyway", push_anyway),
    ):
        if given and len(names) != 1:
            raise UserError(f"{flag} takes exactly one agent: `evolve sync {flag} NAME`")
    outcomes = _told(
        [
            target if isinstance(target, Outcome) else _each(target, accept_rewrite, accept_held, push_anyway)
            for target in targets
        ],
        every=not names,
    )
    if as_json:
        emit_json([o.to_dict() for o in outcomes])
    elif not outcomes:
        say("no agent has a remote; set one with `evolve remote NAME URL`")
    for outcome in outcomes if not as_json else ():
        say(outcome.line())
    return _code(outcomes)


def _each(
    agent: Agent, accept_rewrite: bool, accept_held: bool, push_anyway: bool
) -> Outcome | tuple[Agent, Exception]:
    """One agent's sync, or its failure for `_told` to ask git about, and the others still sync."""
    try:
        return sync_agent(
            agent, accept_rewrite=accept_rewrite, accept_held=accept_held, push_anyway=push_anyway
        )
    except Exception as exc:
        return agent, exc


def _told(results: list[Outcome | tuple[Agent, Exception]], every: bool) -> list[Outcome]:
    """Each sync's outcome: a failed sync in a repository of the person's to repair names the repair.

    Git checks the failed agents' repositories side by side; `every`: a sync of every agent,
    which gives each check QUICK_CHECK_S. A failure in a repository git finds sound is evolve's
    own, raised.
    """
    from evolve.store.diagnosis import FSCK_TIMEOUT_S, QUICK_CHECK_S, repository_problems

    failures = [result for result in results if not isinstance(result, Outcome)]
    problems = repository_problems([exc for _, exc in failures], QUICK_CHECK_S if every else FSCK_TIMEOUT_S)
    named = {id(failure): problem for failure, problem in zip(failures, problems, strict=True)}
    outcomes = []
    for result in results:
        if not isinstance(result, Outcome):
            agent, exc = result
            if named[id(result)] is None:
                raise exc
            result = Outcome(agent.name, "failed", f"{agent.path}: {named[id(result)]}")
        outcomes.append(result)
    return outcomes


def _named(home: Home, name: str) -> Agent | Outcome:
    """An agent named to sync, or the failed outcome of one git cannot read, as a sync of every agent says.

    An agent folder whose `.git` is lost is named so too (under --json, its row), not an error.
    """
    if name in lost_agents(home):
        found = _remote_or_unreadable(Agent(home, name), quick=False)
        return found if isinstance(found, Outcome) else Agent.open(name, home)
    agent = Agent.open(name, home)
    found = _remote_or_unreadable(agent, quick=False)
    return found if isinstance(found, Outcome) else agent


def _shared(home: Home) -> list[Agent | Outcome]:
    """The agents with a remote, and in its place a failed outcome for each whose repository git cannot read.

    An emptied or lost `.git`, a `.git/config` that does not parse, a folder another user
    owns, a ~/.gitconfig that does not parse: git says nothing of a remote there. Left out
    unsaid, the person would take the agent for synced ("no agent has a remote", exit 0).
    """
    targets: list[Agent | Outcome] = []
    remoteless = []
    for name in sorted({*list_agents(home), *lost_agents(home)}):
        agent = Agent(home, name)
        found = _remote_or_unreadable(agent, quick=True)
        if isinstance(found, Outcome):
            targets.append(found)
        elif found is not None:
            targets.append(agent)
        else:
            remoteless.append(agent)
    if remoteless:  # one that synced before lost its remote with .git/config: said, not skipped
        with ledger.opened(home.state_db) as conn:
            synced = ledger.sync_rows(conn)
        targets += [
            _remote_gone(agent, synced[agent.name]["at"]) for agent in remoteless if agent.name in synced
        ]
        targets.sort(key=lambda target: target.agent if isinstance(target, Outcome) else target.name)
    return targets


def _remote_gone(agent: Agent, last_at: float) -> Outcome:
    """An agent that synced whose .git/config names no server now (`remote NAME --remove` forgets it)."""
    name = agent.name
    return Outcome(
        name,
        "failed",
        f"no remote any more, though it synced (last {stamp(last_at)}): {agent.path}/.git/config lost "
        f"it; set it again with `evolve remote {name} URL`, or `evolve remote {name} --remove` if it is done",
    )


def _remote_or_unreadable(agent: Agent, quick: bool) -> Outcome | str | None:
    """The agent's remote URL, None when it has none, or a failed outcome where git cannot read either.

    One answer, so a sync of every agent asks git's config once for each, not again for the URL.
    No remote set is git's exit 1 to `config --local --get`; anything else is git failing to read
    (`--local`: in a folder git refuses as another user's, git reads no repository and says 1).
    `quick`: one of every agent's checks (QUICK_CHECK_S).
    """
    from evolve.store.diagnosis import FSCK_TIMEOUT_S, QUICK_CHECK_S, no_repository_in, repository_problem
    from evolve.store.git import GitError
    from evolve.store.head import is_git_dir, shared_repository

    if not is_git_dir(agent.repo.git_dir):
        return Outcome(agent.name, "failed", f"{agent.path}: .git {no_repository_in(agent.path)}")
    shared = shared_repository(agent.path)
    if shared is not None:
        return Outcome(agent.name, "failed", f"{agent.path}: .git {shared}")
    url = agent.repo.remote_url(REMOTE)
    if url is not None:
        return url
    try:
        if (agent.repo.git_dir / "config").is_dir():  # git reads no settings, and says 1 for the remote
            agent.repo.git("rev-parse", "--git-dir")
        agent.repo.git("config", "--local", "--includes", "--get", f"remote.{REMOTE}.url")
    except GitError as exc:
        if exc.code == 1:
            return None  # no remote
        problem = repository_problem(exc, QUICK_CHECK_S if quick else FSCK_TIMEOUT_S)
        return Outcome(agent.name, "failed", f"{agent.path}: {problem or exc}")
    return None


def _code(outcomes: list[Outcome]) -> int:
    """0 when all synced, 75 when one is busy (and nothing else failed), 1 otherwise."""
    if all(o.ok for o in outcomes):
        return 0
    if all(o.ok or o.state == "busy" for o in outcomes):
        return EXIT_BUSY
    return EXIT_USER
