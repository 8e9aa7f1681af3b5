"""The one-line-error promise at the edges: closed pipes, odd arguments, JSON errors, help.

Each test names the red-team finding it pins (../shared/reviews/red-team-2026-12.md).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evolve import arguments, cli
from evolve.errors import EXIT_OK, EXIT_USAGE, EXIT_USER
from tests.helpers import git, make_agent

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    assert info.value.code == EXIT_USAGE
    return capsys.readouterr().err


@pytest.mark.parametrize("argv", [["log", "a"], ["review", "a", "HEAD"]])
def test_a_closed_pipe_is_quiet_and_exits_0(evolve_home, argv):
    """C1: `evolve log a | head` was an internal error (BrokenPipeError), exit 3, in crash.log."""
    make_agent("a")
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "evolve", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/"
    )
    proc.stdout.close()  # the reader is gone before evolve writes a byte
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == EXIT_OK, err
    assert err == ""
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_observe_takes_options_after_its_paths(capsys, evolve_home, tmp_path):
    """C7: `evolve observe NAME --format generic FILE` failed with "unrecognized arguments: FILE"."""
    make_agent("a")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user","text":"fix the build"}\n{"type":"assistant","text":"done"}\n')
    code, out, err = run(capsys, "observe", "a", "--format", "generic", str(transcript))
    assert code == EXIT_OK, err
    assert "1 run(s) added" in out
    err = usage_error(capsys, "observe", "a", str(transcript), "--bogus")
    assert "unrecognized arguments: --bogus" in err


def test_every_reading_command_takes_json_and_errors_are_json_too(capsys, evolve_home):
    """C10: `review` refused --json; `watch --print-service --json` printed the unit; errors were text."""
    make_agent("a")
    code, out, err = run(capsys, "review", "a", "HEAD", "--json")
    assert code == EXIT_OK, err
    data = json.loads(out)
    assert data["kind"] == "init" and data["trailers"]["Evolve-Kind"] == "init" and "memo.md" in data["patch"]
    if sys.platform.startswith("linux"):
        code, out, _ = run(capsys, "watch", "--print-service", "--json")
        unit = json.loads(out)
        assert code == EXIT_OK and unit["name"] == "evolve-watch.service" and "ExecStart=" in unit["text"]
    code, out, err = run(capsys, "log", "ghost", "--json")
    assert code == EXIT_USER and out == ""
    error = json.loads(err)
    assert error["exit_code"] == EXIT_USER and "no agent 'ghost'" in error["error"]
    with pytest.raises(SystemExit):
        cli.main(["log", "a", "-n", "0", "--json"])
    assert json.loads(capsys.readouterr().err)["exit_code"] == EXIT_USAGE


def test_hook_help_prints_help(capsys):
    """C11: `evolve hook --help` printed nothing, exit 0."""
    with pytest.raises(SystemExit) as info:
        cli.main(["hook", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: evolve hook") and "claude-code EVENT" in out


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_log_limit_must_be_positive(capsys, evolve_home, limit):
    """C12: `evolve log -n 0` and `-n -1` printed every commit."""
    make_agent("a")
    assert "must be 1 or more" in usage_error(capsys, "log", "a", "-n", limit)


def test_an_empty_home_or_a_file_as_home_is_one_line(capsys, tmp_path, evolve_home):
    """C12: `--home ""` fell back to EVOLVE_HOME; `--home /dev/null` was an internal error."""
    code, _, err = run(capsys, "--home", "", "agents")
    assert code == EXIT_USER
    assert err == "evolve: error: --home is empty; give the folder evolve keeps its state in\n"
    code, _, err = run(capsys, "--home", "", "prompt", "a")  # the session-start fast path too
    assert code == EXIT_USER and "--home is empty" in err
    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n")
    for target in (str(a_file), os.devnull):
        code, _, err = run(capsys, "--home", target, "status")
        assert code == EXIT_USER and f"the evolve home {target} is not a folder" in err
        assert err.count("\n") == 1


def test_messages_say_what_to_do(capsys, evolve_home, tmp_path):
    """C13: the agent-name example, the `--` hint, and a revert conflict's real cause."""
    code, _, err = run(capsys, "init", "Helper")
    assert code == EXIT_USER and "choose e.g. 'helper'" in err and "fix-flaky-tests" not in err
    err = usage_error(capsys, "init", "-rf")
    assert "put `--` before it" in err and "(-rf)" in err
    code, _, err = run(capsys, "init", "--", "-rf")
    assert code == EXIT_USER and "agent name '-rf'" in err
    agent = make_agent("a")
    skill = agent.path / "skills" / "x" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: x\ndescription: Use when x.\n---\n\n- one\n")
    (agent.path / "memo.md").write_text(agent.memo_text() + "- memo line\n")
    git(agent.path, "add", "-A")
    git(agent.path, "commit", "-qm", "add x")
    target = git(agent.path, "rev-parse", "HEAD").stdout.strip()
    git(agent.path, "rm", "-rq", "skills/x")
    git(agent.path, "commit", "-qm", "retire x")
    code, _, err = run(capsys, "revert", "a", target)
    assert code == EXIT_USER and "skills/x/SKILL.md" in err  # the file that conflicts, by name
    assert "Applied patch" not in err and "memo.md" not in err


