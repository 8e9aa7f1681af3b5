"""Claude Code hooks on an INSTALLED package: wall time as a ratio to `python -c pass`.

A wheel is built from a copy of the source (offline, no build isolation) and installed
with `--no-deps` into a fresh venv under the workdir. None of evolve's third-party
dependencies is installed there on purpose: the hooks must need the standard library
only, so a hook importing one would fail, log it, and fail this bench (the log must stay
empty and every hook must have spooled its record). An editable install's import finder
(what setuptools writes for most layouts; not this one's) would hide costs: it loads
pathlib and re at interpreter start.

The agent (200 skills in one commit, a memo) is made with this process's evolve. Each
hook runs as the command `evolve install claude-code` writes, with its JSON on stdin,
interleaved with `python -c pass` on the same interpreter; medians of 15 runs.
Targets: SessionStart with 200 skills (linked, the default install) <= 3x; PostToolUse
and Stop <= 2x. Also measured, to record the choices made: SessionStart with the index
injected (`--no-link`), and Stop through `python -m evolve.hookmain` and through the
`evolve hook` console script, against the `-c` command install writes.

Codex, the same way: `evolve install codex` for the project, then its one frozen command
(the agent found from the session's folder in the install records). Targets: SessionStart
<= 3x, Stop <= 2x; also measured, a Stop in a folder with no install (Codex runs the hooks
of hooks.json in every session of the person's, whatever the folder).

PreToolUse (guards.toml, run on every tool call) through the shell launcher install writes,
for agents with 0, 1 and 50 guards (Bash guards, a command none matches: every pattern is
tried; and one that a deny guard refuses), in wall time and in CPU time (user + system of
the shell and Python: what a shared, loaded machine disturbs least). Targets, on CPU time:
no guard <= 0.2x (no Python starts), 1 and 50 guards <= 1.2x.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.helpers import build_wheel  # noqa: E402

AGENT = "bench"
SKILLS = 200
REPEAT = 15


def install_wheel(workdir: Path) -> tuple[str, Path]:
    """(the venv's python, its site-packages) with evolve installed from a wheel, no deps."""
    wheel = build_wheel(workdir, "benchmarks", "examples")
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            purelib,
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run([python, "-m", "compileall", "-q", purelib], check=True)
    where = subprocess.run(
        [python, "-c", "import evolve; print(evolve.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=workdir,
    ).stdout.strip()
    if not where.startswith(purelib):
        raise RuntimeError(f"the bench venv imports evolve from {where}, not the wheel")
    return python, Path(purelib)


def build_agent(home: Path) -> None:
    from evolve.home import Home
    from evolve.store.history import build_message
    from evolve.workspace.agent import Agent

    agent = Agent.create(AGENT, Home(home))
    body = "".join(f"- rule {r}: when step {r} fails, read its log first\n" for r in range(10))
    changes = {
        f"skills/skill-{i:03d}/SKILL.md": (
            f"---\nname: skill-{i:03d}\ndescription: Use when working on area {i}.\n---\n\n{body}"
        ).encode()
        for i in range(SKILLS)
    }
    lessons = "".join(f"- When task {i} comes up, check the fixtures before the code.\n" for i in range(25))
    changes["memo.md"] = (
        f"# Memo of {AGENT}\n\n## What I do well and where I often stumble\n\n{lessons}\n"
        f"## Strategies for this user and domain\n\n{lessons}"
    ).encode()
    with agent.repo.locked():
        agent.repo.commit_changes(changes, build_message("reflect(bench): skills", {}), agent.evolve_identity)


GUARDS = {"0": 0, "1": 1, "50": 50}


def build_guarded(home: Path) -> None:
    """One agent per guard count, each a guards.toml of Bash guards with distinct patterns."""
    from evolve.home import Home
    from evolve.workspace.agent import Agent

    for name, count in GUARDS.items():
        agent = Agent.create(f"guards-{name}", Home(home))
        tables = "".join(
            f"[rule-{i}]\ntool = \"Bash\"\npattern = '\\btool{i} (install|i|add)\\b'\n"
            f'action = "{"deny" if i == 0 else "remind"}"\nmessage = "Use the other tool {i}."\n\n'
            for i in range(count)
        )
        if tables:
            (agent.path / "guards.toml").write_text(tables)


def _run(argv: list[str], payload: bytes, env: dict, cwd: Path, cpu: list[float] | None = None) -> float:
    """Wall time of one run; its CPU time (user + system, the shell's and Python's) into `cpu`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        argv, input=payload, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or proc.stderr:
        raise RuntimeError(f"{shlex.join(argv)}: exit {proc.returncode} {proc.stderr.decode()[-300:]}")
    if cpu is not None:
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def install_codex(python: str, home: Path, project: Path, codex_home: Path) -> None:
    """`evolve install codex` for the project, its hooks.json under `codex_home`."""
    from evolve.home import Home
    from evolve.integrations import codex

    before = os.environ.get("CODEX_HOME")
    os.environ["CODEX_HOME"] = str(codex_home)
    try:
        codex.install(Home(home), AGENT, "project", str(project), python=python)
    finally:
        if before is None:
            os.environ.pop("CODEX_HOME", None)
        else:
            os.environ["CODEX_HOME"] = before


def run(workdir: Path) -> dict:
    from evolve.home import Home
    from evolve.integrations import codex
    from evolve.integrations.claude_code import hook_command

    workdir = Path(workdir)
    started = time.perf_counter()
    python, purelib = install_wheel(workdir)
    home = workdir / "home"
    build_agent(home)
    build_guarded(home)
    setup_s = time.perf_counter() - started
    project = workdir / "project"
    project.mkdir()
    install_codex(python, home, project, workdir / "codex-home")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "EVOLVE_FORBID_HOME")
    }
    env["EVOLVE_NO_WATCHER"] = "1"

    def command(event: str, linked: bool = True) -> list[str]:
        return shlex.split(hook_command(python, Home(home), AGENT, event, linked))

    transcript = str(workdir / "t.jsonl")
    base = {
        "session_id": "bench",
        "transcript_path": transcript,
        "cwd": str(project),
        "permission_mode": "default",
    }
    stop = json.dumps(
        {
            **base,
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "Done. " * 300,
        }
    ).encode()
    cases: dict[str, tuple[list[str], bytes]] = {
        "pass": ([python, "-c", "pass"], b""),
        "session_start": (
            command("session-start"),
            json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}).encode(),
        ),
        "post_tool_use": (
            command("post-tool-use"),
            json.dumps(
                {
                    **base,
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Skill",
                    "tool_use_id": "toolu_1",
                    "tool_input": {"skill": "skill-007"},
                    "tool_response": "Launching skill: skill-007",
                }
            ).encode(),
        ),
        "stop": (command("stop"), stop),
        "session_start_index": (
            command("session-start", linked=False),
            json.dumps({**base, "hook_event_name": "SessionStart", "source": "startup"}).encode(),
        ),
        "stop_dash_m": ([python, "-I", "-m", "evolve.hookmain", *command("stop")[4:]], stop),
    }
    codex_base = {**base, "model": "gpt-5", "permission_mode": "bypassPermissions"}
    codex_stop = {**codex_base, "hook_event_name": "Stop", "turn_id": "t1", "stop_hook_active": False}
    codex_stop["last_assistant_message"] = "Done. " * 300
    cases.update(
        {
            "codex_session_start": (
                shlex.split(codex.hook_command(python, Home(home), "session-start")),
                json.dumps({**codex_base, "hook_event_name": "SessionStart", "source": "startup"}).encode(),
            ),
            "codex_stop": (
                shlex.split(codex.hook_command(python, Home(home), "stop")),
                json.dumps(codex_stop).encode(),
            ),
            "codex_stop_elsewhere": (
                shlex.split(codex.hook_command(python, Home(home), "stop")),
                json.dumps({**codex_stop, "cwd": str(workdir)}).encode(),
            ),
        }
    )
    bash = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_2"}
    for name in GUARDS:
        guard = hook_command(python, Home(home), f"guards-{name}", "pre-tool-use", True)
        cases[f"pre_tool_use_{name}"] = (
            ["/bin/sh", "-c", guard],
            json.dumps({**bash, "tool_input": {"command": "pnpm install --frozen-lockfile"}}).encode(),
        )
    cases["pre_tool_use_50_deny"] = (
        ["/bin/sh", "-c", hook_command(python, Home(home), "guards-50", "pre-tool-use", True)],
        json.dumps({**bash, "tool_input": {"command": "tool0 install left-pad"}}).encode(),
    )
    script = purelib / "bin" / "evolve"  # pip --target puts the console script here
    if script.exists():
        cases["stop_console_script"] = ([python, str(script), "hook", *command("stop")[4:]], stop)
    records = {name: 0 if name.startswith("pre_tool_use") else 1 for name in cases if name != "pass"}
    records.update(codex_session_start=2, codex_stop_elsewhere=0)  # impressions + proof; nothing
    records.update(pre_tool_use_50_deny=1)  # the guard that fired
    for argv, payload in cases.values():  # warm-up: page cache, the skill index cache
        _run(argv, payload, env, project)
    times: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(REPEAT):
        for name, (argv, payload) in cases.items():
            times[name].append(_run(argv, payload, env, project, cpu[name]))
    median = {name: statistics.median(values) for name, values in times.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
    log = home / "logs" / "hooks.log"
    if log.exists():
        raise RuntimeError(f"a hook failed on the installed package: {log.read_text()[-500:]}")
    spooled = (home / "spool" / "hooks.jsonl").read_text().count("\n")
    expected = (REPEAT + 1) * sum(records.values())
    if spooled != expected:
        raise RuntimeError(f"{spooled} spool records, expected {expected}")
    ratio = {name: round(median[name] / median["pass"], 2) for name in cases if name != "pass"}
    result: dict = {"skills": SKILLS, "python_pass_ms": round(median["pass"] * 1000, 1)}
    result.update({f"{name}_ratio": value for name, value in ratio.items()})
    result.update(  # CPU time, which other processes on a shared machine disturb far less than wall time
        {
            f"{name}_cpu_ratio": round(cpu_median[name] / cpu_median["pass"], 2)
            for name in cases
            if name.startswith("pre_tool_use")
        }
    )
    result.update(
        {
            "session_start_ms": round(median["session_start"] * 1000, 1),
            "stop_ms": round(median["stop"] * 1000, 1),
            "codex_session_start_ms": round(median["codex_session_start"] * 1000, 1),
            "codex_stop_ms": round(median["codex_stop"] * 1000, 1),
            **{f"pre_tool_use_{n}_ms": round(median[f"pre_tool_use_{n}"] * 1000, 2) for n in GUARDS},
            "setup_s": round(setup_s, 1),
            "python": sysconfig.get_python_version(),
            "targets": {
                "session_start_ratio": "<= 3",
                "post_tool_use_ratio": "<= 2",
                "stop_ratio": "<= 2",
                "codex_session_start_ratio": "<= 3",
                "codex_stop_ratio": "<= 2",
                "pre_tool_use_0_cpu_ratio": "<= 0.2",
                "pre_tool_use_1_cpu_ratio": "<= 1.2",
                "pre_tool_use_50_cpu_ratio": "<= 1.2",
                "pre_tool_use_50_deny_cpu_ratio": "<= 1.2",
            },
        }
    )
    return result


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        outcome = run(Path(tmp))
    print(json.dumps(outcome, indent=2))
    met = (
        outcome["session_start_ratio"] <= 3
        and outcome["post_tool_use_ratio"] <= 2
        and outcome["stop_ratio"] <= 2
        and outcome["codex_session_start_ratio"] <= 3
        and outcome["codex_stop_ratio"] <= 2
    )
    sys.exit(0 if met else 1)
