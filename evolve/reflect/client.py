"""The model seam: one reflection request in, the raw `apply_reflection` input out.

Everything above this module talks to a `ReflectionClient`. Only this module knows the
anthropic SDK (imported inside the call, so light commands and hooks never load it) and
the `claude` command line. A failed call raises `ReflectionFailed`; `transient` tells the
caller whether waiting may help (network, rate limit, overload) or a person must act (key,
model name, truncated answer). The answer is untrusted and returned as-is: it is
validated by `operations.parse_answer`, never here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol
from urllib.parse import urlsplit

from evolve.errors import ConfigError, EvolveError
from evolve.reflect import keys
from evolve.reflect.keys import NO_CLAUDE
from evolve.transcripts.redact import redact

if TYPE_CHECKING:
    from evolve.config import ModelConfig

TOOL_NAME = "apply_reflection"
LOCAL_KEY = "evolve-local"  # sent to a non-Anthropic base_url when no key is set (Ollama needs none)
_TRANSIENT_TEXT = re.compile(
    r"overload|rate.?limit|too many requests|\b(?:429|5\d\d)\b|timed? ?out|timeout|temporarily"
    r"|ECONNRESET|ECONNREFUSED|ETIMEDOUT|network|connection (?:error|reset|refused)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class ReflectionRequest:
    """What one reflection sends: the prompt, the rendered bundle, the tool to force."""

    system: str
    user: str
    tool: dict
    bundle: Any = None  # the structured bundle, for the offline reflector only


@dataclass(frozen=True)
class Answer:
    """The raw tool input (untrusted) and what the call cost."""

    tool_input: Any
    model: str
    input_tokens: int
    output_tokens: int


class ReflectionFailed(EvolveError):
    """A failed model call: recorded by the caller, which leaves the agent dirty."""

    def __init__(self, reason: str, *, transient: bool = False) -> None:
        line = redact(" ".join(str(reason).split()))  # one line, capped: it lands in logs and state.db
        self.reason = line if len(line) <= 300 else line[:299] + "…"
        self.transient = transient
        super().__init__(self.reason)


class ReflectionClient(Protocol):
    """A backend: `name` is "anthropic", "claude-cli", "offline" or "fake"."""

    name: str

    def reflect(self, request: ReflectionRequest) -> Answer: ...


@dataclass(frozen=True)
class AnthropicClient:
    """The Messages API through the anthropic SDK; the answer is the model's call of the one tool.

    `tool_choice` is "auto": newer models (the default among them) refuse a forced tool
    choice with a 400, and the prompt already asks for exactly one call of the tool.
    """

    config: ModelConfig
    name: ClassVar[str] = "anthropic"

    def reflect(self, request: ReflectionRequest) -> Answer:
        base_url = keys.base_url(self.config, os.environ)
        problem = keys.problem(self.config)
        if problem:  # before the SDK is even imported: no socket opened
            raise ReflectionFailed(problem)
        key = keys.read(self.config)[0] or LOCAL_KEY  # read now: never kept, logged or stored
        import anthropic

        tool_name = request.tool.get("name", TOOL_NAME)
        timeout = self.config.timeout_s
        params: dict[str, Any] = {  # a plain dict: the schema is ours, not the SDK's TypedDicts
            "model": self.config.name,
            "max_tokens": self.config.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
            "tools": [request.tool],
            "tool_choice": {"type": "auto"},
        }
        try:
            # api_key is always explicit, so the SDK reads no profile or credential files.
            with anthropic.Anthropic(
                api_key=key, base_url=base_url or None, timeout=timeout, max_retries=self.config.max_retries
            ) as sdk:
                message = sdk.messages.create(**params)
        except anthropic.APIStatusError as exc:
            raise _status_failure(exc, self.config) from exc
        except anthropic.APITimeoutError as exc:
            raise ReflectionFailed(f"the model call timed out after {timeout:g}s", transient=True) from exc
        except anthropic.APIConnectionError as exc:
            where = urlsplit(base_url).netloc if base_url else "api.anthropic.com"
            cause = exc.__cause__ or exc
            raise ReflectionFailed(f"could not connect to {where}: {cause}", transient=True) from exc
        except (anthropic.AnthropicError, ValueError) as exc:
            raise ReflectionFailed(f"unexpected response from the model API: {exc}") from exc
        return _message_answer(message, tool_name, self.config)


_REMEDIES = {
    400: "bad request: check model.name and model.max_tokens",
    401: "authentication failed: check the key in {key}",
    402: "payment required: check billing",
    403: "permission denied: check that the key in {key} may use model {name}",
    404: "not found: check model.name ({name}) and model.base_url",
    413: "request too large: lower limits.bundle_tokens",
}


def _status_failure(exc: Any, config: ModelConfig) -> ReflectionFailed:
    """Map an HTTP error to a one-line reason; 408/409/429/5xx are worth retrying later."""
    status = int(exc.status_code)
    detail = getattr(exc, "api_message", None) or ""
    suffix = f" (HTTP {status}{': ' + detail if detail else ''})"
    if status in (408, 409, 429) or status >= 500:
        what = {429: "rate limited", 529: "the model API is overloaded"}.get(status, "the model API failed")
        return ReflectionFailed(f"{what}; will retry at a later cycle{suffix}", transient=True)
    remedy = _REMEDIES.get(status, "the model API refused the request")
    remedy = remedy.format(name=config.name, key=keys.source(config))
    return ReflectionFailed(remedy + suffix)


def _message_answer(message: Any, tool_name: str, config: ModelConfig) -> Answer:
    stop = getattr(message, "stop_reason", None)
    if stop == "max_tokens":
        raise ReflectionFailed(f"the answer was cut off at model.max_tokens={config.max_tokens}; raise it")
    content = getattr(message, "content", None)
    for block in content if isinstance(content, list) else []:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == tool_name:
            tokens_in, tokens_out = _tokens(getattr(message, "usage", None))
            model = getattr(message, "model", None)
            return Answer(
                getattr(block, "input", None),
                model if isinstance(model, str) and model else config.name,
                tokens_in,
                tokens_out,
            )
    if stop == "refusal":
        raise ReflectionFailed("the model refused to answer")
    raise ReflectionFailed(f"the model did not call {tool_name} (stop_reason: {stop})")


def _tokens(usage: Any) -> tuple[int, int]:
    """(input incl. cache reads/writes, output) from an SDK object or a plain dict."""

    def get(key: str) -> int:
        n = usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)
        return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0

    cached = get("cache_creation_input_tokens") + get("cache_read_input_tokens")
    return get("input_tokens") + cached, get("output_tokens")


_CLI_FORMAT = """

