"""Secrets never leave: after observing and reflecting, no planted secret is anywhere evolve wrote.

Planted in every place a Claude Code transcript can carry one — the request, tool inputs
(a JSON config written, `curl -d`, `export`, `mysql -p`, `curl -u`), error output, an answer
the person typed, rejection feedback, the agent's own words — also split by invisible
characters, in full-width letters, and copied once found — then observed, reflected with
`--dry-run` and for real (the real anthropic SDK against the local fake Messages API), and
every file under the home scanned: state.db and its WAL, git objects (every commit, tree,
blob and note), caches, logs. Exempt by name: the API's transcript copies (`transcripts/`)
and settings backups (`backups/`), a person's own records. Also scanned: what was sent to
the model and what the commands printed, as they read (invisible characters out, NFKC).
"""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest

from evolve.cli import main
from evolve.home import Home
from evolve.transcripts.redact import strip_invisible
from tests.helpers import bundle_of, make_agent
from tests.reflect.scenarios import Transcript

R = "Q7w2E9r4T6y1U3i8"  # the random core every planted secret carries (built, never literal)
SECRETS = {
    "github": "ghp_" + R + R + "Ab12",
    "config password": "Pa55" + R,
    "aws secret": "wJalrXUtnFEMI/K7MDENG/" + R[:2] + "bPxRfiCYEXAMPLEKEY"[2:],
    "curl -d password": "Hunter3" + R,
    "stripe": "sk_" + "live_" + R + "Zz",
    "mysql": "MySq1" + R,
    "curl -u": "Adm1n" + R,
    "basic auth": "YWRtaW46" + R + "Qw==",
    "npm": "npm_" + R + R + "Abcd",
    "sentry dsn": "0123456789abcdef" + "fedcba9876543210",
    "hugging face": "hf_" + R + R + "Ab",
    "feedback password": "Zebra42" + R,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + R + "IiwibiI6MX0.s1gnature" + R,
    "private key": "MIIEpAIBAAKCAQEA" + R + R,
    "zero-width github": "ghp_" + R + "Zw" + R,  # planted with U+200B after "gh"
    "soft-hyphen password": "Hunter4" + R,  # after "pass\u00adword="
    "word-joiner token": "ghp_" + R + "Wj" + R,  # U+2060 inside, in a tool input
    "full-width github": "ghp_" + R + "Fw" + R,  # typed full width by the person
    "empty-user redis": "R3dis" + R,
    "curl -u glued": "CurlNoSpace" + R,
    "mysql -p quoted": "MysqlQuote" + R,
    "docker login -p": "D0ckerHub" + R,
    "copied password": "Pg5ecret" + R,  # in DATABASE_URL, then on its own in other texts
}


def full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def as_read(text: str) -> str:
    """A text as a model or a person reads it: invisible characters gone, compatibility forms folded."""
    return unicodedata.normalize("NFKC", strip_invisible(text))


