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


# --------------------------------------------------------------------------- corrections

CORRECTIONS = {
    "en": [
        "No, use pnpm instead of npm.",
        "That's wrong, the config lives in ~/.config",
        "You forgot to update the tests.",
        "I said the blue button, not the red one",
        "revert that change please",
        "that’s not what I asked for",
        "Why did you delete the migrations folder?",
        "still doesn't work, same error",
    ],
    "zh": [
        "不对，应该用 pnpm",
        "错了，配置文件在 ~/.config 下面",
        "我说的是蓝色按钮",
        "你忘了更新测试",
        "还是不行",
        "这个不对吧，重新来",
    ],
    "de": [
        "Nein, das ist falsch. Nimm pnpm.",
        "Das stimmt nicht, die Datei liegt woanders",
        "Ich sagte doch, keine Mocks",
        "Du hast die Tests vergessen",
        "Mach das rückgängig",
        "Eigentlich wollte ich pnpm, nicht npm",
    ],
    "es": [
        "No, eso está mal. Usa pnpm.",
        "Te dije que no tocaras el archivo",
        "Olvidaste actualizar las pruebas",
        "Esta mal, usa la otra tabla",
        "En realidad quería pnpm, en lugar de npm",
    ],
    "fr": [
        "Non, c'est faux, utilise pnpm",
        "Ce n'est pas ça que je voulais",
        "Je t'ai dit de ne pas toucher ce fichier",
        "Tu as oublié les tests",
        "En fait, utilise plutôt pnpm",
    ],
    "ja": [
        "違う、pnpm を使って",
        "そうじゃない。設定ファイルは別の場所です",
        "間違っています。やり直して",
        "テストを忘れてる",
        "元に戻して",
    ],
    "hi": [
        "यह गलत है, pnpm इस्तेमाल करो",
        "ऐसा नहीं, मैंने कहा था नीला बटन",
        "तुम टेस्ट अपडेट करना भूल गए",
        "galat hai, pnpm use karo",
        "maine kaha tha blue button",
    ],
    "pt": [
        "Não, está errado. Use pnpm.",
        "Eu disse para não mexer nesse arquivo",
        "Você esqueceu de atualizar os testes",
        "Na verdade, use pnpm em vez de npm",
        "isso não é o que eu pedi",
    ],
}

GUARDED = {
    "en": [
        "No problem, thanks! Now add a README.",
        "No worries. Can you add a CLI flag?",
        "What's wrong with the build on CI?",
        "Why is the date wrong in the footer?",
        "Not bad at all. Please add tests now.",
        "Don't worry about the docs, just ship it",
        "Please implement undo/redo in the editor",
        "Nothing wrong with the approach, go on",
        "I know you're busy; add a note about the new API",
        "It actually works now, thanks!",
    ],
    "zh": [
        "不错，继续吧",
        "没问题，接下来加个 README",
        "为什么测试结果不对？",
        "启动时报错了，帮我看看",
        "已经很不错了，提交吧",
    ],
    "de": [
        "Kein Problem, danke!",
        "Keine Sorge, mach weiter",
        "Was ist falsch an dem Build?",
        "Nicht schlecht! Jetzt die Tests.",
        "Das ist nicht so schlimm, mach weiter",
    ],
    "es": [
        "No hay problema, gracias",
        "No te preocupes, sigue",
        "¿Por qué está mal la fecha?",
        "No está mal, ahora agrega pruebas",
        "¿Qué está mal en el build?",
    ],
    "fr": [
        "Pas de problème, merci",
        "Pas mal ! Ajoute les tests maintenant",
        "Qu'est-ce qui ne va pas avec le build ?",
        "Pourquoi c'est faux dans le pied de page ?",
        "Ne t'inquiète pas pour la doc",
    ],
    "ja": [
        "問題ないです、続けてください",
        "大丈夫です。次は README を追加して",
        "何が違うのか教えて",
        "間違いないです。コミットして",
        "この二つの違いは何ですか",
    ],
    "hi": [
        "कोई बात नहीं, आगे बढ़ो",
        "कोई समस्या नहीं, README जोड़ो",
        "क्या गलत है इस बिल्ड में?",
        "koi baat nahi, aage badho",
        "चिंता मत करो, बस शिप करो",
    ],
    "pt": [
        "Sem problema, obrigado",
        "Não se preocupe, continue",
        "O que está errado no build?",
        "Não, obrigado, eu faço isso",
        "Nada errado com a abordagem, continue",
    ],
}

