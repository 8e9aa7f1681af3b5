"""A FIFO where Claude Code's settings, Codex's rollouts or the model's key file belong.

A plain open of a FIFO with no writer waits forever: install, doctor, the session's hooks
and every reflection stopped there. Each read refuses it in one line instead.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.home import Home
from evolve.integrations import claude_code, codex
from evolve.store import spool
from tests.helpers import git, make_agent


@pytest.fixture
def project(tmp_path: Path, evolve_home: Path) -> Path:
    folder = tmp_path / "my project"
    folder.mkdir()
    git(folder, "init", "-q")
    make_agent("demo")
    claude_code.install(Home.resolve(), "demo", "project", str(folder))
    return folder


def evolve(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evolve", *args],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=cwd,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)


def test_a_fifo_for_claude_codes_settings_is_one_line_for_install_and_doctor_and_the_hook(project):
    settings = project / ".claude" / "settings.local.json"
    settings.unlink()
    os.mkfifo(settings)
    ran = evolve("install", "claude-code", "--agent", "demo", cwd=project)
    assert ran.returncode == 1 and ran.stderr.count("\n") == 1, ran.stderr
    assert f"{settings} is not a regular file" in ran.stderr
    doctor = evolve("doctor", "--json")
    assert "Traceback" not in doctor.stderr and "not a regular file" in doctor.stdout, doctor
    home, cwd = str(Home.resolve().root), str(project)
    served = python(  # the plugin's hook asks whether the installed hooks serve the session already
        "from evolve.hookmain import serves_here; "
        f"print(serves_here({home!r}, 'claude-code', 'demo', {{'cwd': {cwd!r}}}))"
    )
    assert served.stdout == "False\n", served
    assert settings.exists() and not settings.is_file()  # left as the person made it


def test_a_fifo_for_the_api_key_file_is_a_problem_named_not_a_reflection_that_waits(tmp_path):
    key = tmp_path / "anthropic.key"
    os.mkfifo(key)
    ran = python(
        "from evolve.config import ModelConfig; from evolve.reflect import keys; "
        f"print(keys.read(ModelConfig(backend='anthropic', api_key_file={str(key)!r})))"
    )
    assert "is not a regular file" in ran.stdout and "name the file that holds the key" in ran.stdout, ran


def test_a_fifo_among_codexs_rollouts_is_skipped_not_waited_on(tmp_path):
    day = tmp_path / "codex" / "sessions" / "2026" / "12" / "04"
    day.mkdir(parents=True)
    os.mkfifo(day / "rollout-2026-12-04T10-00-00-x.jsonl")
    ran = python(
        "from evolve.store import codex_rollouts as c; "
        f"print([c.rollout_folder(p) for p in c.rollouts({str(tmp_path / 'codex')!r})])"
    )
    assert ran.stdout == "[None]\n", ran


@pytest.mark.parametrize("where", ["places", "layout-version", "integrations/claude-code.json", "exclude"])
def test_a_fifo_for_a_record_of_the_home_or_the_projects_exclude_holds_no_command(project, where):
    path = project / ".git" / "info" / "exclude" if where == "exclude" else Home.resolve().root / where
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    for args in (["install", "claude-code", "--agent", "demo"], ["doctor"]):
        ran = evolve(*args, cwd=project)
        assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr, ran
    if where == "exclude":  # the person's file: left as they made it (evolve's own records are remade)
        assert path.exists() and not path.is_file()


def test_a_fifo_for_the_hooks_log_drops_a_failing_hooks_line_and_never_waits(evolve_home):
    """The hook's one line of why it failed was written with a plain open: it waited for a reader."""
    make_agent("demo")
    log = Home.resolve().logs_dir / "hooks.log"
    log.parent.mkdir(exist_ok=True)
    os.mkfifo(log)
    ran = python(
        "from evolve import hookio; "
        f"hookio.log({str(evolve_home)!r}, {{}}, RuntimeError('a bug')); print('done')"
    )
    assert ran.stdout == "done\n", ran
    assert log.exists() and not log.is_file()


