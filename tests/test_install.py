"""`evolve install/uninstall claude-code`: merged settings, skill links, excludes, sources.

Reversibility is checked on bytes: a person's settings file, skills folder and
`.git/info/exclude` are byte-identical after install → install → uninstall.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from evolve import cli, launch
from evolve.errors import UserError
from evolve.home import Home
from evolve.integrations import claude_code, hookfile
from evolve.integrations.sources import add_to_sources, transcripts_glob
from evolve.workspace import links
from evolve.workspace.agent import Agent
from tests.helpers import evolve_commit, git, git_out, make_agent, skill_text

USER_SETTINGS = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "~/bin/greet.sh"}]}
        ],
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "ruff format"}]}
        ]
    },
    "env": {"FOO": "b\\u00e4r"}
}"""


def add_skills(agent, *names: str) -> None:
    evolve_commit(agent, {f"skills/{n}/SKILL.md": skill_text(n).encode() for n in names})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my project"  # a space: quoting must hold
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


def snapshot(paths: list[Path]) -> dict:
    """Bytes of files; for folders, every entry (links by target, files by content)."""
    state: dict = {}
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            for entry in sorted(path.rglob("*")):
                key = str(entry)
                state[key] = (
                    ("link", str(entry.readlink()))
                    if entry.is_symlink()
                    else (("dir",) if entry.is_dir() else ("file", entry.read_bytes()))
                )
        elif path.exists():
            state[str(path)] = ("file", path.read_bytes())
        else:
            state[str(path)] = None
    return state


def commands(settings: dict, event: str) -> list[str]:
    return [h["command"] for group in settings["hooks"].get(event, []) for h in group["hooks"]]


@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_twice_then_uninstall_leaves_a_persons_files_byte_identical(scope, project, evolve_home):
    agent = make_agent("demo")
    add_skills(agent, "fix-tests", "deploy-safely")
    home = Home.resolve()
    base = project / ".claude" if scope == "project" else claude_code.claude_dir()
    settings = base / ("settings.local.json" if scope == "project" else "settings.json")
    skills = base / "skills"
    (skills / "my-own-skill").mkdir(parents=True)
    (skills / "my-own-skill" / "SKILL.md").write_text(skill_text("my-own-skill"))
    (skills / "deploy-safely").symlink_to(project)  # someone else's link of the same name
    settings.write_text(USER_SETTINGS)
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_text(exclude.read_text() + "*.log")  # no newline at the end
    before = snapshot([settings, skills, exclude])

    first = claude_code.install(home, "demo", scope, str(project))
    merged = json.loads(settings.read_text())
    assert merged["model"] == "opus" and merged["env"] == {"FOO": "bär"}
    assert commands(merged, "SessionStart")[0] == "~/bin/greet.sh"
    assert commands(merged, "PostToolUse")[0] == "ruff format"
    for event, _matcher, name, _timeout in claude_code.EVENTS:
        ours = [c for c in commands(merged, event) if hookfile.MARK in c]
        assert len(ours) == 1 and f" {name} " in ours[0] and "--agent demo" in ours[0]
    assert settings.read_text().startswith('{\n    "model"')  # the person's indent kept
    assert (skills / "fix-tests").resolve() == (agent.skills_dir / "fix-tests").resolve()
    assert first["conflicts"] == ["deploy-safely"] and first["links"] == ["fix-tests"]
    assert Path(first["backup"]).read_text() == USER_SETTINGS
    if scope == "project":
        block = exclude.read_text().split("*.log\n", 1)[1]
        assert "/.claude/skills/fix-tests\n" in block and "/.claude/settings.local.json\n" in block
        status = git_out(project, "status", "--porcelain", "--untracked-files=all")
        assert "fix-tests" not in status and "settings.local.json" not in status

    after_first = snapshot([settings, skills, exclude])
    second = claude_code.install(home, "demo", scope, str(project))
    assert not second["settings_changed"] and second["sources_commit"] is None
    assert snapshot([settings, skills, exclude]) == after_first

    claude_code.uninstall(home, "demo", scope, str(project))
    assert snapshot([settings, skills, exclude]) == before
    assert links.load_installs(home, "claude-code") == []
    assert (agent.skills_dir / "fix-tests" / "SKILL.md").exists()  # the agent repo stays


