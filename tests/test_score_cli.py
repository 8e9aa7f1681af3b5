"""`evolve observe` and `evolve score` on hand-written Claude Code scenarios.

Every scenario is written as a transcript file, observed through the CLI into the test
home's state.db, and read back with `evolve score NAME --json`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import pytest

from evolve import cli
from evolve.errors import EXIT_OK, EXIT_USER
from evolve.home import Home
from evolve.store import ledger
from tests.helpers import make_agent
from tests.test_observe import Transcript

NAME = "demo"
CORRECTIONS = {
    "en": "That's wrong, I asked for ISO dates.",
    "zh": "不对，应该是 ISO 格式的日期。",
    "de": "Das ist falsch, ich meinte ISO-Daten.",
    "es": "Eso está mal, te dije fechas ISO.",
    "fr": "C'est faux, je t'ai dit des dates ISO.",
    "ja": "違います、ISO形式の日付と言いました。",
    "hi": "यह गलत है, मैंने कहा था ISO तारीखें चाहिए।",
    "pt": "Está errado, eu pedi datas ISO.",
}
NOT_CORRECTIONS = {
    "en": "No problem, now add a test for leap years.",
    "zh": "没问题，现在加一个闰年的测试。",
    "de": "Kein Problem, jetzt bitte einen Test für Schaltjahre.",
    "es": "No hay problema, ahora añade un test para años bisiestos.",
    "fr": "Pas de problème, ajoute maintenant un test pour les années bissextiles.",
    "ja": "問題ないです。次にうるう年のテストを追加してください。",
    "hi": "कोई बात नहीं, अब लीप वर्ष के लिए टेस्ट जोड़ो।",
    "pt": "Sem problema, agora adicione um teste para anos bissextos.",
}


@pytest.fixture
def agent(evolve_home):
    return make_agent(NAME, evolve_home)


def evolve(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def observe(capsys, *paths: Path) -> dict:
    code, out, err = evolve(capsys, "observe", NAME, *map(str, paths), "--json")
    assert code == EXIT_OK, err
    return json.loads(out)


def score(capsys, *extra: str) -> list[dict]:
    code, out, err = evolve(capsys, "score", NAME, "--json", *extra)
    assert code == EXIT_OK, err
    return json.loads(out)


def scored(capsys, *paths: Path) -> list[dict]:
    """Observe `paths`, then the scored runs of those files, in file then run order."""
    observe(capsys, *paths)
    wanted = [str(p.absolute()) for p in paths]
    runs = [r for r in score(capsys, "--all") if r["path"] in wanted]
    return sorted(runs, key=lambda r: (wanted.index(r["path"]), r["run"]))


def db(home: Path) -> sqlite3.Connection:
    return ledger.connect(Home.resolve(home).state_db)


def home_config(evolve_home: Path, text: str) -> None:
    (evolve_home / "config.toml").write_text(text)


# -- scenarios ---------------------------------------------------------------------------
def correction_file(tmp_path: Path, lang: str, text: str) -> Path:
    t = Transcript(tag=lang)
    t.run("Write a function that parses the dates in report.csv")
    t.run(text, "Fixed: ISO dates now.")
    return t.write(tmp_path / f"correction-{lang}.jsonl")


def test_a_correction_in_every_language(capsys, agent, tmp_path):
    files = [correction_file(tmp_path, lang, text) for lang, text in CORRECTIONS.items()]
    runs = scored(capsys, *files)
    assert len(runs) == 2 * len(CORRECTIONS)
    for lang, (first, second) in zip(CORRECTIONS, zip(runs[::2], runs[1::2], strict=True), strict=True):
        assert first["signals"] == {} and first["score"] == 0 and not first["reflect"], lang
        assert second["signals"] == {"user_correction": 0.9}, lang
        assert second["score"] == 0.9 and second["reflect"] is True, lang


def test_guarded_phrases_are_not_corrections(capsys, agent, tmp_path):
    files = [correction_file(tmp_path, lang, text) for lang, text in NOT_CORRECTIONS.items()]
    runs = scored(capsys, *files)
    assert len(runs) == 2 * len(NOT_CORRECTIONS)
    assert [r["signals"] for r in runs] == [{}] * len(runs)


def test_transient_only_runs_score_zero(capsys, agent, tmp_path):
    t = Transcript()
    t.user("Fetch the release notes")  # a timeout, then the retry works
    t.call("WebFetch", {"url": "https://example.test/notes"}, "Error: read ETIMEDOUT", error=True)
    t.call("WebFetch", {"url": "https://example.test/notes"}, "# Notes")
    t.text("Here are the notes.")
    t.user("Query the issue tracker")  # rate limited, and the run ends there
    t.call(
        "Bash",
        {"command": "gh issue list"},
        "HTTP 429: Too Many Requests (https://api.github.com/graphql)",
        error=True,
    )
    t.text("The tracker is rate limiting us; try again later.")
    t.user("Summarise the diff")  # the model API overloaded, retried, then answered
    for attempt in (1, 2, 3):
        t.api_error(attempt)
    t.text("The diff renames two modules.")
    t.user("Explain the failure")  # overloaded until Claude Code gave up
    for attempt in (1, 2):
        t.api_error(attempt)
    t.synthetic('API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    t.user("Deploy with the deploy skill")  # a skill, then a connection reset ends the run
    t.skill("deploy")
    t.call(
        "Bash", {"command": "./deploy.sh"}, "curl: (56) Recv failure: Connection reset by peer", error=True
    )
    t.user("Push the branch")  # api_error retries of a 500 / api_error type
    t.api_error(1, status=500, kind="api_error")
    t.text("Pushed.")
    runs = scored(capsys, t.write(tmp_path / "transient.jsonl"))
    assert len(runs) == 6
    for run in runs:
        assert run["transient_errors"] >= 1, run
        assert run["errors"] == 0, run
        assert run["signals"] == {} and run["score"] == 0 and run["reflect"] is False, run


def test_a_recovered_real_error(capsys, agent, tmp_path):
    t = Transcript()
    t.user("Make the tests pass")
    t.call(
        "Bash",
        {"command": "pytest -q"},
        "FAILED tests/test_dates.py::test_iso - AssertionError: '2026-1-2' != '2026-01-02'",
        error=True,
    )
    t.call(
        "Edit",
        {"file_path": "/work/project/dates.py", "old_string": "%-m", "new_string": "%m"},
        "The file has been updated",
    )
    t.call("Bash", {"command": "pytest -q"}, "12 passed")
    t.text("All green.")
    (run,) = scored(capsys, t.write(tmp_path / "recovered.jsonl"))
    assert run["signals"] == {"error_recovered": 0.8}
    assert run["score"] == 0.8 and run["reflect"] is True
    assert (run["errors"], run["transient_errors"], run["tool_calls"]) == (1, 0, 3)


def test_skill_ineffective_and_aborted_runs_excluded(capsys, agent, tmp_path):
    t = Transcript()
    t.user("Release with the release skill")  # skill, then a real error ends the run
    t.skill("release")
    t.call("Bash", {"command": "make release"}, "make: *** No rule to make target 'release'", error=True)
    t.text("The release target does not exist.")
    t.user("Try the publish skill")  # skill, error, then the user stops it
    t.skill("publish")
    t.call("Bash", {"command": "make publish"}, "make: *** No rule to make target 'publish'", error=True)
    t.interrupt()
    t.user("Use the lint skill")  # a skill that itself fails to load
    t.skill("lint", error=True)
    runs = scored(capsys, t.write(tmp_path / "skills.jsonl"))
    assert [r["skills"] for r in runs] == [["release"], ["publish"], ["lint"]]
    assert runs[0]["signals"] == {"skill_ineffective": 0.85} and runs[0]["reflect"]
    assert runs[1]["aborted"] is True and runs[1]["signals"] == {}
    assert runs[2]["signals"] == {"skill_ineffective": 0.85}


def test_complexity_over_twenty_tool_calls(capsys, agent, tmp_path):
    t = Transcript()
    for count in (20, 21):
        t.user(f"Rename the helper in {count} files")
        for i in range(count):
            t.call(
                "Edit",
                {"file_path": f"/work/project/m{i}.py", "old_string": "a", "new_string": "b"},
                "The file has been updated",
            )
        t.text("Renamed.")
    runs = scored(capsys, t.write(tmp_path / "complex.jsonl"))
    assert [r["tool_calls"] for r in runs] == [20, 21]
    assert runs[0]["signals"] == {}
    assert runs[1]["signals"] == {"complexity": 0.5}
    assert runs[1]["score"] == 0.5 and runs[1]["reflect"] is False


def test_known_weakness_from_the_memo_on_disk(capsys, agent, tmp_path):
    memo = agent.memo_path.read_text()
    bullet = "- I often break the database migration scripts when renaming columns\n"
    heading = "## What I do well and where I often stumble\n"
    agent.memo_path.write_text(memo.replace(heading, heading + "\n" + bullet))
    t = Transcript()
    t.user("Rename the column in the database migration")  # real error, not recovered
    t.call(
        "Bash",
        {"command": "alembic upgrade head"},
        "sqlalchemy.exc.OperationalError: no such column: user_name",
        error=True,
    )
    t.text("The migration failed.")
    t.user("Rename the column in the database migration for orders")  # no error: no signal
    t.call("Bash", {"command": "alembic upgrade head"}, "Running upgrade ok")
    t.text("Done.")
    runs = scored(capsys, t.write(tmp_path / "weakness.jsonl"))
    assert runs[0]["signals"] == {"known_weakness": 0.7}
    assert runs[0]["score"] == 0.7 and runs[0]["reflect"] is False  # a lone 0.7 is not > 0.7
    assert runs[1]["signals"] == {}
    agent.memo_path.write_text(memo)  # the memo as it is on disk now: no bullet
    assert score(capsys, "--all")[0]["signals"] == {}


def test_config_weights_and_threshold_apply_to_stored_runs(capsys, agent, tmp_path, evolve_home):
    t = Transcript()
    t.user("Reformat every module")
    for i in range(25):
        t.call("Edit", {"file_path": f"/work/project/m{i}.py"}, "ok")
    t.text("Done.")
    (run,) = scored(capsys, t.write(tmp_path / "complex.jsonl"))
    assert (run["score"], run["reflect"]) == (0.5, False)
    home_config(evolve_home, "[signals]\nweights = { complexity = 0.75 }\n")
    (run,) = score(capsys, "--all")  # nothing observed again: computed when read
    assert run["signals"] == {"complexity": 0.75} and run["reflect"] is True
    home_config(evolve_home, "[signals]\nweights = { complexity = 0.75 }\nthreshold = 0.8\n")
    (run,) = score(capsys, "--all")
    assert run["score"] == 0.75 and run["reflect"] is False
    home_config(evolve_home, "[signals]\ncomplexity_tool_calls = 30\n")
    assert score(capsys, "--all")[0]["signals"] == {}


def test_transient_patterns_in_config_apply_at_observe_time(capsys, agent, tmp_path, evolve_home):
    def flaky(name: str) -> Path:
        t = Transcript(tag=name)
        t.user("Build the docs")
        t.call("Bash", {"command": "make docs"}, "flux capacitor overheated", error=True)
        t.call("Bash", {"command": "make docs"}, "built")
        t.text("Built.")
        return t.write(tmp_path / f"{name}.jsonl")

    (before,) = scored(capsys, flaky("before"))
    assert (before["errors"], before["transient_errors"]) == (1, 0)
    assert before["signals"] == {"error_recovered": 0.8}
    home_config(evolve_home, '[signals]\ntransient_patterns = ["flux capacitor overheated"]\n')
    (after,) = scored(capsys, flaky("after"))
    assert (after["errors"], after["transient_errors"]) == (0, 1)
    assert after["signals"] == {} and after["score"] == 0


# -- the CLI -----------------------------------------------------------------------------
def test_observe_uses_sources_globs_with_tilde(capsys, agent, tmp_path, monkeypatch):
    home = Path.home()  # the test's fake HOME
    project = home / "projects" / "-work-app"
    for name in ("a", "b"):
        t = Transcript(tag=name)
        t.run(f"Request in {name}")
        t.write(project / f"{name}.jsonl")
    (project / "notes.txt").write_text("not a transcript")
    toml = agent.path / "agent.toml"
    toml.write_text(
        toml.read_text().replace("claude_code = []", 'claude_code = ["~/projects/-work-app/*.jsonl"]')
    )
    result = observe(capsys)
    assert result["files"] == 2 and result["runs"] == 2
    code, out, _ = evolve(capsys, "observe", NAME)
    assert code == EXIT_OK and "observed 2 file(s): 0 run(s)" in out
    paths = {r["path"] for r in score(capsys)}
    assert paths == {str(project / "a.jsonl"), str(project / "b.jsonl")}


def test_observe_without_sources_or_with_a_missing_path(capsys, agent, tmp_path):
    code, out, err = evolve(capsys, "observe", NAME)
    assert code == EXIT_USER and "agent.toml" in err and "[sources]" in err
    code, _, err = evolve(capsys, "observe", NAME, str(tmp_path / "missing.jsonl"))
    assert code == EXIT_USER and "missing.jsonl" in err
    code, _, err = evolve(capsys, "observe", "nobody", str(tmp_path))
    assert code == EXIT_USER and "nobody" in err


def test_score_json_shape(capsys, agent, tmp_path):
    t = Transcript()
    t.run("Write a function that parses the dates in report.csv")
    t.run("That's wrong, I asked for ISO dates.")
    path = t.write(tmp_path / "s.jsonl")
    observe(capsys, path)
    runs = score(capsys)
    assert [r["run"] for r in runs] == [0, 1]
    required = {
        "session",
        "run",
        "started_at",
        "score",
        "signals",
        "reflect",
        "tool_calls",
        "errors",
        "transient_errors",
        "aborted",
    }
    for run in runs:
        assert required <= set(run)
        assert run["session"] == t.session
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", run["started_at"])
        datetime.fromisoformat(run["started_at"].replace("Z", "+00:00"))
        assert isinstance(run["score"], int | float) and isinstance(run["reflect"], bool)
        assert isinstance(run["signals"], dict)
        assert all(isinstance(v, float) for v in run["signals"].values())
        assert isinstance(run["aborted"], bool)
        for key in ("tool_calls", "errors", "transient_errors"):
            assert isinstance(run[key], int)
    assert runs[0]["started_at"] == "2026-02-10T21:00:01Z"
    assert runs[0]["signals"] == {} and runs[1]["signals"] == {"user_correction": 0.9}
    assert runs[0]["tool_calls"] == 1
    code, out, _ = evolve(capsys, "score", NAME)  # and the table for people
    assert code == EXIT_OK and "user_correction" in out and "1 worth reflecting on" in out


def test_score_lists_only_runs_since_the_last_reflection(capsys, agent, tmp_path, evolve_home):
    old = Transcript(tag="old")
    old.run("An old request")
    old.run("Another old request")
    observe(capsys, old.write(tmp_path / "old.jsonl"))
    conn = db(evolve_home)
    reflected = conn.execute("SELECT MAX(observed_at) FROM runs").fetchone()[0]
    conn.execute("UPDATE agents SET last_reflection_at = ? WHERE name = ?", (reflected, NAME))
    conn.close()
    assert score(capsys) == []
    code, out, _ = evolve(capsys, "score", NAME)
    assert code == EXIT_OK and "no runs" in out
    time.sleep(0.01)
    new = Transcript(tag="new")
    new.run("A new request")
    observe(capsys, new.write(tmp_path / "new.jsonl"))
    assert [r["session"] + ":" + str(r["run"]) for r in score(capsys)] == [f"{new.session}:0"]
    assert len(score(capsys, "--all")) == 3


def test_observing_marks_the_agent_dirty_only_when_it_adds_runs(capsys, agent, tmp_path, evolve_home):
    def is_dirty() -> bool:
        conn = db(evolve_home)
        try:
            row = ledger.agent_row(conn, NAME)
            return bool(row and row["dirty"])
        finally:
            conn.close()

    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    observe(capsys, empty)
    assert not is_dirty()
    t = Transcript()
    t.run("A request")
    path = t.write(tmp_path / "s.jsonl")
    assert observe(capsys, path)["runs"] == 1
    assert is_dirty()
    conn = db(evolve_home)
    ledger.clear_dirty(conn, NAME, started=time.time() + 1)
    conn.close()
    assert observe(capsys, path)["runs"] == 0
    assert not is_dirty()
    with path.open("ab") as handle:  # a partial line only: nothing new yet
        handle.write(b'{"type":"user","message":')
    assert observe(capsys, path)["runs"] == 0
    assert not is_dirty()


def test_score_reflect_and_cycle_read_what_sessions_wrote_since(tmp_path, capsys, monkeypatch) -> None:
    """Without a watcher, judging an agent first reads its sources' new bytes (and the spool)."""
    from evolve.integrations.sources import add_to_sources
    from tests.reflect.scenarios import corrected_session

    agent = make_agent(NAME)
    folder = tmp_path / "sessions"
    folder.mkdir()
    toml = agent.path / "agent.toml"
    toml.write_text(add_to_sources(toml.read_text(), "claude_code", [str(folder / "*.jsonl")]))
    corrected_session(folder)  # a session ran; nobody called `evolve observe`
    assert cli.main(["score", NAME, "--json"]) == EXIT_OK
    runs = json.loads(capsys.readouterr().out)
    assert len(runs) == 2 and "user_correction" in json.dumps(runs)
    assert cli.main(["reflect", NAME, "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["status"] == "committed"
    assert "uv run pytest" in agent.memo_text()
    # a watcher reading the same files: the command leaves the sources to it (no racing cursor)
    corrected_session(folder, "s2.jsonl")
    from evolve.watch import service

    with monkeypatch.context() as patch:
        patch.setattr(service, "state", lambda home: service.WatcherState(True, 1, None))
        assert cli.main(["score", NAME, "--json"]) == EXIT_OK
        assert json.loads(capsys.readouterr().out) == []
    # no watcher again: the cycle reads s2 itself, so the agent has news
    assert cli.main(["cycle", "--now", "--dry-run", "--json"]) == EXIT_OK
    skipped = json.loads(capsys.readouterr().out)["skipped"]
    assert NAME in skipped and skipped[NAME] != "nothing new", skipped  # the minimum gap, not the dirty gate


def test_a_line_over_the_cap_keeps_its_error_and_is_named_for_it(capsys, agent, tmp_path, monkeypatch):
    """Red team C5: a valid over-long line was "corrupt", and the recovered error it held was lost."""
    from evolve.transcripts import reader

    monkeypatch.setattr(reader, "MAX_LINE", 1 << 20)  # 64 MB lines, shrunk for the test
    t = Transcript()
    t.user("Make the tests pass")
    dump = "FAILED tests/test_dates.py::test_iso - AssertionError\n" + "  frame data " * 200_000
    t.call("Bash", {"command": "pytest -q"}, dump, error=True)  # a 2.6 MB line
    t.call("Bash", {"command": "pytest -q -p no:cacheprovider"}, "12 passed")
    t.text("All green.")
    path = t.write(tmp_path / "huge.jsonl")
    code, out, err = evolve(capsys, "observe", NAME, str(path))
    assert code == EXIT_OK, err
    assert "1 line(s) over the line cap (1 MB) read with each text cut to its first 64 kB" in out
    assert "corrupt" not in out
    (run,) = score(capsys, "--all")
    assert run["signals"] == {"error_recovered": 0.8} and run["errors"] == 1
