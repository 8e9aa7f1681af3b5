"""`evolve hook claude-code|codex <event>`: what runs inside the agents' hooks, every session and turn.

Its cost is paid on every turn, so it imports only what a bare interpreter has loaded
already (os, sys, time) plus C modules (`_json`, select): no argparse, subprocess,
sqlite3, re, pathlib, nor json's Python half. Stop, SessionEnd, StopFailure and
PostToolUse append one line to the spool that the watcher drains into state.db;
SessionStart prints the memo (and, when the skills are not linked into the harness, the
skill index) and spools the impressions; PreToolUse prints a guard's decision
(evolve.session.guards) when the call meets one of the agent's guards. The hook reads
exactly one JSON value from stdin and never waits for EOF (stdin may stay open). It fails
open: it never exits non-zero (exit 2 would block the agent) and prints nothing but
SessionStart's context and a guard's decision; every problem, even a usage error, goes to
`<home>/logs/hooks.log` (a broken guards.toml too: its broken guards do not apply, the
call goes ahead).

Claude Code's commands name their agent (`--agent`). Codex's are one frozen command for
every project (its hooks are the person's, in `$CODEX_HOME/hooks.json`, trusted by hash):
the agents are those whose install in `<home>/integrations/codex.json` covers the
session's folder, and a session in any other folder costs one small file read.

An agent repository loaded as a plugin (Claude Code or Codex) runs its own launcher,
`hooks/evolve-hook`, which calls `--plugin DIR`: the agent is the plugin's name and the memo
is read from DIR, so a teammate with no evolve home gets the lessons too. Where the person's
home knows the agent, the impressions are spooled as usual; where evolve's installed hooks
already serve the agent in the session's folder, the plugin's hook prints nothing (the memo
is never shown twice).
"""

# pathlib (with re, fnmatch, urllib) costs as much as this whole hook may: os.path it is.
# ruff: noqa: PTH100, PTH103, PTH105, PTH110, PTH111, PTH112, PTH113, PTH114, PTH116, PTH117, PTH118, PTH120
# ruff: noqa: PTH208
import os
import sys

from evolve.hookio import (
    STDIN_CAP,
    Problem,
    append_record,
    decode_json,
    json_encoder,
    log,
    parse_args,
    plugin_name,
    read_payload,
    resolve_home,
    valid_name,
    write_stdout,
)
from evolve.regular import open_regular

RECORDS = {"stop": "stop", "session-end": "session_end", "stop-failure": "stop_failure"}
HARNESSES = ("claude-code", "codex")
USAGE = (
    "usage: evolve hook claude-code EVENT --agent NAME [--home DIR] [--linked] | codex EVENT [--home DIR]"
    " | claude-code|codex EVENT --plugin DIR"
)


def check_args(opts: dict) -> None:
    harness = opts["harness"]
    if harness not in HARNESSES or len(opts["words"]) > 2:
        raise Problem(USAGE)
    if "unknown" in opts:
        raise Problem(f"unknown option {opts['unknown']!r}")
    if opts["plugin"] is not None:
        check_plugin(opts)
        return
    handlers = HANDLERS[harness]
    if opts["event"] not in handlers:
        raise Problem(f"unknown event {opts['event']!r} of {harness} (known: {', '.join(handlers)})")
    if harness == "codex" and (opts["agent"] is not None or opts["linked"]):
        raise Problem("codex hooks find their agents from the session's folder: no --agent, no --linked")
    if harness == "claude-code" and not valid_name(opts["agent"]):
        raise Problem(f"--agent {opts['agent']!r} is not an agent name")


def check_plugin(opts: dict) -> None:
    """`--plugin DIR`: no --agent, --linked nor --home (the plugin names its agent); a known event."""
    harness, root = opts["harness"], opts["plugin"]
    if opts["agent"] is not None or opts["linked"] or opts["home"] is not None:
        raise Problem("--plugin names its agent and finds the home itself: no --agent, --linked, --home")
    handlers = PLUGIN_HANDLERS[harness]
    if opts["event"] not in handlers:
        raise Problem(f"unknown event {opts['event']!r} of a {harness} plugin (known: {', '.join(handlers)})")
    if not root or not os.path.isabs(root) or not os.path.isdir(root):
        raise Problem(f"--plugin {root!r} is not a plugin's folder (an absolute path)")
    opts["agent"] = plugin_name(root)


