"""Guards: guards.toml parsed and checked, a tool call matched, the PreToolUse hook's answer.

The hook runs as the harnesses run it: the installed command (the POSIX-sh launcher) in a
shell, one JSON payload on stdin. It must exit 0 whatever happens, say nothing without a
guard (and start no Python then), log a broken file's problems once, and answer deny or
remind exactly as docs/guards.md says both harnesses honour.
"""

from __future__ import annotations

import json
import marshal
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve import patterns, tomledit
from evolve.home import Home
from evolve.integrations import claude_code, codex
from evolve.session import guards as check
from evolve.workspace import guards
from tests.helpers import commit_all, evolve_commit, git_out, make_agent, parsed_trailers, run_cli

NO_NPM = """# lessons I enforce
[no-npm]
tool = "shell"
pattern = '\\bnpm (install|i|add)\\b'
action = "deny"
lesson = "use-pnpm"
message = "This repo uses pnpm, never npm (lesson: use-pnpm)."
"""
ENV = """
[env-files]
tool = ["Edit", "Write"]   # never touch the secrets
pattern = '(^|/)\\.env$'
action = "remind"
message = "Keep secrets out of .env; use the vault."
"""
PATHOLOGICAL = ("(x+x+)+y", "(a|aa)+$", "(a*)*b", "(.*a){12}")


def bash(command: str, cwd: str = "/tmp/web") -> dict:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": cwd, "session_id": "s1"}


# -- the file -----------------------------------------------------------------------------------
def test_a_guard_file_parses_with_its_tools_expanded_and_comments_ignored():
    found, problems = guards.parse(NO_NPM + ENV)
    assert problems == []
    npm, env = found
    assert npm.id == "no-npm" and npm.tools == guards.SHELL_TOOLS and npm.action == "deny"
    assert npm.lesson == "use-pnpm" and npm.project is None
    assert env.tools == ("Edit", "Write") and env.action == "remind" and env.shown_tool() == "Edit, Write"


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('tool = "Bash"\npattern = "x"\n', "message must say what to do instead"),
        ('tool = "WebFetch"\npattern = "x"\nmessage = "m"\n', "tool 'WebFetch' is not one evolve guards"),
        ('tool = "Bash"\npattern = "(a)\\\\1"\nmessage = "m"\n', "pattern refused: backreferences"),
        ('tool = "Bash"\npattern = "(?=a)"\nmessage = "m"\n', "pattern refused"),
        ('tool = "Bash"\npattern = "x"\nmessage = "m"\naction = "block"\n', "action 'block' is not one of"),
        ('tool = "Bash"\npattern = "x"\nmessage = "m"\nacton = "deny"\n', "unknown key 'acton'"),
        (
            'tool = "Bash"\npattern = "x"\nmessage = "m"\nproject = "web"\n',
            "project must be a folder's absolute",
        ),
        ('tool = "Bash"\npattern = "x"\nmessage = "' + "m" * 700 + '"\n', "message is 700 characters long"),
        ('tool = "Bash"\npattern = "(a{1000}){1000}"\nmessage = "m"\n', "pattern refused: too large"),
    ],
)
def test_each_broken_guard_is_one_line_and_the_others_still_apply(table, said):
    found, problems = guards.parse(NO_NPM + "\n[broken]\n" + table)
    assert [g.id for g in found] == ["no-npm"]
    [line] = problems
    assert line.startswith("guards.toml [broken]: ") and said in line and "\n" not in line
    assert line.endswith("fix or remove it (the other guards apply)")


def test_a_file_that_is_not_toml_gives_no_guard_and_one_line():
    found, problems = guards.parse('[no-npm]\ntool = "Bash\n')
    assert found == []
    [line] = problems
    assert "is not valid TOML" in line and "no guard applies until you fix it" in line


