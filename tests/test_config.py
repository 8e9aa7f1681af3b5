"""Configuration: defaults from the brief, home then agent overrides, readable errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evolve import config as config_mod
from evolve.errors import ConfigError
from tests.helpers import make_agent


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_numbers_of_the_brief():
    cfg = config_mod.load()
    assert cfg.model.backend == "offline"
    assert (
        cfg.schedule.cycle_hours,
        cfg.schedule.min_gap_hours,
        cfg.schedule.force_after_days,
        cfg.schedule.max_agents_per_cycle,
    ) == (12, 4, 7, 5)
    assert cfg.signals.threshold == 0.7
    assert cfg.signals.complexity_tool_calls == 20
    assert cfg.signals.weights == {
        "user_correction": 0.9,
        "user_preference": 0.9,
        "lesson_ignored": 0.9,
        "skill_ineffective": 0.85,
        "error_recovered": 0.8,
        "known_weakness": 0.7,
        "complexity": 0.5,
    }
    limits = cfg.limits
    assert (
        limits.max_skills,
        limits.memo_section_chars,
        limits.skill_body_tokens,
        limits.bundle_tokens,
        limits.prompt_chars,
    ) == (200, 2000, 5000, 12000, 8000)
    assert (cfg.watch.debounce_s, cfg.watch.rescan_minutes, cfg.watch.human_edit_quiet_s) == (2, 10, 30)
    assert cfg.review is False
    assert cfg.sources.claude_code == [] and cfg.sources.generic == []
    for key in ("backend", "name", "base_url", "max_tokens", "timeout_s", "daily_token_budget"):
        assert hasattr(cfg.model, key)
    assert (cfg.git.author_name, cfg.git.author_email) == ("evolve", "evolve@localhost")


def test_missing_files_mean_defaults(tmp_path):
    assert config_mod.load(tmp_path / "nope.toml", tmp_path / "agent.toml") == config_mod.Config()


def test_home_then_agent_override(tmp_path):
    home = write(
        tmp_path / "config.toml",
        "[schedule]\ncycle_hours = 6\nmin_gap_hours = 2\n[model]\nbackend = 'anthropic'\n"
        "[signals.weights]\ncomplexity = 0.3\n",
    )
    agent = write(
        tmp_path / "agent.toml",
        "review = true\n[agent]\nname = 'x'\n[schedule]\nforce_after_days = 3\n"
        "[sources]\nclaude_code = ['~/p/*.jsonl']\n[signals.weights]\nuser_correction = 1.5\n",
    )
    cfg = config_mod.load(home, agent)
    assert cfg.schedule.cycle_hours == 6.0
    assert cfg.schedule.min_gap_hours == 2.0
    assert cfg.schedule.force_after_days == 3.0
    assert cfg.model.backend == "anthropic"
    assert cfg.review is True
    assert cfg.sources.claude_code == ["~/p/*.jsonl"]
    # a weight set in the home survives an agent override of another weight
    assert cfg.signals.weights["complexity"] == 0.3
    assert cfg.signals.weights["user_correction"] == 1.5
    assert cfg.signals.weights["error_recovered"] == 0.8


def test_home_wide_keys_in_agent_toml_are_ignored_with_a_warning(tmp_path):
    """The template once invited [watch] in agent.toml: it must never break that file."""
    home = write(tmp_path / "config.toml", "[watch]\ndebounce_s = 5\n")
    agent = write(
        tmp_path / "agent.toml",
        "[watch]\ndebounce_s = 1\nrescan_minutes = 10\n[schedule]\ncycle_hours = 1\nmin_gap_hours = 1\n",
    )
    cfg = config_mod.load(home, agent)
    assert (cfg.watch.debounce_s, cfg.schedule.cycle_hours, cfg.schedule.min_gap_hours) == (5.0, 12.0, 1.0)
    assert cfg.warnings == (
        f"{agent}: watch.debounce_s: applies to the whole home, not one agent; ignored here "
        "(set it in config.toml)",
        f"{agent}: schedule.cycle_hours: applies to the whole home, not one agent; ignored here "
        "(set it in config.toml)",
    )  # rescan_minutes = 10 is the value in force anyway: nothing to warn about
    assert config_mod.load(home, None).warnings == ()


def test_the_claude_code_evolve_eval_runs_is_set_in_config_toml_only(tmp_path):
    """A path on this machine: an agent.toml (which a server may have sent) cannot choose it."""
    home = write(tmp_path / "config.toml", "[eval]\nclaude = '~/.local/bin/claude'\n")
    agent = write(tmp_path / "agent.toml", "[eval]\nclaude = '/tmp/not-claude'\n")
    assert config_mod.load().eval.claude == ""  # the default: `claude` on PATH
    cfg = config_mod.load(home, agent)
    assert cfg.eval.claude == "~/.local/bin/claude"
    assert cfg.warnings == (
        f"{agent}: eval.claude: applies to the whole home, not one agent; ignored here "
        "(set it in config.toml)",
    )


def test_where_the_key_comes_from_layers_like_every_setting(tmp_path):
    """The key's source is one of two: a later file naming a variable takes it back from a file."""
    home = write(tmp_path / "config.toml", "[model]\napi_key_file = '~/.config/evolve/anthropic.key'\n")
    assert config_mod.load(home).model.api_key_file == "~/.config/evolve/anthropic.key"
    agent = write(tmp_path / "agent.toml", "[model]\napi_key_env = 'WORK_KEY'\n")
    model = config_mod.load(home, agent).model
    assert (model.api_key_env, model.api_key_file) == ("WORK_KEY", "")
    assert config_mod.load().model.api_key_env == "ANTHROPIC_API_KEY"


