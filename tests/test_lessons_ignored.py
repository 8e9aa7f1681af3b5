"""lesson_ignored end to end: what a session carried, the run that came back to its point, shown.

The installed hooks record what a session's context carried, a run that comes back to a
lesson's point is judged, and `evolve score`, `lessons`, `skills` show it.

Sessions are played as Claude Code plays them (tests/lesson_helpers.py): the SessionStart and
Stop commands `evolve install claude-code` wrote, the transcript appended line by line; the
agent is a real git repository and state.db real SQLite.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from evolve.home import Home
from evolve.store import ledger
from evolve.workspace import memo
from evolve.workspace.agent import Agent
from tests.helpers import commit_all, evolve_commit, git, make_agent, skill_text
from tests.lesson_helpers import Project, now_minus

PNPM = "In the shop use `pnpm`, never `npm`."
NOTES = "Release notes go in CHANGELOG.md, newest first."
MIGRATE = "1. Apply migrations with `make migrate`, never `alembic upgrade head` (it has no .env.dev).\n"
SESSION = "7a1c0f3e-5b2d-4c8e-9f10-2a3b4c5d6e70"


def run_json(capsys, *args: str):
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def shop(evolve_home, tmp_path) -> tuple[Agent, Project]:
    agent = make_agent("demo")
    text = agent.memo_text().replace(
        f"## {memo.HEADINGS[memo.STRATEGIES]}\n",
        f"## {memo.HEADINGS[memo.STRATEGIES]}\n\n- {PNPM}\n- {NOTES}\n",
    )
    skill = skill_text("db-migrate", "Use when a task changes the database schema.", MIGRATE)
    learned = evolve_commit(agent, {"memo.md": text.encode(), "skills/db-migrate/SKILL.md": skill.encode()})
    project = Project(Home.resolve(), "demo", tmp_path / "shop")
    assert agent.repo.tip() != learned  # install committed the agent's [sources] since
    return agent, project


def play(project: Project, session: str = SESSION) -> None:
    """One session: npm against the lesson, then a topic-only correction, then the error the skill covers."""
    s = project.session(session, now_minus(2))
    s.ask("add lodash to the shop").call("Bash", {"command": "npm install lodash"}, "added 1 package")
    s.say("Done: lodash is installed.")
    s.ask("No, we use pnpm here, not npm. Redo it.").call("Bash", {"command": "pnpm add lodash"})
    s.say("Done: added with pnpm.")
    s.ask("That's wrong: the release date in the notes is off.").call("Edit", {"file_path": "CHANGELOG.md"})
    s.say("Fixed the date.")
    s.ask("now migrate the dev database").call(
        "Bash",
        {"command": "alembic upgrade head"},
        'FATAL: password authentication failed for user "app"',
        True,
    )
    s.say("The migration failed: the password was refused.")
    s.ask("ok, leave it for today")


def test_a_run_that_comes_back_to_a_lesson_its_session_carried_ignored_it(shop, capsys):
    agent, project = shop
    shown = project.start(SESSION)
    assert PNPM in shown and NOTES in shown
    play(project)
    project.stop(SESSION)
    learned = git(agent.path, "log", "-1", "--format=%H", "--", "memo.md").stdout.strip()

    runs = {r["run"]: r for r in run_json(capsys, "score", "demo")}
    assert "lesson_ignored" in runs[1]["signals"] and runs[1]["signals"]["lesson_ignored"] == 0.9
    [ignored] = runs[1]["ignored"]
    assert ignored == {
        "kind": "memo",
        "lesson": memo.lesson_id(PNPM),
        "place": "strategies",
        "commit": learned,  # the commit that last wrote the bullet, as the session saw it
        "how": "correction",
        "terms": ["npm", "pnpm"],
        "text": PNPM,
        "where": "strategies",
    }
    assert (
        "user_correction" in runs[2]["signals"] and "lesson_ignored" not in runs[2]["signals"]
    )  # topic only
    [error] = runs[3]["ignored"]
    assert (error["kind"], error["lesson"], error["place"], error["how"]) == (
        "skill",
        "db-migrate",
        "listed",
        "error",
    )
    assert error["terms"] == ["alembic upgrade"] and error["commit"] == learned
    assert not runs[0]["ignored"] and not runs[4]["ignored"]

    listing = {r["id"]: r for r in run_json(capsys, "lessons", "demo")["lessons"]}
    pnpm, notes, skill = listing[memo.lesson_id(PNPM)], listing[memo.lesson_id(NOTES)], listing["db-migrate"]
    assert (pnpm["kind"], pnpm["where"], pnpm["in_context"], pnpm["ignored"]) == ("memo", "strategies", 5, 1)
    assert (pnpm["commit"], pnpm["written_by"]) == (learned, "evolve")
    assert (notes["in_context"], notes["ignored"]) == (5, 0)
    assert (skill["kind"], skill["in_context"], skill["ignored"], skill["written_by"]) == (
        "skill",
        5,
        1,
        "evolve",
    )
    [skill_row] = run_json(capsys, "skills", "demo")
    assert skill_row["name"] == "db-migrate" and skill_row["ignored"] == 1
    assert main(["skills", "demo"]) == 0
    header, row = capsys.readouterr().out.splitlines()[:2]
    assert "IGNORED" in header.split() and row.split()[header.split().index("IGNORED")] == "1"


def test_a_session_without_the_lesson_in_its_context_ignores_nothing(shop, capsys):
    agent, project = shop
    play(project)  # no SessionStart: its context is unknown
    project.stop(SESSION)
    runs = run_json(capsys, "score", "demo")
    assert [r["run"] for r in runs if "user_correction" in r["signals"]] == [1, 2]
    assert not any(r["ignored"] for r in runs)
    listing = {r["id"]: r for r in run_json(capsys, "lessons", "demo")["lessons"]}
    assert listing[memo.lesson_id(PNPM)]["in_context"] == 0


def test_a_bullet_the_prompt_budget_cut_was_not_in_the_context(shop, capsys):
    agent, project = shop
    notes = NOTES + " They list every change a user sees, with its pull request, in a user's words." * 3
    evolve_commit(agent, {"memo.md": agent.memo_text().replace(NOTES, notes).encode()})
    whole = project.start("f" * 8 + SESSION[8:])
    budget = len(whole) - 60  # the long last bullet loses its end (and the note saying so takes room)
    (agent.path / "agent.toml").write_text(
        (agent.path / "agent.toml").read_text() + f"\n[limits]\nprompt_chars = {budget}\n"
    )
    commit_all(agent.path, "a smaller prompt")
    shown = project.start(SESSION)
    assert "cut to fit" in shown and PNPM in shown and NOTES in shown and notes not in shown
    s = project.session(SESSION, now_minus(2))
    s.ask("write the release notes").call("Edit", {"file_path": "NOTES.md"}).say("Done.")
    s.ask("No: release notes go in CHANGELOG.md, not NOTES.md").say("Moved them.")
    project.stop(SESSION)
    [run] = [r for r in run_json(capsys, "score", "demo") if r["run"] == 1]
    assert "user_correction" in run["signals"] and run["ignored"] == []
    with ledger.opened(Home.resolve().state_db) as conn:
        shown_ids = {
            r[0] for r in conn.execute("SELECT lesson FROM memo_impressions WHERE session = ?", (SESSION,))
        }
    assert shown_ids == {memo.lesson_id(PNPM)}


def test_a_context_stored_after_its_runs_has_them_judged_again(shop, capsys):
    agent, project = shop
    play(project)
    path = project.transcript(SESSION)
    assert main(["observe", "demo", str(path)]) == 0  # read before the SessionStart record is applied
    assert not any(r["ignored"] for r in run_json(capsys, "score", "demo"))
    project.start(SESSION)  # a resumed session: its start arrives now
    runs = {r["run"]: r for r in run_json(capsys, "score", "demo")}
    assert [i["lesson"] for i in runs[1]["ignored"]] == [memo.lesson_id(PNPM)]


def test_a_run_read_again_with_new_facts_is_judged_again(shop, capsys):
    agent, project = shop
    project.start(SESSION)
    s = project.session(SESSION, now_minus(2))
    s.ask("migrate the dev database")
    assert main(["observe", "demo", str(project.transcript(SESSION))]) == 0
    assert run_json(capsys, "score", "demo")[0]["ignored"] == []
    s.call("Bash", {"command": "alembic upgrade head"}, "password authentication failed", error=True)
    s.say("It failed.")  # the open run grew: observe stores it anew
    [run] = run_json(capsys, "score", "demo")
    assert [(i["lesson"], i["how"]) for i in run["ignored"]] == [("db-migrate", "error")]


def test_a_skill_read_in_the_session_was_loaded_and_its_commit_is_the_one_that_wrote_it(shop, capsys):
    agent, project = shop
    project.start(SESSION)
    with_person = skill_text(
        "db-migrate", "Use when a task changes the database schema.", MIGRATE + "2. Check.\n"
    )
    (agent.path / "skills/db-migrate/SKILL.md").write_text(with_person)
    commit_all(agent.path, "db-migrate: check the result")  # after the session started
    s = project.session(SESSION, now_minus(2))
    s.ask("migrate the dev database").call("Skill", {"skill": "db-migrate"}, "Launching skill: db-migrate")
    s.call("Bash", {"command": "alembic upgrade head"}, "password authentication failed", error=True)
    s.say("It failed.")
    s.ask("No, never alembic upgrade head: use make migrate.")
    project.stop(SESSION)
    runs = {r["run"]: r for r in run_json(capsys, "score", "demo")}
    first, second = runs[0]["ignored"][0], runs[1]["ignored"][0]
    assert (first["place"], first["how"], second["place"], second["how"]) == (
        "loaded",
        "error",
        "loaded",
        "correction",
    )
    before = git(agent.path, "log", "-1", "--format=%H", "HEAD~1", "--", "skills/db-migrate").stdout.strip()
    assert first["commit"] == before  # the skill as the session had it, not the person's later commit
    listing = {r["id"]: r for r in run_json(capsys, "lessons", "demo")["lessons"]}
    assert listing["db-migrate"]["written_by"] == "both"  # created by evolve, last changed by a person
    assert listing["db-migrate"]["commit"] == agent.repo.tip()


def test_the_tip_a_session_records_is_read_from_packed_refs_too(shop):
    from evolve.store.head import branch_tip

    agent, project = shop
    tip = agent.repo.tip()
    assert branch_tip(agent.path / ".git") == tip
    git(agent.path, "pack-refs", "--all")
    assert not (agent.path / ".git/refs/heads/main").exists()
    assert branch_tip(agent.path / ".git") == tip
    project.start(SESSION)
    with ledger.opened(Home.resolve().state_db) as conn:
        assert main(["score", "demo"]) == 0  # drains the spool
        [row] = conn.execute("SELECT tip FROM session_starts WHERE session = ?", (SESSION,)).fetchall()
    assert row["tip"] == tip
