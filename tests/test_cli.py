"""The command line: every verb reaches one function; documented exit codes; JSON output."""

from __future__ import annotations

import argparse
import inspect
import json

import pytest

from evolve import arguments, cli
from evolve.errors import EXIT_OK, EXIT_USAGE, EXIT_USER
from tests.helpers import evolve_commit, git_out, head, make_agent, skill_text, write_skill


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    assert code == EXIT_OK, err
    return json.loads(out)


def test_every_command_reaches_exactly_one_distinct_function():
    functions = {}
    for name, (target, help_text, configure) in arguments.COMMANDS.items():
        function = arguments.resolve(target)
        assert inspect.isfunction(function), name
        assert function.__module__.startswith("evolve.commands."), name
        assert help_text and callable(configure)
        functions[name] = function
    assert len(set(functions.values())) == len(functions)
    # the parser offers exactly these verbs
    parser = arguments.build_parser()
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(subparsers) == 1 and list(subparsers[0].choices) == list(arguments.COMMANDS)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["no-such-verb"],
        ["log"],
        ["init"],
        ["revert", "demo"],
        ["log", "demo", "--limit", "many"],
        ["agents", "--bogus"],
    ],
)
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == EXIT_USAGE
    assert "usage:" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("evolve ")


def test_init_and_agents(capsys, evolve_home):
    code, out, _ = run(capsys, "agents")
    assert code == EXIT_OK and "no agents" in out
    code, out, _ = run(capsys, "init", "demo")
    assert code == EXIT_OK and "created agent 'demo'" in out
    data = run_json(capsys, "init", "second")
    assert data["name"] == "second" and data["path"] == str(evolve_home / "agents" / "second")
    assert data["head"] == head(evolve_home / "agents" / "second")
    rows = run_json(capsys, "agents")
    assert [r["name"] for r in rows] == ["demo", "second"]
    assert rows[0]["skills"] == 0 and rows[0]["broken_skills"] == 0
    code, out, _ = run(capsys, "agents")
    assert "demo" in out and "second" in out


def test_init_user_errors_exit_1(capsys, evolve_home):
    assert run(capsys, "init", "demo")[0] == EXIT_OK
    code, _, err = run(capsys, "init", "demo")
    assert code == EXIT_USER and "already exists" in err and err.startswith("evolve: error: ")
    code, _, err = run(capsys, "init", "../escape")
    assert code == EXIT_USER and "agent name" in err
    assert not (evolve_home / "escape").exists()


def test_home_option_wins_over_the_environment(capsys, tmp_path, evolve_home):
    other = tmp_path / "other-home"
    assert run(capsys, "--home", str(other), "init", "elsewhere")[0] == EXIT_OK
    assert (other / "agents" / "elsewhere" / ".git").is_dir()
    assert not (evolve_home / "agents" / "elsewhere").exists()


@pytest.mark.parametrize("verb", ["log", "skills", "review", "revert"])
def test_unknown_agent_exits_1(capsys, evolve_home, verb):
    argv = [verb, "nobody"] + (["HEAD"] if verb == "revert" else [])
    code, out, err = run(capsys, *argv)
    assert code == EXIT_USER
    assert "no agent 'nobody'" in err and "evolve init nobody" in err


def test_log_text_and_json(capsys, evolve_home):
    agent = make_agent("demo")
    sha = evolve_commit(
        agent,
        {"skills/s/SKILL.md": skill_text("s").encode()},
        "reflect(demo): learned",
        {"Evolve-Kind": "reflection", "Evolve-Signals": ["user_correction", "complexity"]},
    )
    (agent.path / "mine.md").write_text("x\n")
    agent.commit_human_edits()
    entries = run_json(capsys, "log", "demo")
    assert [e["kind"] for e in entries] == ["human_edit", "reflection", "init"]
    assert entries[1]["sha"] == sha and entries[1]["summary"] == "reflect(demo): learned"
    assert entries[1]["trailers"]["Evolve-Signals"] == "user_correction, complexity"
    assert entries[0]["trailers"]["Evolve-Source"] == "human"
    assert all(e["date"].endswith("Z") for e in entries)
    assert len(run_json(capsys, "log", "demo", "-n", "1")) == 1
    code, out, _ = run(capsys, "log", "demo")
    assert code == EXIT_OK and sha[:12] in out and "reflection" in out


def test_skills_text_and_json(capsys, evolve_home):
    agent = make_agent("demo")
    evolve_commit(agent, {"skills/good/SKILL.md": skill_text("good").encode()})
    evolve_commit(agent, {"skills/good/SKILL.md": skill_text("good", body="- v2\n").encode()})
    write_skill(agent.path, "bad", text="---\nname: nope\ndescription: d\n---\n")
    records = {r["name"]: r for r in run_json(capsys, "skills", "demo")}
    for key in ("name", "description", "created_at", "updated_at", "patch_count"):
        assert key in records["good"]
    assert records["good"]["patch_count"] == 1 and records["good"]["created_at"].endswith("Z")
    assert records["bad"]["valid"] is False
    code, out, _ = run(capsys, "skills", "demo")
    assert code == EXIT_OK
    assert "BROKEN" in out
    assert "skills/bad/SKILL.md: name 'nope' differs from its folder 'bad'" in out