def test_first_reflection_minutes_is_the_homes(tmp_path):
    home = write(tmp_path / "config.toml", "[schedule]\nfirst_reflection_minutes = 2\n")
    agent = write(tmp_path / "agent.toml", "[schedule]\nfirst_reflection_minutes = 0\n")
    cfg = config_mod.load(home, agent)
    assert (
        cfg.schedule.first_reflection_minutes == 2.0
        and config_mod.load().schedule.first_reflection_minutes == 5
    )
    assert cfg.warnings == (
        f"{agent}: schedule.first_reflection_minutes: applies to the whole home, not one agent; "
        "ignored here (set it in config.toml)",
    )


def test_int_given_to_float_key_is_a_float(tmp_path):
    cfg = config_mod.load(write(tmp_path / "config.toml", "[watch]\ndebounce_s = 5\n"))
    assert cfg.watch.debounce_s == 5.0 and isinstance(cfg.watch.debounce_s, float)


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("[schedule]\ncycle_hours = 'soon'\n", "schedule.cycle_hours", "must be a number"),
        ("[schedule]\ncycle_hours = 0\n", "schedule.cycle_hours", "positive"),
        ("[schedule]\nmin_gap_hours = -1\n", "schedule.min_gap_hours", "zero or more"),
        ("[schedule]\nmax_agents_per_cycle = 2.5\n", "schedule.max_agents_per_cycle", "whole number"),
        ("[schedule]\nmax_agents_per_cycle = true\n", "schedule.max_agents_per_cycle", "number"),
        ("[limits]\nmemo_section_chars = 0\n", "limits.memo_section_chars", "positive"),
        ("[limits]\nbundle_tokens = '12k'\n", "limits.bundle_tokens", "number"),
        ("[limits]\nmax_skills = -5\n", "limits.max_skills", "positive"),
        ("[model]\nbackend = 'openai'\n", "model.backend", "must be one of"),
        ("[model]\nname = 3\n", "model.name", "must be a string"),
        ("[model]\ntimeout_s = -1\n", "model.timeout_s", "positive"),
        ("[signals]\nthreshold = -0.1\n", "signals.threshold", "zero or more"),
        ("[signals]\nweights = 3\n", "signals.weights", "table"),
        ("[signals.weights]\nvibes = 1.0\n", "signals.weights.vibes", "unknown signal"),
        ("[signals.weights]\ncomplexity = -1\n", "signals.weights.complexity", ">= 0"),
        ("[signals.weights]\ncomplexity = 'high'\n", "signals.weights.complexity", "number"),
        ("[watch]\ndebounce_s = [1]\n", "watch.debounce_s", "number"),
        ("[schedule]\ncycle_hourz = 3\n", "schedule.cycle_hourz", "unknown key"),
        ("[git]\nauthor_name = false\n", "git.author_name", "string"),
        # B7: each of these passed validation, then crashed, spun or silently stopped the cycle
        ("[signals.correction_phrases]\nen = [1, 2]\n", "signals.correction_phrases", "list of strings"),
        ("[signals.correction_phrases]\nen = 'no'\n", "signals.correction_phrases", "list of strings"),
        ("[git]\nauthor_name = ''\n", "git.author_name", "non-empty"),
        ("[git]\nauthor_email = '  '\n", "git.author_email", "non-empty"),
        ("[git]\nauthor_name = 'a <b>'\n", "git.author_name", "without <"),
        ("[watch]\nrescan_minutes = 0\n", "watch.rescan_minutes", "positive"),
        ("[watch]\ndebounce_s = 0\n", "watch.debounce_s", "positive"),
        ("[watch]\ndebounce_s = 1e308\n", "watch.debounce_s", "at most"),
        ("[schedule]\ncycle_hours = nan\n", "schedule.cycle_hours", "finite"),
        ("[schedule]\ncycle_hours = inf\n", "schedule.cycle_hours", "finite"),
        ("[schedule]\ncycle_hours = 1e9\n", "schedule.cycle_hours", "at most"),
        ("[schedule]\nmin_gap_hours = nan\n", "schedule.min_gap_hours", "finite"),
        ("[watch]\ndebounce_s = nan\n", "watch.debounce_s", "finite"),
        ("[signals]\nthreshold = nan\n", "signals.threshold", "finite"),
        ("[signals.weights]\ncomplexity = inf\n", "signals.weights.complexity", "finite"),
        ("[model]\ntimeout_s = -inf\n", "model.timeout_s", "finite"),
        ("[model]\napi_key_env = 'MY KEY'\n", "model.api_key_env", "must name an environment variable"),
        ("[model]\napi_key_env = ''\n", "model.api_key_env", "must name an environment variable"),
        ("[model]\napi_key_file = 'keys/anthropic'\n", "model.api_key_file", "absolute path or start with ~"),
        (
            "[model]\napi_key_env = 'K'\napi_key_file = '/k'\n",
            "model",
            "api_key_env or api_key_file, not both",
        ),
        ("[schedule]\nfirst_reflection_minutes = -1\n", "schedule.first_reflection_minutes", "zero or more"),
        ("[schedule]\nfirst_reflection_minutes = 1e6\n", "schedule.first_reflection_minutes", "at most"),
        # red team 3, C4: these passed the load and failed only at the model call, or never
        ("[model]\nbase_url = 'ftp://x'\n", "model.base_url", "http:// or https://"),
        ("[model]\nbase_url = 'file:///etc/passwd'\n", "model.base_url", "http:// or https://"),
        ("[model]\nbase_url = 'localhost:8080'\n", "model.base_url", "http:// or https://"),
        ("[model]\nbase_url = 'http://'\n", "model.base_url", "with a host"),
        ("[model]\nbase_url = 'http://x:port'\n", "model.base_url", "with a host"),
        ("[model]\nbase_url = ' http://127.0.0.1:9'\n", "model.base_url", "without spaces"),
        ("[model]\nname = ''\n", "model.name", "a model's name on one line"),
        ("[model]\nname = '   '\n", "model.name", "a model's name on one line"),
        ('[model]\nname = "claude\\nhaiku"\n', "model.name", "a model's name on one line"),
        ("[eval]\nclaude = 'claude'\n", "eval.claude", "absolute path of Claude Code's `claude`"),
        ("[eval]\nclaude = 'bin/claude'\n", "eval.claude", "absolute path"),
        ('[eval]\nclaude = "/usr/bin/claude\\n"\n', "eval.claude", "absolute path"),
        ("[eval]\nclaude = 3\n", "eval.claude", "must be a string"),
        ("[eval]\nclaud = '/usr/bin/claude'\n", "eval.claud", "unknown key (known: claude)"),
    ],
)
def test_every_bad_value_names_file_key_and_problem(tmp_path, text, where, problem):
    path = write(tmp_path / "config.toml", text)
    with pytest.raises(ConfigError) as info:
        config_mod.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {where}: "), message
    assert problem in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        (
            "transient_patterns = ['(', 'tunnel dropped']",
            "pattern '(': missing ), unterminated subpattern at position 0",
        ),
        ("transient_patterns = ['!', 'tunnel dropped']", "pattern '' is empty"),
        ("transient_patterns = ['(?<=vpn )down', 'tunnel dropped']", "lookbehind cannot run in linear time"),
        ("transient_patterns = ['!(a)\\1', 'tunnel dropped']", "backreferences cannot run in linear time"),
        ("correction_phrases = { en = ['weak:re:([', 'bogus'] }", "en: correction pattern '(['"),
        ("correction_phrases = { en = ['guard:re:a(?=b)', 'bogus'] }", "lookahead cannot run in linear time"),
        ("correction_phrases = { en = [\"''\", 'bogus'] }", "en: correction phrase \"''\" is empty"),
        (
            "correction_phrases = { en = ['\u0301 \u093c’', 'bogus'] }",
            "en: correction phrase '\u0301 \u093c’' is empty",
        ),
        # a careless catch-all: every message a correction, or every correction hidden
        ("correction_phrases = { en = ['re:.+', 'bogus'] }", "matches every message (every message would"),
        ("correction_phrases = { en = ['guard:re:\\w', 'bogus'] }", "(it would hide every correction)"),
        ("correction_phrases = { en = ['weak:re:^', 'bogus'] }", "(every reply would count as pushing back)"),
        ("correction_phrases = { en = [' , ', 'bogus'] }", "en: correction phrase ' , ' holds no word"),
    ],
)
def test_a_refused_pattern_is_dropped_with_a_warning_and_the_rest_applies(tmp_path, entries, problem):
    # A5: agent.toml may come from the server: one pattern this evolve refuses must not
    # take the agent's whole configuration down with it (observe, the watcher, cycles).
    path = write(
        tmp_path / "agent.toml", f"[signals]\nthreshold = 0.5\n{entries}\n[limits]\nmax_skills = 7\n"
    )
    cfg = config_mod.load(None, path)
    assert (cfg.signals.threshold, cfg.limits.max_skills) == (0.5, 7)
    assert cfg.signals.transient_patterns in ([], ["tunnel dropped"])
    assert cfg.signals.correction_phrases in ({}, {"en": ["bogus"]})
    key = entries.split(" ")[0]
    [warning] = cfg.warnings
    assert warning.startswith(f"{path}: signals.{key}: "), warning
    assert problem in warning and warning.endswith("; ignored (fix or remove it)")
    assert "\n" not in warning


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("review = 'yes'\n", "review", "true or false"),
        ("[sources]\nclaude_code = 'one.jsonl'\n", "sources.claude_code", "list of strings"),
        ("[sources]\ngeneric = [1, 2]\n", "sources.generic", "list of strings"),
        ("[sources]\ncursor = []\n", "sources.cursor", "unknown key"),
        ("[sources]\ncodex = ['~/shop', 'shop']\n", "sources.codex", "'shop' is not \"*\" nor an absolute"),
        ("[limits]\nprompt_chars = 0\n", "limits.prompt_chars", "positive"),
    ],
)
def test_bad_agent_values(tmp_path, text, where, problem):
    path = write(tmp_path / "agent.toml", text)
    with pytest.raises(ConfigError) as info:
        config_mod.load(None, path)
    assert str(info.value).startswith(f"{path}: {where}: ")
    assert problem in str(info.value)


