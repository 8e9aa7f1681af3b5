"""`evolve eval`: each lesson's eval case run with and without the agent's plugin, and recorded.

The harness runs on a clean export of main (`Repo.export`, under the home), never on the
work tree: it writes results into the plugin's folder, and a person's uncommitted edit is no
lesson yet. Case folders are named by lesson id (`evals/<lesson id>/`), so each result is
recorded against that lesson, with the commit that last wrote it and main's tip, in state.db
(`ledger.record_evals`). The export's memo reaches the with-arm through the plugin's own
SessionStart hook, which finds it from `${CLAUDE_PLUGIN_ROOT}`: the sandbox strips HOME and
EVOLVE_HOME but keeps PATH, so the `evolve` running this is put first on it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evolve.clock import stamp
from evolve.errors import UserError
from evolve.evaluate import harness
from evolve.evaluate.results import FULL, PARTIAL, CaseResult, case_results, load_errors
from evolve.store import ledger
from evolve.store.files import atomic_write
from evolve.workspace import lessons as lessons_mod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from evolve.workspace.agent import Agent
    from evolve.workspace.lessons import Lesson

EVALS = "evals"
MANIFEST = ".claude-plugin/plugin.json"
# The built-in tools a case may ask to be granted (its prompt.md's `allowed_tools`): the
# harness gates them behind the operator's `--allow-tools`; MCP tools are never granted here.
MAX_RESULTS = 64 << 20  # bytes of aggregate-result.json or report.html read, at most
GRANTABLE = frozenset(
    {"Bash", "Edit", "MultiEdit", "Write", "NotebookEdit", "Read", "Glob", "Grep", "WebFetch"}
)


@dataclass(frozen=True)
class Ask:
    """What the person asked for: one lesson or all, runs per arm, a cost ceiling in USD."""

    lesson: str | None = None
    runs: int | None = None
    max_cost_usd: float | None = None


def case_names(agent: Agent, tip: str) -> list[str]:
    """The case folders on main: `evals/<name>/` holding a prompt.md or a case.yaml."""
    found = set()
    for path in agent.repo.tree_entries(tip, [EVALS]):
        parts = path.split("/")
        if len(parts) == 3 and parts[2] in ("prompt.md", "case.yaml") and parts[1] != "results":
            found.add(parts[1])
    return sorted(found)


def granted_tools(agent: Agent, tip: str, names: list[str]) -> list[str]:
    """The built-in tools the cases' prompt.md ask for (`allowed_tools`), to grant the harness.

    The harness runs a case's tools only when the operator grants them too; a case names
    them so its graders can pass (a `tool_used Write` needs Write). What is not a built-in
    tool of GRANTABLE is left out: the harness then says the grader cannot pass.
    """
    from evolve.workspace.skills import parse_frontmatter, split_frontmatter

    blobs = agent.repo.read_blobs([f"{tip}:{EVALS}/{name}/prompt.md" for name in names])
    wanted: dict[str, None] = {}
    for raw in blobs.values():
        front, _body = split_frontmatter((raw or b"").decode("utf-8", "replace"))
        data, _problems = parse_frontmatter(front) if front is not None else ({}, [])
        tools = data.get("allowed_tools")
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, str) and tool in GRANTABLE:
                wanted[tool] = None
    return sorted(wanted)


def lessons_at(agent: Agent, tip: str, names: list[str]) -> dict[str, Lesson]:
    """Case name → the lesson it proves at main (a memo bullet by id, else a skill by name)."""
    snapshot = lessons_mod.at_commit(agent.repo, tip)
    memo = snapshot.memo()
    skills = snapshot.skills([n for n in names if n not in memo])
    return {n: lesson for n in names if (lesson := memo.get(n) or skills.get(n)) is not None}


def evaluate(agent: Agent, ask: Ask, progress: Callable[[str], None] = lambda _line: None) -> dict:
    """Run the cases on main's export and record each lesson's result; the summary as data.

    UserError (nothing runs, nothing recorded) when Claude Code or its eval command is
    missing, main has no plugin manifest or no case, or `ask.lesson` has no case.
    """
    claude = harness.find_claude(agent.config.eval.claude)
    env = dict(os.environ)  # the person's own credential, as it is
    usage = harness.eval_help(claude, env)
    if ask.max_cost_usd is not None and "--max-cost-usd" not in usage:
        raise UserError(f"{claude}'s plugin eval has no --max-cost-usd; update Claude Code or run without it")
    tip, names = _cases(agent, ask)
    granted = granted_tools(agent, tip, names)
    lessons = lessons_at(agent, tip, names)
    origins = lessons_mod.origins(agent, list(lessons.values()))
    runs = f"{ask.runs} run(s)" if ask.runs else "the case's runs (3 by default)"
    ceiling = "" if ask.max_cost_usd is None else f", at most ${ask.max_cost_usd:g}"
    started = time.monotonic()
    aggregate, finished, report = _run(
        agent,
        tip,
        [str(claude), *_options(ask, granted)],
        env,
        lambda: progress(
            f"running {len(names)} eval case(s) of {agent.name!r} at {tip[:10]}, {runs} with the agent "
            f"and as many without (claude plugin eval{ceiling}"
            + (f"; the cases are granted {', '.join(granted)}" if granted else "")
            + ")"
        ),
    )
    results = case_results(aggregate, names, ask.runs, load_errors(finished.stderr))
    if finished.interrupted and not aggregate.get("partial"):  # stopped before it could say so
        results = [_stopped(r) for r in results]
    at = time.time()
    run_id = uuid.uuid4().hex[:12]
    rows = [_row(r, lessons.get(r.case), origins) for r in results]
    recorded = [row for row in rows if row["lesson"] is not None]
    with ledger.opened(agent.home.state_db) as conn:
        ledger.record_evals(conn, agent.name, run_id, at, tip, recorded)
    return {
        "agent": agent.name,
        "run_id": run_id,
        "at": stamp(at),
        "tip": tip,
        "claude": str(claude),
        "claude_version": aggregate.get("claudeVersion"),
        "runs": ask.runs,
        "max_cost_usd": ask.max_cost_usd,
        "granted_tools": granted,
        "partial": bool(aggregate.get("partial")) or finished.interrupted,
        "partial_reason": aggregate.get("partialReason") or ("interrupted" if finished.interrupted else None),
        "interrupted": finished.interrupted,
        "cost_usd": round(sum(r.cost_usd for r in results), 6),
        "wall_s": round(time.monotonic() - started, 1),
        "report": str(report) if report else None,
        "lessons": [_public(row) for row in recorded],
        "unmatched": [row["case"] for row in rows if row["lesson"] is None],
    }


def _cases(agent: Agent, ask: Ask) -> tuple[str, list[str]]:
    """Main's tip and the cases to run there; UserError when main is no plugin or has none."""
    repo = agent.repo
    tip = repo.tip()
    if tip is None:
        raise UserError(f"agent {agent.name!r} has no commit on main yet: nothing to evaluate")
    if MANIFEST not in repo.tree_entries(tip, [MANIFEST]):
        raise UserError(
            f"main of agent {agent.name!r} has no {MANIFEST}, so Claude Code cannot load it as a plugin; "
            "run `evolve doctor --fix` to bring the agent up to date"
        )
    names = case_names(agent, tip)
    if ask.lesson is not None and ask.lesson not in names:
        raise UserError(
            f"lesson {ask.lesson!r} has no eval case on main ({EVALS}/{ask.lesson}/); "
            f"`evolve lessons {agent.name}` lists the lessons"
        )
    if not names:
        raise UserError(
            f"agent {agent.name!r} has no eval case on main yet ({EVALS}/<lesson id>/prompt.md and "
            "graders/*.md); a reflection writes one beside each lesson it learns from evidence"
        )
    return tip, [ask.lesson] if ask.lesson is not None else names