@pytest.mark.parametrize(
    "text",
    [
        'no-npm = { tool = "Bash", pattern = "npm install", action = "deny", message = "Use pnpm." }\n',
        'no-npm.tool = "Bash"\nno-npm.pattern = "npm install"\nno-npm.action = "deny"\n'
        'no-npm.message = "m"\n',
        '\ufeff  [no-npm]\ntool = "Bash"\npattern = "npm install"\naction = "deny"\nmessage = "m"\n',
    ],
)
def test_guards_the_hooks_launcher_never_starts_for_are_named_not_listed(text):
    """Valid TOML with no line the launchers start Python for: never enforced, never shown as if it were."""
    assert not guards.launcher_starts(text)
    found, [line] = guards.parse(text)
    assert found == [] and "no line starts with '['" in line and "[id] on a line of its own" in line


def test_a_table_after_blanks_or_beside_an_inline_guard_is_used():
    inline = 'tests = { tool = "Bash", pattern = "pytest", message = "m" }\n'
    found, problems = guards.parse(inline + NO_NPM.replace("\n[", "\n\t["))
    assert problems == [] and [g.id for g in found] == ["tests", "no-npm"]


def test_a_file_over_what_the_hook_reads_is_refused_whole_not_cut(tmp_path):
    """The hook reads MAX_FILE characters: a deny after them must not silently stop holding."""
    path = tmp_path / "guards.toml"
    path.write_text("# " + "x" * guards.MAX_FILE + "\n" + NO_NPM)
    rows, [line], _fresh = check.load(str(path))
    assert rows == [] and f"longer than {guards.MAX_FILE} characters" in line
    found, [same] = guards.parse(
        path.read_text(), str(path)
    )  # what `evolve guard`, doctor and pre-commit say
    assert found == [] and same == line


def test_a_long_command_is_matched_whole():
    """A heredoc writing a long file, then `npm install`: the deny holds past the first 20 000 characters."""
    command = "cat > notes.md <<EOF\n" + "lorem ipsum " * 5_000 + "\nEOF\nnpm install left-pad"
    decision = check.verdict(bash(command), rows_of(NO_NPM))
    assert decision is not None and decision["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_id_must_be_a_name():
    _, [line] = guards.parse('["No NPM"]\ntool = "Bash"\npattern = "x"\nmessage = "m"\n')
    assert "the id 'No NPM' may only hold a-z" in line


@pytest.mark.parametrize("source", PATHOLOGICAL)
def test_pathological_patterns_from_a_file_run_in_linear_time(source):
    """`(x+x+)+y` and friends: accepted where the door can run them in linear time, never slow."""
    text = f'[slow]\ntool = "Bash"\npattern = {tomledit.quoted(source)}\naction = "deny"\nmessage = "m"\n'
    found, problems = guards.parse(text)
    assert problems == [] and [g.id for g in found] == ["slow"]
    rows = [found[0].row()]
    command = "x" * 30_000 + "a" * 30_000  # backtracking `re` would never return on these
    started = time.monotonic()
    decision = check.verdict(bash(command), rows)
    assert time.monotonic() - started < 5
    assert (decision is not None) == ("b" not in source and "y" not in source)  # it holds no b nor y


def test_set_action_keeps_every_other_byte():
    text = NO_NPM + ENV
    after = guards.set_action(text, "env-files", "deny")
    assert after == text.replace('action = "remind"', 'action = "deny"')
    assert guards.set_action(after, "no-npm", "off").count('action = "off"') == 1


def test_a_new_guard_is_appended_and_a_removed_one_leaves_the_rest_byte_for_byte():
    text = NO_NPM + ENV
    new = guards.Guard(
        "no-tags", ("Bash",), "git push .*--tags", "remind", "Wait for CI.", "ci-first", None, "Bash"
    )
    added = guards.with_guard(text, new)
    assert added.startswith(text)
    assert [g.id for g in guards.parse(added)[0]] == ["no-npm", "env-files", "no-tags"]
    assert guards.without_guard(added, "no-tags") == text + "\n"  # the blank line before it stays
    assert guards.without_guard(text, "no-npm") == "# lessons I enforce\n" + ENV


# -- matching and the verdict ---------------------------------------------------------------------
def rows_of(text: str) -> list[tuple]:
    return [g.row() for g in guards.parse(text)[0] if g.action != "off"]


def test_deny_refuses_with_the_message_and_remind_adds_context():
    rows = rows_of(NO_NPM + ENV)
    assert check.verdict(bash("npm install left-pad"), rows) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "This repo uses pnpm, never npm (lesson: use-pnpm).",
        }
    }
    assert check.verdict(bash("pnpm install"), rows) is None  # the word boundary holds
    edit = {"tool_name": "Write", "tool_input": {"file_path": "/srv/app/.env"}, "cwd": "/srv/app"}
    assert check.verdict(edit, rows) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "Keep secrets out of .env; use the vault.",
        }
    }
    assert check.verdict({**edit, "tool_name": "Read"}, rows) is None  # not a tool it guards
    assert check.verdict({**edit, "tool_input": {"file_path": "/srv/app/.envrc"}}, rows) is None


