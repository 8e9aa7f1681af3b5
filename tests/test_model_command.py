"""`evolve model`: a newcomer chooses the model by command; their config.toml keeps every byte.

Newcomer finding 9 (no command wrote config.toml: it had to be written by hand) and 12 (the
key came only from the environment of whoever started the watcher). Each test plays the
person: a config.toml written in their own style, the command, then the file's bytes.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from evolve import cli, tomledit
from evolve.errors import EXIT_OK, EXIT_USER
from evolve.home import Home
from tests.helpers import make_agent

FAKE_CLAUDE_DIR = Path(__file__).resolve().parent / "fake_claude"
KEY = "sk-ant-api03-day-one-key-0123456789abcdef"

# A person's config.toml: comments everywhere, their own spacing, a [model] in the middle.
PERSONS = """# evolve settings — mine, keep my notes
[schedule]
cycle_hours = 6   # twice a day

[model]   # which model reflects
backend = "offline"     # for now: nothing leaves the machine
max_tokens  =  8000

# hearing
[signals]
threshold = 0.5
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(evolve_home) -> Home:
    home = Home.resolve()
    home.ensure()
    return home


@pytest.fixture
def key_file(tmp_path) -> Path:
    path = tmp_path / "keys" / "anthropic.key"
    path.parent.mkdir()
    path.write_text(KEY + "\n")
    path.chmod(0o600)
    return path


def test_alone_it_says_offline_and_how_to_choose_a_model(capsys, home):
    code, out, _ = run(capsys, "model")
    assert code == EXIT_OK
    assert out.startswith("model: offline — no model is called")
    assert "`evolve model anthropic`" in out and "`evolve model claude-cli`" in out
    code, out, _ = run(capsys, "model", "--json")
    view = json.loads(out)
    assert (view["backend"], view["key"], view["problem"], view["changed"]) == ("offline", None, None, False)
    assert not home.config_file.exists()  # showing writes nothing


def test_choosing_edits_only_the_model_keys_and_keeps_every_other_byte(capsys, home, fake_messages_api):
    home.config_file.write_text(PERSONS)
    code, out, _ = run(
        capsys, "model", "anthropic", "--base-url", fake_messages_api.url, "--model", "claude-x"
    )
    assert code == EXIT_OK, out
    assert home.config_file.read_text() == PERSONS.replace(
        'backend = "offline"     # for now', 'backend = "anthropic"     # for now'
    ).replace(
        "max_tokens  =  8000\n",
        f'max_tokens  =  8000\nname = "claude-x"\nbase_url = "{fake_messages_api.url}"\n',
    )
    assert out.startswith(
        f'set: [model] backend = "anthropic", name = "claude-x", base_url = "{fake_messages_api.url}"'
    )
    assert f"model: anthropic — claude-x at {fake_messages_api.url}" in out
    assert "none needed for this server" in out  # a local server: no key
    assert "`evolve reflect NAME --dry-run`" in out
    again = home.config_file.read_bytes()
    code, out, _ = run(capsys, "model", "anthropic", "--base-url", fake_messages_api.url)
    assert code == EXIT_OK and out.startswith("already: [model]") and home.config_file.read_bytes() == again


def test_crlf_a_byte_order_mark_and_no_model_table(capsys, home, monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKE_CLAUDE_DIR}{os.pathsep}{os.environ['PATH']}")
    person = "\ufeff[schedule]\r\ncycle_hours = 3\r\n"  # no final blank line, Windows line ends
    home.config_file.write_bytes(person.encode("utf-8"))
    assert run(capsys, "model", "claude-cli")[0] == EXIT_OK
    assert home.config_file.read_bytes() == (person + '\r\n[model]\r\nbackend = "claude-cli"\r\n').encode(
        "utf-8"
    )
    assert run(capsys, "model", "offline")[0] == EXIT_OK
    assert home.config_file.read_bytes() == (person + '\r\n[model]\r\nbackend = "offline"\r\n').encode(
        "utf-8"
    )


def test_a_key_file_replaces_the_variable_and_back(capsys, home, key_file, monkeypatch):
    home.config_file.write_text('[model]\nbackend = "anthropic"\napi_key_env = "MY_KEY"  # work key\n')
    code, out, _ = run(capsys, "model", "anthropic", "--key-file", str(key_file))
    assert code == EXIT_OK, out
    assert home.config_file.read_text() == f'[model]\nbackend = "anthropic"\napi_key_file = "{key_file}"\n'
    assert f"API key: read from {key_file} at each call, whoever starts the watcher" in out
    assert KEY not in out
    monkeypatch.setenv("MY_KEY", KEY)
    assert run(capsys, "model", "--key-env", "MY_KEY")[0] == EXIT_OK
    assert home.config_file.read_text() == '[model]\nbackend = "anthropic"\napi_key_env = "MY_KEY"\n'
    code, out, _ = run(capsys, "model")
    assert "API key: $MY_KEY (set in this shell); a watcher has only the variables it was started with" in out
    assert KEY not in out


