"""An agent folder whose name no command takes: named, with a name it could have, never listed as an agent.

A person clones an agent's remote into the home by hand as `My Agent` (or a script names a
folder with a newline): status listed it as an agent (the newline split its row in two),
doctor told them to run `evolve install … --agent My Agent`, and every command refused the name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from evolve.home import Home
from evolve.names import name_problem, suggested_name
from evolve.workspace.folders import list_agents, lost_agents
from tests.helpers import git, make_agent, run_cli


def _copies(evolve_home, tmp_path):
    make_agent("kept")
    agents = evolve_home / "agents"
    git(tmp_path, "clone", "-q", str(agents / "kept"), str(agents / "My Agent"))
    git(tmp_path, "clone", "-q", str(agents / "kept"), str(agents / "two\nlines"))
    (agents / "Lost_One").mkdir()
    (agents / "Lost_One" / "agent.toml").write_text("[agent]\n")
    (agents / "Notes").mkdir()  # a person's own folder, no agent's: not named
    return agents


def test_status_names_a_misnamed_folder_once_and_lists_only_agents(evolve_home, tmp_path):
    agents = _copies(evolve_home, tmp_path)
    out = run_cli("status")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    table = lines[lines.index("") + 1 :]
    assert [line.split()[0] for line in table[1:] if line.strip() and not line.startswith("'")] == ["kept"]
    named = [line for line in lines if " is no agent: " in line]
    assert named == [
        f"{str(agents / 'Lost_One')!r} is no agent: its name may only hold a-z, 0-9 and single '-' between "
        "them (not at either end), so no command takes it and nothing is observed, reflected or synced "
        f"there; rename the folder, e.g. to {str(agents / 'lost-one')!r}",
        f"{str(agents / 'My Agent')!r} is no agent: its name may only hold a-z, 0-9 and single '-' between "
        "them (not at either end), so no command takes it and nothing is observed, reflected or synced "
        f"there; rename the folder, e.g. to {str(agents / 'my-agent')!r}",
        f"{str(agents / ('two' + chr(10) + 'lines'))!r} is no agent: its name may only hold a-z, 0-9 and "
        "single '-' between them (not at either end), so no command takes it and nothing is observed, "
        f"reflected or synced there; rename the folder, e.g. to {str(agents / 'two-lines')!r}",
    ]
    assert not any(line == "lines" or line.startswith("lines ") for line in lines)  # no row cut in two
    data = json.loads(run_cli("status", "--json").stdout)
    assert [a["name"] for a in data["agents"]] == ["kept"]
    assert [(f["folder"], f["rename_to"]) for f in data["misnamed_folders"]] == [
        (str(agents / "Lost_One"), str(agents / "lost-one")),
        (str(agents / "My Agent"), str(agents / "my-agent")),
        (str(agents / "two\nlines"), str(agents / "two-lines")),
    ]
    home = Home.resolve(str(evolve_home))
    assert list_agents(home) == ["kept"] and lost_agents(home) == []


def test_doctor_names_it_and_sync_leaves_it_alone(evolve_home, tmp_path):
    agents = _copies(evolve_home, tmp_path)
    out = run_cli("doctor")
    said = [line for line in (out.stdout + out.stderr).splitlines() if "My Agent" in line]
    assert len(said) == 1 and " is no agent: " in said[0] and "my-agent" in said[0], said
    assert "--agent My Agent" not in out.stdout + out.stderr  # no remedy that its name refuses
    synced = run_cli("sync", "--json")
    assert synced.returncode == 0 and json.loads(synced.stdout) == [], synced.stdout
    assert (agents / "My Agent" / "agent.toml").is_file()  # the person's folder untouched
    renamed = agents / "my-agent"
    (agents / "My Agent").rename(renamed)
    after = json.loads(run_cli("status", "--json").stdout)
    assert [a["name"] for a in after["agents"]] == ["kept", "my-agent"]


def test_the_name_offered_is_always_one_evolve_takes():
    for given, offered in [
        ("My Agent", "my-agent"),
        ("two\nlines", "two-lines"),
        ("--x__y--", "x-y"),
        ("Ünïcode", "unicode"),
        ("агент", "agent"),
        ("a" * 70 + "-b", "a" * 64),
        ("x" * 63 + " y", "x" * 63),
    ]:
        assert suggested_name(given) == offered, given
        assert name_problem(offered) is None
    assert suggested_name("Helper", ["helper", "helper-2"]) == "helper-3"  # never a name already there
    assert suggested_name("x" * 70, ["x" * 64]) == "x" * 62 + "-2"


def test_the_name_offered_is_free_so_following_it_moves_nothing_inside_an_agent(evolve_home, tmp_path):
    make_agent("helper")
    agents = evolve_home / "agents"
    for copy in ("Helper", "-helper", "My Agent", "my agent"):
        git(tmp_path, "clone", "-q", str(agents / "helper"), str(agents / copy))
    data = json.loads(run_cli("status", "--json").stdout)
    offered = {f["folder"]: f["rename_to"] for f in data["misnamed_folders"]}
    assert offered == {
        str(agents / "-helper"): str(agents / "helper-2"),
        str(agents / "Helper"): str(agents / "helper-3"),
        str(agents / "My Agent"): str(agents / "my-agent"),
        str(agents / "my agent"): str(agents / "my-agent-2"),
    }
    for folder, new in offered.items():  # the person does as told: each becomes an agent of its own
        (agents / folder).rename(new)
    after = json.loads(run_cli("status", "--json").stdout)
    assert [a["name"] for a in after["agents"]] == [
        "helper",
        "helper-2",
        "helper-3",
        "my-agent",
        "my-agent-2",
    ]


def test_a_folder_name_no_utf8_decodes_leaves_status_json_valid(evolve_home):
    make_agent("kept")
    raw = os.fsencode(evolve_home / "agents") + b"/bad\xff name"
    (evolve_home / "agents" / os.fsdecode(b"bad\xff name") / ".git").mkdir(parents=True)
    env = {
        **os.environ,
        "EVOLVE_HOME": str(evolve_home),
        "PYTHONIOENCODING": "utf-8:strict",
    }  # a UTF-8 terminal
    done = subprocess.run([sys.executable, "-m", "evolve", "status", "--json"], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    [folder] = json.loads(done.stdout.decode("utf-8"))["misnamed_folders"]
    assert os.fsencode(folder["folder"]) == raw  # the exact name, for a script to rename it