def test_codex_shapes_are_matched_too():
    rows = rows_of(NO_NPM)
    for payload in (
        {"tool_name": "exec_command", "tool_input": {"cmd": "npm i react"}},
        {"tool_name": "shell", "tool_input": {"command": ["npm", "add", "react"]}},
        {"tool_name": "Bash", "tool_input": {"command": "cd web && npm install"}},  # Codex 0.171's hook
    ):
        assert check.verdict(payload, rows)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_deny_wins_and_every_message_of_its_kind_is_given(tmp_path):
    text = NO_NPM + '[npm-any]\ntool = "Bash"\npattern = "npm"\naction = "remind"\nmessage = "npm again?"\n'
    text += '[npm-deny]\ntool = "Bash"\npattern = "install"\naction = "deny"\nmessage = "No installs."\n'
    rows = rows_of(text)
    out = check.verdict(bash("npm install"), rows)["hookSpecificOutput"]
    assert (
        out["permissionDecisionReason"] == "This repo uses pnpm, never npm (lesson: use-pnpm).\nNo installs."
    )
    assert check.verdict(bash("npm run build"), rows)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "additionalContext": "npm again?",
    }


def test_a_project_scope_holds_only_inside_that_folder(tmp_path, monkeypatch):
    web = tmp_path / "code" / "web"
    (web / "src").mkdir(parents=True)
    (tmp_path / "code" / "webshop").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "guards.toml"
    path.write_text(NO_NPM.replace('action = "deny"', 'action = "deny"\nproject = "~/code/web"'))
    rows, problems, fresh = check.load(str(path))
    assert problems == [] and fresh and rows[0][3] == str(web.resolve())
    assert check.verdict(bash("npm i", str(web / "src")), rows) is not None
    assert check.verdict(bash("npm i", str(web)), rows) is not None
    assert check.verdict(bash("npm i", str(tmp_path / "code" / "webshop")), rows) is None
    assert check.verdict({**bash("npm i"), "cwd": None}, rows) is None


def test_an_off_guard_is_left_out_and_the_cache_follows_the_file(tmp_path):
    path, cache = tmp_path / "guards.toml", tmp_path / "cache" / "guards.marshal"
    path.write_text(NO_NPM)
    rows, _, fresh = check.load(str(path), str(cache))
    assert fresh and [r[0] for r in rows] == ["no-npm"]
    assert check.load(str(path), str(cache)) == (rows, [], False)  # from the cache
    version, key, cached, problems = marshal.loads(cache.read_bytes())
    assert key == check.signature(str(path)) and cached == rows
    path.write_text(NO_NPM.replace('"deny"', '"off"'))  # another size: parsed again
    assert check.load(str(path), str(cache)) == ([], [], True)
    path.unlink()
    assert check.load(str(path), str(cache)) == ([], [], False)