## How to answer in this session
You have no tools here. Reply with ONLY one JSON object: no text before or after it, no
Markdown fence. The object is the input of the `{name}` tool ({description}) and must
match this JSON Schema:

{schema}
"""


@dataclass(frozen=True)
class ClaudeCliClient:
    """`claude -p` for Claude Code subscribers: no tools, no hooks, no session saved."""

    config: ModelConfig
    name: ClassVar[str] = "claude-cli"

    def arguments(self, request: ReflectionRequest) -> list[str]:
        """The flags after `claude`; the bundle goes on stdin."""
        tool = request.tool
        system = request.system + _CLI_FORMAT.format(
            name=tool.get("name", TOOL_NAME),
            description=tool.get("description", ""),
            schema=json.dumps(tool.get("input_schema", {}), indent=1),
        )
        return [
            "-p",
            "--output-format",
            "json",
            "--no-session-persistence",
            "--settings",
            json.dumps({"disableAllHooks": True}),
            "--tools",
            "",
            "--strict-mcp-config",
            "--disable-slash-commands",
            "--max-turns",
            "1",
            "--model",
            self.config.name,
            "--system-prompt",
            system,
        ]

    def reflect(self, request: ReflectionRequest) -> Answer:
        exe = shutil.which("claude")
        if exe is None:
            raise ReflectionFailed(NO_CLAUDE)
        env = {**os.environ, "EVOLVE_DISABLE_HOOKS": "1"}
        timeout = self.config.timeout_s
        # an empty working folder: no project CLAUDE.md or project settings reach the prompt
        with tempfile.TemporaryDirectory(prefix="evolve-claude-") as cwd:
            try:
                proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
                    [exe, *self.arguments(request)],
                    input=request.user,
                    capture_output=True,
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    timeout=timeout,
                    cwd=cwd,
                    env=env,
                )
            except subprocess.TimeoutExpired as exc:
                raise ReflectionFailed(f"claude -p timed out after {timeout:g}s", transient=True) from exc
            except OSError as exc:
                raise ReflectionFailed(f"could not run claude: {exc}") from exc
        return _cli_answer(proc, self.config)


def _cli_answer(proc: subprocess.CompletedProcess[str], config: ModelConfig) -> Answer:
    try:
        envelope = json.loads(proc.stdout)
    except ValueError:
        envelope = None
    result = envelope.get("result") if isinstance(envelope, dict) else None
    if proc.returncode != 0:
        detail = (result if isinstance(result, str) else "") or proc.stderr.strip() or proc.stdout.strip()
        raise ReflectionFailed(
            f"claude -p failed (exit {proc.returncode}): {detail or 'no output'}",
            transient=bool(_TRANSIENT_TEXT.search(detail)),
        )
    if not isinstance(envelope, dict):
        raise ReflectionFailed(
            "claude -p printed no JSON result; update Claude Code "
            f"(output began {proc.stdout.strip()[:80]!r})"
        )
    if envelope.get("is_error") or not isinstance(result, str):
        detail = result if isinstance(result, str) and result else str(envelope.get("subtype", "no result"))
        raise ReflectionFailed(
            f"claude -p reported an error: {detail}", transient=bool(_TRANSIENT_TEXT.search(detail))
        )
    tokens_in, tokens_out = _tokens(envelope.get("usage"))
    return Answer(_json_object(result), _cli_model(envelope, config), tokens_in, tokens_out)


def _json_object(text: str) -> dict:
    """The JSON object in a reply: bare, inside a ```json fence, or after a line of prose."""
    fenced = _FENCE.search(text)
    for candidate in ([fenced.group(1)] if fenced else []) + [text]:
        try:  # no "{" at all is a ValueError too
            value, _ = json.JSONDecoder().raw_decode(candidate, candidate.index("{"))
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise ReflectionFailed(f"claude's answer holds no JSON object (it began {text.strip()[:80]!r})")


def _cli_model(envelope: dict, config: ModelConfig) -> str:
    """The model that answered: ours when listed, else the first one Claude Code names."""
    usage = envelope.get("modelUsage")
    names = [m for m in usage if isinstance(m, str)] if isinstance(usage, dict) else []
    return config.name if config.name in names or not names else names[0]


class FakeClient:
    """A queue of answers for scheduler/apply tests: Answer, exception, or a bare tool input."""

    name = "fake"

    def __init__(self, answers: Iterable[Any] = ()) -> None:
        self._queue: deque[Any] = deque(answers)
        self._lock = threading.Lock()
        self.requests: list[ReflectionRequest] = []

    def add(self, *answers: Any) -> None:
        with self._lock:
            self._queue.extend(answers)

    def reflect(self, request: ReflectionRequest) -> Answer:
        with self._lock:
            self.requests.append(request)
            if not self._queue:
                raise AssertionError("FakeClient: no answer queued for this reflection")
            item = self._queue.popleft()
        if isinstance(item, BaseException) or (isinstance(item, type) and issubclass(item, BaseException)):
            raise item
        if isinstance(item, Answer):
            return item
        return Answer(tool_input=item, model="fake", input_tokens=0, output_tokens=0)


BACKENDS: dict[str, type] = {"anthropic": AnthropicClient, "claude-cli": ClaudeCliClient}


def make_client(model_config: ModelConfig, *, offline: ReflectionClient | None = None) -> ReflectionClient:
    """The client for `[model] backend`; "offline" is the reflector the caller passes in."""
    backend = model_config.backend
    if backend == "offline":
        if offline is None:
            raise ValueError("the offline backend needs the offline reflector: pass offline=")
        return offline
    factory = BACKENDS.get(backend)
    if factory is None:
        known = ", ".join(["offline", *BACKENDS])
        raise ConfigError(f"model.backend: unknown backend {backend!r} (known: {known})")
    return factory(model_config)