def test_unknown_section_and_non_table_section(tmp_path):
    path = write(tmp_path / "config.toml", "[schedul]\ncycle_hours = 1\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: schedul: unknown section")):
        config_mod.load(path)
    path = write(tmp_path / "config.toml", "schedule = 3\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: schedule: must be a table")):
        config_mod.load(path)


@pytest.mark.parametrize(
    "text", ["review = true\n", "[sources]\nclaude_code = []\n", "[agent]\nname = 'x'\n"]
)
def test_agent_only_keys_are_refused_in_the_home_config(tmp_path, text):
    path = write(tmp_path / "config.toml", text)
    with pytest.raises(ConfigError) as info:
        config_mod.load(path)
    assert str(info.value).startswith(f"{path}: ")


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path / "config.toml", "[schedule\ncycle_hours = \n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        config_mod.load(path)
    path.write_bytes(b"[model]\nname = '\xff'\n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        config_mod.load(path)


def test_env_backend_overrides_files(tmp_path, monkeypatch):
    home = write(tmp_path / "config.toml", "[model]\nbackend = 'anthropic'\n")
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "claude-cli")
    assert config_mod.load(home).model.backend == "claude-cli"
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "gpt")
    with pytest.raises(ConfigError, match="EVOLVE_MODEL_BACKEND: model.backend: must be one of"):
        config_mod.load(home)


