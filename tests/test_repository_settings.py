"""An agent repository whose own `.git/config` git cannot parse: one bad line, named as one.

Every command said the repository was "not a git repository … restore its .git from a backup,
or clone the agent's remote": a backup or a clone would lose what the sound repository holds,
where the remedy is the one line git names.
"""

from __future__ import annotations

import json

from tests.helpers import git, make_agent, run_cli


def test_a_bad_line_in_the_repositorys_settings_is_named_with_its_remedy(evolve_home):
    make_agent("sound")
    agent = make_agent("demo")
    config = agent.path / ".git" / "config"
    kept = config.read_bytes()
    config.write_bytes(kept + b"[core\n  broken =\n")
    said = "git cannot read this repository's settings (fatal: bad config line"
    rows = {row["name"]: row for row in json.loads(run_cli("status", "--json").stdout)["agents"]}
    assert rows["sound"]["repository_problem"] is None
    assert rows["demo"]["repository_problem"].startswith(said), rows["demo"]
    assert (
        f"fix or remove the line git names in {agent.path}/.git/config" in rows["demo"]["repository_problem"]
    )
    out = run_cli("log", "demo")
    assert out.returncode == 1 and said in out.stderr.splitlines()[-1]
    assert "restore its .git from a backup" not in out.stderr
    config.write_bytes(kept)  # the remedy: the line goes, and nothing else was touched
    assert run_cli("log", "demo").returncode == 0
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_a_bad_line_in_an_included_file_is_named_by_doctor_and_sync(evolve_home, tmp_path):
    # doctor said "is not a git repository … restore its .git from a backup" for any bad line;
    # sync over every agent read the remote past the include (`--local`) and left the agent
    # out unsaid: "no agent has a remote", exit 0
    agent = make_agent("demo")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "server.git"))
    assert run_cli("remote", "demo", (tmp_path / "server.git").as_uri()).returncode == 0
    config = agent.path / ".git" / "config"
    config.write_bytes(config.read_bytes() + b"[include]\n\tpath = extra.cfg\n")
    (agent.path / ".git" / "extra.cfg").write_bytes(b"[bad\n")
    said = "git cannot read this repository's settings (fatal: bad config line 1 in file .git/extra.cfg)"
    doctor = run_cli("doctor", "--json")
    where = {f["where"]: f["problem"] for f in json.loads(doctor.stdout)["findings"]}
    assert where["demo: .git"].startswith(said), where
    out = run_cli("sync", "--json")
    [row] = json.loads(out.stdout) if out.stdout else [None]
    assert row is not None and row["state"] == "failed" and said in row["detail"], (row, out.stderr)
    assert not (evolve_home / "logs" / "crash.log").exists()


def test_doctor_names_a_bad_line_in_the_persons_own_git_settings(evolve_home, tmp_path, monkeypatch):
    # doctor said "is not a git repository … restore its .git from a backup" of a sound repository
    agent = make_agent("demo")
    (tmp_path / "global.cfg").write_bytes(b"[x\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global.cfg"))
    where = {f["where"]: f["problem"] for f in json.loads(run_cli("doctor", "--json").stdout)["findings"]}
    assert where["demo: .git"].startswith("git fails with your git settings (fatal: bad config line 1"), where
    assert "backup" not in where["demo: .git"] and str(agent.path) not in where["demo: .git"]


def test_a_config_that_is_a_folder_is_named_not_a_lost_repository(evolve_home, tmp_path):
    # git reads "unknown error occurred while reading the configuration files": every command
    # said to restore .git from a backup, and sync over every agent left it out unsaid
    agent = make_agent("demo")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "server.git"))
    assert run_cli("remote", "demo", (tmp_path / "server.git").as_uri()).returncode == 0
    config = agent.path / ".git" / "config"
    config.rename(agent.path / ".git" / "config.kept")
    config.mkdir()
    [row] = json.loads(run_cli("status", "--json").stdout)["agents"]
    assert ".git/config is a folder" in row["repository_problem"], row
    out = run_cli("sync", "--json")
    [row] = json.loads(out.stdout) if out.stdout else [None]
    assert row is not None and row["state"] == "failed" and ".git/config is a folder" in row["detail"], out
    where = {f["where"]: f["problem"] for f in json.loads(run_cli("doctor", "--json").stdout)["findings"]}
    assert ".git/config is a folder" in where["demo: .git"] and "backup" not in where["demo: .git"]
