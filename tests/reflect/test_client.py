"""The model seam, tested where it meets the outside.

The real anthropic SDK over real HTTP to a fake Messages API on 127.0.0.1, `claude -p`
through a fake executable on PATH, and the queue-backed FakeClient.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from evolve.config import ModelConfig
from evolve.reflect.client import (
    LOCAL_KEY,
    NO_CLAUDE,
    Answer,
    AnthropicClient,
    ClaudeCliClient,
    FakeClient,
    ReflectionFailed,
    ReflectionRequest,
    make_client,
)
from evolve.reflect.keys import missing_env
from evolve.reflect.operations import TOOL_SCHEMA

KEY = "sk-ant-api03-test-key-0123456789"
PROMPT = "You reflect on an agent's recent work. Nothing to save is a good answer."
BUNDLE = "## Conversation 1\nuser: never push to main\nassistant: understood"
GOOD = {
    "summary": "learn a rule",
    "operations": [
        {"op": "update_memo", "section": "strategies", "content": "- When pushing, never push to main."}
    ],
}
REQUEST = ReflectionRequest(system=PROMPT, user=BUNDLE, tool=TOOL_SCHEMA)
FAKE_CLAUDE = Path(__file__).resolve().parents[1] / "fake_claude" / "claude"


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    """The SDK honours proxy variables; tests talk to 127.0.0.1 directly."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


class Connections:
    """Every socket connect() of this process; `blocked` makes each one fail."""

    def __init__(self) -> None:
        self.seen: list = []
        self.blocked = False


@pytest.fixture
def connections(monkeypatch) -> Connections:
    log = Connections()
    real = socket.socket.connect

    def guarded(sock, address):
        log.seen.append(address)
        if log.blocked:
            raise OSError("network blocked by the test")
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return log


def anthropic_config(api, **overrides) -> ModelConfig:
    base = ModelConfig(
        backend="anthropic",
        name="claude-test-model",
        base_url=api.url,
        max_tokens=1234,
        timeout_s=5.0,
        max_retries=0,
    )
    return replace(base, **overrides)


def sent_key(headers: dict) -> str:
    """The credential as sent: SDK 2.x uses `Authorization: Bearer`, older ones `x-api-key`."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def failure(client, request=REQUEST) -> ReflectionFailed:
    with pytest.raises(ReflectionFailed) as caught:
        client.reflect(request)
    return caught.value


# -- anthropic: the request ---------------------------------------------------------------


def test_request_offers_the_tool_with_prompt_bundle_model_and_key(fake_messages_api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake_messages_api.reply_tool(GOOD, model="claude-test-model-2026", input_tokens=900, output_tokens=70)
    answer = AnthropicClient(anthropic_config(fake_messages_api)).reflect(REQUEST)
    assert answer == Answer(GOOD, "claude-test-model-2026", 900, 70)
    [seen] = fake_messages_api.requests
    assert seen.path == "/v1/messages"
    assert sent_key(seen.headers) == KEY
    body = seen.body
    assert body["tool_choice"] == {"type": "auto"}  # the default model refuses a forced choice
    assert body["tools"] == [json.loads(json.dumps(TOOL_SCHEMA))]
    assert body["system"] == PROMPT
    assert body["messages"] == [{"role": "user", "content": BUNDLE}]
    assert (body["model"], body["max_tokens"]) == ("claude-test-model", 1234)


def test_local_server_without_a_key_gets_a_placeholder(fake_messages_api):
    fake_messages_api.reply_tool(GOOD)
    AnthropicClient(anthropic_config(fake_messages_api)).reflect(REQUEST)
    assert sent_key(fake_messages_api.requests[0].headers) == LOCAL_KEY


@pytest.mark.parametrize("base_url", ["", "https://api.anthropic.com"])
def test_missing_key_for_the_real_api_fails_before_any_socket(base_url, connections):
    connections.blocked = True
    error = failure(AnthropicClient(ModelConfig(backend="anthropic", base_url=base_url)))
    assert (error.reason, error.transient) == (missing_env("ANTHROPIC_API_KEY"), False)
    assert connections.seen == []


def test_the_key_comes_from_the_file_model_names_read_at_each_call(fake_messages_api, tmp_path, monkeypatch):
    """Newcomer 12: the key no longer depends on the environment of whoever started the watcher."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-shells-key-not-this-one")
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(f"  {KEY}\n")
    client = AnthropicClient(anthropic_config(fake_messages_api, api_key_file=str(key_file)))
    fake_messages_api.reply_tool(GOOD)
    fake_messages_api.reply_tool(GOOD)
    client.reflect(REQUEST)
    key_file.write_text(KEY + "-rotated\n")  # rotated while the watcher runs: the next call has it
    client.reflect(REQUEST)
    assert [sent_key(r.headers) for r in fake_messages_api.requests] == [KEY, KEY + "-rotated"]


