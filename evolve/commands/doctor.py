"""`evolve doctor`: everything that is wrong, each with its remedy."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from evolve import config as config_mod
from evolve.commands import doctor_checks as checks
from evolve.commands.output import emit_json, say
from evolve.errors import ConfigError, UserError
from evolve.home import Home
from evolve.store import ledger, spool
from evolve.store.diagnosis import no_repository_in
from evolve.store.git import GitError
from evolve.sync.status import remote_problems
from evolve.transcripts.redact import secret_warnings
from evolve.workspace import skills as skills_mod
from evolve.workspace.agent import Agent
from evolve.workspace.folders import broken_links, linked_folders, list_agents, lost_agents, misnamed_agents
from evolve.workspace.hold import hold_of
from evolve.workspace.template import hooks_problems


def _without(path: Path, message: str) -> str:
    """A ConfigError's message without its leading `path: ` (the finding names the place once)."""
    return message.removeprefix(f"{path}: ")


def _remedied(problem: str, remedy: str) -> str:
    """The problem with a remedy, unless it names one already."""
    return problem if "; " in problem or "run `" in problem else f"{problem}; {remedy}"


def _skill_remedy(problem: str, rel: str) -> str:
    if problem.endswith("SKILL.md is missing"):
        return f"add {rel} with name and description frontmatter, or delete the empty folder"
    if "symlink" in problem:
        return "replace the link with a real folder (evolve never writes through links)"
    return f"fix it in {rel}; until then the skill is left out of the session's skill index"


def diagnose(home: Home, leftover: list[Path] | None = None) -> list[dict]:
    """Findings as {where, problem, level} dicts; level is 'error', 'warning', 'hint' or 'ok'.

    'ok' says something works that could silently not (a Codex install whose hooks run).
    """
    found: list[dict] = []

    def add(where: str, problem: str, level: str = "error") -> None:
        found.append({"where": where, "problem": problem, "level": level})

    if shutil.which("git") is None:
        add("git", "git is not on PATH; install git")
    if not home.root.exists():
        add(str(home.root), "the evolve home does not exist yet; run `evolve init NAME`", "hint")
        return found
    if home.read_only():
        add(
            str(home.root),
            "the evolve home is read-only: reading commands work, but nothing is observed, "
            "reflected or committed; remount it read-write or give this user write permission",
        )
    for path in spool.not_regular(home.spool_dir):
        kind = "folder" if path == home.spool_dir else "regular file"
        lost = f"is not a {kind}: the hooks' lines sent to it are lost"
        add(str(path), f"{lost}; remove it (the hooks make a new one)")
    try:
        home_config = config_mod.load(home.config_file)
    except ConfigError as exc:
        add(str(home.config_file), f"{_without(home.config_file, str(exc))}; fix it in this file")
        home_config = config_mod.Config()
    for warning in home_config.warnings:  # a pattern dropped, say
        add(str(home.config_file), _without(home.config_file, warning), "warning")
    if os.environ.get("ANTHROPIC_API_KEY") and home_config.model.backend == "offline":
        add(
            "model",
            "ANTHROPIC_API_KEY is set but evolve uses the offline reflector; to let "
            "evolve send bundles to Anthropic, run `evolve model anthropic`",
            "hint",
        )
    if home_config.eval.claude:  # `evolve eval` would stop on it: say so before it is needed
        from evolve.evaluate.harness import find_claude

        try:
            find_claude(home_config.eval.claude)
        except UserError as exc:
            add("eval", str(exc))
    agents = list_agents(home)
    for name in lost_agents(home):
        add(f"{name}: .git", no_repository_in(home.agent_dir(name)))
    for folder in misnamed_agents(home):
        add("agents", folder.said())
    for said in [link.said() for link in linked_folders(home)] + [link.said() for link in broken_links(home)]:
        add("agents", said, "warning")
    checks.installs(home, agents, add)
    _check_codex_trust(home, add)
    with ledger.opened(home.state_db) as conn:
        syncs = ledger.sync_rows(conn)
    checks.global_hooks_path(home, agents, add)
    configs: dict[str, config_mod.Config] = {}
    for name in agents:
        agent = Agent(home, name)
        toml = agent.path / "agent.toml"
        try:  # the agent's own files alone, so a broken home config is not blamed on them
            for warning in config_mod.load(None, toml, agent.local_config_path).warnings:
                add(f"{name}: agent.toml", _without(toml, warning), "warning")
        except ConfigError as exc:
            add(f"{name}: agent.toml", f"{_without(toml, str(exc))}; fix it in {toml}")
        try:
            configs[name] = agent.config
            limits = agent.config.limits
        except ConfigError:  # reported above; keep checking skills, memo and hook
            limits = config_mod.LimitsConfig()
        found_skills = skills_mod.list_skills(agent.skills_dir, limits.skill_body_tokens)
        for skill in found_skills:
            rel = str(skill.path.relative_to(agent.path))
            for problem in skill.problems:
                add(f"{name}: {rel}", _remedied(problem, _skill_remedy(problem, rel)))
            for difference in skills_mod.reading_differences(skill):
                add(f"{name}: {rel}", difference, "warning")
            for warning in secret_warnings(skill.text):
                add(f"{name}: {rel}", warning, "warning")
        if len(found_skills) > limits.max_skills:  # a person's additions: reported, never cut
            add(
                f"{name}: skills/",
                f"{len(found_skills)} skills, over max_skills = "
                f"{limits.max_skills}; run `evolve prune {name}` or raise the limit",
                "warning",
            )
        for rel, problem in _case_problems(agent.path):
            add(f"{name}: {rel}", f"{problem}; fix it there (the pre-commit hook checks a case)", "warning")
        for problem in agent.memo_problems(limits.memo_section_chars):
            add(f"{name}: memo.md", _remedied(problem, "fix it in memo.md (the pre-commit hook checks it)"))
        for warning in secret_warnings(agent.memo_to_parse()):
            add(f"{name}: memo.md", warning, "warning")
        checks.guards(name, agent, add)
        checks.symlinks(name, agent.path, add)
        if checks.repository(name, agent.path, add):  # else git answers for no repository of its own
            try:
                held = hold_of(agent)  # nothing is learned until the person's git work ends
                if held:
                    add(f"{name}: git", held.reason, "warning")
                for problem in remote_problems(agent, syncs.get(name)):
                    add(f"{name}: remote", problem)
            except GitError as exc:  # a damaged index or lost objects: one finding, doctor goes on
                checks.git_failure(name, agent.path, exc, add)
            for problem in hooks_problems(agent.path, home.root):
                add(f"{name}: .git/hooks/pre-commit", f"{problem}; run `evolve doctor --fix`", "warning")
    checks.report_leftovers(home, checks.leftovers(home, agents) if leftover is None else leftover, add)
    checks.environment(home, agents, configs, add)
    return found