def test_install_points_sources_at_the_project_with_a_tilde(project, evolve_home):
    agent = make_agent("demo")
    result = claude_code.install(Home.resolve(), "demo", "project", str(project))
    folder = "".join(c if c.isalnum() else "-" for c in str(project.resolve()))
    assert result["sources"] == f"~/.claude/projects/{folder}/**/*.jsonl"
    text = (agent.path / "agent.toml").read_text()
    assert "# Transcripts that belong to this agent" in text  # comments kept
    assert tomllib.loads(text)["sources"]["claude_code"] == [result["sources"]]
    commit = agent.log(limit=1)[0]
    assert commit.kind == "install" and commit.subject == "install(demo): read Claude Code transcripts"
    assert git_out(agent.path, "status", "--porcelain") == ""
    user = claude_code.install(Home.resolve(), "demo", "user")
    assert user["sources"] == "~/.claude/projects/**/*.jsonl"
    assert tomllib.loads((agent.path / "agent.toml").read_text())["sources"]["claude_code"] == [
        result["sources"],
        user["sources"],
    ]


def test_a_new_project_gets_only_what_uninstall_takes_away_again(project, evolve_home):
    agent = make_agent("demo")
    add_skills(agent, "fix-tests")
    before = snapshot([project])
    home = Home.resolve()
    claude_code.install(home, "demo", "project", str(project))
    assert (project / ".claude" / "skills" / "fix-tests").is_symlink()
    claude_code.uninstall(home, "demo", "project", str(project))
    assert snapshot([project]) == before
    assert not (project / ".claude").exists()


def test_links_follow_skills_as_they_come_and_go(project, evolve_home):
    agent = make_agent("demo")
    add_skills(agent, "fix-tests")
    home = Home.resolve()
    claude_code.install(home, "demo", "project", str(project))
    skills = project / ".claude" / "skills"
    add_skills(agent, "new-skill")
    evolve_commit(agent, {"skills/fix-tests/SKILL.md": None})  # retired
    report = links.sync_links(home, "demo")
    assert report == {"added": ["new-skill"], "removed": ["fix-tests"], "conflicts": []}
    assert sorted(p.name for p in skills.iterdir()) == ["new-skill"]
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert "/.claude/skills/new-skill\n" in exclude and "fix-tests" not in exclude
    assert links.sync_links(home, "other") == {"added": [], "removed": [], "conflicts": []}


def test_uninstall_keeps_another_agents_entries(project, evolve_home):
    add_skills(make_agent("demo"), "fix-tests")
    add_skills(make_agent("other"), "deploy-safely")
    exclude = project / ".git" / "info" / "exclude"
    exclude.write_bytes(b"*.tmp\r\n\xff.log")  # CRLF, not UTF-8, no newline at the end
    before = snapshot([project])
    home = Home.resolve()
    claude_code.install(home, "demo", "project", str(project))
    claude_code.install(home, "other", "project", str(project))
    claude_code.uninstall(home, "demo", "project", str(project))
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    left = [c for event in settings["hooks"] for c in commands(settings, event)]
    assert len(left) == len(claude_code.EVENTS) and all("--agent other" in c for c in left)
    claude_code.uninstall(home, "other", "project", str(project))
    assert snapshot([project]) == before


def test_hook_commands_use_absolute_paths_and_the_linked_flag(project, evolve_home):
    make_agent("demo")
    home = Home.resolve()
    claude_code.install(home, "demo", "project", str(project))
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    start = shlex.split(commands(settings, "SessionStart")[0])
    assert Path(start[0]).is_absolute() and start[1:4] == ["-I", "-c", launch.HOOK]
    assert start[4:] == [
        "claude-code",
        "session-start",
        "--home",
        str(home.root),
        "--agent",
        "demo",
        "--linked",
    ]
    assert hookfile.owner(commands(settings, "Stop")[0]) == (str(home.root), "demo")
    claude_code.install(home, "demo", "project", str(project), link=False)
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert "--linked" not in commands(settings, "SessionStart")[0]
    assert len(commands(settings, "SessionStart")) == 1


