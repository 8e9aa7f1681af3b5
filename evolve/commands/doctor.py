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
from evolve.workspace.agent import HOOK_MARKER, Agent, list_agents


def diagnose(home: Home) -> list[dict]:
    """Findings as {where, problem, level} dicts; level is 'error', 'warning' or 'hint'."""
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
        hook = agent.path / ".git" / "hooks" / "pre-commit"
        if not hook.exists() or HOOK_MARKER not in hook.read_text(errors="replace"):
            add(
                f"{name}: .git/hooks/pre-commit",
                "evolve's pre-commit hook is missing; run `evolve doctor --fix`",
                "warning",
            )
    return found


def _check_installs(home: Home, add) -> None:
    """Claude Code installs whose interpreter or settings entries have gone away."""
    import json as json_mod

    from evolve.workspace.links import load_installs

    for record in load_installs(home):
        where = f"claude-code install of {record.get('agent')} ({record.get('settings')})"
        python = record.get("python") or ""
        if python and not Path(python).exists():
            add(
                where,
                f"its hooks run {python}, which no longer exists; run `evolve install "
                "claude-code` again from the environment evolve is installed in",
            )
        try:
            settings = json_mod.loads(Path(record.get("settings") or "").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            add(
                where,
                "the settings file is missing or not valid JSON; run `evolve install claude-code` again",
                "warning",
            )
            continue
        if "evolve.hookmain" not in json_mod.dumps(settings.get("hooks", {})):
            add(
                where,
                "evolve's hook entries were removed from the settings file; run "
                "`evolve install claude-code` again or `evolve uninstall claude-code`",
                "warning",
            )


def doctor(home: Home, as_json: bool = False, fix: bool = False) -> int:
    if fix:
        from evolve.workspace.agent import install_precommit_hook

        for name in list_agents(home):
            install_precommit_hook(home.agent_dir(name), home.root)
    found = diagnose(home)
    errors = [f for f in found if f["level"] == "error"]
    if as_json:
        emit_json({"ok": not errors, "findings": found})
    elif not found:
        say(f"all good: {home.root}")
    else:
        for finding in found:
            say(f"{finding['level']}: {finding['where']}: {finding['problem']}")
    return 1 if errors else 0
