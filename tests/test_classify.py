"""Transient errors and user corrections, judged on real-looking text in every language."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evolve.transcripts import classify

PYTEST_FAILURE = """\
Exit code 1
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.4.1, pluggy-1.6.0
plugins: timeout-2.3.1, xdist-3.7.0
collected 3 items

tests/test_api.py F..                                                    [100%]

=================================== FAILURES ===================================
__________________________________ test_retry __________________________________

    def test_retry():
        resp = client.get("/flaky")
>       assert resp.status_code == 503
E       assert 200 == 503

tests/test_api.py:12: AssertionError
=========================== short test summary info ============================
FAILED tests/test_api.py::test_retry - assert 200 == 503
========================= 1 failed, 2 passed in 0.12s ==========================
"""

TRANSIENT = [
    "curl: (28) Connection timed out after 10001 milliseconds",
    "curl: (6) Could not resolve host: api.example.com",
    "npm ERR! code ENOTFOUND\nnpm ERR! syscall getaddrinfo\nnpm ERR! errno ENOTFOUND\n"
    "npm ERR! network request to https://registry.npmjs.org/left-pad failed, "
    "reason: getaddrinfo ENOTFOUND registry.npmjs.org",
    "npm ERR! code E503\nnpm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/x",
    "HTTP/1.1 503 Service Unavailable\nRetry-After: 30",
    "Error: HTTP 502 from upstream",
    "got status 429 from the API, retrying",
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "API Error: Repeated 529 Overloaded errors",
    'API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
    "API Error (Connection error.) · Retrying in 4 seconds… (attempt 4/10)",
    "API Error: Unable to connect to API (ECONNRESET)",
    "Server is temporarily limiting requests (not your usage limit) · Rate limited",
    "anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': "
    "{'type': 'rate_limit_error', 'message': 'Number of request tokens has exceeded'}}",
    "429 Client Error: Too Many Requests for url: https://api.github.com/repos/a/b",
    "requests.exceptions.HTTPError: 504 Server Error: Gateway Time-out for url: https://x.test",
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443):"
    " Max retries exceeded with url: / (Caused by NewConnectionError('<urllib3.connection."
    "HTTPSConnection object at 0x7f>: Failed to establish a new connection: "
    "[Errno 111] Connection refused'))",
    "Error: read ECONNRESET\n    at TCP.onStreamRead (node:internal/stream_base_commons:217:20)",
    "Error: connect ECONNREFUSED 10.0.4.7:5432",
    "curl: (7) Failed to connect to registry.example.com port 443 after 3 ms: Connection refused",
    "Error: connect ETIMEDOUT 104.16.0.35:443",
    "Error: socket hang up\n    at connResetException (node:internal/errors:720:14)",
    "TypeError: fetch failed\n  [cause]: Error: getaddrinfo EAI_AGAIN api.example.com",
    "ssh: Could not resolve hostname github.com: Temporary failure in name resolution\n"
    "fatal: Could not read from remote repository.",
    "socket.gaierror: [Errno -2] Name or service not known",
    "dial tcp: lookup proxy.golang.org: no such host",
    "connect: Network is unreachable",
    "net/http: TLS handshake timeout",
    "Get https://registry-1.docker.io/v2/: context deadline exceeded",
    "Request failed with status code 503",
    "ERROR: HTTP error 503 while getting https://files.pythonhosted.org/pkg.whl",
    "ReadTimeout: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out. (read timeout=15)",
    "error: RPC failed; curl 56 GnuTLS recv error (-9): Error decoding the received TLS packet.",
    "openai.APIConnectionError: Connection error.",
    "Service Unavailable: the server is overloaded, try again later",
    # Claude Code StopFailure error codes, as a hook receives them
    "rate_limit",
    "overloaded",
    "server_error",
]

NOT_TRANSIENT = [
    PYTEST_FAILURE,
    '  File "app.py", line 3\n    print "hi"\n    ^^^^^^^^^^\n'
    "SyntaxError: Missing parentheses in call to 'print'",
    'Traceback (most recent call last):\n  File "main.py", line 1, in <module>\n'
    "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",
    "Error: ENOENT: no such file or directory, open '/app/package.json'",
    "fatal: not a git repository (or any of the parent directories): .git",
    "bash: /usr/local/bin/deploy: Permission denied",
    "curl: (22) The requested URL returned error: 404",
    "HTTP/1.1 404 Not Found",
    "HTTP/1.1 500 Internal Server Error",
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
    '"message":"messages.5: `tool_use` ids were found without `tool_result` blocks"}}',
    'API Error: 401 {"type":"error","error":{"type":"authentication_error",'
    '"message":"OAuth token has expired"}}',
    "Exit code 127\n/bin/bash: line 1: pytest: command not found",
    "<tool_use_error>String to replace not found in file.</tool_use_error>",
    "The user doesn't want to proceed with this tool use. The tool use was rejected.",
    "src/server.ts:503:12 - error TS2345: Argument of type 'string' is not assignable",
    "ls: 503 files, 429 directories",
    "error: call of overloaded 'max(int, long int)' is ambiguous",
    # the agent's own mistakes, not the network's
    "Command timed out after 2m 0.0s",
    "FAIL src/app.test.ts > renders\nError: Test timed out in 5000ms.",
    "TimeoutError: locator.click: Timeout 30000ms exceeded.",
    'Error: Timeout of 2000ms exceeded. For async tests and hooks, ensure "done()" is called',
    "Traceback (most recent call last):\n  File \"rate_limiter.py\", line 9, in allow\nKeyError: 'bucket'",
    "",
]

# The agent's shell could not start: Claude Code and Codex on Windows (Git Bash, Cygwin, MSYS).
WINDOWS_HARNESS = [
    "Error: Command failed: cygpath -u 'C:\\Users\\dev\\AppData\\Local\\Temp'\n"
    "/usr/bin/bash: line 1: cygpath: command not found",
    "Command failed: cygpath -u 'c:\\github\\aei'",
    "      0 [main] bash 1204 child_copy: cygheap read copy failed, 0x800000000..0x80000A3B8, done 0, "
    "windows pid 83352, Win32 error 299",
    "0 [main] bash 998 child_copy: dll data read copy failed, 0xE0C000..0xE25C30, done 0, windows pid 83352",
    "3164712 [main] sh 1894 dofork: child -1 - forked process 7500 died unexpectedly, retry 0, "
    "exit code 0xC0000142, errno 11",
    "      0 [main] bash 11116 fork: child 9828 - died waiting for dll loading, errno 11",
    "      1 [main] zsh 3372 child_info_fork::abort: C:\\cygwin\\bin\\cyggcc_s-1.dll: Loaded to "
    "different address: parent(0x610000) != child(0x1D0000)",
    "0 [main] sh (5480) C:\\Git\\usr\\bin\\sh.exe: *** fatal error - cygheap base mismatch detected",
    "/mingw64/libexec/git-core/git-sh-setup: fork: retry: Resource temporarily unavailable",
    "zsh: fork failed: resource temporarily unavailable",
    "Error: could not fork child process: Resource temporarily unavailable.",
    "Exit code 3221225794",
    "Process exited with code -1073741502",
    "The application was unable to start correctly (0xc0000142). Click OK to close the application.",
    "error: process exited with STATUS_DLL_INIT_FAILED",
]

# A quota or usage limit: it resets, whatever status wraps it (Claude Code, Codex, Gemini).
QUOTAS = [
    'API Error: 400 {"error":{"code":400,"message":"You have exhausted your capacity on this model. '
    'Your quota will reset after 2h3m7s.","status":"RESOURCE_EXHAUSTED"}}',
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"You have '
    'exhausted your capacity on this model. Your quota will reset after 8h44m7s."}}',
    "[API Error: You have exhausted your daily quota on this model.]",
    "[API Error: Resource has been exhausted (e.g. check quota).]",
    "Claude AI usage limit reached|1760000400",
    "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
    "You've hit your limit · resets 8pm (Asia/Tbilisi)",
    "5-hour limit reached ∙ resets 1am",
    "Opus weekly limit reached ∙ resets Oct 9 at 10am",
    "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 3:05 PM.",
    'unexpected status 400 Bad Request: {"error":{"type":"usage_limit_reached","message":"The usage '
    'limit has been reached","resets_in_seconds":3600}}',
]

# Refused by this machine: the agent's own server (or database) was not running. Real.
LOCAL_REFUSED = [
    "Error: connect ECONNREFUSED 127.0.0.1:5432",
    "Error: connect ECONNREFUSED ::1:5173\n    at TCPConnectWrap.afterConnect [as oncomplete]",
    "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server",
    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8000): Max retries "
    "exceeded with url: /api (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at "
    "0x7f2a3c1d>: Failed to establish a new connection: [Errno 111] Connection refused'))",
    'psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused\n'
    "\tIs the server running on that host and accepting TCP/IP connections?",
    'could not connect to server: Connection refused\n\tIs the server running on host "localhost" '
    "(127.0.0.1) and accepting\n\tTCP/IP connections on port 5432?",
    "Could not connect to Redis at 127.0.0.1:6379: Connection refused",
    "ConnectionRefusedError: [Errno 111] Connect call failed ('0.0.0.0', 8080)",
]


@pytest.mark.parametrize("text", TRANSIENT)
def test_transient(text):
    assert classify.is_transient(text), classify.transient_reason(text)


@pytest.mark.parametrize("text", NOT_TRANSIENT)
def test_not_transient(text):
    assert not classify.is_transient(text), classify.transient_reason(text)


@pytest.mark.parametrize("text", WINDOWS_HARNESS + QUOTAS)
def test_a_windows_harness_failure_and_a_quota_are_the_environment(text):
    assert classify.is_transient(text), text
    assert classify.BUILT_IN.api_error_transient(text)  # as the model API's own failure too


@pytest.mark.parametrize("text", LOCAL_REFUSED)
def test_a_connection_refused_on_this_machine_is_a_real_error(text):
    assert not classify.is_transient(text), classify.transient_reason(text)


def test_a_400_stays_real_unless_it_only_wraps_a_limit():
    bad_request = (
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.5: '
        '`tool_use` ids were found without `tool_result` blocks"}}'
    )
    assert not classify.BUILT_IN.api_error_transient(bad_request)
    assert not classify.BUILT_IN.api_error_transient("API Error: 400 Your credit balance is too low")
    assert classify.BUILT_IN.api_error_transient(QUOTAS[0])
    # an exit code that only looks like one (a test's own status) is not the harness
    assert not classify.is_transient("Exit code 3\nFAILED tests/test_a.py::test_fork - fork() failed")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HTTP 503", True),
        ("status 429", True),
        ('{"status": 529}', True),
        ("statusCode: 502", True),
        ("503 Service Unavailable", True),
        ("Error code: 529", True),
        ("HTTP 500", False),
        ("status 404", False),
        ("at Object.<anonymous> (/app/index.js:503:9)", False),
        ("file_503.txt", False),
        ("took 503ms", False),
        ("API Error: 500", True),  # the agent's own model API failing
    ],
)
def test_http_status_needs_context(text, expected):
    assert classify.is_transient(text) is expected


def test_reason_names_the_matched_words():
    assert classify.transient_reason("curl: (7) Failed to connect: Connection refused")
    assert classify.transient_reason("upstream: HTTP 503") == "HTTP 503"
    assert classify.transient_reason("KeyError: 'x'") is None


def test_override_wins_over_a_transient_match():
    text = 'API Error: 400 {"error":{"type":"invalid_request_error","message":"timed out"}}'
    assert not classify.is_transient(text)


def test_user_patterns_extend_and_override():
    vpn = "corp-vpn: tunnel dropped"
    assert not classify.is_transient(vpn)
    assert classify.is_transient(vpn, ["tunnel dropped"])
    assert not classify.is_transient("HTTP 503 from staging", ["!from staging"])
    with pytest.raises(ValueError, match="transient pattern"):
        classify.load_transient_patterns(["(unclosed"])


def test_a_persons_patterns_run_in_linear_time_and_evolves_own_keep_pythons_re():
    # A5: `(x+x+)+y` backtracks for ever on a run of x's in Python's re; through the door
    # it is one pass. The built-in lookbehinds (`(?<!command )timed out`) still work.
    hostile = ["(x+x+)+y", "!(a|a)+b"]
    assert not classify.is_transient("error: " + "x" * 5_000, hostile)
    assert classify.is_transient("error: xxxy", hostile)
    assert classify.is_transient("Connection reset by peer; " + "a" * 5_000 + "!", hostile)
    assert not classify.is_transient("Connection reset by peer; aab", hostile)
    assert classify.transient_reason("proxy said: xxxxy", hostile) == "xxxxy"
    assert not classify.is_transient("Command timed out after 2m", hostile)
    with pytest.raises(ValueError, match="lookbehind cannot run in linear time"):
        classify.load_transient_patterns(["(?<!command )stalled"])


def test_long_text_is_judged_by_head_and_tail():
    filler = "x = 1\n" * 20_000
    assert classify.is_transient(filler + "curl: (28) Operation timed out")
    assert classify.is_transient("Error: connect ECONNREFUSED 10.0.0.1:443\n" + filler)
    assert not classify.is_transient(filler + "Connection reset by peer\n" + filler)


def test_import_is_light():
    code = (  # beyond what the transcripts package itself loads
        "import sys, evolve.transcripts; before = set(sys.modules);"
        "import evolve.transcripts.classify;"
        "print(sorted({'tomllib', 'unicodedata', 'json'} & (set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
