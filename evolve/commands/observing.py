"""`evolve observe` and `evolve score`: transcripts → runs → scored signals, no model."""

from __future__ import annotations

import sys
from pathlib import Path

from evolve.commands.output import emit_json, say, table
from evolve.errors import UserError
from evolve.home import Home
from evolve.observe import ingest as observe_mod
from evolve.schedule import pending
from evolve.store import ledger
from evolve.transcripts import classify, overlong, reader
from evolve.workspace.agent import Agent


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def observe(home: Home, name: str, paths: list[str], fmt: str | None = None, as_json: bool = False) -> int:
    agent = Agent.open(name, home)
    if paths:
        files = []
        for raw in paths:
            path = Path(raw).expanduser().absolute()
            if not path.is_file():
                raise UserError(f"{raw}: no such transcript file")
            files.append((str(path), fmt or observe_mod.guess_format(path)))
    else:
        files = observe_mod.source_files(agent.config.sources)
        if not files:
            raise UserError(
                f"agent {name!r} has no transcript sources; add globs under [sources] in "
                f"{agent.path / 'agent.toml'} or pass transcript paths"
            )
    show = _progress if sys.stderr.isatty() and len(files) > 10 and not as_json else None
    classifier = classify.for_signals(agent.config.signals)
    with ledger.opened(home.state_db) as conn:
        result = observe_mod.observe(conn, name, files, progress=show, classifier=classifier)
    if as_json:
        emit_json(result.to_dict())
        return 0
    cap = f"over the line cap ({reader.MAX_LINE >> 20} MB)"
    say(
        f"observed {len(result.files)} file(s): {result.runs} run(s) added or updated"
        + (f", {result.bad_lines} corrupt line(s) skipped" if result.bad_lines else "")
        + (
            f", {result.over_cap} line(s) {cap} read with each text cut to its first "
            f"{overlong.STRING_CAP >> 10} kB"
            if result.over_cap
            else ""
        )
        + (f", {result.over_cap_skipped} line(s) {cap} skipped" if result.over_cap_skipped else "")
    )
    for item in result.files:
        if item.error:
            say(f"  {item.path}: {item.error}")
        elif item.reset:
            say(f"  {item.path}: rewritten or replaced; read again from the start")
    return 0


def catch_up(home: Home, names: list[str]) -> None:
    """What the agents' sessions wrote since, read before judging them (see observe.catchup).

    A read-only home is judged as it stands: nothing can be recorded there.
    """
    from evolve.observe.catchup import catch_up as read_new
    from evolve.watch import service

    if home.read_only():
        return

    watched = service.state(home).running
    with ledger.opened(home.state_db) as conn:
        result = read_new(conn, home, names, sources=not watched)
    for problem in result.problems:
        sys.stderr.write(f"evolve: warning: {problem}\n")


def _why(cue: str, width: int = 60) -> str:
    """A correction's or preference's cue, cut to fit a table column."""
    return cue if len(cue) <= width else cue[: width - 1] + "…"


def score(home: Home, name: str, all_runs: bool = False, as_json: bool = False) -> int:
    agent = Agent.open(name, home)
    catch_up(home, [name])
    with ledger.opened(home.state_db) as conn:
        runs = pending.scored_runs(
            conn, name, agent.config, agent.memo_to_parse(), all_runs=all_runs, judge=agent
        )
    if as_json:
        emit_json([r.to_dict() for r in runs])
        return 0
    if not runs:
        say(f"no runs observed for {name!r} since its last reflection")
        return 0
    rows = []
    for r in runs:
        d = r.to_dict()
        rows.append(
            [
                d["session"][:8],
                str(d["run"]),
                d["source"],
                d["started_at"] or "-",
                f"{r.score:.2f}",
                "yes" if r.reflect else "",
                ", ".join(r.signals) or "-",
                _why(d["correction_cue"] or d["preference_cue"] or ""),
            ]
        )
    say(table(rows, ["SESSION", "RUN", "SOURCE", "STARTED", "SCORE", "REFLECT", "SIGNALS", "HEARD"]))
    worth = sum(r.reflect for r in runs)
    say(f"\n{len(runs)} run(s), {worth} worth reflecting on (score > {agent.config.signals.threshold:g})")
    return 0