# -- the hook, as the harnesses run it ------------------------------------------------------------
def run_command(command: str, payload: dict | bytes, cwd: Path) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=data,
        capture_output=True,
        timeout=30,
        cwd=cwd,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )


@pytest.fixture
def agent(evolve_home):
    return make_agent("demo")


def claude_command(home: Home) -> str:
    return claude_code.hook_command(sys.executable, home, "demo", "pre-tool-use", True)


def test_the_hook_denies_and_reminds_through_the_installed_command(agent, tmp_path):
    home = Home.resolve()
    (agent.path / "guards.toml").write_text(
        NO_NPM + '[tests]\ntool = "Bash"\npattern = "pytest"\nmessage = "Use make test."\n'
    )
    proc = run_command(claude_command(home), bash("npm install x"), tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    proc = run_command(claude_command(home), bash("pytest -q"), tmp_path)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == "Use make test."
    assert run_command(claude_command(home), bash("ls"), tmp_path).stdout == b""
    assert not (home.logs_dir / "hooks.log").exists()
    assert (home.root / "cache" / "demo" / "guards.marshal").exists()


def test_without_a_guard_the_launcher_starts_no_python(agent, tmp_path):
    """No guards.toml, or one with no table: the shell exits 0 before any interpreter starts."""
    home = Home.resolve()
    marker = tmp_path / "started"
    python = tmp_path / "python"  # an interpreter that says when it is started
    python.write_text(
        f'#!/bin/sh\necho started >> {shlex.quote(str(marker))}\nexec {shlex.quote(sys.executable)} "$@"\n'
    )
    python.chmod(0o755)
    command = claude_code.hook_command(str(python), home, "demo", "pre-tool-use", True)
    for text in (None, "", "# [no-npm] is off for now\n", "   # nothing\n"):
        if text is not None:
            (agent.path / "guards.toml").write_text(text)
        proc = run_command(command, bash("npm install"), tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert not marker.exists()
    (agent.path / "guards.toml").write_text(NO_NPM.rstrip("\n"))  # a table, no final newline
    proc = run_command(command, bash("npm install"), tmp_path)
    assert marker.read_text() == "started\n" and b'"deny"' in proc.stdout
    (agent.path / "guards.toml").write_text("\ufeff" + NO_NPM.split("\n", 1)[1])  # a BOM, then [no-npm]
    proc = run_command(command, bash("npm install"), tmp_path)
    assert marker.read_text() == "started\n" * 2 and b'"deny"' in proc.stdout


def test_a_broken_file_fails_open_and_is_logged_once(agent, tmp_path):
    home = Home.resolve()
    (agent.path / "guards.toml").write_text('[no-npm]\ntool = "Bash\n')
    for _ in range(2):
        proc = run_command(claude_command(home), bash("npm install"), tmp_path)
        assert (proc.returncode, proc.stdout) == (0, b"")
    [line] = (home.logs_dir / "hooks.log").read_text().splitlines()
    assert "pre-tool-use agent=demo:" in line and "is not valid TOML" in line


@pytest.mark.parametrize("payload", [b"not json", b"[]", {"tool_name": "Bash"}, {"tool_name": 3}])
def test_bad_input_says_nothing_and_exits_0(agent, tmp_path, payload):
    home = Home.resolve()
    (agent.path / "guards.toml").write_text(NO_NPM)
    proc = run_command(claude_command(home), payload, tmp_path)
    assert (proc.returncode, proc.stdout) == (0, b"")


def test_a_missing_agent_exits_0(evolve_home, tmp_path):
    home = Home.resolve()
    (home.agents_dir / "demo").mkdir(parents=True)
    (home.agents_dir / "demo" / "guards.toml").write_text(NO_NPM)  # no repository: no agent
    proc = run_command(claude_command(home), bash("npm install"), tmp_path)
    assert proc.returncode == 0


def test_codex_finds_the_guards_of_the_agents_installed_for_the_folder(agent, tmp_path):
    home = Home.resolve()
    project = tmp_path / "web"
    project.mkdir()
    codex.install(home, "demo", project=str(project))
    (agent.path / "guards.toml").write_text(NO_NPM)
    command = codex.hook_command(sys.executable, home, "pre-tool-use")
    proc = run_command(command, bash("npm install", str(project)), project)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    elsewhere = run_command(command, bash("npm install", str(tmp_path)), tmp_path)
    assert (elsewhere.returncode, elsewhere.stdout) == (0, b"")


def test_patterns_reach_the_hook_only_through_the_door():
    source = Path(check.__file__).read_text() + Path(guards.__file__).read_text()
    assert "import re\n" not in source and "re.compile" not in source
    assert patterns.compile("(x+x+)+y").search("x" * 5000) is None


# -- `evolve guard`: the person's command --------------------------------------------------------
def test_evolve_guard_lists_and_the_person_turns_one_to_deny(agent):
    mine = NO_NPM.replace('action = "deny"', 'action = "remind"')
    model = '[no-tags]\ntool = "Bash"\npattern = "git push .*--tags"\naction = "remind"\n'
    model += 'message = "Wait for CI."\n'
    (agent.path / "guards.toml").write_text(mine)

    commit_all(agent.path, "my guard")
    evolve_commit(agent, {"guards.toml": (mine + "\n" + model).encode()})  # a reflection's guard
    listed = json.loads(run_cli("guard", "demo", "--json").stdout)
    assert [(g["id"], g["action"], g["by"]) for g in listed["guards"]] == [
        ("no-npm", "remind", "person"),
        ("no-tags", "remind", "evolve"),
    ]
    assert listed["problems"] == []
    text = run_cli("guard", "demo").stdout
    assert text.splitlines()[0].split() == [
        "ID",
        "TOOL",
        "ACTION",
        "SCOPE",
        "LESSON",
        "BY",
        "FIRED",
        "MESSAGE",
    ]
    assert "no-tags  Bash   remind  everywhere  -" in text

    before = (agent.path / "guards.toml").read_text()
    proc = run_cli("guard", "demo", "no-tags", "--deny")
    assert proc.returncode == 0 and "guard no-tags: remind -> deny" in proc.stdout
    after = (agent.path / "guards.toml").read_text()
    assert after == before.replace(
        'pattern = "git push .*--tags"\naction = "remind"', 'pattern = "git push .*--tags"\naction = "deny"'
    )
    assert git_out(agent.path, "log", "-1", "--format=%an <%ae>|%s") == (
        "Test Person <person@example.test>|guard(demo): no-tags remind -> deny"
    )
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Kind"] == "guard" and trailers["Evolve-Source"] == "human"
    assert git_out(agent.path, "show", "--format=", "--stat", "HEAD").split()[0] == "guards.toml"
    assert git_out(agent.path, "status", "--porcelain") == ""
    listed = json.loads(run_cli("guard", "demo", "no-tags", "--json").stdout)["guards"]
    assert [(g["id"], g["action"], g["by"]) for g in listed] == [("no-tags", "deny", "person")]  # now theirs
    assert "already deny" in run_cli("guard", "demo", "no-tags", "--deny").stdout
    assert git_out(agent.path, "rev-list", "--count", "HEAD") == "4"  # init, mine, model's, the deny


def test_evolve_guard_says_what_is_wrong_in_one_line(agent):
    proc = run_cli("guard", "demo", "no-npm", "--deny")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "evolve: error: agent 'demo' has no usable guard 'no-npm' (guards: none); see `evolve guard demo`"
    ]
    assert "has no guards" in run_cli("guard", "demo").stdout
    (agent.path / "guards.toml").write_text(NO_NPM + '[x]\ntool = "Bash"\n')
    proc = run_cli("guard", "demo")
    assert proc.returncode == 0 and "no-npm" in proc.stdout
    assert "guards.toml [x]: pattern must be a non-empty string; fix or remove it" in proc.stderr
    proc = run_cli("guard", "demo", "--deny")
    assert proc.returncode == 1 and "--deny needs the guard's id" in proc.stderr
    assert run_cli("guard", "demo", "x", "--deny", "--off").returncode == 2  # one action at a time


def test_doctor_names_each_broken_guard(agent):
    (agent.path / "guards.toml").write_text(
        NO_NPM + '[web]\ntool = "WebFetch"\npattern = "x"\nmessage = "m"\n'
    )
    found = json.loads(run_cli("doctor", "--json").stdout)
    [finding] = [f for f in found["findings"] if f["where"] == "demo: guards.toml"]
    assert finding["level"] == "error"
    assert finding["problem"].startswith("[web]: tool 'WebFetch' is not one evolve guards")


def test_a_call_no_guard_could_match_imports_no_pattern_code(agent, evolve_home):
    """From the cache, a call whose command lacks each pattern's required text loads almost nothing."""
    from tests.test_hooks_light import HEAVY, LIGHT_PROBE

    (agent.path / "guards.toml").write_text(NO_NPM + ENV)
    argv = ["claude-code", "pre-tool-use", "--home", str(evolve_home), "--agent", "demo"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "EVOLVE_FORBID_HOME": ""}

    def loaded(command: str) -> tuple[set[str], bytes]:
        proc = subprocess.run(
            [sys.executable, "-S", "-P", "-c", LIGHT_PROBE.format(argv=argv)],
            input=json.dumps(bash(command)).encode(),
            capture_output=True,
            timeout=30,
            env=env,
        )
        return set(proc.stderr.decode().split("LOADED ", 1)[1].split()), proc.stdout

    first, _ = loaded("yarn install")  # parses the file once, writes the cache
    assert "tomllib" in first
    cached, out = loaded("yarn install")  # no "npm ": nothing to compile
    pattern_code = {"evolve.patterns", "evolve.pattern_syntax", "evolve.workspace.guards"}
    assert not cached & (HEAVY | pattern_code), sorted(cached)
    assert out == b""
    matched, out = loaded("npm install")  # a call it may match: the pattern through the door
    assert "evolve.patterns" in matched and not matched & HEAVY and b'"deny"' in out


def test_each_firing_is_counted_by_evolve_guard_and_shown_to_the_next_reflection(agent, tmp_path):
    from evolve.store import ledger

    home = Home.resolve()
    (agent.path / "guards.toml").write_text(
        NO_NPM + '[tests]\ntool = "Bash"\npattern = "pytest"\nmessage = "make test"\n'
    )
    for command in ("npm install a", "npm i b", "pytest -q", "ls"):
        run_command(claude_command(home), {**bash(command), "tool_use_id": f"t-{command}"}, tmp_path)
    listed = {g["id"]: g for g in json.loads(run_cli("guard", "demo", "--json").stdout)["guards"]}
    assert (listed["no-npm"]["fired"], listed["no-npm"]["denied"]) == (2, 2)
    assert (listed["tests"]["fired"], listed["tests"]["denied"]) == (1, 0)
    assert listed["no-npm"]["last_fired_at"] > listed["tests"]["last_fired_at"] - 60
    text = run_cli("guard", "demo").stdout.splitlines()
    assert text[0].split()[6] == "FIRED" and text[1].split()[:7] == [
        "no-npm",
        "shell",
        "deny",
        "everywhere",
        "use-pnpm",
        "person",
        "2",
    ]
    with ledger.opened(home.state_db) as conn:
        [first, *_] = ledger.events_since(conn, "demo", None)
    assert first["kind"] == "guard" and first["guards"] == ["no-npm"] and first["session"] == "s1"
    assert first["tool_use_id"] == "t-npm install a" and first["action"] == "deny"