def test_tilde_in_sources_expands(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_mod.expand_globs(["~/.claude/projects/x/*.jsonl", "/abs/*.jsonl"]) == [
        f"{tmp_path}/.claude/projects/x/*.jsonl",
        "/abs/*.jsonl",
    ]


def test_agent_reads_home_config_then_its_agent_toml(evolve_home):
    agent = make_agent("cfg")
    write(evolve_home / "config.toml", "[limits]\nmax_skills = 50\nbundle_tokens = 9000\n")
    with (agent.path / "agent.toml").open("a") as handle:
        handle.write("\n[limits]\nmax_skills = 10\n")
    cfg = agent.config
    assert cfg.limits.max_skills == 10
    assert cfg.limits.bundle_tokens == 9000


def test_template_agent_toml_is_valid_and_points_sources_at_nothing(evolve_home):
    agent = make_agent("fresh")
    cfg = agent.config
    assert cfg.review is False
    assert cfg.sources.claude_code == [] and cfg.sources.generic == []


def test_review_written_where_the_template_puts_it_is_honoured(evolve_home):
    # The template writes `review = false` after `[agent]`, so TOML files it under [agent];
    # a person flipping it to true there must get review mode, not a silent default.
    agent = make_agent("rev")
    path = agent.path / "agent.toml"
    text = path.read_text()
    assert "review = false" in text
    path.write_text(text.replace("review = false", "review = true"))
    assert agent.config.review is True


def test_unknown_key_in_agent_table_is_an_error(tmp_path):
    path = write(tmp_path / "agent.toml", "[agent]\nname = 'x'\nreveiw = true\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: agent.reveiw: unknown key")):
        config_mod.load(None, path)