def _run(
    agent: Agent, tip: str, command: list[str], env: dict[str, str], starting: Callable[[], None]
) -> tuple[dict, harness.Finished, Path | None]:
    """The harness on an export of `tip` under the home (deleted afterwards): its results.

    `command`: `claude` and the options; the export (the plugin) and the results folder are
    added here; `starting` is called once the export is made. KeyboardInterrupt when it was
    stopped before writing anything; UserError when it ended without results otherwise.
    """
    home = agent.home
    home.run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"eval-{agent.name}-", dir=home.run_dir) as scratch:
        root = Path(scratch)
        plugin, out = root / "plugin", root / "results"
        agent.repo.export(tip, plugin)
        argv = [command[0], "plugin", "eval", str(plugin), *command[1:], "--output-dir", str(out)]
        starting()
        finished = harness.run(argv, plugin, _with_evolve(env, root), root / "harness.log")
        aggregate = _read(out / "aggregate-result.json")
        if aggregate is None:
            if finished.interrupted:
                raise KeyboardInterrupt
            last = next((ln for ln in reversed(finished.stderr.splitlines()) if ln.strip()), "")
            raise UserError(
                f"claude plugin eval ended ({finished.code}) without results: {last.strip()[:300]}; "
                "nothing was recorded"
            )
        return aggregate, finished, _keep_report(home.cache_dir / agent.name, out / "report.html")