def test_the_key_comes_from_the_variable_model_names(fake_messages_api, monkeypatch, connections):
    monkeypatch.setenv("WORK_ANTHROPIC_KEY", KEY)
    fake_messages_api.reply_tool(GOOD)
    AnthropicClient(anthropic_config(fake_messages_api, api_key_env="WORK_ANTHROPIC_KEY")).reflect(REQUEST)
    assert sent_key(fake_messages_api.requests[0].headers) == KEY
    connections.blocked = True
    error = failure(AnthropicClient(ModelConfig(backend="anthropic", api_key_env="WORK_ANTHROPIC_KEY_2")))
    assert error.reason == missing_env("WORK_ANTHROPIC_KEY_2") and not error.transient


@pytest.mark.parametrize(
    "content, problem",
    [
        (None, "no such file"),
        ("", "is empty"),
        (f"{KEY}\nhunter2\n", "must hold only the key, on one line"),
        (b"\xff\xfe" + KEY.encode(), "must hold only the key, on one line"),
        (KEY.encode() + b" " * (1 << 20), "is over 4,096 bytes; it must hold only the key, on one line"),
    ],
    ids=["missing", "empty", "two-lines", "not-text", "over-the-bound"],
)
def test_a_key_file_that_gives_no_key_fails_before_any_socket_and_is_never_quoted(
    content, problem, tmp_path, connections, fake_messages_api
):
    key_file = tmp_path / "anthropic.key"
    if isinstance(content, bytes):
        key_file.write_bytes(content)
    elif content is not None:
        key_file.write_text(content)
    connections.blocked = True
    for base_url in ("", fake_messages_api.url):  # a named file must give a key, even for a local server
        error = failure(
            AnthropicClient(ModelConfig(backend="anthropic", base_url=base_url, api_key_file=str(key_file)))
        )
        assert error.reason.startswith(f"model.api_key_file {key_file}: {problem}") and not error.transient
        assert KEY not in error.reason and "hunter2" not in error.reason
    assert connections.seen == []