def test_a_transcript_swapped_for_a_fifo_after_discovery_is_skipped_not_waited_on(tmp_path):
    """A FIFO put where a transcript was, between discovery and the read.

    Discovery keeps regular files only (is_file), but the watcher opened each later with a
    plain open: the FIFO held it forever.
    """
    transcript = tmp_path / "session.jsonl"
    os.mkfifo(transcript)
    ran = python(
        "from pathlib import Path; from evolve.observe.ingest import guess_format, observe_file; "
        "from evolve.store import ledger\n"
        f"with ledger.opened(Path({str(tmp_path / 'state.db')!r})) as conn:\n"
        f"    print(guess_format(Path({str(transcript)!r})), "
        f"observe_file(conn, 'demo', Path({str(transcript)!r}), 'claude_code').error)"
    )
    assert ran.stdout.startswith("claude_code cannot read:") and "not a regular file" in ran.stdout, ran


def test_a_fifo_at_the_spool_is_named_never_waited_on_and_a_kept_line_is_still_read(evolve_home):
    """A FIFO at spool/hooks.jsonl: the drain renamed it aside and then read it, forever.

    The hooks' lines sent to it are lost (the pipe keeps nothing once closed), so a hook's
    write refuses it (its one line goes to the hooks' log); a line already spooled in a
    regular file is still read, and doctor says what to remove.
    """
    make_agent("demo")
    spool_dir = Home.resolve().spool_dir
    spool_dir.mkdir(exist_ok=True)
    os.mkfifo(spool_dir / "hooks.jsonl")
    (spool_dir / "hooks.jsonl.1.2.draining").write_text('{"event":"kept","at":1.0}\n')
    ran = python(
        "from pathlib import Path; from evolve.store import spool\n"
        f"folder = Path({str(spool_dir)!r})\n"
        "try:\n    spool.append(folder, {'event': 'lost'})\n"
        "except OSError as exc:\n    print(exc)\n"
        "with spool.drain(folder) as records:\n    print([r['event'] for r in records])"
    )
    assert ran.stdout == (
        f"{spool_dir / 'hooks.jsonl'} is not a regular file; remove it (the hooks make a new one)\n['kept']\n"
    ), ran
    assert sorted(p.name for p in spool_dir.iterdir()) == ["drain.lock", "hooks.jsonl"]
    doctor = evolve("doctor")
    assert f"{spool_dir / 'hooks.jsonl'}: is not a regular file" in doctor.stdout, doctor
    assert "remove it" in doctor.stdout


@pytest.mark.parametrize("kind", ["folder", "socket", "dangling link"])
def test_a_draining_file_that_cannot_be_opened_is_named_and_every_drain_still_reads_the_rest(
    evolve_home, kind
):
    """A folder, a socket or a dangling link at a *.draining name made every drain raise.

    The watcher and `evolve lessons` stopped there for good (the regular lines beside it were
    never drained), and doctor named no dangling link at all.
    """
    make_agent("demo")
    spool_dir = Home.resolve().spool_dir
    spool_dir.mkdir(exist_ok=True)
    odd = spool_dir / "hooks.jsonl.1.1.draining"
    if kind == "folder":
        odd.mkdir()
    elif kind == "dangling link":
        odd.symlink_to(spool_dir / "gone")
    else:
        bound = socket.socket(socket.AF_UNIX)
        bound.bind(str(odd))
        bound.close()
    (spool_dir / "hooks.jsonl.1.2.draining").write_text('{"event":"kept","at":1.0}\n')
    with spool.drain(spool_dir) as records:
        assert [r["event"] for r in records] == ["kept"]
    assert odd.is_symlink() or odd.exists()  # left as the person made it, for doctor to name
    doctor = evolve("doctor")
    assert f"{odd}: is not a regular file" in doctor.stdout, doctor


@pytest.mark.parametrize("kind", ["file", "dangling link"])
def test_a_file_where_the_spool_folder_belongs_is_named_by_doctor(evolve_home, kind):
    """The hooks' every line failed (logged, never shown) and doctor said nothing of it."""
    make_agent("demo")
    spool_dir = Home.resolve().spool_dir
    spool_dir.rmdir()
    if kind == "file":
        spool_dir.write_text("")
    else:
        spool_dir.symlink_to(evolve_home / "gone")
    doctor = evolve("doctor")
    assert f"{spool_dir}: is not a folder: the hooks' lines sent to it are lost; remove it" in doctor.stdout
    with spool.drain(spool_dir) as records:
        assert records == []


