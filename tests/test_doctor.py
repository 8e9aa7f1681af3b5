"""`evolve doctor` (C2): each place named once, a remedy for every finding, and what it missed.

Also `evolve remove` of an installed agent (B11): its installs go with it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve import cli
from evolve import config as config_mod
from evolve.errors import EXIT_OK, UserError
from evolve.home import Home
from evolve.workspace.template import hooks_folder, precommit_hook_text
from tests.helpers import git, make_agent, write_skill


def doctor(capsys, *extra: str) -> tuple[int, list[dict]]:
    code = cli.main(["doctor", "--json", *extra])
    return code, json.loads(capsys.readouterr().out)["findings"]


def about(findings: list[dict], where: str) -> list[dict]:
    return [f for f in findings if f["where"] == where]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


def test_each_place_is_named_once_and_every_finding_has_a_remedy(capsys, evolve_home):
    """C2: `config.toml: <path>/config.toml: model.backend: …`; YAML errors without a line."""
    agent = make_agent("a")
    (evolve_home / "config.toml").write_text("[model]\nbackend = 'gpt'\n")
    (agent.path / "agent.toml").write_text('review = "maybe"\n')
    write_skill(agent.path, "broken", text="---\nname: broken\ndescription: [x, y\nmore: 1\n---\n\nbody\n")
    (agent.skills_dir / "empty").mkdir()
    code, findings = doctor(capsys)
    assert code == 1
    [home_config] = about(findings, str(evolve_home / "config.toml"))
    assert home_config["problem"].startswith("model.backend: must be one of")
    [agent_toml] = about(findings, "a: agent.toml")
    assert agent_toml["problem"].startswith("review: must be true or false; fix it in ")
    [yaml_error] = about(findings, "a: skills/broken/SKILL.md")
    assert "not valid YAML at line 4 of SKILL.md" in yaml_error["problem"]
    [missing] = about(findings, "a: skills/empty/SKILL.md")
    assert "delete the empty folder" in missing["problem"]
    for finding in findings:
        assert str(finding["where"]) not in finding["problem"], finding
        assert "; " in finding["problem"] or "run `" in finding["problem"], finding  # a remedy


def test_a_pattern_the_home_config_cannot_use_is_a_warning_naming_key_and_reason(capsys, evolve_home):
    """A5: a refused pattern is left out, said once; the rest of config.toml still applies."""
    make_agent("a")
    (evolve_home / "config.toml").write_text(
        '[signals]\ntransient_patterns = ["(?<=vpn )down", "tunnel dropped"]\n[limits]\nmax_skills = 9\n'
    )
    _code, findings = doctor(capsys)
    [warning] = about(findings, str(evolve_home / "config.toml"))
    assert warning["level"] == "warning", warning
    assert warning["problem"] == (
        "signals.transient_patterns: pattern '(?<=vpn )down': lookbehind cannot run in linear time "
        "at position 0; ignored (fix or remove it)"
    )
    assert config_mod.load(evolve_home / "config.toml").limits.max_skills == 9


def test_a_claude_code_for_evolve_eval_that_is_not_there_is_an_error_before_it_is_needed(
    capsys, evolve_home, tmp_path
):
    make_agent("a")
    missing = tmp_path / "nowhere" / "claude"
    (evolve_home / "config.toml").write_text(f'[eval]\nclaude = "{missing}"\n')
    code, findings = doctor(capsys)
    assert code == 1
    assert about(findings, "eval") == [
        {
            "where": "eval",
            "problem": f"[eval] claude = {str(missing)!r} in config.toml is not a program; fix the path or "
            "remove the line to use `claude` from PATH",
            "level": "error",
        }
    ]
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    (evolve_home / "config.toml").write_text(f'[eval]\nclaude = "{binary}"\n')
    assert about(doctor(capsys)[1], "eval") == []


def test_doctor_flags_an_install_whose_agent_is_gone(capsys, evolve_home, project):
    """B11: after `evolve remove` by an older evolve, doctor said "all good"."""
    from evolve.integrations import claude_code

    make_agent("helper")
    claude_code.install(Home.resolve(), "helper", "project", str(project))
    (evolve_home / "agents" / "helper").rename(evolve_home / "helper-gone")  # removed behind its back
    code, findings = doctor(capsys)
    [gone] = [f for f in findings if f["where"].startswith("claude-code install of helper")]
    assert code == 1 and "no longer exists" in gone["problem"]
    where = shlex.quote(str(project.resolve()))
    assert f"evolve uninstall claude-code --agent helper --project {where}" in gone["problem"]


def test_remove_uninstalls_the_agents_installs(capsys, evolve_home, project):
    """B11: hooks stayed in settings.local.json, links dangled, every session logged an error."""
    agent = make_agent("helper")
    write_skill(agent.path, "tidy")
    git(agent.path, "add", "-A")
    git(agent.path, "commit", "-qm", "a skill")
    assert cli.main(["install", "claude-code", "--agent", "helper", "--project", str(project)]) == 0
    assert (project / ".claude" / "skills" / "tidy").is_symlink()
    capsys.readouterr()
    assert cli.main(["remove", "helper"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "uninstalled its hooks and skill links (Claude Code: " in out
    assert not (project / ".claude").exists()  # exactly what install added is gone
    code, findings = doctor(capsys)
    assert not [f for f in findings if f["where"].startswith("claude-code install")]


def test_a_global_hooks_path_that_bypasses_an_agents_hook_is_an_error(capsys, evolve_home):
    agent = make_agent("a")
    doctor(capsys)  # brings the home to the current layout, once
    git(agent.path, "config", "--global", "core.hooksPath", str(evolve_home / "elsewhere"))
    git(agent.path, "config", "--local", "--unset", "core.hooksPath")
    code, findings = doctor(capsys)
    [bypass] = about(findings, "git: core.hooksPath")
    assert code == 1 and "bypasses the pre-commit hook of a" in bypass["problem"]
    code, findings = doctor(capsys, "--fix")
    assert not about(findings, "git: core.hooksPath")
    assert git(agent.path, "config", "--local", "core.hooksPath").stdout.strip() == hooks_folder(agent.path)


def test_an_agent_linked_from_another_home_keeps_its_own_homes_hook(capsys, evolve_home, tmp_path):
    """Its hook names the home whose agents/ holds it: the second home neither flags nor rewrites it."""
    agent = make_agent("a")
    doctor(capsys)
    second = tmp_path / "second-home"
    (second / "agents").mkdir(parents=True)
    (second / "agents" / "a").symlink_to(agent.path)
    hook = (agent.path / ".git" / "hooks" / "pre-commit").read_text()
    git(agent.path, "config", "--local", "--unset", "core.hooksPath")
    assert cli.main(["--home", str(second), "doctor", "--fix"]) in (0, 1)  # sets core.hooksPath again …
    assert git(agent.path, "config", "--local", "core.hooksPath").stdout.strip() == hooks_folder(agent.path)
    assert (agent.path / ".git" / "hooks" / "pre-commit").read_text() == hook  # … and keeps the hook
    capsys.readouterr()
    for home in (second, evolve_home, second):
        assert cli.main(["--home", str(home), "doctor", "--json"]) in (0, 1)
        findings = json.loads(capsys.readouterr().out)["findings"]
        assert not about(findings, "a: .git/hooks/pre-commit")
        assert not [f for f in findings if f["problem"].startswith("fixed: git setup")]
        assert (agent.path / ".git" / "hooks" / "pre-commit").read_text() == hook
    gone = hook.replace(f"EVOLVE_PYTHON={shlex.quote(sys.executable)}", "EVOLVE_PYTHON='/gone/python'")
    assert gone != hook
    (agent.path / ".git" / "hooks" / "pre-commit").write_text(gone)  # evolve uninstalled in that home
    assert cli.main(["--home", str(second), "doctor", "--fix"]) in (0, 1)
    assert (agent.path / ".git" / "hooks" / "pre-commit").read_text() == precommit_hook_text(second)


def test_symlinks_and_leftover_temp_files_are_reported_and_fixed(capsys, evolve_home, tmp_path):
    agent = make_agent("a")
    outside = tmp_path / "outside.md"
    outside.write_text("secrets a skill should not pull in\n")
    write_skill(agent.path, "linked")
    (agent.skills_dir / "linked" / "references.md").symlink_to(outside)
    agent.memo_path.unlink()
    agent.memo_path.symlink_to(outside)
    temp = agent.skills_dir / "linked" / ".SKILL.md.qd97nnfy.evolve-tmp"
    temp.write_text("half")
    stale = evolve_home / "agents" / ".new-b-x1"
    stale.mkdir()
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    code, findings = doctor(capsys)
    [link] = about(findings, "a: skills/linked/references.md")
    assert link["problem"].startswith(f"is a symlink to {outside}") and code == 1
    # one line: not also two "must have exactly one … section (found 0)" of a memo never read
    [memo] = about(findings, "a: memo.md")
    assert memo["problem"].startswith(f"is a symlink to {outside}")
    leftovers = {f["where"] for f in findings if "killed" in f["problem"]}
    assert leftovers == {f"agents/a/skills/linked/{temp.name}", "agents/.new-b-x1"}
    code, findings = doctor(capsys, "--fix")
    assert not temp.exists() and not stale.exists()
    assert not [f for f in findings if "killed" in f["problem"] and f["level"] != "hint"]


def agents_a_and_a_sound_b_with_a_finding(evolve_home: Path) -> None:
    """Agents a (to be damaged) and b, whose broken skill doctor must still report."""
    make_agent("a")
    make_agent("b")
    (evolve_home / "agents" / "b" / "skills" / "x").mkdir()
    (evolve_home / "agents" / "b" / "skills" / "x" / "SKILL.md").write_text("no frontmatter\n")


@pytest.mark.parametrize("enclosed", [False, True], ids=["alone", "inside-another-repository"])
def test_an_agent_whose_git_folder_is_empty_is_one_finding_and_fix_touches_no_repository(
    capsys, evolve_home, enclosed
):
    # a half-made agent (its .git emptied): doctor and --fix stopped at exit 3 and every other
    # finding was lost; inside a repository of the person's (a dotfiles home), git asked in the
    # agent's folder answers for that one, where --fix must set nothing up
    agents_a_and_a_sound_b_with_a_finding(evolve_home)
    if enclosed:
        git(evolve_home, "init", "-q")
    broken = evolve_home / "agents" / "a" / ".git"
    shutil.rmtree(broken)
    broken.mkdir()
    for extra in ((), ("--fix",)):
        code, findings = doctor(capsys, *extra)
        [repo] = about(findings, "a: .git")
        assert code == 1 and "is not a git repository" in repo["problem"] and repo["level"] == "error"
        assert about(findings, "b: skills/x/SKILL.md")
        assert not [f for f in findings if f["where"].startswith("a: .git/hooks")]
    assert list(broken.iterdir()) == []
    if enclosed:
        assert git(evolve_home, "config", "--local", "core.hooksPath", check=False).stdout == ""


@pytest.mark.parametrize("damage", ["index", "objects"])
def test_an_agent_whose_repository_git_cannot_read_is_one_finding_and_doctor_goes_on(
    capsys, evolve_home, damage
):
    # .git is the agent's own (is_own_repository holds) but its index is cut short or its
    # objects are gone: the layout upgrade and the hold check raised GitError, doctor exit 3
    agents_a_and_a_sound_b_with_a_finding(evolve_home)
    dot = evolve_home / "agents" / "a" / ".git"
    if damage == "index":
        (dot / "index").write_bytes(b"DIRC cut short")
    else:
        shutil.rmtree(dot / "objects")
        (dot / "objects").mkdir()
    for extra in ((), ("--fix",)):
        code, findings = doctor(capsys, *extra)
        [repo] = about(findings, "a: .git")
        assert code == 1 and repo["problem"].startswith("git fails in this repository (fatal: ")
        assert repo["level"] == "error" and "git -C " in repo["problem"]
        assert about(findings, "b: skills/x/SKILL.md")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_an_agent_owned_by_another_user_is_named_as_that_not_as_a_damaged_git(capsys, evolve_home):
    # git refuses a repository another user owns (safe.directory): the agent is sound, and
    # "missing, empty or damaged … restore from a backup" sent the person to the wrong remedy
    agent = make_agent("a")
    subprocess.run(["chown", "-R", "12345:12345", str(agent.path)], check=True)
    code, findings = doctor(capsys)
    [repo] = about(findings, "a: .git")
    assert code == 1 and "owned by another user" in repo["problem"] and "damaged" not in repo["problem"]
    assert "safe.directory" in repo["problem"]


@pytest.mark.parametrize("left", [(), ("HEAD",), ("HEAD", "refs")], ids=["empty", "head", "head-refs"])
def test_no_write_to_a_half_made_git_folder_reaches_the_repository_around_it(evolve_home, left):
    # the home inside a person's repository (dotfiles): git run in the agent's folder takes a
    # .git without HEAD, objects/ and refs/ for none, and would commit evolve's files there
    agent = make_agent("a")
    git(evolve_home, "init", "-q")
    git(evolve_home, "commit", "-q", "--allow-empty", "-m", "the person's")
    theirs = git(evolve_home, "rev-parse", "HEAD").stdout
    shutil.rmtree(agent.path / ".git")
    (agent.path / ".git").mkdir()
    for name in left:
        if name == "refs":
            (agent.path / ".git" / name).mkdir()
        else:
            (agent.path / ".git" / name).write_text("ref: refs/heads/main\n")
    before = sorted(p.name for p in (agent.path / ".git").iterdir())
    write_skill(agent.path, "lesson")
    with pytest.raises(UserError, match="is not a git repository"):
        agent.commit_human_edits()
    assert git(evolve_home, "rev-parse", "HEAD").stdout == theirs
    assert git(evolve_home, "status", "--porcelain", "--", "agents/a").stdout.startswith("??")
    assert sorted(p.name for p in (agent.path / ".git").iterdir()) == before


def test_what_makes_evolve_quietly_do_nothing(capsys, evolve_home, monkeypatch):
    """C2: no sources, no watcher, claude-cli without `claude` on PATH."""
    make_agent("a")
    monkeypatch.setenv("PATH", str(Path(shutil.which("git") or "/usr/bin/git").parent))  # no `claude`
    (evolve_home / "config.toml").write_text("[model]\nbackend = 'claude-cli'\n")
    code, findings = doctor(capsys)
    [backend] = about(findings, "a: model")
    assert code == 1 and "`claude` is not on PATH" in backend["problem"]
    [sources] = about(findings, "a: agent.toml")
    assert sources["level"] == "hint" and "no transcripts reach this agent" in sources["problem"]
    [watcher] = about(findings, "watcher")
    assert "evolve watch --detach" in watcher["problem"]


def test_an_agent_fed_only_by_codex_rollouts_learns(capsys, evolve_home, project):
    """Newcomer 11: `[sources] codex` reaches an agent as surely as a Claude Code glob."""
    agent = make_agent("coder")
    toml = agent.path / "agent.toml"
    toml.write_text(toml.read_text() + f'codex = ["{project}"]\n')
    git(agent.path, "commit", "-qam", "read the webapp's Codex sessions")
    make_agent("idle")
    _code, findings = doctor(capsys)
    assert about(findings, "coder: agent.toml") == []
    [hint] = about(findings, "idle: agent.toml")
    assert "evolve install claude-code --agent idle" in hint["problem"]
    assert "evolve install codex --agent idle" in hint["problem"]


def test_a_broken_eval_case_committed_past_the_hook_is_named(capsys, evolve_home):
    agent = make_agent("a")
    grader = agent.path / "evals" / "add-deps" / "graders" / "slow.md"
    grader.parent.mkdir(parents=True)
    grader.write_text('---\ntype: regex\npattern: "(a)\\\\1"\n---\n')
    (agent.path / "evals" / "add-deps" / "prompt.md").write_text("---\n---\nadd lodash\n")
    git(agent.path, "add", "-A")
    git(agent.path, "commit", "-qm", "my case", "--no-verify")
    _code, findings = doctor(capsys)
    [found] = about(findings, "a: evals/add-deps/graders/slow.md")
    assert found["level"] == "warning" and "'pattern' '(a)\\\\1' is refused" in found["problem"]
    assert found["problem"].endswith("; fix it there (the pre-commit hook checks a case)")
    assert about(findings, "a: evals/add-deps/prompt.md") == []


def test_an_agent_held_by_staged_work_on_a_branch_with_no_commit_is_named_with_a_command_that_works(
    capsys, evolve_home
):
    """`git restore --staged` fails on a branch with no commit; `git rm --cached` unstages there."""
    agent = make_agent("a")
    git(agent.path, "update-ref", "-d", "refs/heads/main")  # every file it held is staged now
    code, findings = doctor(capsys)
    [held] = about(findings, "a: git")
    assert held["level"] == "warning" and "main has no commit" in held["problem"]
    assert "`git rm --cached memo.md`" in held["problem"] and "restore" not in held["problem"]


def test_a_memo_grown_into_a_log_is_one_line_for_doctor_and_lessons_not_parsed_or_blamed(evolve_home, capsys):
    """A log appended to memo.md and committed (300 MB held doctor 30 s and lessons 18 s)."""
    from evolve.workspace.memo import MEMO_CAP

    agent = make_agent("demo")
    line = b"- Always run the tests before you commit; the suite catches what review misses.\n"
    with agent.memo_path.open("ab") as memo:
        memo.write(line * (2 * MEMO_CAP // len(line)))
    git(agent.path, "commit", "-qam", "my notes", "--no-verify")
    capsys.readouterr()
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    memo_lines = [x for x in out.splitlines() if "memo.md" in x]
    assert len(memo_lines) == 1 and f"is {agent.memo_path.stat().st_size:,} bytes" in memo_lines[0], out
    assert cli.main(["lessons", "demo"]) == 0
    out = capsys.readouterr().out
    assert "bytes, over the 1 MB (1,048,576 bytes) no memo reaches: its bullets are not listed" in out
    assert "Always run the tests" not in out  # neither parsed nor blamed


def test_a_memo_one_byte_over_the_bound_is_said_to_be_over_it_not_to_be_it(evolve_home, capsys):
    """'memo.md is 1 MB, over the 1 MB' (sizes cut to whole MB); and lessons added 'no memo bullet'."""
    from evolve.workspace.memo import MEMO_CAP

    agent = make_agent("demo")
    with agent.memo_path.open("ab") as memo:
        memo.write(b"- a log line\n" + b"x" * (MEMO_CAP - agent.memo_path.stat().st_size - 13) + b"\n")
    assert agent.memo_path.stat().st_size == MEMO_CAP + 1
    capsys.readouterr()
    cli.main(["doctor"])
    [said] = [x for x in capsys.readouterr().out.splitlines() if "memo.md" in x]
    assert f"memo.md is {MEMO_CAP + 1:,} bytes, over the 1 MB ({MEMO_CAP:,} bytes) no memo reaches" in said
    assert cli.main(["lessons", "demo"]) == 0
    out = capsys.readouterr().out
    assert f"memo.md is {MEMO_CAP + 1:,} bytes, over the 1 MB" in out and "no memo bullet" not in out


def test_a_memo_grown_into_a_log_is_parsed_by_no_reader_of_its_bullets(evolve_home, capsys, monkeypatch):
    """`evolve score`, the watcher's cycle and `evolve status` parsed it (~0.2 s a MB: 60 s at 300 MB)."""
    from evolve.schedule import cycle
    from evolve.store import ledger
    from evolve.workspace import memo
    from evolve.workspace.memo import MEMO_CAP

    agent = make_agent("demo")
    with agent.memo_path.open("ab") as log:
        log.write(b"- a line of a log\n" * (MEMO_CAP // 18 + 1))
    parsed = []
    section_content = memo.section_content

    def parse(text: str, key: str) -> str:
        parsed.append(len(text))
        return section_content(text, key)

    monkeypatch.setattr(memo, "section_content", parse)
    assert cli.main(["score", "demo"]) == 0
    home = Home.resolve()
    with ledger.opened(home.state_db) as conn:
        ledger.mark_dirty(conn, "demo")
    assert cli.main(["status"]) == 0
    with ledger.opened(home.state_db) as conn:
        cycle.agent_states(conn, home, ["demo"])
        cycle.first_worthy(conn, home, None)
    assert len(parsed) >= 4 and max(parsed) < MEMO_CAP, parsed