def test_the_first_install_says_created(capsys, evolve_home, tmp_path):
    """C13: the first `evolve install` printed "updated:" for a settings file it had just created."""
    make_agent("a")
    project = tmp_path / "project"
    project.mkdir()
    code, out, err = run(capsys, "install", "claude-code", "--agent", "a", "--project", str(project))
    assert code == EXIT_OK, err
    assert out.startswith("created: evolve's hooks for agent a in ")
    code, out, _ = run(capsys, "install", "claude-code", "--agent", "a", "--project", str(project))
    assert out.startswith("already in place: ")


def test_help_describes_the_product_not_the_module(capsys):
    """C18: `evolve --help` showed the module docstring ("parse, call one command function…")."""
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "learn from its own use" in out and "parse, call one command" not in out
    assert "75 busy" in " ".join(out.split())


def test_a_deeply_nested_line_never_crashes_observe(capsys, evolve_home, tmp_path):
    """B5: format detection raised RecursionError on a line nested 1,200 deep (exit 3)."""
    make_agent("a")
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"type":"user","x":' + "[" * 1200 + "]" * 1200 + "}\n")
    code, out, err = run(capsys, "observe", "a", str(deep))
    assert code == EXIT_OK, err
    assert "1 corrupt line(s) skipped" in out


# -- newcomer review (../shared/reviews/newcomer-2026-12.md), finding 14: CLI inconsistencies ----
def test_pause_and_resume_take_json_like_every_writing_command(capsys, evolve_home):
    make_agent("a")
    code, out, err = run(capsys, "pause", "a", "--json")
    assert code == EXIT_OK and json.loads(out) == {"agent": "a", "paused": True}, err
    code, out, err = run(capsys, "resume", "a", "--json")
    assert code == EXIT_OK and json.loads(out) == {"agent": "a", "paused": False}, err
    names = [
        name for name in arguments.COMMANDS if name not in ("hook", "classify")
    ]  # classify prints JSON lines
    for name in names:
        with pytest.raises(SystemExit):
            cli.main([name, "--help"])
        assert "--json" in capsys.readouterr().out, name


def test_uninstall_help_says_disconnect(capsys):
    for name, verb in (("uninstall", "disconnect"), ("install", "connect")):
        with pytest.raises(SystemExit):
            cli.main([name, "--help"])
        assert f"the evolve agent to {verb}\n" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said", "unsaid"),
    [
        (["log", "a", "-n", "abc"], "expected a whole number, 1 or more, got 'abc'", "_positive"),
        (["install", "cursor", "--agent", "a"], "argument HARNESS: invalid choice: 'cursor'", "target"),
        (["status", "--jsn"], "usage: evolve status", "usage: evolve [-h]"),  # the command's own usage
        (["--json", "status"], "--json goes after the command (`evolve status --json`)", '{"error"'),
    ],
)
def test_a_usage_error_names_the_command_and_no_internal_name(capsys, evolve_home, argv, said, unsaid):
    make_agent("a")
    err = usage_error(capsys, *argv)
    assert said in err and unsaid not in err, err


def test_a_json_error_is_the_message_without_a_repeated_prefix(capsys, evolve_home):
    code, out, err = run(capsys, "log", "nosuch", "--json")
    assert code == EXIT_USER and out == ""
    assert json.loads(err)["error"].startswith("no agent 'nosuch'"), err
    err = usage_error(capsys, "status", "nosuch", "--json")
    assert json.loads(err) == {"error": "unrecognized arguments: nosuch", "exit_code": EXIT_USAGE}


# -- newcomer review, finding 15: output glitches ----------------------------------------------
def test_nothing_to_save_is_said_once(capsys, evolve_home):
    make_agent("a")
    code, out, err = run(capsys, "reflect", "a", "--force")
    assert code == EXIT_OK, err
    assert out.count("nothing to save") == 1 and "nothing:" not in out, out


def test_the_bundles_undone_lessons_are_one_list(capsys, evolve_home):
    from tests.helpers import evolve_commit

    agent = make_agent("a")
    text = agent.memo_text().replace(
        "## Strategies for this user and domain\n",
        "## Strategies for this user and domain\n\n- When a command fails, read its log first.\n",
    )
    sha = evolve_commit(agent, {"memo.md": text.encode()}, "reflect(a): logs", {"Evolve-Kind": "reflection"})
    assert cli.main(["revert", "a", sha]) == 0
    code, out, err = run(capsys, "reflect", "a", "--force", "--dry-run")
    assert code == EXIT_OK, err
    section = out.partition("## Reverted or rejected by a person")[2].partition("\n## ")[0]
    assert "\n- When a command fails, read its log first." in section and "- - " not in section, section


def test_classify_for_an_agent_says_which_of_its_phrases_it_drops(capsys, evolve_home, monkeypatch):
    agent = make_agent("a")
    toml = agent.path / "agent.toml"
    toml.write_text(toml.read_text() + '[signals]\ncorrection_phrases = { en = ["re:(("] }\n')
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"text": "fine, thanks"}\n'))
    assert cli.main(["classify", "--agent", "a"]) == EXIT_OK
    err = capsys.readouterr().err
    assert "correction pattern '((': missing )" in err and "ignored" in err


def test_classify_with_stdin_closed_says_what_it_reads(capsys, evolve_home, monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    assert cli.main(["classify"]) == EXIT_USER
    assert "classify reads JSON lines on stdin" in capsys.readouterr().err
