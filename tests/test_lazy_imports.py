"""Light entry points never import the heavy libraries (measured in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("anthropic", "git", "tiktoken", "watchdog", "msgspec")

PROBE = """
import json, sys
heavy = {heavy!r}
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in heavy)
report = {{}}
import evolve
report["import evolve"] = loaded()
import evolve.cli
report["import evolve.cli"] = loaded()
for argv in {commands!r}:
    code = evolve.cli.main(argv)
    report[" ".join(argv)] = [code, loaded()]
print("REPORT" + json.dumps(report))
"""

COMMANDS = [["agents"], ["init", "x"], ["log", "x"], ["skills", "x"], ["agents", "--json"]]


def _probe(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("REPORT"))
    return json.loads(line[len("REPORT") :])


def test_light_commands_import_no_heavy_library(evolve_home):
    report = _probe(PROBE.format(heavy=HEAVY, commands=COMMANDS))
    assert report.pop("import evolve") == []
    assert report.pop("import evolve.cli") == []
    for command, (code, loaded) in report.items():
        assert code == 0, command
        assert loaded == [], f"`evolve {command}` imported {loaded}"
    assert (evolve_home / "agents" / "x" / ".git").is_dir()


def test_the_precommit_hook_imports_no_heavy_library(evolve_home):
    code = (
        "import sys, json\n"
        "import evolve.precommit\n"
        f"heavy = {HEAVY!r}\n"
        "print('REPORT' + json.dumps({'m': sorted(m for m in sys.modules if m.split('.')[0] in heavy)}))\n"
    )
    assert _probe(code) == {"m": []}


def test_the_probe_would_notice():
    # guard against a probe that can never fail (GitPython is the cheapest heavy one to load)
    code = "import json, sys, git\nprint('REPORT' + json.dumps({'m': 'git' in sys.modules}))\n"
    assert _probe(code) == {"m": True}


SYNC_PROBE = """
import json, sys
import evolve.cli
code = evolve.cli.main(["sync", "x"])
print("REPORT" + json.dumps([code, sorted(m for m in {lazy!r} if m in sys.modules)]))
"""
# what `evolve sync` with nothing to do leaves unloaded (make bench: the command against git fetch);
# the secret rules (evolve.transcripts) only load to show a URL evolve refuses
SYNC_LAZY = (
    "typing",
    "tempfile",
    "evolve.config",
    "evolve.workspace.skills",
    "evolve.sync.integrate",
    "evolve.transcripts",
)


@pytest.mark.parametrize("served", ["folder", "git daemon"])
def test_a_sync_with_nothing_to_do_loads_neither_config_nor_typing(
    served, evolve_home, tmp_path, capsys, request
):
    from evolve.cli import main

    if served == "folder":
        server = str(tmp_path / "server.git")
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", server], check=True)
    else:  # git://127.0.0.1:PORT/x.git: a URL with a scheme, judged without the secret rules
        server = request.getfixturevalue("git_daemon").url("x")
    assert main(["init", "x"]) == 0 and main(["remote", "x", server]) == 0
    assert "synced" in capsys.readouterr().out
    proc = subprocess.run(
        [sys.executable, "-P", "-c", SYNC_PROBE.format(lazy=SYNC_LAZY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "x: up to date" in proc.stdout
    line = next(line for line in proc.stdout.splitlines() if line.startswith("REPORT"))
    assert json.loads(line[len("REPORT") :]) == [0, []]


HOOK_PROBE = """
import json, sys
from evolve.transcripts import redact
before = redact.secret_warnings("- prefer small commits; run the linter first")
plain = sorted(m for m in sys.modules if m.startswith("evolve.transcripts."))
compiled_plain = redact.rules.cache_info().currsize
after = redact.secret_warnings("password = hunter2hunter2")
print("REPORT" + json.dumps([before, plain, compiled_plain, bool(after), redact.rules.cache_info().currsize]))
"""


def test_the_secret_rules_compile_only_for_a_text_holding_a_keyword():
    # the pre-commit hook's warnings on a memo commit: no adapter is loaded, no rule's regex
    # compiled, until a text holds a keyword of one (then every rule is there, as before)
    before, plain, compiled_plain, warned, compiled_after = _probe(HOOK_PROBE)
    assert before == []
    assert plain == ["evolve.transcripts.literals", "evolve.transcripts.redact"]
    assert compiled_plain == 0
    assert warned and compiled_after == 1


def test_the_transcripts_package_still_gives_its_names_and_its_submodules():
    import evolve.transcripts as transcripts
    from evolve.transcripts import ADAPTERS, classify, follow

    assert set(ADAPTERS) == {"claude_code", "codex", "generic", "api"}
    assert callable(follow) and classify.__name__ == "evolve.transcripts.classify"
    assert all(getattr(transcripts, name) is not None for name in transcripts.__all__)
    with pytest.raises(AttributeError):
        transcripts.no_such_name  # noqa: B018 - the attribute access is the test