def test_connects_only_to_the_configured_base_url(fake_messages_api, connections, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.2:9")  # config wins over the env
    fake_messages_api.reply_tool(GOOD)
    AnthropicClient(anthropic_config(fake_messages_api)).reflect(REQUEST)
    seen = {address[:2] for address in connections.seen}
    assert seen == {("127.0.0.1", fake_messages_api.port)}
    assert fake_messages_api.requests[0].host == f"127.0.0.1:{fake_messages_api.port}"


def test_base_url_from_the_environment_when_config_has_none(fake_messages_api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    fake_messages_api.reply_tool(GOOD)
    config = anthropic_config(fake_messages_api, base_url="")
    assert AnthropicClient(config).reflect(REQUEST).tool_input == GOOD


# -- anthropic: answers that are not an answer -------------------------------------------


@pytest.mark.parametrize(
    "queue, words",
    [
        (lambda api: api.reply_text("I think nothing needs saving."), "did not call apply_reflection"),
        (lambda api: api.reply_tool(GOOD, stop_reason="max_tokens"), "model.max_tokens=1234"),
        (lambda api: api.reply_tool(GOOD, name="some_other_tool"), "did not call apply_reflection"),
        (lambda api: api.reply_message([], stop_reason="refusal"), "refused"),
        (
            lambda api: api.reply_raw('{"id": "msg_1", "content": [{"type": "tool_use", "input": {"summ'),
            "unexpected response",
        ),
        (lambda api: api.reply_raw("<html>gateway</html>"), "unexpected response"),
    ],
    ids=["no-tool-call", "truncated", "wrong-tool", "refusal", "truncated-json", "not-json"],
)
def test_malformed_answers_fail_for_good(fake_messages_api, queue, words):
    queue(fake_messages_api)
    error = failure(AnthropicClient(anthropic_config(fake_messages_api)))
    assert words in error.reason and not error.transient


@pytest.mark.parametrize("status", [429, 500, 503, 529])
def test_rate_limits_and_server_errors_are_transient(fake_messages_api, status):
    fake_messages_api.reply_error(status, "Overloaded" if status == 529 else "try later")
    error = failure(AnthropicClient(anthropic_config(fake_messages_api)))
    assert error.transient and f"HTTP {status}" in error.reason
    assert len(fake_messages_api.requests) == 1  # max_retries=0 is honoured


@pytest.mark.parametrize(
    "status, remedy",
    [
        (401, "authentication failed: check the key in $ANTHROPIC_API_KEY"),
        (403, "permission denied"),
        (404, "check model.name (claude-test-model)"),
        (400, "bad request"),
    ],
)
def test_client_errors_are_not_transient_and_name_the_remedy(fake_messages_api, status, remedy):
    fake_messages_api.reply_error(status, "invalid x-api-key")
    error = failure(AnthropicClient(anthropic_config(fake_messages_api)))
    assert remedy in error.reason and not error.transient
    assert "\n" not in error.reason


def test_timeout_is_transient(fake_messages_api):
    fake_messages_api.reply_tool(GOOD, delay=3)
    error = failure(AnthropicClient(anthropic_config(fake_messages_api, timeout_s=0.3)))
    assert error.transient and "timed out after 0.3s" in error.reason


def test_refused_connection_is_transient():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ModelConfig(
        backend="anthropic",
        name="claude-test-model",
        base_url=f"http://127.0.0.1:{port}",
        max_retries=0,
        timeout_s=2,
    )
    error = failure(AnthropicClient(config))
    assert error.transient and f"127.0.0.1:{port}" in error.reason


def test_a_base_url_that_is_not_http_is_refused():
    error = failure(AnthropicClient(ModelConfig(backend="anthropic", base_url="file:///etc/passwd")))
    assert "model.base_url" in error.reason and not error.transient


# -- claude-cli ---------------------------------------------------------------------------


class FakeClaude:
    """The fake executable, first on PATH; `answer()` sets what it prints."""

    def __init__(self, root: Path, monkeypatch) -> None:
        bin_dir = root / "bin"
        bin_dir.mkdir()
        script = FAKE_CLAUDE.read_text().split("\n", 1)[1]
        self.exe = bin_dir / "claude"
        self.exe.write_text(f"#!{sys.executable}\n{script}")  # this interpreter, not a PATH lookup
        self.exe.chmod(0o755)
        self.record_path = root / "record.json"
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(self.record_path))

    def answer(
        self,
        result: str | None = None,
        *,
        raw: str | None = None,
        exit: int = 0,
        stderr: str = "",
        sleep: float = 0,
        **envelope,
    ) -> None:
        if raw is None:
            raw = json.dumps(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "result": result,
                    "session_id": "0f6c1a2e",
                    **envelope,
                }
            )
        for name, value in (("OUTPUT", raw), ("EXIT", str(exit)), ("STDERR", stderr), ("SLEEP", str(sleep))):
            self.monkeypatch.setenv(f"FAKE_CLAUDE_{name}", value)

    def record(self) -> dict:
        return json.loads(self.record_path.read_text())


@pytest.fixture
def fake_claude(tmp_path, monkeypatch) -> FakeClaude:
    return FakeClaude(tmp_path, monkeypatch)