def _options(ask: Ask, granted: list[str]) -> list[str]:
    """`claude plugin eval`'s options for what was asked (the baseline arm always)."""
    options = ["--trust-plugin", "--ablation", "with-without"]
    if granted:
        options += ["--allow-tools", *granted]
    options += ["--threshold", "0", "--no-publish"]  # scores are read from the results, not judged
    if ask.runs is not None:
        options += ["--runs", str(ask.runs)]
    if ask.max_cost_usd is not None:
        options += ["--max-cost-usd", f"{ask.max_cost_usd:g}"]
    if ask.lesson is not None:
        options += ["--case", ask.lesson]
    return options


def _with_evolve(env: dict[str, str], root: Path) -> dict[str, str]:
    """`env` with this `evolve` first on PATH (alone in its folder): the plugin's hooks call it."""
    script = Path(sys.executable).parent / "evolve"
    if not script.exists():
        return env
    folder = root / "bin"
    folder.mkdir()
    (folder / "evolve").symlink_to(script)
    return {**env, "PATH": os.pathsep.join([str(folder), env.get("PATH", os.defpath)])}


def _bytes(path: Path, cap: int) -> bytes | None:
    """At most `cap` + 1 bytes of the file the harness wrote at `path`; None when there is none.

    A link (the file or its folder) is never followed: what is read comes from the run's folder.
    """
    if path.parent.is_symlink():
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(cap + 1)


def _read(path: Path) -> dict | None:
    """The harness's aggregate-result.json; None when it wrote none, UserError when it is unusable."""
    if path.is_symlink() or path.parent.is_symlink():
        raise UserError(
            f"claude plugin eval left {path.name} as a link out of its run's folder; evolve reads only "
            "the run's own files: nothing was recorded"
        )
    raw = _bytes(path, MAX_RESULTS)
    if raw is None:
        return None
    why = f"it is over {MAX_RESULTS:,} bytes" if len(raw) > MAX_RESULTS else None
    data = None
    if why is None:
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            why = f"it is not JSON ({type(exc).__name__}: {str(exc)[:100]})"
    if why is None and not isinstance(data, dict):
        why = "it is not a JSON object"
    if why is not None:
        raise UserError(
            f"claude plugin eval wrote an {path.name} evolve cannot read ({why}); nothing was recorded"
        )
    return data


def _keep_report(folder: Path, report: Path) -> Path | None:
    """The harness's HTML report, kept as the agent's latest (the rest of the export goes)."""
    data = _bytes(report, MAX_RESULTS)
    if data is None or len(data) > MAX_RESULTS:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "eval-report.html"
    atomic_write(target, data)
    return target


def _stopped(result: CaseResult) -> CaseResult:
    if result.status != FULL:
        return result
    return CaseResult(**{**result.__dict__, "status": PARTIAL, "detail": "interrupted"})


def _row(result: CaseResult, lesson: Lesson | None, origins: dict) -> dict:
    origin = origins.get(lesson.key) if lesson else None
    return {
        "case": result.case,
        "kind": lesson.kind if lesson else None,
        "lesson": lesson.id if lesson else None,
        "text": lesson.text.strip().split("\n", 1)[0][:120] if lesson and lesson.kind == "memo" else "",
        "status": result.status,
        "score_with": result.score_with,
        "score_without": result.score_without,
        "delta": result.delta,
        "runs_with": result.runs_with,
        "runs_without": result.runs_without,
        "cost_usd": result.cost_usd,
        "commit_sha": origin.commit if origin else None,
        "detail": result.detail,
    }


def _public(row: dict) -> dict:
    out = {k: v for k, v in row.items() if k not in ("case", "commit_sha")}
    out["commit"] = row["commit_sha"]
    return out