def test_a_key_after_a_table_header_gets_a_hint(tmp_path):
    # B9: `review = true` appended at the end of agent.toml lands inside [sources]
    path = write(tmp_path / "agent.toml", "[sources]\nclaude_code = []\nreview = true\n")
    with pytest.raises(ConfigError, match=r"sources\.review: unknown key .*above the first \[table\]"):
        config_mod.load(None, path)
    path = write(tmp_path / "config.toml", "[model]\nbackend = 'offline'\nthreshold = 1\n")
    with pytest.raises(ConfigError, match=r"model\.threshold: unknown key .*belongs in \[signals\]"):
        config_mod.load(path)


def test_an_agent_name_that_is_not_the_folders_is_a_warning(tmp_path):
    # C18: [agent] name = "other" was accepted silently
    path = write(tmp_path / "helper" / "agent.toml", "[agent]\nname = 'other'\n")
    [warning] = config_mod.load(None, path).warnings
    assert warning.startswith(f"{path}: agent.name: 'other' is not this agent's name ('helper'")
    write(path, "[agent]\nname = 'helper'\n")
    assert config_mod.load(None, path).warnings == ()


def test_a_broken_phrase_list_is_one_line_naming_the_file(evolve_home, capsys):
    # B7: `observe` crashed with AttributeError (exit 3) on en = [1, 2]
    from evolve.cli import main

    assert main(["init", "a"]) == 0
    write(evolve_home / "config.toml", "[signals.correction_phrases]\nen = [1, 2]\n")
    capsys.readouterr()
    assert main(["observe", "a"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"evolve: error: {evolve_home / 'config.toml'}: signals.correction_phrases: ")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "url", ["", "http://127.0.0.1:8080", "https://api.example.com/v1", "http://[::1]:11434", "HTTP://Host"]
)
def test_a_model_server_url_is_taken_as_written(tmp_path, url):
    cfg = config_mod.load(
        write(tmp_path / "config.toml", f"[model]\nbase_url = '{url}'\nname = 'llama3.1:8b'\n")
    )
    assert (cfg.model.base_url, cfg.model.name) == (url, "llama3.1:8b")