def test_a_spool_of_a_gigabyte_without_lines_is_drained_without_being_held(tmp_path):
    """A sparse (or foreign) file at the spool was read whole, then joined: twice its size in memory."""
    folder = tmp_path / "spool"
    spool.append(folder, {"event": "kept", "at": 1.0})
    with (folder / "hooks.jsonl").open("r+b") as handle:
        handle.seek(1 << 30)
        handle.write(b"\n" * (1 << 24) + b'{"event":"after","at":2.0}\n')
    ran = python(  # VmHWM: this process's peak; ru_maxrss would count the forking worker's too
        "import re; from pathlib import Path; from evolve.store import spool\n"
        f"with spool.drain(Path({str(folder)!r})) as records:\n    print([r['event'] for r in records])\n"
        "peak = re.search(r'VmHWM:\\s+(\\d+) kB', Path('/proc/self/status').read_text())\n"
        "print(int(peak[1]) // 1024 < 200)"
    )
    assert ran.stdout == "['kept', 'after']\nTrue\n", ran


def test_claude_codes_settings_over_the_bound_are_one_line_and_left_as_they_are(project):
    """A settings file that never ends (a log, /proc/…) was read to its end by install and doctor."""
    settings = project / ".claude" / "settings.local.json"
    with settings.open("r+b") as handle:  # a valid start, then more than any settings file holds
        handle.seek(9 << 20)
        handle.write(b" ")
    before = settings.stat()
    ran = evolve("install", "claude-code", "--agent", "demo", "--force", cwd=project)
    assert ran.returncode == 1 and ran.stderr.count("\n") == 1, ran.stderr
    assert f"{settings} is over 8,388,608 bytes, more than a settings file holds; fix it" in ran.stderr
    doctor = evolve("doctor")
    assert "Traceback" not in doctor.stderr and "is over 8,388,608 bytes" in doctor.stdout, doctor
    assert settings.stat().st_mtime_ns == before.st_mtime_ns and settings.stat().st_size == before.st_size


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_an_install_that_would_take_a_settings_file_over_the_bound_writes_nothing(project, harness):
    """A file just under 8 MB was written over it: install, doctor and uninstall then refused it."""
    settings = project / ".claude" / "settings.local.json" if harness == "claude-code" else codex.hooks_file()
    settings.parent.mkdir(exist_ok=True)
    padding = (8 << 20) - 100
    settings.write_text(json.dumps({"pad": "x" * padding}))
    before = settings.read_bytes()
    ran = evolve("install", harness, "--agent", "demo", "--force", cwd=project)
    assert ran.returncode == 1 and ran.stderr.count("\n") == 1, ran.stderr
    assert f"{settings} would be over 8,388,608 bytes with evolve's entries" in ran.stderr
    assert settings.read_bytes() == before
    assert evolve("uninstall", harness, "--agent", "demo", cwd=project).returncode == 0


@pytest.mark.parametrize("target", ["a file elsewhere", "nothing (dangling)"])
def test_a_link_at_the_spool_sends_no_line_elsewhere_and_doctor_names_it(evolve_home, tmp_path, target):
    """A link at spool/hooks.jsonl: the hooks appended their lines to whatever it named (~/.bashrc).

    Now a hook's write refuses it (one line to the hooks' log: the hook fails open), its target
    keeps its bytes (or is never made), and doctor says what to remove.
    """
    make_agent("demo")
    spool_dir = Home.resolve().spool_dir
    spool_dir.mkdir(exist_ok=True)
    elsewhere = tmp_path / "bashrc"
    if target == "a file elsewhere":
        elsewhere.write_text("export PATH=/usr/bin\n")
    (spool_dir / "hooks.jsonl").symlink_to(elsewhere)
    ran = python(
        "from pathlib import Path; from evolve.store import spool\n"
        f"folder = Path({str(spool_dir)!r})\n"
        "try:\n    spool.append(folder, {'event': 'sent'})\n"
        "except OSError as exc:\n    print(exc)\n"
        "with spool.drain(folder) as records:\n    print(records)"
    )
    link = spool_dir / "hooks.jsonl"
    refused = f"{link} is a link, not a regular file; remove it (the hooks make a new one)"
    assert ran.stdout == f"{refused}\n[]\n", ran
    if target == "a file elsewhere":
        assert elsewhere.read_text() == "export PATH=/usr/bin\n"
    else:
        assert not elsewhere.exists()
    doctor = evolve("doctor")
    assert "is not a regular file" in doctor.stdout and "remove it" in doctor.stdout, doctor