def cli_config(**overrides) -> ModelConfig:
    return replace(ModelConfig(backend="claude-cli", name="claude-test-model", timeout_s=10), **overrides)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_claude_runs_without_hooks_tools_or_session_and_its_answer_is_parsed(fake_claude):
    usage = {"input_tokens": 12, "cache_read_input_tokens": 3000, "output_tokens": 55}
    by_model = {"claude-haiku-x": {"outputTokens": 3}, "claude-test-model": {"outputTokens": 55}}
    fake_claude.answer(json.dumps(GOOD), usage=usage, modelUsage=by_model)
    answer = ClaudeCliClient(cli_config()).reflect(REQUEST)
    assert answer == Answer(GOOD, "claude-test-model", 3012, 55)
    seen = fake_claude.record()
    argv = seen["argv"]
    assert argv[0] == "-p" and flag(argv, "--output-format") == "json"
    assert "--no-session-persistence" in argv
    assert json.loads(flag(argv, "--settings")) == {"disableAllHooks": True}
    assert flag(argv, "--tools") == "" and flag(argv, "--max-turns") == "1"
    assert flag(argv, "--model") == "claude-test-model"
    system = flag(argv, "--system-prompt")
    assert system.startswith(PROMPT) and '"operations"' in system and "ONLY one JSON object" in system
    assert seen["stdin"] == BUNDLE and BUNDLE not in " ".join(argv)
    assert seen["env"]["EVOLVE_DISABLE_HOOKS"] == "1"
    assert not Path(seen["cwd"]).exists()  # a scratch folder, removed afterwards


@pytest.mark.parametrize(
    "result",
    [
        f"```json\n{json.dumps(GOOD, indent=2)}\n```",
        f"Here is my reflection:\n\n```\n{json.dumps(GOOD)}\n```\n",
        f"Here is my reflection: {json.dumps(GOOD)}",
    ],
    ids=["json-fence", "bare-fence", "after-prose"],
)
def test_claude_answer_in_a_fence_or_after_prose(fake_claude, result):
    fake_claude.answer(result)
    answer = ClaudeCliClient(cli_config()).reflect(REQUEST)
    assert answer.tool_input == GOOD and answer.model == "claude-test-model"


@pytest.mark.parametrize(
    "kwargs, words, transient",
    [
        ({"raw": "", "exit": 1, "stderr": "Invalid API key · Please run /login"}, "Invalid API key", False),
        ({"raw": "", "exit": 1, "stderr": "API Error: 529 Overloaded"}, "exit 1", True),
        ({"raw": "Segmentation fault"}, "printed no JSON result", False),
        ({"result": "I would rather not answer in JSON."}, "no JSON object", False),
        ({"result": "[1, 2, 3]"}, "no JSON object", False),
        ({"result": "Reached max turns", "is_error": True, "subtype": "error_max_turns"}, "max turns", False),
    ],
    ids=["auth", "overloaded", "garbage", "prose", "not-an-object", "is-error"],
)
def test_claude_failures(fake_claude, kwargs, words, transient):
    fake_claude.answer(**kwargs)
    error = failure(ClaudeCliClient(cli_config()))
    assert words in error.reason and error.transient is transient


def test_claude_timeout_is_transient(fake_claude):
    fake_claude.answer(json.dumps(GOOD), sleep=10)
    error = failure(ClaudeCliClient(cli_config(timeout_s=0.5)))
    assert error.transient and "timed out" in error.reason


def test_claude_missing_from_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    error = failure(ClaudeCliClient(cli_config()))
    assert (error.reason, error.transient) == (NO_CLAUDE, False)


# -- the fake and the registry ------------------------------------------------------------


def test_fake_client_answers_from_its_queue_and_records_requests():
    answer = Answer(GOOD, "fake-model", 10, 2)
    fake = FakeClient([answer, ReflectionFailed("rate limited", transient=True), {"operations": []}])
    assert fake.reflect(REQUEST) is answer
    with pytest.raises(ReflectionFailed, match="rate limited") as caught:
        fake.reflect(REQUEST)
    assert caught.value.transient
    assert fake.reflect(REQUEST) == Answer({"operations": []}, "fake", 0, 0)
    assert fake.requests == [REQUEST] * 3 and fake.name == "fake"
    with pytest.raises(AssertionError, match="no answer queued"):
        fake.reflect(REQUEST)


def test_make_client_picks_the_configured_backend():
    offline = FakeClient()
    assert make_client(ModelConfig(), offline=offline) is offline
    assert make_client(ModelConfig(backend="anthropic")).name == "anthropic"
    assert make_client(ModelConfig(backend="claude-cli")).name == "claude-cli"
    with pytest.raises(ValueError, match="offline reflector"):
        make_client(ModelConfig())


def test_importing_the_client_does_not_import_anthropic():
    code = "import sys, evolve.reflect.client; print('anthropic' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == "False"


def test_the_fake_executable_is_executable():
    assert os.access(FAKE_CLAUDE, os.X_OK) and shutil.which("claude", path=str(FAKE_CLAUDE.parent))