FRESH = {
    "en": "Add a function multiply_numbers(a: int, b: int) -> int and a test for it.",
    "zh": "实现一个登录页面，使用 React 和 TypeScript",
    "de": "Schreibe eine Funktion, die zwei Zahlen addiert, und einen Test dazu.",
    "es": "Crea una función que sume dos números y una prueba para ella.",
    "fr": "Écris une fonction qui additionne deux nombres, avec un test.",
    "ja": "二つの数を足す関数とそのテストを書いてください",
    "hi": "दो संख्याओं को जोड़ने वाला फ़ंक्शन और उसका टेस्ट लिखो",
    "pt": "Escreva uma função que soma dois números e um teste para ela.",
}


@pytest.mark.parametrize(("lang", "text"), [(lang, t) for lang, texts in CORRECTIONS.items() for t in texts])
def test_correction_in_every_language(lang, text):
    assert classify.correction_language(text) == lang
    assert classify.is_correction(text)


@pytest.mark.parametrize(("lang", "text"), [(lang, t) for lang, texts in GUARDED.items() for t in texts])
def test_guards_in_every_language(lang, text):
    assert classify.correction_language(text) is None, lang


@pytest.mark.parametrize(("lang", "text"), list(FRESH.items()))
def test_fresh_request_is_no_correction(lang, text):
    assert not classify.is_correction(text), lang
    assert not classify.is_correction(text, first=True), lang


@pytest.mark.parametrize(
    "text",
    [
        "Now add a README",
        "I know the API",
        "Nothing to add, ship it",
        "The wrongful-termination module needs a test",
        "nobody uses it",
    ],
)
def test_whole_words_only(text):
    assert not classify.is_correction(text)


def test_a_guard_hides_only_its_own_words():
    assert classify.is_correction("No worries, but you forgot the tests")


def test_code_quotes_and_quoted_lines_are_ignored():
    assert not classify.is_correction("Run it:\n```\nassert result == 'wrong'\n```\nthanks")
    assert not classify.is_correction("The log says `that's wrong` at startup, add a retry")
    assert not classify.is_correction('The API answers "that is wrong input", handle it')
    assert not classify.is_correction("I got this:\n> you forgot the token\nAdd auth please.")


def test_long_messages_are_read_at_the_start_only():
    paste = "Here is the log of the nightly job, please summarise it.\n" + "step ok\n" * 400
    assert not classify.is_correction(paste + "you forgot the tests")
    assert classify.is_correction("You forgot the tests. Log:\n" + "step ok\n" * 400)


def test_weak_phrases_need_the_start_and_not_a_first_request():
    assert classify.is_correction("Actually, use pnpm.")
    assert not classify.is_correction("Actually, use pnpm.", first=True)
    assert classify.is_correction("You forgot the lockfile.", first=True)
    late = (
        "Build a CLI that reads CSV files, validates the rows against the schema, writes a "
        "report and exits non-zero on errors; it should stream large files and it must log "
        "progress every 1000 rows. Use click instead of argparse."
    )
    assert not classify.is_correction(late)


def test_accents_case_and_apostrophes_do_not_matter():
    assert classify.correction_language("ESTA MAL, usa pnpm") == "es"
    assert classify.correction_language("nao, use pnpm") == "pt"
    assert classify.is_correction("thats not what I asked")
    assert classify.is_correction("ｎｏ，use pnpm")


def test_the_language_with_most_matches_wins():
    assert classify.correction_language("No, usa pnpm en lugar de npm") == "es"


def test_user_phrases_extend_the_lexicons():
    assert not classify.is_correction("bogus result")
    assert classify.is_correction("bogus result", {"en": ["bogus"]})
    assert classify.correction_language("è sbagliato, usa pnpm", {"it": ["sbagliato"]}) == "it"
    assert classify.is_correction("Meh. Use pnpm.", {"en": ["weak:meh"]})
    assert not classify.is_correction("you forgot nothing", {"en": ["guard:you forgot nothing"]})
    with pytest.raises(ValueError, match="correction pattern"):
        classify.load_lexicons({"en": ["re:(oops"]})
    with pytest.raises(ValueError, match="empty"):
        classify.load_lexicons({"en": ["  "]})


def test_empty_text():
    assert not classify.is_correction("")
    assert classify.correction_language("   ") is None