# -- the events --------------------------------------------------------------------------------
def _text(payload: dict, key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def agent_dir(home: str, agent: str) -> str:
    path = os.path.join(home, "agents", agent)
    if not os.path.isdir(os.path.join(path, ".git")):
        raise Problem(f"no agent {agent!r} in {home} (`evolve init {agent}`, or uninstall the hooks)")
    return path


def skill_names(skills_dir: str) -> list[str]:
    """The agent's skills: folders with a valid name holding a SKILL.md, sorted."""
    try:
        entries = list(os.scandir(skills_dir))
    except OSError:
        return []
    return sorted(
        e.name
        for e in entries
        if valid_name(e.name)
        and e.is_dir(follow_symlinks=False)
        and os.path.isfile(os.path.join(e.path, "SKILL.md"))
    )


def memo_context(home: str, path: str) -> tuple[str, dict[str, list[str]]]:
    """The memo as `evolve prompt` shows it, and the ids of the bullets it shows whole, by section.

    One renderer: evolve.session.context.
    """
    from evolve.session.context import limits, memo_view, read_memo

    limit = limits(os.path.join(home, "config.toml"), os.path.join(path, "agent.toml"))[0]
    memo = os.path.join(path, "memo.md")
    shows = limit - 1  # and the newline after it
    block, lessons = memo_view(read_memo(memo, shows), shows, memo)
    return (block + "\n" if block else ""), lessons


def agent_context(home: str, agent: str, linked: bool, session: str | None) -> str:
    """What one agent adds to a new session: the memo (and the skill index when not linked).

    The skills and memo bullets shown are spooled as impressions of `session`, with the
    tip of the agent's branch (the commit they came from).
    """
    path = agent_dir(home, agent)
    if not linked:  # the index too: the full renderer (it spools the impressions)
        from pathlib import Path

        from evolve.home import Home
        from evolve.session.prompt import render

        return render(Home(Path(home)), agent, session=session, record=bool(session)).text
    return memo_shown(home, agent, path, session)


def memo_shown(home: str, agent: str, path: str, session: str | None) -> str:
    """The memo of the agent repository at `path`, its skills listed by the harness itself.

    With `session`, the skills (every one is listed) and the memo bullets shown are spooled
    as its impressions, with the tip of `path`'s branch when it is a git repository.
    """
    listed = skill_names(os.path.join(path, "skills"))
    text, lessons = memo_context(home, path)
    if session and (listed or lessons):
        from evolve.store.head import branch_tip

        record: dict = {"event": "impressions", "agent": agent, "session": session, "skills": listed}
        record.update(memo=lessons, tip=branch_tip(os.path.join(path, ".git")))
        append_record(home, record)
    return text


def session_start(home: str, opts: dict, payload: dict) -> str:
    text = agent_context(home, opts["agent"], opts["linked"], _text(payload, "session_id"))
    from evolve.watch.spawn import ensure_watcher

    ensure_watcher(home)
    return text


def run_ended(home: str, opts: dict, payload: dict) -> str:
    agent = opts["agent"]
    agent_dir(home, agent)
    record = {
        "event": RECORDS[opts["event"]],
        "agent": agent,
        "transcript_path": _text(payload, "transcript_path"),
        "session_id": _text(payload, "session_id"),
    }
    for key in ("reason", "error"):  # SessionEnd's reason, StopFailure's error type
        if _text(payload, key):
            record[key] = _text(payload, key)[:200]  # type: ignore[index]
    append_record(home, record)
    return ""


def skill_used(home: str, opts: dict, payload: dict) -> str:
    if payload.get("tool_name") != "Skill":
        return ""
    tool_input = payload.get("tool_input")
    skill = tool_input.get("skill") if isinstance(tool_input, dict) else None
    if not isinstance(skill, str) or not skill or len(skill) > 200:
        raise Problem(f"a Skill call without a skill name: {str(tool_input)[:80]!r}")
    agent = opts["agent"]
    agent_dir(home, agent)
    append_record(
        home,
        {
            "event": "invocation",
            "agent": agent,
            "skill": skill,
            "source": "hook",
            "tool_use_id": _text(payload, "tool_use_id"),
            "session": _text(payload, "session_id"),
        },
    )
    return ""


def agent_guards(home: str, opts: dict, agent: str) -> list[tuple]:
    """The agent's usable guards (parsed once per change of guards.toml); problems logged once."""
    from evolve.session.guards import load

    path = os.path.join(home, "agents", agent, "guards.toml")
    rows, problems, fresh = load(path, os.path.join(home, "cache", agent, "guards.marshal"))
    if fresh:
        for problem in problems:  # the hook fails open: the agent is never blocked by a broken file
            log(home, opts, Problem(problem))
    return rows


def guard_check(home: str, opts: dict, payload: dict, agents: list[str]) -> str:
    """PreToolUse: the harness's answer when the call meets a guard of `agents` (else nothing).

    Each agent whose guards fired gets one spool record (`guard`: which, what they did, in
    which session): an event for `evolve guard` and the next reflection's bundle.
    """
    from evolve.session.guards import fired, output

    hits = []
    for agent in agents:
        mine = fired(payload, agent_guards(home, opts, agent))
        if mine:
            hits += mine
            spool_firing(home, opts, payload, agent, mine)
    decision = output(hits)
    return json_encoder()(decision) if decision else ""


def spool_firing(home: str, opts: dict, payload: dict, agent: str, rows: list[tuple]) -> None:
    """One `guard` spool record: which of the agent's guards met the call, and what they did."""
    record = {
        "event": "guard",
        "agent": agent,
        "guards": [row[0] for row in rows],
        "action": "deny" if any(row[4] == "deny" for row in rows) else "remind",
        "tool": payload.get("tool_name"),
        "session": _text(payload, "session_id"),
        "tool_use_id": _text(payload, "tool_use_id"),
    }
    if opts.get("harness") == "codex":
        record.update(harness="codex", cwd=payload.get("cwd"))
    append_record(home, record)


def pre_tool_use(home: str, opts: dict, payload: dict) -> str:
    return guard_check(home, opts, payload, [opts["agent"]])


# -- Codex --------------------------------------------------------------------------------------
def codex_agents(home: str, payload: dict) -> list[tuple[str, bool]]:
    """(agent, linked) of each Codex install whose folder covers the session's folder."""
    cwd = _text(payload, "cwd")
    path = os.path.join(home, "integrations", "codex.json")
    if cwd is None or not os.path.exists(path):
        return []
    from evolve.store.codex_rollouts import covers

    where = os.path.realpath(cwd)
    found: dict[str, bool] = {}
    for install in _installs(path, "codex"):
        folder, agent = install.get("folder"), install.get("agent")
        if isinstance(folder, str) and valid_name(agent) and covers(folder, where):
            found[agent] = found.get(agent, False) or install.get("linked") is not False
    return list(found.items())


def codex_session_start(home: str, opts: dict, payload: dict) -> str:
    """The memo of each agent installed for the session's folder, as Codex's additional context."""
    agents = codex_agents(home, payload)
    if not agents:
        return ""
    session = _text(payload, "session_id")
    texts = [agent_context(home, agent, linked, session) for agent, linked in agents]
    for agent, _ in agents:  # what tells `evolve status` that Codex trusted and ran the hooks
        append_record(
            home, {"event": "codex_hook", "agent": agent, "harness": "codex", "cwd": payload.get("cwd")}
        )
    from evolve.watch.spawn import ensure_watcher

    ensure_watcher(home)
    text = "\n".join(t.strip("\n") for t in texts if t.strip())
    if not text:
        return ""
    return json_encoder()(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text + "\n"}}
    )