def test_bad_settings_are_refused_and_left_alone(project, evolve_home):
    make_agent("demo")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    with pytest.raises(UserError, match="not valid JSON"):
        claude_code.install(Home.resolve(), "demo", "project", str(project))
    assert settings.read_text() == "{ not json"


def test_install_needs_an_existing_agent(project, evolve_home):
    with pytest.raises(UserError, match="evolve init ghost"):
        claude_code.install(Home.resolve(), "ghost", "project", str(project))
    assert not (project / ".claude").exists()


def test_the_cli_installs_and_uninstalls(project, evolve_home, capsys, monkeypatch):
    make_agent("demo")
    monkeypatch.chdir(project)
    assert cli.main(["install", "claude-code", "--agent", "demo", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["settings"] == str(project.resolve() / ".claude" / "settings.local.json")
    assert cli.main(["uninstall", "claude-code", "--agent", "demo"]) == 0
    assert "removed evolve hooks" in capsys.readouterr().out
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(
    "text, expected_tail",
    [
        ("[agent]\nname = 'x'\n", "[agent]\nname = 'x'\n\n[sources]\nclaude_code = [\"a\"]\n"),
        ("[sources]\n# mine\ngeneric = []\n", '[sources]\n# mine\ngeneric = []\nclaude_code = ["a"]\n'),
        (  # ecosystem review: the comments of a multi-line array were dropped
            "[sources]\nclaude_code = [\n  'old',  # a comment\n]\ngeneric = []\n[model]\nname = 'm'\n",
            "[sources]\nclaude_code = [\n  'old',  # a comment\n  \"a\",\n]\n"
            "generic = []\n[model]\nname = 'm'\n",
        ),
        (
            "review = true\r\n[sources]\r\nclaude_code = []  # mine\r\n",
            '[sources]\r\nclaude_code = ["a"]  # mine\r\n',
        ),
    ],
)
def test_adding_a_glob_keeps_every_other_byte(text, expected_tail):
    new = add_to_sources(text, "claude_code", ["a"])
    assert new.endswith(expected_tail) and new.startswith(text.partition("[sources]")[0])
    assert tomllib.loads(new)["sources"]["claude_code"][-1] == "a"


def test_transcripts_glob_escapes_and_shortens(tmp_path):
    weird = tmp_path / "a[b]"
    assert transcripts_glob(weird, None) == f"{str(weird).replace('[', '[[]')}/projects/**/*.jsonl"
    long_project = Path("/" + "x" * 300)
    pattern = transcripts_glob(Path.home() / ".claude", long_project)
    assert pattern.startswith("~/.claude/projects/-xxx") and pattern.endswith("x*/**/*.jsonl")


def test_a_reflection_that_creates_or_retires_skills_moves_the_links(project, evolve_home):
    from evolve.reflect.apply import apply_plan, plan_now

    agent = make_agent("demo")
    add_skills(agent, "old-skill")
    claude_code.install(Home.resolve(), "demo", "project", str(project))
    answer = {
        "summary": "swap skills",
        "operations": [
            {
                "op": "create_skill",
                "name": "run-tests-with-uv",
                "description": "Use when running tests.",
                "body": "1. Run `uv run pytest` before saying tests pass.\n",
            },
            {"op": "retire_skill", "name": "old-skill", "reason": "never used"},
        ],
    }
    plan = plan_now(agent, answer)
    applied = apply_plan(agent, plan, reflection_id="r-1", trailers={})
    assert applied.sha and not applied.plan.rejected and not applied.plan.waiting, applied.plan
    assert sorted(p.name for p in (project / ".claude" / "skills").iterdir()) == ["run-tests-with-uv"]


def test_a_project_inside_a_repository_and_a_deleted_project(project, evolve_home):
    add_skills(make_agent("demo"), "fix-tests")
    home = Home.resolve()
    sub = project / "services" / "api"
    sub.mkdir(parents=True)
    claude_code.install(home, "demo", "project", str(sub))
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert "/services/api/.claude/skills/fix-tests\n" in exclude
    assert "/services/api/.claude/settings.local.json\n" in exclude
    other = project.parent / "gone"
    other.mkdir()
    claude_code.install(home, "demo", "project", str(other))
    other.joinpath(".claude", "settings.local.json").unlink()
    other.joinpath(".claude", "skills", "fix-tests").unlink()
    for folder in (other / ".claude" / "skills", other / ".claude", other):
        folder.rmdir()
    assert links.sync_links(home, "demo")["added"] == [] and not other.exists()
    claude_code.uninstall(home, "demo", "project", str(other))
    assert [i["project"] for i in links.load_installs(home, "claude-code")] == [str(sub)]


def test_doctor_reports_an_install_whose_interpreter_is_gone(tmp_path, capsys) -> None:
    import json as json_mod

    from evolve.cli import main
    from evolve.home import Home
    from evolve.workspace.links import load_installs, save_installs

    project = tmp_path / "proj"
    project.mkdir()
    assert main(["init", "doc"]) == 0
    assert main(["install", "claude-code", "--agent", "doc", "--project", str(project)]) == 0
    home = Home.resolve()
    installs = load_installs(home, "claude-code")
    installs[0]["python"] = str(tmp_path / "gone" / "python")
    save_installs(home, "claude-code", installs)
    capsys.readouterr()
    assert main(["doctor", "--json"]) == 1
    findings = json_mod.loads(capsys.readouterr().out)["findings"]
    assert any("no longer exists" in f["problem"] for f in findings)


def test_a_corrupt_install_record_is_never_overwritten(project, evolve_home, capsys, monkeypatch) -> None:
    """A half-edited integrations/claude-code.json loses nothing: writers refuse, readers say so."""
    add_skills(make_agent("demo"), "fix-tests")
    home = Home.resolve()
    claude_code.install(home, "demo", "project", str(project))
    record = links.registry_file(home, "claude-code")
    broken = record.read_bytes()[:-20]  # an editor crashed mid-save
    record.write_bytes(broken)
    capsys.readouterr()
    for argv in (
        ["install", "claude-code", "--agent", "demo", "--project", str(project)],
        ["uninstall", "claude-code", "--agent", "demo", "--project", str(project)],
    ):
        assert cli.main(argv) == 1, argv
        err = capsys.readouterr().err
        last = err.splitlines()[-1]  # (an upgrade still pending says so on the line before)
        assert last.startswith("evolve: ") and "cannot be read" in last
        assert "evolve leaves it as it is" in last
    assert record.read_bytes() == broken
    evolve_commit(make_agent("other"), {})  # other work goes on
    add_skills(Agent(home, "demo"), "second-skill")  # a commit that syncs links does not fail
    assert record.read_bytes() == broken
    assert cli.main(["status"]) == 0  # reading commands still answer
    capsys.readouterr()
    assert cli.main(["doctor", "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert any(f["where"] == str(record) and "evolve leaves it as it is" in f["problem"] for f in findings)
    assert record.read_bytes() == broken


def test_uninstall_with_a_fifo_for_agent_toml_says_so_and_does_not_wait(project, evolve_home):
    # `[sources]` was read with a plain read: a FIFO where agent.toml belongs held uninstall forever
    import os
    import subprocess
    import sys

    agent = make_agent("demo")
    toml = agent.path / "agent.toml"  # the person named the project's transcripts themselves
    toml.write_text(
        add_to_sources(toml.read_text(), "claude_code", [transcripts_glob(claude_code.claude_dir(), project)])
    )
    git(agent.path, "commit", "-qam", "my sources")
    claude_code.install(Home.resolve(), "demo", "project", str(project))
    (agent.path / "agent.toml").unlink()
    os.mkfifo(agent.path / "agent.toml")
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolve",
            "uninstall",
            "claude-code",
            "--agent",
            "demo",
            "--project",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.returncode not in (0, 3) and ran.stderr.count("\n") == 1, ran.stderr
    assert f"{agent.path / 'agent.toml'} " in ran.stderr or f"{agent.path / 'agent.toml'}:" in ran.stderr