def _session(folder: Path) -> Path:
    s = SECRETS
    t = Transcript(folder / "secrets.jsonl", cwd="/home/dev/shop")
    t.user(f"Deploy the shop with GITHUB_TOKEN={s['github']} and fix what breaks")
    config = {
        "db": {"host": "db", "password": s["config password"]},
        "aws_secret_access_key": s["aws secret"],
    }
    t.tool(
        "Write", {"file_path": "/home/dev/shop/config.json", "content": json.dumps(config, indent=2)}, "ok"
    )
    t.tool(
        "Bash",
        {"command": f'curl -d \'{{"user":"me","password":"{s["curl -d password"]}"}}\' https://api.shop'},
        f'Error: 401 for {{"user":"me","password":"{s["curl -d password"]}"}}',
        error=True,
    )
    t.tool(
        "Bash",
        {"command": f"export STRIPE_SECRET={s['stripe']} && ./deploy"},
        f"Error: rejected key {s['stripe']}",
        error=True,
    )
    t.tool(
        "Bash",
        {"command": f"mysql -u root -p{s['mysql']} shop < schema.sql"},
        "ERROR 1045 (28000): Access denied",
        error=True,
    )
    t.tool(
        "Bash",
        {"command": f"curl -u admin:{s['curl -u']} https://api.shop/health"},
        f"Error: sent Authorization: Basic {s['basic auth']} and got 403",
        error=True,
    )
    t.tool(
        "Bash",
        {"command": "npm publish"},
        f"npm ERR! //registry.npmjs.org/:_authToken={s['npm']}\n"
        f"Sentry: https://{s['sentry dsn']}@o1.ingest.sentry.io/2 reported it\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{s['private key']}\n-----END RSA PRIVATE KEY-----",
        error=True,
    )
    t.ask(
        {"Which token should I use for the model hub?": ["the team token", "none"]},
        {"Which token should I use for the model hub?": f"No, use HF_TOKEN={s['hugging face']} instead"},
    )
    t.reject(
        "Bash",
        {"command": "rm -rf build"},
        said=f"No, don't. Use DB_PASSWORD={s['feedback password']} and retry",
    )
    t.say(f"Retrying with the session cookie {s['jwt']}.")
    zero_width = s["zero-width github"].replace("gh", "gh\u200b", 1)
    t.tool(
        "Bash",
        {"command": "gh release create v1"},
        f"HTTP 401 for token {zero_width} and pass\u00adword={s['soft-hyphen password']}",
        error=True,
    )
    joined = s["word-joiner token"][:12] + "\u2060" + s["word-joiner token"][12:]
    t.tool("Bash", {"command": f"gh release upload v1 --repo shop/shop {joined} dist.tgz"}, "ok")
    t.tool(
        "Bash",
        {"command": "./connect.sh"},
        f"failed: redis://:{s['empty-user redis']}@cache:6379 | curl -uadmin:{s['curl -u glued']} https://x"
        f" | mysql -u root -p'{s['mysql -p quoted']}' | docker login -u me -p {s['docker login -p']}",
        error=True,
    )
    t.user(f"No, use this token instead: {full_width(s['full-width github'])}")
    copied = s["copied password"]
    t.user(f"Here is my .env:\nLOG_LEVEL=info\nDATABASE_URL=postgres://shop:{copied}@db:5432/shop\nPORT=8080")
    t.say(f"The db password is {copied}; I will pass it to psql.")
    t.tool(
        "Bash",
        {"command": f"echo {copied} | psql -h db -U shop"},
        f"psql: wrong password {copied}",
        error=True,
    )
    t.tool("Bash", {"command": "./deploy --retry"}, "deployed")
    t.user("No, that's wrong: never paste credentials into commands, read them from the vault.")
    t.say("Understood.")
    return t.path


ANSWER = {
    "summary": "read credentials from the vault",
    "operations": [
        {
            "op": "update_memo",
            "section": "strategies",
            "content": "- In /home/dev/shop, never put a credential on a command line: use the vault.",
        },
        {
            "op": "create_skill",
            "name": "shop-deploy",
            "description": "Use when deploying the shop.",
            "body": "## Steps\n1. Read the credentials from the vault.\n2. Run `./deploy`.\n",
        },
        {  # a careless answer quoting a secret: refused on its own, its reason holds no secret
            "op": "create_skill",
            "name": "shop-token",
            "description": "Use when the shop needs a token.",
            "body": f"- Use GITHUB_TOKEN={SECRETS['github']}\n",
        },
    ],
}


def _git_objects(repo: Path) -> bytes:
    """Every object of the repository, uncompressed: commits, trees, blobs."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True
    ).stdout


def _everything_written(root: Path) -> dict[str, bytes]:
    """Path → bytes of every file evolve wrote under the home (git objects unpacked)."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative.split("/")[0] in ("transcripts", "backups"):  # a person's own records
            continue
        if path.is_dir() and path.name == ".git":
            found[f"{relative} (objects)"] = _git_objects(path.parent)
        elif path.is_file() and "/.git/objects/" not in f"/{relative}":
            found[relative] = path.read_bytes()
    return found


def _shop_with_a_model(api, monkeypatch):
    """An agent whose reflections go through the real anthropic SDK to the local fake API."""
    agent = make_agent("shop")
    home = Home.resolve()
    home.config_file.write_text(f'[model]\nbackend = "anthropic"\nbase_url = "{api.url}"\nmax_retries = 0\n')
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-for-the-fake-server")
    return agent, home