@pytest.mark.parametrize(
    "argv, environ, complaint",
    [
        (["anthropic"], {}, "ANTHROPIC_API_KEY is not set; export it, keep the key in a file"),
        (["anthropic", "--key-env", "WORK KEY"], {}, "api_key_env: must name an environment variable"),
        (["claude-cli"], {"PATH": "/nonexistent"}, "`claude` is not on PATH"),
        (["anthropic", "--base-url", "ftp://127.0.0.1/"], {}, "must be an http:// or https:// URL"),
        (["anthropic", "--model", " "], {"ANTHROPIC_API_KEY": KEY}, "--model is empty"),
    ],
    ids=["no-key", "bad-variable", "no-claude", "bad-url", "empty-model"],
)
def test_a_choice_that_cannot_reflect_is_refused_and_nothing_changes(
    capsys, home, monkeypatch, argv, environ, complaint
):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    home.config_file.write_text(PERSONS)
    code, out, err = run(capsys, "model", *argv)
    assert code == EXIT_USER and out == ""
    assert err.count("\n") == 1 and complaint in err, err
    assert home.config_file.read_text() == PERSONS


def test_key_files_that_cannot_give_a_key_are_refused_without_quoting_them(capsys, home, tmp_path):
    home.config_file.write_text(PERSONS)
    two_lines = tmp_path / "notes.txt"
    two_lines.write_text(f"{KEY}\nmy other password hunter2\n")
    agent = make_agent("helper")
    for path, complaint in [
        (tmp_path / "missing.key", "no such file"),
        (two_lines, "must hold only the key, on one line"),
        (tmp_path, "is a folder"),
        (agent.path / "anthropic.key", "inside an agent's repository"),
    ]:
        code, out, err = run(capsys, "model", "anthropic", "--key-file", str(path))
        assert code == EXIT_USER and complaint in err, err
        assert KEY not in err and "hunter2" not in err
        assert home.config_file.read_text() == PERSONS


def test_a_key_file_others_can_read_is_taken_with_a_warning(capsys, home, key_file):
    key_file.chmod(0o644)
    code, _, err = run(capsys, "model", "anthropic", "--key-file", str(key_file))
    assert code == EXIT_OK and f"`chmod 600 {key_file}`" in err
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o644  # the person's file: said, not changed


@pytest.mark.parametrize(
    "written",
    [
        'model = { backend = "offline" }\n',
        'model.backend = "offline"\n',
        '[model]\nname = """claude-x"""\n',
    ],
    ids=["inline", "dotted", "multi-line-string"],
)
def test_a_model_table_written_another_way_is_left_for_the_person(capsys, home, written, fake_messages_api):
    home.config_file.write_text(written)
    code, _, err = run(
        capsys, "model", "anthropic", "--base-url", fake_messages_api.url, "--model", "claude-y"
    )
    assert code == EXIT_USER and "edit [model] by hand" in err and "nothing was changed" in err
    assert home.config_file.read_text() == written


def test_a_file_that_is_not_toml_is_named_and_kept(capsys, home):
    home.config_file.write_text("[model\nbackend = offline\n")
    code, _, err = run(capsys, "model", "offline")
    assert code == EXIT_USER and "not valid TOML" in err and "fix the file first" in err
    assert home.config_file.read_text() == "[model\nbackend = offline\n"


def test_the_environment_override_and_agents_with_their_own_model_are_named(capsys, home, monkeypatch):
    agent = make_agent("helper")
    (agent.path / "agent.toml").write_text('[model]\nbackend = "claude-cli"\nname = "opus"\n')
    monkeypatch.setenv("PATH", f"{FAKE_CLAUDE_DIR}{os.pathsep}{os.environ['PATH']}")
    code, out, _ = run(capsys, "model")
    assert code == EXIT_OK and out.startswith("model: offline — ")
    assert "agent helper: its own [model] wins for it: claude-cli (opus)" in out
    monkeypatch.setenv("EVOLVE_MODEL_BACKEND", "claude-cli")
    code, out, _ = run(capsys, "model")
    assert out.startswith("model: claude-cli (EVOLVE_MODEL_BACKEND=claude-cli in this shell)")


@pytest.mark.parametrize(
    "text, values",
    [
        ("", {"backend": "anthropic"}),
        ("[model]", {"backend": "anthropic", "name": 'a "quoted"\tname\x7f'}),
        ("[model]\nbackend = 'offline' # literal\n[x]\n", {"backend": "claude-cli", "base_url": None}),
        ('[model]\n  backend = "offline"\n  name = "n"\n\n\n[limits]\nmax_skills = 3\n', {"name": None}),
        ("[limits]\nmax_skills = 3", {"backend": "offline"}),
    ],
)
def test_set_keys_changes_exactly_the_asked_keys(text, values):
    edited = tomledit.set_keys(text, "model", values)
    parsed = tomledit.checked(text, edited, "model", values)
    assert parsed == tomllib.loads(edited)
    expected = {k: v for k, v in {**tomllib.loads(text).get("model", {}), **values}.items() if v is not None}
    assert parsed.get("model", {}) == expected
    untouched = [line for line in text.splitlines() if not any(line.strip().startswith(k) for k in values)]
    assert all(line in edited.splitlines() for line in untouched)


@pytest.mark.parametrize("kind", ["fifo", "loop"])
def test_a_config_that_is_no_file_is_named_and_kept_not_waited_on(home, kind):
    # `evolve model offline` read config.toml with a plain read: a FIFO there held it forever,
    # a link loop was an internal error
    import subprocess
    import sys

    os.mkfifo(home.config_file) if kind == "fifo" else home.config_file.symlink_to("config.toml")
    ran = subprocess.run(
        [sys.executable, "-m", "evolve", "model", "offline"], capture_output=True, text=True, timeout=30
    )
    assert ran.returncode == EXIT_USER and ran.stderr.count("\n") == 1, ran.stderr
    assert f"{home.config_file}: " in ran.stderr and "internal error" not in ran.stderr
    mode = os.lstat(home.config_file).st_mode
    assert stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISLNK(mode)  # left as the person made it