def codex_pre_tool_use(home: str, opts: dict, payload: dict) -> str:
    """PreToolUse: the guards of every agent installed for the session's folder."""
    return guard_check(home, opts, payload, [agent for agent, _ in codex_agents(home, payload)])


def codex_stop(home: str, opts: dict, payload: dict) -> str:
    """A turn ended: the watcher reads the rollout now, for each agent of the session's folder."""
    for agent, _ in codex_agents(home, payload):
        append_record(
            home,
            {
                "event": "stop",
                "agent": agent,
                "format": "codex",
                "harness": "codex",
                "cwd": payload.get("cwd"),
                "transcript_path": _text(payload, "transcript_path"),
                "session_id": _text(payload, "session_id"),
            },
        )
    return ""


# -- an agent repository loaded as a plugin -------------------------------------------------------
def plugin_session_start(home: str, opts: dict, payload: dict) -> str:
    """The memo of the plugin's agent, read from the plugin's folder; nothing when evolve serves it here.

    The harness lists the plugin's skills itself (as `<agent>:<skill>`): the memo only.
    """
    agent, harness = opts["agent"], opts["harness"]
    if serves_here(home, harness, agent, payload):
        return ""  # evolve's installed hooks show this agent's memo in this folder: never twice
    known = os.path.isdir(os.path.join(home, "agents", agent, ".git"))
    session = _text(payload, "session_id") if known else None  # impressions only for a home that has it
    text = memo_shown(home, agent, opts["plugin"], session)
    if known:
        from evolve.watch.spawn import ensure_watcher

        ensure_watcher(home)
    if not text or harness == "claude-code":
        return text
    return json_encoder()(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    )


