"""evolve's hook entries a person edited: a person's text always wins over a refresh.

A raised timeout, a matcher, a wrapped command (`nice …`), an entry removed on purpose:
install again, an upgrade's refresh, a moved home's rewrite and `doctor --fix` leave them
as the person left them, doctor names each in one line, and `evolve install --force` puts
evolve's back. Real installs into real files, the real commands.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evolve import cli
from evolve.home import Home
from evolve.integrations import codex, hookfile, upgrade
from tests.helpers import git, make_agent


def installed_project(tmp_path: Path, monkeypatch, *harnesses: str) -> Path:
    """A git project, the agent demo, and its install for each harness, run from the project."""
    folder = tmp_path / "project"
    folder.mkdir()
    git(folder, "init", "-q")
    make_agent("demo")
    monkeypatch.chdir(folder)
    for harness in harnesses:
        assert cli.main(["install", harness, "--agent", "demo"]) == 0
    return folder


@pytest.fixture
def project(tmp_path: Path, evolve_home: Path, monkeypatch) -> Path:
    return installed_project(tmp_path, monkeypatch, "claude-code", "codex")


def claude_settings(project: Path) -> Path:
    return project / ".claude" / "settings.local.json"


def edit(path: Path, change) -> bytes:
    """The file after `change(doc)` edited it, as a person's editor would save it."""
    doc = json.loads(path.read_text())
    change(doc["hooks"])
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path.read_bytes()


def persons_claude_edits(hooks: dict) -> None:
    hooks["Stop"][0]["hooks"][0]["timeout"] = 30  # a slow disk
    hooks["SessionStart"][0]["matcher"] = "startup"  # not on resume
    post = hooks["PostToolUse"][0]["hooks"][0]
    post["command"] = "nice -n 10 " + post["command"]
    del hooks["SessionEnd"]  # on purpose


def refresh_everything(capsys) -> str:
    """An upgrade's refresh (the next writing command), then `doctor --fix`; what doctor said."""
    (Home.resolve().root / upgrade.VERSION_FILE).write_text("4\n")
    assert cli.main(["pause", "demo"]) == 0
    assert cli.main(["resume", "demo"]) == 0
    capsys.readouterr()
    cli.main(["doctor", "--fix"])
    return capsys.readouterr().out


def test_a_persons_edits_to_claude_codes_entries_survive_every_refresh_until_force(project, capsys):
    settings = claude_settings(project)
    fresh = settings.read_bytes()
    edited = edit(settings, persons_claude_edits)
    capsys.readouterr()
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    said = capsys.readouterr().out
    assert settings.read_bytes() == edited
    assert "evolve's Stop hook" in said and "changed by hand: left as it is" in said
    assert f"`evolve install claude-code --agent demo --project {project} --force` puts evolve's back" in said
    assert "evolve's SessionEnd hook" in said and "removed by hand" in said
    doctor = refresh_everything(capsys)
    assert settings.read_bytes() == edited
    for event, why in (("Stop", "changed"), ("SessionStart", "changed"), ("PostToolUse", "changed")):
        assert f"evolve's {event} hook was {why} by hand: left as it is" in doctor, doctor
    assert "evolve's SessionEnd hook was removed by hand" in doctor
    assert doctor.count("install claude-code --agent demo --project") >= 4
    assert cli.main(["install", "claude-code", "--agent", "demo", "--force"]) == 0
    assert json.loads(settings.read_text()) == json.loads(fresh)  # evolve's back, the person asked
    capsys.readouterr()
    cli.main(["doctor"])
    assert "by hand" not in capsys.readouterr().out


def test_a_persons_edits_to_codexs_entries_survive_every_refresh_until_force(project, capsys):
    hooks_json = codex.hooks_file()
    fresh = hooks_json.read_bytes()

    def persons_codex_edits(hooks: dict) -> None:
        hooks["Stop"][0]["hooks"][0]["timeout"] = 60
        del hooks["PreToolUse"]

    edited = edit(hooks_json, persons_codex_edits)
    capsys.readouterr()
    assert cli.main(["install", "codex", "--agent", "demo"]) == 0
    assert hooks_json.read_bytes() == edited
    doctor = refresh_everything(capsys)
    assert hooks_json.read_bytes() == edited
    assert doctor.count("evolve's Stop hook was changed by hand") == 1  # one file, said once
    assert "evolve's PreToolUse hook was removed by hand" in doctor
    assert cli.main(["install", "codex", "--agent", "demo", "--force"]) == 0
    assert json.loads(hooks_json.read_text()) == json.loads(fresh)


