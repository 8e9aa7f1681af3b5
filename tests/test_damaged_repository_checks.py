"""Status and sync over agents, one damaged: each check is brief, side by side, and stops no other.

A damaged agent's check (git fsck) may take long or be killed; the other agents are still
listed and synced, and the damaged one is named in its own row or line.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from tests.helpers import damage, git, make_agent, run_cli, write_skill


def test_syncing_every_agent_goes_past_a_damaged_one(evolve_home, tmp_path):
    # `evolve sync` stopped at the damaged agent: the next one's new commit was not pushed
    for name in ("a", "b"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
    write_skill(evolve_home / "agents" / "b", "run-tests")
    assert run_cli("pin", "b", "run-tests").returncode == 0  # a commit of evolve's, to push
    damage(evolve_home / "agents" / "a", "objects")
    out = run_cli("sync", "--json")
    assert out.returncode == 1, out.stderr
    rows = {row["agent"]: row for row in json.loads(out.stdout)}
    assert rows["a"]["state"] == "failed" and "git fails in this repository" in rows["a"]["detail"]
    assert rows["b"]["state"] == "synced", rows["b"]
    assert not (evolve_home / "logs" / "crash.log").exists()
    # nothing was fetched into it: a fetch beside the failed read brought back the lost
    # objects, and git's check, once it had, found a sound repository (exit 3, now and then)
    assert not any((evolve_home / "agents" / "a" / ".git" / "objects").iterdir())


@pytest.mark.parametrize(
    "how", ["index", "a broken branch file", "packed-refs cut", "emptied", "config", "another user's"]
)
def test_a_damaged_agent_never_stops_the_others_in_sync(evolve_home, tmp_path, how):
    # whatever the damage, the other agent still syncs, no crash is written and the damaged
    # one is named, with or without its name (an emptied .git, a .git/config git cannot parse,
    # a folder another user owns say nothing of a remote: left out unsaid, or "no remote")
    if how == "another user's" and os.geteuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    for name in ("a", "b"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
    write_skill(evolve_home / "agents" / "b", "run-tests")
    assert run_cli("pin", "b", "run-tests").returncode == 0
    broken = evolve_home / "agents" / "a"
    if how == "a broken branch file":
        (broken / ".git" / "refs" / "heads" / "main").write_text("garbage\n")
    elif how == "packed-refs cut":
        git(broken, "pack-refs", "--all")
        text = (broken / ".git" / "packed-refs").read_text()
        (broken / ".git" / "packed-refs").write_text(text[: text.index("refs/heads/main") - 20])
    elif how == "config":
        with (broken / ".git" / "config").open("a") as config:
            config.write("[broken\n")
    elif how == "another user's":
        for path in [broken, *broken.rglob("*")]:
            os.lchown(path, 65534, 65534)
    else:
        damage(broken, how)
    out = run_cli("sync", "--json")
    assert out.returncode in (0, 1), out.stderr
    rows = {row["agent"]: row for row in json.loads(out.stdout)}
    assert rows["b"]["state"] == "synced", rows["b"]
    fields = {"agent", "state", "ok", "detail", "received", "sent", "notes"}
    assert all(set(row) == fields for row in rows.values())
    assert rows["a"]["state"] == "failed" and str(broken) in rows["a"]["detail"], rows["a"]
    assert out.returncode == 1
    assert list(rows) == ["a", "b"]  # in the order of their names, as ever
    named = run_cli("sync", "a")
    assert named.returncode == 1 and named.stdout.startswith(f"a: failed: {broken}: "), named.stdout


def test_sync_names_an_agent_whose_repository_is_gone(evolve_home, tmp_path):
    # its folder and agent.toml are there, .git is not: every agent with a remote syncs and
    # this one says why it cannot, on its own line, in words and in --json
    for name in ("gone", "kept"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
    shutil.rmtree(evolve_home / "agents" / "gone" / ".git")
    out = run_cli("sync")
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    gone = evolve_home / "agents" / "gone"
    assert lines[0].startswith(f"gone: failed: {gone}: .git is not a git repository"), lines
    assert lines[1] == "kept: up to date", lines
    named = run_cli("sync", "--json", "gone")  # by name too: its row, where it was an error on stderr alone
    assert named.returncode == 1, named.stderr
    (row,) = json.loads(named.stdout)
    assert row["agent"] == "gone" and row["state"] == "failed", row
    assert row["detail"].startswith(f"{gone}: .git is not a git repository"), row
    said = run_cli("sync", "gone")
    assert said.returncode == 1 and said.stdout.startswith(
        f"gone: failed: {gone}: .git is not a git repository"
    )
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_a_check_stopped_by_a_signal_is_not_taken_for_a_timeout_or_damage(evolve_home, monkeypatch, tmp_path):
    # a git killed by SIGHUP exits -1, which read as evolve's timeout ("did not finish in 60 s"),
    # and one killed by another signal (the kernel's out-of-memory killer) as a damaged repository
    import shutil
    import signal

    broken = make_agent("broken")
    damage(broken.path, "objects")
    real = shutil.which("git")
    for number in (signal.SIGHUP, signal.SIGKILL):
        bin_dir = tmp_path / f"bin{number}"
        bin_dir.mkdir()
        wrapper = bin_dir / "git"
        # python resets the signal first: a shell started under nohup cannot undo an ignored SIGHUP
        n = int(number)
        reset = f"{n} == signal.SIGKILL or signal.signal({n}, signal.SIG_DFL)"
        die = f"import os, signal; {reset}; os.kill(os.getpid(), {n})"
        kill = f'for a in "$@"; do [ "$a" = fsck ] && exec {sys.executable} -c "{die}"; done'
        wrapper.write_text(f'#!/bin/sh\n{kill}\nexec {real} "$@"\n')
        wrapper.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
        out = run_cli("status", "--json")
        assert out.returncode == 0, out.stderr
        [row] = json.loads(out.stdout)["agents"]
        assert (
            f"git's own check did not finish (stopped by signal {int(number)})" in row["repository_problem"]
        )
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_status_and_sync_check_each_damaged_agent_briefly(evolve_home, monkeypatch, tmp_path):
    # git's check of a big damaged repository may take minutes: status (and sync) waited up to
    # 60 s for each such agent before showing any; each is now checked briefly and says how to check it
    import time

    from evolve.store import diagnosis

    for name in ("big1", "big2"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
        damage(agent.path, "objects")
    real = shutil.which("git")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\nfor a in "$@"; do [ "$a" = fsck ] && exec sleep 30; done\nexec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    monkeypatch.setattr(diagnosis, "QUICK_CHECK_S", 0.5)
    started = time.monotonic()
    out = run_cli("status", "--json")
    assert time.monotonic() - started < 20, "status waited for git's whole check"
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["agents"]
    assert [row["name"] for row in rows] == ["big1", "big2"]
    for row in rows:
        assert "git's own check did not finish in 0.5 s: run `git -C " in row["repository_problem"], row
    synced = json.loads(run_cli("sync", "--json").stdout)  # every agent's sync: the same brief check
    assert [row["state"] for row in synced] == ["failed", "failed"]
    assert all("did not finish in 0.5 s" in row["detail"] for row in synced), synced
    assert time.monotonic() - started < 30
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_status_and_sync_check_the_damaged_agents_side_by_side(evolve_home, monkeypatch, tmp_path):
    # three big damaged repositories held status (and sync) for three checks one after another;
    # git's checks now run at once: each check here answers only once all three have started, and
    # run one at a time, each would have run out of its time instead
    from evolve.store import diagnosis

    for name in ("big1", "big2", "big3"):
        agent = make_agent(name)
        git(tmp_path, "clone", "-q", "--bare", str(agent.path), str(tmp_path / f"{name}.git"))
        assert run_cli("remote", name, (tmp_path / f"{name}.git").as_uri()).returncode == 0
        damage(agent.path, "objects")
    started = tmp_path / "started"
    real = shutil.which("git")
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do if [ "$a" = fsck ]; then\n'
        f"  mkdir -p {started}; touch {started}/$$; n=0\n"
        f'  while [ "$(ls {started} | wc -l)" -lt 3 ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done\n'
        f'  [ "$(ls {started} | wc -l)" -ge 3 ] && {{ echo "missing blob" >&2; exit 1; }}\n'
        "  exec sleep 60\n"
        "fi; done\n"
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    monkeypatch.setattr(diagnosis, "QUICK_CHECK_S", 15)
    out = run_cli("status", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["agents"]
    assert [row["name"] for row in rows] == ["big1", "big2", "big3"]
    for row in rows:  # git's check answered: the damage is named, not a check that ran out of time
        assert row["repository_problem"].startswith("git fails in this repository ("), row
        assert "did not finish" not in row["repository_problem"], row
    shutil.rmtree(started)
    synced = json.loads(run_cli("sync", "--json").stdout)
    assert [(row["agent"], row["state"]) for row in synced] == [
        ("big1", "failed"),
        ("big2", "failed"),
        ("big3", "failed"),
    ]
    assert all(
        "did not finish" not in row["detail"] and "fsck` and repair it" in row["detail"] for row in synced
    )
    assert not (evolve_home / "logs" / "crash.log").exists()
