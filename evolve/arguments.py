"""What each `evolve` command accepts: the COMMANDS table and the parser built from it.

A row names the command's function, its help and its arguments; the parser builds only the
named command's arguments, and argparse is imported only when a parser is built (`evolve
prompt`'s fast path never pays for it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence

from evolve import __version__

Command = Callable[..., int]

DESCRIPTION = (
    "Let an AI agent learn from its own use: evolve reads its transcripts, scores local signals "
    "and condenses lessons into skills and a memo, kept in a git repository per agent."
)
EPILOG = "exit codes: 0 ok, 1 error (the message says what to do), 2 usage, 3 bug, 75 busy, 130 interrupted"


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, 1 or more, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _agent(p) -> None:
    p.add_argument("name", help="the agent's name")


def _json(p) -> None:
    p.add_argument("--json", dest="as_json", action="store_true", help="print JSON")


def build_parser(given: Sequence[str] = ()):
    """The parser (argparse is imported here: `evolve prompt`'s fast path never pays for it)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        """argparse, with a hint for values that look like options (`evolve init -rf`)."""

        commands: Mapping[str, argparse.ArgumentParser] = {}  # each command's own parser (its usage)

        def error(self, message: str):
            dashed = [a for a in given if a.startswith("-") and a != "-" and not a.startswith("--")]
            if dashed and any(w in message for w in ("required", "unrecognized", "expected one")):
                message += f"; to pass a value that starts with '-' ({dashed[0]}), put `--` before it"
            if "--json" in given and not wants_json(given):
                named = command_of([a for a in given if a != "--json"]) or "COMMAND"
                message += f"; --json goes after the command (`evolve {named} --json`)"
            if wants_json(given):
                json_error(message, 2)
                raise SystemExit(2)
            super().error(message)

    parser = Parser(prog="evolve", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--home", help="evolve's home (default: $EVOLVE_HOME or the user data dir)")
    parser.add_argument("--version", action="version", version=f"evolve {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = command_of(given)  # only its arguments are built (all of them cost ~15 ms)
    for name, (_target, help_text, configure) in COMMANDS.items():
        if named in (None, name):
            configure(sub.add_parser(name, help=help_text, description=help_text))
    parser.commands = sub.choices  # a command's own mistakes get its own usage line
    return parser


def wants_json(argv: Sequence[str]) -> bool:
    """Whether `--json` was given to the command (after its name): its errors come as JSON too."""
    args = list(argv)
    while args and args[0].startswith("-"):
        args = args[2:] if args[0] == "--home" else args[1:]
    return "--json" in args[1:]


def command_of(argv: Sequence[str]) -> str | None:
    """The command `argv` names after the top-level options, when it is one; else None."""
    args = list(argv)
    while args and args[0].startswith("--home"):
        args = args[2:] if args[0] == "--home" else args[1:]
    return args[0] if args and args[0] in COMMANDS else None


def resolve(dotted: str) -> Command:
    module, _, function = dotted.rpartition(".")
    from importlib import import_module

    return getattr(import_module(f"evolve.commands.{module}"), function)


def _init_args(p) -> None:
    _agent(p)
    _json(p)


def _new_agent_args(p) -> None:
    _init_args(p)
    p.add_argument(
        "--from", dest="from_url", metavar="URL", help="join an agent that lives on a git server (clone it)"
    )


def _remote_args(p) -> None:
    _agent(p)
    p.add_argument("url", nargs="?", metavar="URL", help="the git server's URL (ssh, https, git://, a path)")
    p.add_argument("--remove", action="store_true", help="forget the server (the history stays)")
    _json(p)


def _sync_args(p) -> None:
    p.add_argument("names", nargs="*", metavar="AGENT", help="the agents (default: every one with a remote)")
    p.add_argument(
        "--accept-rewrite",
        action="store_true",
        help="take the server's main although it was rewritten (force-pushed); says what leaves main",
    )
    p.add_argument(
        "--accept-held",
        action="store_true",
        help="take the server's main the last sync held back (flagged or unreviewed) as reviewed",
    )
    p.add_argument(
        "--push-anyway",
        action="store_true",
        help="push memo or skill lines of yours that look like a secret, as they are",
    )
    _json(p)


def _log_args(p) -> None:
    _agent(p)
    p.add_argument("-n", "--limit", type=_positive, help="show at most this many commits")
    _json(p)


def _review_args(p) -> None:
    _agent(p)
    p.add_argument(
        "rev", nargs="?", default="HEAD", help="a commit, or a proposal id (default: the newest commit)"
    )
    _json(p)


def _revert_args(p) -> None:
    _agent(p)
    p.add_argument("rev", help="the commit to undo (see `evolve log`)")
    _json(p)


def _observe_args(p) -> None:
    _agent(p)
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="transcript files (default: the agent's [sources]); options may come before or after them",
    )
    p.add_argument(
        "--format",
        dest="fmt",
        choices=["claude_code", "codex", "generic"],
        help="transcript format of PATHs (default: detected)",
    )
    _json(p)


def _classify_args(p) -> None:
    p.add_argument("--agent", help="also use this agent's [signals] correction_phrases")
    p.add_argument(
        "--explain", dest="explain_cues", action="store_true", help="print the cues in words, not JSON"
    )


def _score_args(p) -> None:
    _agent(p)
    p.add_argument(
        "--all",
        dest="all_runs",
        action="store_true",
        help="every stored run, not only those since the last reflection",
    )
    _json(p)


def _reflect_args(p) -> None:
    _agent(p)
    p.add_argument(
        "--dry-run", action="store_true", help="print the bundle and the proposed operations; change nothing"
    )
    p.add_argument(
        "--force", action="store_true", help="reflect even with nothing new or nothing above the threshold"
    )
    _json(p)


def _watch_args(p) -> None:
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--detach", action="store_true", help="run in the background (pidfile and log under the home)"
    )
    mode.add_argument("--status", action="store_true", help="say whether a watcher runs")
    mode.add_argument("--stop", action="store_true", help="stop the running watcher")
    mode.add_argument(
        "--print-service",
        action="store_true",
        help="print a systemd user unit (Linux) or launchd plist (macOS)",
    )
    p.add_argument(
        "--log-file", action="store_true", help="log to <home>/logs/watch.log (rotated) instead of stderr"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    _json(p)


def _model_args(p) -> None:
    p.add_argument(
        "backend",
        nargs="?",
        choices=["offline", "anthropic", "claude-cli"],
        metavar="BACKEND",
        help="offline, anthropic or claude-cli (default: show the one in use and where its key comes from)",
    )
    p.add_argument("--model", dest="model_name", metavar="NAME", help="the model's name")
    p.add_argument(
        "--base-url", metavar="URL", help="a server that speaks the Messages API ('' for Anthropic's)"
    )
    key = p.add_mutually_exclusive_group()
    key.add_argument(
        "--key-env", metavar="VAR", help="read the API key from this variable (ANTHROPIC_API_KEY)"
    )
    key.add_argument(
        "--key-file",
        metavar="PATH",
        help="read the API key from this file at each call (whoever runs evolve)",
    )
    _json(p)


def _cycle_args(p) -> None:
    p.add_argument("--now", action="store_true", help="run even if the last cycle is recent")
    p.add_argument("--dry-run", action="store_true", help="plan only: reflect nothing")
    _json(p)


def _remove_args(p) -> None:
    _agent(p)
    p.add_argument(
        "--purge", action="store_true", help="also delete the agent's observed state from state.db"
    )
    _json(p)


def _proposal_args(p) -> None:
    _agent(p)
    p.add_argument("proposal_id", metavar="ID", help="a proposal id (see `evolve proposals`)")
    _json(p)


def _unblock_args(p) -> None:
    _agent(p)
    p.add_argument("block_id", metavar="ID", help='a block id (see `evolve log NAME --json`: "blocks")')
    _json(p)


def _doctor_args(p) -> None:
    _json(p)
    p.add_argument(
        "--fix", action="store_true", help="rewrite evolve's hooks in every agent repo and install"
    )


def _skills_args(p) -> None:
    _agent(p)
    p.add_argument("skill", nargs="?", help="one skill (default: all)")
    _json(p)


def _lessons_args(p) -> None:
    _agent(p)
    p.add_argument(
        "--days", type=_positive, help="the window in days (default: [limits] retention_days, 180)"
    )
    _json(p)


def _cost(text: str) -> float:
    import argparse
    import math

    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive amount in USD, got {text}")
    return value


def _eval_args(p) -> None:
    _agent(p)
    p.add_argument("--lesson", metavar="ID", help="only this lesson's case (default: every case on main)")
    p.add_argument("--runs", type=_positive, help="runs per case and arm (default: the case's, else 3)")
    p.add_argument(
        "--max-cost-usd",
        type=_cost,
        metavar="X",
        help="stop before the runs cost more than this (what ran is recorded as partial)",
    )
    _json(p)


def _guard_args(p) -> None:
    _agent(p)
    p.add_argument("guard_id", metavar="ID", nargs="?", help="one guard (its table's name in guards.toml)")
    action = p.add_mutually_exclusive_group()
    for name, what in (
        ("deny", "refuse the calls it matches"),
        ("remind", "let them run, with its message"),
        ("off", "stop it"),
    ):
        action.add_argument(
            f"--{name}", dest="action", action="store_const", const=name, help=f"as you: {what}"
        )
    _json(p)


def _prompt_args(p) -> None:
    _agent(p)
    p.add_argument("--session", help="record the skills as shown in this session (default: only a preview)")
    p.add_argument("--record", action="store_true", help="record them as shown in a new session")
    _json(p)


def _skill_args(p) -> None:
    _agent(p)
    p.add_argument("skill", help="the skill's name")
    _json(p)


def _prune_args(p) -> None:
    _agent(p)
    p.add_argument("--dry-run", action="store_true", help="say what would be evicted; change nothing")
    _json(p)


def _report_args(p) -> None:
    _agent(p)
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report with charts")
    p.add_argument(
        "--days", type=_positive, help="the window in days (default: [limits] retention_days, 180)"
    )
    _json(p)


def _install_args(p, verb: str = "disconnect") -> None:
    p.add_argument("target", metavar="HARNESS", choices=["claude-code", "codex"], help="claude-code or codex")
    p.add_argument("--agent", required=True, help=f"the evolve agent to {verb}")
    p.add_argument(
        "--scope",
        choices=["project", "user"],
        default="project",
        help="one project (default) or every project of this user",
    )
    p.add_argument("--project", help="the project folder (default: the current folder)")
    _json(p)


def _install_only_args(p) -> None:
    _install_args(p, "connect")
    p.add_argument(
        "--no-link",
        action="store_true",
        help="do not link skills into the harness; inject the skill index instead",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="put evolve's hook entries back as evolve writes them, over ones you changed or removed",
    )


def _hook_args(p) -> None:
    p.add_argument("args", nargs="...", help="claude-code EVENT --agent NAME | codex EVENT (hooks call this)")


# name -> ("module.function", help, argument builder). Later stages add rows here.
COMMANDS: dict[str, tuple[str, str, Callable[[object], None]]] = {
    "init": ("agents.init", "create an agent and its git repository (--from URL: join one)", _new_agent_args),
    "agents": ("agents.agents", "list agents", _json),
    "skills": ("skills.skills", "an agent's skills: validity, history, usage and rates", _skills_args),
    "lessons": (
        "lessons.lessons",
        "every lesson (memo bullets, skills): who wrote it, in context, ignored, did it stick",
        _lessons_args,
    ),
    "eval": (
        "evaluating.eval_command",
        "prove each lesson: run its eval case with and without the agent (Claude Code's plugin eval)",
        _eval_args,
    ),
    "guard": (
        "guards.guard",
        "list an agent's guards, or turn one to --deny, --remind or --off (as you)",
        _guard_args,
    ),
    "log": ("history.log", "an agent's commits: reflections, edits, reverts", _log_args),
    "review": ("history.review", "show one commit as a diff with its trailers", _review_args),
    "revert": ("history.revert", "undo one commit (evolve will not re-learn it)", _revert_args),
    "observe": ("observing.observe", "read new transcript lines into runs and facts", _observe_args),
    "score": ("observing.score", "runs since the last reflection, with signals and score", _score_args),
    "classify": (
        "classifying.classify_command",
        "does a message correct the agent or state a preference, and why (JSON lines on stdin)",
        _classify_args,
    ),
    "reflect": ("reflecting.reflect", "reflect now: bundle, model, validated commit", _reflect_args),
    "proposals": ("reviewing.proposals", "reflections waiting for review", _init_args),
    "accept": ("reviewing.accept", "apply a proposal to the agent", _proposal_args),
    "reject": ("reviewing.reject", "drop a proposal; its lesson is not proposed again", _proposal_args),
    "unblock": ("reviewing.unblock", "let evolve learn again a lesson line a person undid", _unblock_args),
    "doctor": ("doctor.doctor", "report problems and how to fix them", _doctor_args),
    "watch": ("watching.watch", "watch transcripts and agent repos; run the cycle", _watch_args),
    "cycle": ("watching.cycle", "pick the agents worth reflecting on, and reflect", _cycle_args),
    "model": (
        "model.model",
        "show or choose the model that reflects, and where its API key comes from",
        _model_args,
    ),
    "status": ("lifecycle.status", "watcher, new work per agent, last reflection, next cycle", _json),
    "pause": ("lifecycle.pause", "stop learning for one agent (observing continues)", _init_args),
    "resume": ("lifecycle.resume", "restart learning for a paused agent", _init_args),
    "remove": ("lifecycle.remove", "archive an agent (its repo moved aside, state kept)", _remove_args),
    "prompt": ("prompt.prompt", "what the agent sees at session start: memo and skill index", _prompt_args),
    "pin": ("curate.pin", "pin a skill: evolve never patches, retires or evicts it", _skill_args),
    "unpin": ("curate.unpin", "unpin a skill", _skill_args),
    "restore": ("curate.restore", "bring a retired or evicted skill back from history", _skill_args),
    "prune": ("curate.prune", "evict the least used skills over max_skills now", _prune_args),
    "report": ("report.report", "did learning help? rates around each reflection, per skill", _report_args),
    "install": (
        "integrate.install",
        "connect an agent to Claude Code or Codex: hooks, skill links, sources",
        _install_only_args,
    ),
    "uninstall": ("integrate.uninstall", "remove exactly what `evolve install` added", _install_args),
    "remote": ("syncing.remote", "show, set (and sync once) or --remove an agent's git server", _remote_args),
    "sync": ("syncing.sync", "fetch, integrate and push agents shared through a git server", _sync_args),
    "hook": ("integrate.hook", "(run by agent hooks) handle one hook event; always exits 0", _hook_args),
}


def json_error(message: str, code: int) -> None:
    """A usage or command error as the one JSON line `--json` callers read on stderr."""
    import json

    sys.stderr.write(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False) + "\n")