def test_a_moved_home_takes_its_path_into_a_persons_wrapped_command_and_nothing_else(
    project, evolve_home, tmp_path, monkeypatch, capsys
):
    settings = claude_settings(project)

    def wrap_stop(hooks: dict) -> None:
        stop = hooks["Stop"][0]["hooks"][0]
        stop["command"] = "nice " + stop["command"]

    wrapped = json.loads(edit(settings, wrap_stop))["hooks"]["Stop"][0]["hooks"][0]["command"]
    new_home = tmp_path / "moved"
    shutil.move(evolve_home, new_home)
    monkeypatch.setenv("EVOLVE_HOME", str(new_home))
    assert cli.main(["pause", "demo"]) == 0  # the first command after the move
    doc = json.loads(settings.read_text())
    [stop] = doc["hooks"]["Stop"][0]["hooks"]
    assert stop["command"] == wrapped.replace(str(evolve_home), str(new_home))  # the person's `nice` kept
    assert stop["command"].startswith("nice ")
    named = {
        (hookfile.owner(h["command"]) or ("",))[0]
        for g in doc["hooks"].values()
        for x in g
        for h in x["hooks"]
    }
    assert named == {str(new_home)}
    capsys.readouterr()
    cli.main(["doctor"])
    assert "evolve's Stop hook was changed by hand" in capsys.readouterr().out


def change_install_records(home: Home, change: Callable[[dict], None]) -> None:
    """Each of Claude Code's install records changed in place, as an older evolve would have written it."""
    from evolve.workspace import links

    with links.registry_lock(home, "claude-code"):
        installs = links.load_installs(home, "claude-code")
        for record in installs:
            change(record)
        links.save_installs(home, "claude-code", installs)


def as_an_older_evolve_recorded_it(home: Home) -> None:
    """The install records without `entries`, as evolve wrote them before it kept what it wrote."""
    change_install_records(home, lambda record: record.pop("entries"))


def with_recorded_commands(home: Home, older: Callable[[str], str]) -> None:
    """The commands the install records keep, as an older evolve wrote them."""

    def change(record: dict) -> None:
        for _event, _matcher, hook in record["entries"]:
            hook["command"] = older(hook["command"])

    change_install_records(home, change)


def test_an_older_evolves_install_keeps_a_wrapped_command_it_recorded_nothing_of(project, capsys):
    """Installs made before evolve recorded its entries: one in evolve's shape is evolve's, no other."""
    as_an_older_evolve_recorded_it(Home.resolve())
    settings = claude_settings(project)

    def wrap_and_raise(hooks: dict) -> None:
        stop = hooks["Stop"][0]["hooks"][0]
        stop["command"] = "nice " + stop["command"]
        hooks["SessionEnd"][0]["hooks"][0]["timeout"] = 20

    edited = edit(settings, wrap_and_raise)
    refresh_everything(capsys)
    assert settings.read_bytes() == edited


def test_a_settings_file_deleted_whole_is_made_anew_by_install(project, capsys):
    settings = claude_settings(project)
    fresh = json.loads(settings.read_text())
    settings.unlink()
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    assert json.loads(settings.read_text()) == fresh


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Application Support/evolve", "moved"),  # macOS's default home: a space
        ("evolve", "new home"),
        ("josé's evolve", "ñew"),  # a quote, letters beyond ASCII
    ],
)
def test_a_moved_home_follows_into_a_persons_command_whatever_quoting_its_paths_need(
    old, new, tmp_path, monkeypatch, capsys
):
    """A home path evolve wrote quoted is followed too.

    Left, it named a gone home, and doctor asked for `--fix` (which leaves a person's entry)
    again after every run.
    """
    old_home, new_home = tmp_path / old, tmp_path / new
    old_home.parent.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("EVOLVE_HOME", str(old_home))
    folder = installed_project(tmp_path, monkeypatch, "claude-code")
    settings = claude_settings(folder)

    def wrap_stop_and_guard(hooks: dict) -> None:
        for event in ("Stop", "PreToolUse"):
            hook = hooks[event][0]["hooks"][0]
            hook["command"] = "nice " + hook["command"]

    edit(settings, wrap_stop_and_guard)
    shutil.move(old_home, new_home)
    monkeypatch.setenv("EVOLVE_HOME", str(new_home))
    assert cli.main(["pause", "demo"]) == 0
    hooks = json.loads(settings.read_text())["hooks"]
    for event in ("Stop", "PreToolUse"):
        command = hooks[event][0]["hooks"][0]["command"]
        assert command.startswith("nice ") and hookfile.owner(command)[0] == str(new_home)
        assert str(old_home) not in shlex.join(shlex.split(command))
    guard = shlex.split(hooks["PreToolUse"][0]["hooks"][0]["command"])  # the launcher's words, as sh reads
    assert f"{new_home / 'agents' / 'demo' / 'guards.toml'};" in guard
    capsys.readouterr()
    cli.main(["doctor"])
    said = capsys.readouterr().out
    assert "doctor --fix" not in said and "evolve's Stop hook was changed by hand" in said