def test_review_shows_diff_and_trailers(capsys, evolve_home):
    agent = make_agent("demo")
    sha = evolve_commit(
        agent,
        {"skills/s/SKILL.md": skill_text("s").encode()},
        "reflect(demo): review me",
        {"Evolve-Kind": "reflection", "Evolve-Score": "0.8"},
    )
    code, out, _ = run(capsys, "review", "demo")
    assert code == EXIT_OK
    assert f"reflection {sha}" in out and "Evolve-Score: 0.8" in out
    assert "+name: s" in out and "skills/s/SKILL.md" in out
    code, _, err = run(capsys, "review", "demo", "nonsense-rev")
    assert code == EXIT_USER and "evolve log" in err


def test_revert_exit_codes_and_json(capsys, evolve_home):
    agent = make_agent("demo")
    target = evolve_commit(agent, {"skills/s/SKILL.md": skill_text("s").encode()})
    data = run_json(capsys, "revert", "demo", target[:8])
    assert data["reverted"] == target and data["commit"] == head(agent.path)
    assert not (agent.path / "skills/s").exists()
    code, _, err = run(capsys, "revert", "demo", git_out(agent.path, "rev-list", "--max-parents=0", "HEAD"))
    assert code == EXIT_USER and "first commit" in err


def test_revert_conflict_exits_1_and_changes_nothing(capsys, evolve_home):
    agent = make_agent("demo")
    target = evolve_commit(agent, {"notes.md": b"one\n"})
    evolve_commit(agent, {"notes.md": b"two\n"})
    before = head(agent.path)
    code, _, err = run(capsys, "revert", "demo", target)
    assert code == EXIT_USER and "cannot revert" in err
    assert head(agent.path) == before and (agent.path / "notes.md").read_text() == "two\n"


def test_doctor_clean_then_broken_skill(capsys, evolve_home):
    code, out, _ = run(capsys, "doctor")
    assert code == EXIT_OK  # no home yet: a hint, not an error
    agent = make_agent("demo")
    code, out, _ = run(capsys, "doctor")
    assert code == EXIT_OK and "all good" in out
    write_skill(agent.path, "broken", text="---\nname: broken\ndescription: [x\n---\n")
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert "demo: skills/broken/SKILL.md: frontmatter is not valid YAML" in out
    code, out, _ = run(capsys, "doctor", "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert {"where": "demo: skills/broken/SKILL.md", "level": "error"}.items() <= data["findings"][0].items()
    # doctor never rewrites the broken file
    assert (agent.path / "skills/broken/SKILL.md").read_text() == "---\nname: broken\ndescription: [x\n---\n"


def test_doctor_warns_about_a_secret_in_a_persons_text_and_leaves_it(capsys, evolve_home):
    agent = make_agent("demo")
    token = "npm_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY" + "Zz12"
    write_skill(agent.path, "publish", body=f"- Publish with NPM_TOKEN={token}\n")
    code, out, _ = run(capsys, "doctor")
    assert code == EXIT_OK  # a warning
    assert "warning: demo: skills/publish/SKILL.md: line 6 holds what looks like a secret (npm-token)" in out
    assert token not in out and token in (agent.path / "skills/publish/SKILL.md").read_text()


def test_doctor_reports_bad_config_and_a_missing_hook(capsys, evolve_home):
    agent = make_agent("demo")
    (evolve_home / "config.toml").write_text("[schedule]\ncycle_hours = -1\n")
    (agent.path / ".git" / "hooks" / "pre-commit").unlink()
    code, out, _ = run(capsys, "doctor")
    assert code == 1
    assert f"{evolve_home / 'config.toml'}: schedule.cycle_hours: must be positive" in out
    assert "demo: agent.toml" not in out  # the home's file is at fault, not the agent's
    assert "pre-commit hook is missing" in out
    assert run(capsys, "doctor", "--fix")[0] == 1  # the config is still broken
    assert (agent.path / ".git" / "hooks" / "pre-commit").exists()
    (evolve_home / "config.toml").write_text("")
    assert run(capsys, "doctor")[0] == EXIT_OK


def test_broken_agent_toml_is_a_user_error_for_commands(capsys, evolve_home):
    agent = make_agent("demo")
    (agent.path / "agent.toml").write_text("[limits]\nmax_skills = 'lots'\n")
    code, _, err = run(capsys, "skills", "demo")
    assert code == EXIT_USER and "agent.toml: limits.max_skills: must be a number" in err
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and "demo: agent.toml" in out