@pytest.mark.parametrize("where", ["home", "agent"])
def test_a_fifo_for_a_config_file_is_one_line_not_a_command_that_waits(evolve_home, where):
    # read_bytes() of a FIFO with no writer waits forever: status, doctor, skills, agents, the cycle
    import os
    import subprocess
    import sys

    agent = make_agent("cfg")
    path = evolve_home / "config.toml" if where == "home" else agent.path / "agent.toml"
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    env = {**os.environ, "EVOLVE_NO_WATCHER": "1"}
    for command in (["status"], ["doctor"], ["skills", "cfg"], ["agents"], ["cycle"]):
        ran = subprocess.run(
            [sys.executable, "-m", "evolve", *command], capture_output=True, text=True, timeout=30, env=env
        )
        assert "Traceback" not in ran.stderr, (command, ran.stderr)
    ran = subprocess.run(
        [sys.executable, "-m", "evolve", "doctor"], capture_output=True, text=True, timeout=30, env=env
    )
    assert f"{path.name}: is not a regular file" in ran.stdout + ran.stderr, ran


@pytest.mark.parametrize("target", ["config.toml", "memo.md/config.toml"], ids=["loop", "through-a-file"])
def test_a_config_link_that_cannot_be_read_is_one_line_not_an_internal_error(evolve_home, capsys, target):
    # `ln -s config.toml config.toml` (ELOOP), or a link through a file (ENOTDIR): status, doctor,
    # skills, reflect and init stopped with "internal error: OSError" and a crash report
    from evolve import cli

    make_agent("cfg")
    (evolve_home / "memo.md").write_text("a file\n")
    (evolve_home / "config.toml").symlink_to(target)
    for command in (["status"], ["doctor"], ["skills", "cfg"]):
        code = cli.main(command)
        out, err = capsys.readouterr()
        assert code != 3 and "internal error" not in out + err, (command, err)  # status: a warning, exit 0
        assert f"{evolve_home / 'config.toml'}: cannot be read" in out + err, (command, out, err)
        assert command == ["doctor"] or err.count("\n") == 1, (command, err)  # doctor: a finding among others
    assert cli.main(["init", "other"]) == 0  # the home's settings are not needed to make an agent