def plugin_pre_tool_use(home: str, opts: dict, payload: dict) -> str:
    """PreToolUse of an agent loaded as a plugin: the guards of guards.toml in the plugin's folder.

    Nothing where evolve's installed hooks serve the agent here (their PreToolUse checks the
    same guards: never twice). A teammate without the agent in their home gets the verdict
    and nothing is written; with it, the parsed guards are cached and a firing is spooled.
    """
    agent, harness = opts["agent"], opts["harness"]
    if serves_here(home, harness, agent, payload):
        return ""
    from evolve.session.guards import fired, load, output

    known = os.path.isdir(os.path.join(home, "agents", agent, ".git"))
    cache = os.path.join(home, "cache", agent, "plugin-guards.marshal") if known else None
    rows, problems, fresh = load(os.path.join(opts["plugin"], "guards.toml"), cache)
    if known and fresh:
        for problem in problems:  # fails open: a broken file never blocks the agent
            log(home, opts, Problem(problem))
    hits = fired(payload, rows)
    if hits and known:
        spool_firing(home, opts, payload, agent, hits)
    decision = output(hits)
    return json_encoder()(decision) if decision else ""


def serves_here(home: str, harness: str, agent: str, payload: dict) -> bool:
    """Whether evolve's own installed hooks show `agent`'s memo to this session already."""
    if harness == "codex":
        return any(name == agent for name, _ in codex_agents(home, payload))
    path = os.path.join(home, "integrations", "claude-code.json")
    cwd = _text(payload, "cwd")
    if not os.path.exists(path):
        return False
    where = os.path.realpath(cwd) if cwd else None
    # Claude Code reads a project's settings in the session's folder, or its git work tree's top
    places = {where, git_top(where)} - {None} if where else set()
    for install in _installs(path, "claude-code"):
        if install.get("agent") != agent:
            continue
        if install.get("scope") == "user" or install.get("project") in places:
            settings = install.get("settings")
            if isinstance(settings, str) and starts_agent(settings, agent):
                return True
    return False


def _installs(path: str, harness: str) -> list:
    """The install records of a registry (`<home>/integrations/<harness>.json`)."""
    with open_regular(path) as handle:  # a FIFO there: refused, never waited on
        raw = handle.read(STDIN_CAP)
    try:
        data = decode_json(raw, final=True)
    except Problem:
        raise Problem(f"{path} is not valid JSON; run `evolve install {harness}` again") from None
    installs = data.get("installs") if isinstance(data, dict) else None
    return [i for i in installs if isinstance(i, dict)] if isinstance(installs, list) else []


def git_top(folder: str) -> str | None:
    """The top of the git work tree holding `folder` (a `.git` folder or file), or None."""
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def starts_agent(settings: str, agent: str) -> bool:
    """Whether a Claude Code settings file holds evolve's SessionStart command for `agent`."""
    try:
        with open_regular(settings) as handle:
            data = decode_json(handle.read(STDIN_CAP), final=True)
    except (OSError, Problem):
        return False  # unreadable: Claude Code cannot run it either
    hooks = data.get("hooks") if isinstance(data, dict) else None
    groups = hooks.get("SessionStart") if isinstance(hooks, dict) else None
    for group in groups if isinstance(groups, list) else ():
        inner = group.get("hooks") if isinstance(group, dict) else None
        for hook in inner if isinstance(inner, list) else ():
            command = hook.get("command") if isinstance(hook, dict) else None
            words = command.split() if isinstance(command, str) and "evolve.hookmain" in command else []
            if "session-start" in words and any(
                flag == "--agent" and value == agent for flag, value in zip(words, words[1:], strict=False)
            ):
                return True
    return False


PLUGIN_HANDLERS = {  # what a plugin's launcher (hooks/evolve-hook) may call, per harness
    "claude-code": {"session-start": plugin_session_start, "pre-tool-use": plugin_pre_tool_use},
    "codex": {"session-start": plugin_session_start, "pre-tool-use": plugin_pre_tool_use},
}

HANDLERS = {
    "claude-code": {
        "session-start": session_start,
        "stop": run_ended,
        "session-end": run_ended,
        "stop-failure": run_ended,
        "post-tool-use": skill_used,
        "pre-tool-use": pre_tool_use,
    },
    "codex": {"session-start": codex_session_start, "stop": codex_stop, "pre-tool-use": codex_pre_tool_use},
}


# -- entry points ------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """Handle one hook event; always returns 0 (every problem is logged instead)."""
    if os.environ.get("EVOLVE_DISABLE_HOOKS") == "1":
        return 0
    opts: dict = {}
    home = None
    try:
        opts = parse_args(list(sys.argv[1:] if argv is None else argv))
        home = resolve_home(opts["home"])
        check_args(opts)
        payload = read_payload()
        handlers = PLUGIN_HANDLERS if opts["plugin"] is not None else HANDLERS
        out = handlers[opts["harness"]][opts["event"]](home, opts, payload)
        if out:
            write_stdout(out)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: exit 0 regardless
        log(home, opts, exc)
    return 0


def run() -> None:
    """The installed hook command: main(), then exit 0 without interpreter teardown."""
    main()
    os._exit(0)


if __name__ == "__main__":
    run()
