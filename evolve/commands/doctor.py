"""`evolve doctor`: everything that is wrong, each with its remedy."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from evolve import config as config_mod
from evolve.commands.output import emit_json, say
from evolve.errors import ConfigError
from evolve.home import Home
from evolve.transcripts.redact import secret_warnings
from evolve.workspace import memo as memo_mod
from evolve.workspace import skills as skills_mod
from evolve.workspace.agent import Agent, list_agents
from evolve.workspace.template import hooks_problems


def diagnose(home: Home) -> list[dict]:
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
    try:
        home_config = config_mod.load(home.config_file)
    except ConfigError as exc:
        add(str(home.config_file), str(exc))
        home_config = config_mod.Config()
    if os.environ.get("ANTHROPIC_API_KEY") and home_config.model.backend == "offline":
        add(
            "model",
            "ANTHROPIC_API_KEY is set but evolve uses the offline reflector; to let "
            'evolve send bundles to Anthropic, set [model] backend = "anthropic" in '
            f"{home.config_file}",
            "hint",
        )
    _check_installs(home, add)
    for name in list_agents(home):
        agent = Agent(home, name)
        try:  # the agent's own file alone, so a broken home config is not blamed on it
            for warning in config_mod.load(None, agent.path / "agent.toml").warnings:
                add(f"{name}: agent.toml", warning, "warning")
        except ConfigError as exc:
            add(f"{name}: agent.toml", str(exc))
        try:
            limits = agent.config.limits
        except ConfigError:  # reported above; keep checking skills, memo and hook
            limits = config_mod.LimitsConfig()
        found_skills = skills_mod.list_skills(agent.skills_dir, limits.skill_body_tokens)
        for skill in found_skills:
            for problem in skill.problems:
                add(f"{name}: {skill.path.relative_to(agent.path)}", problem)
            for difference in skills_mod.reading_differences(skill):
                add(f"{name}: {skill.path.relative_to(agent.path)}", difference, "warning")
            for warning in secret_warnings(skill.text):
                add(f"{name}: {skill.path.relative_to(agent.path)}", warning, "warning")
        if len(found_skills) > limits.max_skills:  # a person's additions: reported, never cut
            add(
                f"{name}: skills/",
                f"{len(found_skills)} skills, over max_skills = "
                f"{limits.max_skills}; run `evolve prune {name}` or raise the limit",
                "warning",
            )
        for problem in memo_mod.problems(agent.memo_text(), limits.memo_section_chars):
            add(f"{name}: memo.md", problem)
        for warning in secret_warnings(agent.memo_text()):
            add(f"{name}: memo.md", warning, "warning")
        for problem in hooks_problems(agent.path, home.root):
            add(f"{name}: .git/hooks/pre-commit", f"{problem}; run `evolve doctor --fix`", "warning")
    return found


def _check_installs(home: Home, add) -> None:
    """Installs whose interpreter or hook entries have gone away; whether Codex runs its hooks."""
    import json as json_mod

    from evolve.workspace.links import HARNESSES, UnreadableInstalls, load_installs, registry_file

    for harness in HARNESSES:
        try:
            records = load_installs(home, harness)
        except UnreadableInstalls as exc:
            add(str(registry_file(home, harness)), str(exc).split(" cannot be read ", 1)[-1])
            continue
        for record in records:
            place = record.get("folder") or record.get("settings")  # Codex: its folder; Claude Code: its file
            where = f"{harness} install of {record.get('agent')} ({place})"
            python = record.get("python") or ""
            if python and not Path(python).exists():
                add(
                    where,
                    f"its hooks run {python}, which no longer exists; run `evolve install "
                    f"{harness}` again from the environment evolve is installed in",
                )
            try:
                settings = json_mod.loads(Path(record.get("settings") or "").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                add(
                    where,
                    f"the hooks file is missing or not valid JSON; run `evolve install {harness}` again",
                    "warning",
                )
                continue
            if "evolve.hookmain" not in json_mod.dumps(settings.get("hooks", {})):
                add(
                    where,
                    f"evolve's hook entries were removed from {record.get('settings')}; run "
                    f"`evolve install {harness}` again or `evolve uninstall {harness}`",
                    "warning",
                )
    _check_codex_trust(home, add)


def _check_codex_trust(home: Home, add) -> None:
    from evolve.integrations import codex
    from evolve.observe.records import drain_pending
    from evolve.store import ledger
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


def doctor(home: Home, as_json: bool = False, fix: bool = False) -> int:
    from evolve.integrations.upgrade import ensure_current

    fixed = ensure_current(home, force=fix)  # what an older evolve installed, brought up to date
    found = [
        {"where": note.partition(": ")[0], "problem": f"fixed: {note.partition(': ')[2]}", "level": "hint"}
        for note in fixed
    ] + diagnose(home)
    errors = [f for f in found if f["level"] == "error"]
    if as_json:
        emit_json({"ok": not errors, "findings": found})
    elif not found:
        say(f"all good: {home.root}")
    else:
        for finding in found:
            say(f"{finding['level']}: {finding['where']}: {finding['problem']}")
    return 1 if errors else 0