def _case_problems(root: Path) -> list[tuple[str, str]]:
    """(path, problem) of each eval case file that breaks the schema (committed with --no-verify)."""
    from evolve.reflect.evalcase import EVALS, case_lesson, file_problems

    found = []
    for path in sorted((root / EVALS).glob("*/**/*.md")):
        rel = path.relative_to(root).as_posix()
        if case_lesson(rel) is None or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [(rel, problem.removeprefix(f"{rel}: ")) for problem in file_problems(rel, text)]
    return found


def _check_codex_trust(home: Home, add) -> None:
    from evolve.integrations import codex
    from evolve.observe.records import drain_pending
    from evolve.workspace.links import UnreadableInstalls, load_installs

    try:
        if not load_installs(home, "codex"):
            return
    except UnreadableInstalls:  # reported above
        return
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)  # the hooks' own records are the evidence
    for state in codex.install_states(home):
        where = f"codex install of {state['agent']} ({state['folder']})"
        if state["state"] == codex.WAITING:
            add(
                where,
                f"{codex.WAITING}: Codex ran a session here but not evolve's hooks; {codex.TRUST_HINT}",
                "warning",
            )
        elif state["state"] == codex.WORKING:
            add(where, codex.WORKING, "ok")
        else:
            add(where, f"{state['state']}; {codex.TRUST_HINT} when you start it", "hint")


def _upgrade_finding(note: str) -> dict:
    """One note of the upgrade as a finding: what it fixed, or (Unfinished) what it left as it was."""
    from evolve.integrations.upgrade import Unfinished

    where, _, what = note.partition(": ")
    if isinstance(note, Unfinished):
        return {"where": where, "problem": what, "level": "warning"}
    return {"where": where, "problem": f"fixed: {what}", "level": "hint"}


def doctor(home: Home, as_json: bool = False, fix: bool = False) -> int:
    from evolve.integrations.upgrade import ensure_current

    # what an older evolve installed, brought up to date (nothing can be, in a read-only home)
    fixed = [] if home.read_only() else ensure_current(home, force=fix)
    leftover = checks.leftovers(home, list_agents(home)) if home.root.exists() else []
    if fix and leftover and not home.read_only():
        fixed += checks.fix_leftovers(leftover)
        leftover = []
    found = [_upgrade_finding(note) for note in fixed] + diagnose(home, leftover)
    errors = [f for f in found if f["level"] == "error"]
    if as_json:
        emit_json({"ok": not errors, "findings": found})
    else:
        for finding in found:
            say(f"{finding['level']}: {finding['where']}: {finding['problem']}")
        if all(f["level"] in ("hint", "ok") for f in found):  # nothing is wrong
            say(f"all good: {home.root}" + (f" ({len(found)} hint(s) above)" if found else ""))
    return 1 if errors else 0