def test_no_planted_secret_is_in_anything_evolve_derives(tmp_path, fake_messages_api, monkeypatch, capsys):
    agent, home = _shop_with_a_model(fake_messages_api, monkeypatch)
    assert main(["observe", agent.name, str(_session(tmp_path))]) == 0
    fake_messages_api.reply_tool(ANSWER)
    fake_messages_api.reply_tool(ANSWER)
    assert main(["reflect", agent.name, "--dry-run", "--force"]) == 0
    assert main(["reflect", agent.name, "--force"]) == 0
    printed = capsys.readouterr()
    assert "[REDACTED:" in printed.out and "would land: update_memo" in printed.out
    assert "holds a secret" in printed.out  # the careless operation was refused

    sent = [json.dumps(r.body, ensure_ascii=False) for r in fake_messages_api.requests]
    assert len(sent) == 2
    written = _everything_written(home.root)
    assert any(name.endswith("state.db") for name in written) and any("(objects)" in n for n in written)
    assert (
        "strategies" in (agent.path / "memo.md").read_text() or (agent.path / "skills/shop-deploy").is_dir()
    )
    places = {"request to the model": "\n".join(sent), "printed": printed.out + printed.err}
    places |= {name: data.decode("utf-8", "replace") for name, data in written.items()}
    places = {place: as_read(text) for place, text in places.items()}
    leaks = [
        (kind, place) for kind, secret in SECRETS.items() for place, text in places.items() if secret in text
    ]
    assert leaks == []
    assert R not in "\n".join(places.values())  # not even a fragment of one


def test_a_failed_reflection_quoting_a_secret_keeps_none_in_state_or_output(
    tmp_path, fake_messages_api, monkeypatch, capsys
):
    agent, home = _shop_with_a_model(fake_messages_api, monkeypatch)
    assert main(["observe", agent.name, str(_session(tmp_path))]) == 0
    # a provider (or a proxy) echoing a credential in its error message
    fake_messages_api.reply_error(400, f"invalid request: header x-api-key={SECRETS['github']} refused")
    main(["reflect", agent.name, "--force"])
    printed = capsys.readouterr()
    assert "failed" in printed.out + printed.err
    written = _everything_written(home.root)
    texts = [printed.out, printed.err] + [data.decode("utf-8", "replace") for data in written.values()]
    assert all(SECRETS["github"] not in text and R not in text for text in texts)


def _codex_line(kind: str, payload: dict) -> str:
    return json.dumps({"timestamp": "2026-12-01T18:54:35.549Z", "type": kind, "payload": payload})


def test_a_codex_rollouts_calls_and_outputs_are_redacted_in_the_bundle(tmp_path):
    agent = make_agent("shop")
    command = f"curl -u admin:{SECRETS['curl -u']} https://api.shop && export NPM_TOKEN={SECRETS['npm']}"
    lines = [
        _codex_line("session_meta", {"id": "01a232f5-6fe1-7f83-b588-fba2cf745af0", "cwd": "/home/dev/shop"}),
        _codex_line("event_msg", {"type": "user_message", "message": "Publish the package", "images": []}),
        _codex_line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": command}),
                "call_id": "call_1",
            },
        ),
        _codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": f"Process exited with code 1\nOutput:\nnpm ERR! token {SECRETS['npm']} expired",
            },
        ),
    ]
    rollout = tmp_path / "rollout-2026-12-01T18-54-35-01a232f5-6fe1-7f83-b588-fba2cf745af0.jsonl"
    rollout.write_text("\n".join(lines) + "\n")
    assert main(["observe", agent.name, str(rollout)]) == 0
    text = bundle_of(agent).text
    assert "exec_command" in text and "[REDACTED:" in text
    assert SECRETS["curl -u"] not in text and SECRETS["npm"] not in text and R not in text