def test_doctors_force_command_runs_as_printed_for_a_project_whose_path_holds_a_quote(
    tmp_path, evolve_home, monkeypatch, capsys
):
    """Doctor wrapped the project in quotes by hand: a path holding one broke the command it printed."""
    folder = tmp_path / "it's mine"
    folder.mkdir()
    git(folder, "init", "-q")
    make_agent("demo")
    monkeypatch.chdir(folder)
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    edit(claude_settings(folder), persons_claude_edits)
    capsys.readouterr()
    cli.main(["doctor"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if "evolve's Stop hook" in line]
    command = line.split("`")[1]
    assert shlex.split(command)[-3:] == ["--project", str(folder), "--force"]


def test_doctors_remedy_for_an_older_install_whose_entries_are_all_gone_runs_as_printed(
    project, tmp_path, monkeypatch, capsys
):
    """Doctor's remedy for an install an older evolve made, its entries all removed.

    It said `evolve install claude-code --force`: refused (--agent is required), and run from
    another folder it would install into that one.
    """
    as_an_older_evolve_recorded_it(Home.resolve())
    settings = claude_settings(project)
    fresh = json.loads(settings.read_text())
    settings.write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    cli.main(["doctor"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if "were removed from" in line]
    command = shlex.split(line.split("`")[1])
    assert command[:2] == ["evolve", "install"]
    assert cli.main(command[1:]) == 0
    assert json.loads(settings.read_text()) == fresh


def test_doctors_remedy_for_a_hooks_file_deleted_whole_runs_as_printed_from_anywhere(
    project, tmp_path, monkeypatch, capsys
):
    """'run `evolve install claude-code` again': refused without --agent, and elsewhere it installs there."""
    settings = claude_settings(project)
    fresh = json.loads(settings.read_text())
    settings.unlink()
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    cli.main(["doctor"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if "the hooks file is missing" in line]
    assert cli.main(shlex.split(line.split("`")[1])[1:]) == 0
    assert json.loads(settings.read_text()) == fresh


def test_an_upgrade_brings_evolves_own_command_up_to_date_inside_a_persons_entry(project, capsys):
    """A raised timeout or a `nice` kept an older evolve's command forever (one without -I, say).

    Only the person's part stays theirs: the command evolve wrote, found whole in their entry,
    becomes today's; doctor still names the entry as theirs.
    """
    settings = claude_settings(project)
    fresh = json.loads(settings.read_text())["hooks"]
    today = {event: groups[0]["hooks"][0]["command"] for event, groups in fresh.items()}

    def older(command: str) -> str:  # what an older evolve wrote: not isolated
        return command.replace(" -I ", " -P ")

    home = Home.resolve()
    with_recorded_commands(home, older)

    def older_then_edited(hooks: dict) -> None:
        for groups in hooks.values():
            groups[0]["hooks"][0]["command"] = older(groups[0]["hooks"][0]["command"])
        hooks["Stop"][0]["hooks"][0]["timeout"] = 30
        post = hooks["PostToolUse"][0]["hooks"][0]
        post["command"] = "nice -n 10 " + post["command"]

    edit(settings, older_then_edited)
    doctor = refresh_everything(capsys)
    hooks = json.loads(settings.read_text())["hooks"]
    assert {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()} == {
        **today,
        "PostToolUse": "nice -n 10 " + today["PostToolUse"],
    }
    assert hooks["Stop"][0]["hooks"][0]["timeout"] == 30
    for event in ("Stop", "PostToolUse"):
        assert f"evolve's {event} hook was changed by hand" in doctor


def test_evolves_entry_with_a_broken_quote_is_named_unreadable_and_force_replaces_it(project, capsys):
    """A closing quote deleted: doctor said 'removed by hand' and --force added a second entry beside it."""
    settings = claude_settings(project)
    others = [  # a person's own entries, broken too: not evolve's (another agent, or no hook of evolve's)
        {"type": "command", "command": "python -I -c 'import evolve.hookmain as h; h.run() x --agent other"},
        {"type": "command", "command": "echo 'done"},
    ]

    def break_a_quote(hooks: dict) -> None:
        stop = hooks["Stop"][0]["hooks"][0]
        stop["command"] = stop["command"].replace("h.run()'", "h.run()", 1)
        hooks["Stop"].append({"hooks": others})

    edit(settings, break_a_quote)
    capsys.readouterr()
    cli.main(["doctor"])
    doctor = capsys.readouterr().out
    assert "evolve's Stop hook was made unreadable by hand (its quotes do not pair: it cannot run)" in doctor
    force = f"evolve install claude-code --agent demo --project {project} --force"
    assert f"`{force}` puts evolve's back" in doctor and "removed by hand" not in doctor, doctor
    assert cli.main(["install", "claude-code", "--agent", "demo", "--force"]) == 0
    stops = [hook for group in json.loads(settings.read_text())["hooks"]["Stop"] for hook in group["hooks"]]
    evolves = [hook for hook in stops if hook not in others]
    assert len(evolves) == 1 and hookfile.owner(evolves[0]["command"]) == (str(Home.resolve().root), "demo")
    assert [hook for hook in stops if hook in others] == others


def test_a_broken_entry_of_a_home_whose_path_only_begins_with_this_homes_is_left_to_it(
    project, evolve_home, monkeypatch, capsys
):
    """`~/.evolve-work`'s broken entry was taken for `~/.evolve`'s: doctor named it, --force removed it."""
    settings = claude_settings(project)
    work_home = evolve_home.with_name(evolve_home.name + "-work")
    monkeypatch.setenv("EVOLVE_HOME", str(work_home))
    make_agent("demo")
    assert cli.main(["install", "claude-code", "--agent", "demo"]) == 0
    monkeypatch.setenv("EVOLVE_HOME", str(evolve_home))

    def break_the_work_homes_quote(hooks: dict) -> None:
        for group in hooks["Stop"]:
            for hook in group["hooks"]:
                if str(work_home) in hook["command"]:
                    hook["command"] = hook["command"].replace("h.run()'", "h.run()", 1)

    edit(settings, break_the_work_homes_quote)
    broken = [
        hook["command"]
        for group in json.loads(settings.read_text())["hooks"]["Stop"]
        for hook in group["hooks"]
        if hookfile.unreadable(hook["command"])
    ]
    assert len(broken) == 1 and str(work_home) in broken[0]
    capsys.readouterr()
    cli.main(["doctor"])
    assert "made unreadable by hand" not in capsys.readouterr().out
    assert cli.main(["install", "claude-code", "--agent", "demo", "--force"]) == 0
    assert json.dumps(broken[0])[1:-1] in settings.read_text()
    assert cli.main(["uninstall", "claude-code", "--agent", "demo"]) == 0
    assert json.dumps(broken[0])[1:-1] in settings.read_text()


def test_an_upgrade_that_would_take_a_settings_file_over_its_bound_leaves_it_and_its_record(project, capsys):
    """Bringing the commands up to date would write the file past what evolve reads: it stays as it is."""
    from evolve.workspace import links

    settings = claude_settings(project)
    home = Home.resolve()

    def older(command: str) -> str:  # what an older evolve wrote: not isolated, 3 bytes shorter
        return command.replace(" -I ", " ")

    with_recorded_commands(home, older)
    recorded = links.load_installs(home, "claude-code")

    def older_and_padded(hooks: dict) -> None:
        for groups in hooks.values():
            groups[0]["hooks"][0]["command"] = older(groups[0]["hooks"][0]["command"])
        hooks["pad"] = ""

    edit(settings, older_and_padded)
    edit(
        settings, lambda hooks: hooks.update(pad="x" * (hookfile.SETTINGS_CAP - settings.stat().st_size - 1))
    )
    before = settings.read_bytes()
    assert len(before) == hookfile.SETTINGS_CAP - 1
    refresh_everything(capsys)
    assert settings.read_bytes() == before
    assert links.load_installs(home, "claude-code") == recorded