# -- the red team's reproductions (red-team-3, A3, B3, B4) -----------------------------------
TOKEN = "ghp_" + "R4nd0mT0k3nV4lu3" + "Abcdefghij0123456789"
HUNTER = "hunter2" + "hunter2"
HIDDEN = {  # id → (the request, the failing call's output, the secrets in them)
    "zero-width-and-soft-hyphen": (
        "Release it",
        f"HTTP 401 for token gh\u200bp_{TOKEN[4:]} and pass\u00adword={HUNTER}",
        [TOKEN, HUNTER],
    ),
    "word-joiner": ("Release it", f"HTTP 401 for token {TOKEN[:10]}\u2060{TOKEN[10:]}", [TOKEN]),
    "byte-order-mark": ("Release it", f"HTTP 401 for \ufefftoken {TOKEN[:20]}\ufeff{TOKEN[20:]}", [TOKEN]),
    "bidi-controls": ("Release it", f"HTTP 401 for token \u2066{TOKEN[:5]}\u202e{TOKEN[5:]}\u2069", [TOKEN]),
    "full-width": ("Release it", f"HTTP 401 for token {full_width(TOKEN)}", [TOKEN]),
    "promised-forms": (
        "Connect the app",
        "failed: redis://:R3disPassw0rdQ@cache:6379 | curl -uadmin:CurlNoSpace77 https://x | "
        "mysql -u root -p'MysqlQuote99x' | docker login -u me -p D0ckerHubPassw0rd",
        ["R3disPassw0rdQ", "CurlNoSpace77", "MysqlQuote99x", "D0ckerHubPassw0rd"],
    ),
    "copied-from-a-pasted-env": (
        "Connect the app with my .env:\nAPP_ENV=prod\nDATABASE_URL=postgres://app:Pg5ecretPassw0rdZ@db:5432/app\n",
        "psql: FATAL: password authentication failed; the db password is Pg5ecretPassw0rdZ",
        ["Pg5ecretPassw0rdZ"],
    ),
}


def _generic_session(path: Path, request: str, output: str) -> Path:
    """The red team's transcript: a failing call, one that works, and the person's correction."""
    lines = [
        {"type": "user", "text": request, "session": "zw1"},
        {"type": "tool_call", "tool": "shell", "call_id": "c1", "input": {"cmd": "gh release create v1"}},
        {"type": "tool_result", "call_id": "c1", "error": True, "output": output},
        {"type": "tool_call", "tool": "shell", "call_id": "c2", "input": {"cmd": "gh auth login"}},
        {"type": "tool_result", "call_id": "c2", "output": "ok"},
        {"type": "user", "text": "No, always log in first"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(("request_text", "output", "planted"), HIDDEN.values(), ids=HIDDEN.keys())
def test_a_hidden_or_copied_secret_reaches_neither_the_dry_run_nor_the_model(
    tmp_path, fake_messages_api, monkeypatch, capsys, request_text, output, planted
):
    agent, home = _shop_with_a_model(fake_messages_api, monkeypatch)
    path = _generic_session(tmp_path / "zw.jsonl", request_text, output)
    assert main(["observe", agent.name, "--format", "generic", str(path)]) == 0
    fake_messages_api.reply_tool(ANSWER)
    assert main(["reflect", agent.name, "--force", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "[REDACTED:" in printed and "gh release create v1" in printed  # the error is there, redacted
    (sent,) = [as_read(json.dumps(r.body, ensure_ascii=False)) for r in fake_messages_api.requests]
    stored = as_read((home.root / "state.db").read_bytes().decode("utf-8", "replace"))
    for secret in planted:
        assert secret not in as_read(printed) and secret not in sent and secret not in stored, secret


def test_the_git_note_holds_the_redacted_summary_and_nothing_unchecked(
    fake_messages_api, monkeypatch, capsys
):
    agent, _home = _shop_with_a_model(fake_messages_api, monkeypatch)
    memo = {"op": "update_memo", "section": "strategies", "content": "- Use uv for Python projects."}
    fake_messages_api.reply_tool(
        {
            "summary": f"use token {TOKEN} for releases",
            "operations": [{**memo, "reason": f"saw {TOKEN} in the log", "extra": {"token": TOKEN}}],
        }
    )
    assert main(["reflect", agent.name, "--force"]) == 0
    assert "landed: update_memo strategies" in capsys.readouterr().out
    git = ["git", "-C", str(agent.path)]
    subject = subprocess.run([*git, "log", "-1", "--format=%s"], capture_output=True, text=True).stdout
    assert subject == f"reflect({agent.name}): use token [REDACTED:github-token] for releases\n"
    note = subprocess.run([*git, "notes", "--ref", "refs/notes/evolve", "show", "HEAD"], capture_output=True)
    assert json.loads(note.stdout) == {
        "summary": "use token [REDACTED:github-token] for releases",
        "operations": [{**memo, "reason": "saw [REDACTED:github-token] in the log"}],
    }
    assert TOKEN.encode() not in _git_objects(agent.path)
