"""A whole reflection: gates, bundle, model (offline, fake, real SDK over HTTP), commit, record."""

from __future__ import annotations

import json
import subprocess

from evolve.cli import main
from evolve.home import Home
from evolve.reflect.client import Answer, FakeClient, ReflectionFailed
from evolve.reflect.run import reflect
from evolve.store import ledger
from tests.helpers import git_out, make_agent
from tests.reflect.scenarios import corrected_session, transient_session

SECRET = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 5


def observed(agent, *paths) -> None:
    assert main(["observe", agent.name, *map(str, paths)]) == 0


def commits(agent) -> int:
    return int(git_out(agent.path, "rev-list", "--count", "HEAD"))


def all_objects(agent) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=agent.path, capture_output=True, check=True
    ).stdout


def test_transient_only_history_gives_no_commit(tmp_path) -> None:
    agent = make_agent()
    observed(agent, transient_session(tmp_path))
    outcome = reflect(Home.resolve(), agent.name)
    assert outcome.status == "skipped" and "below threshold" in outcome.reason
    forced = reflect(Home.resolve(), agent.name, force=True)
    assert forced.status == "nothing"
    assert commits(agent) == 1
    conn = ledger.connect(Home.resolve().state_db)
    row = ledger.agent_row(conn, agent.name)
    assert row["dirty"] == 0 and row["last_reflection_at"] is not None
    assert conn.execute("SELECT outcome FROM reflections").fetchone()["outcome"] == "nothing"


def test_a_correction_gives_a_commit_whose_diff_carries_it(tmp_path) -> None:
    agent = make_agent()
    observed(agent, corrected_session(tmp_path))
    outcome = reflect(Home.resolve(), agent.name)
    assert outcome.status == "committed", outcome.reason
    diff = git_out(agent.path, "show", "HEAD", "--", "memo.md")
    assert "+- When working in app" in diff and "uv run pytest" in diff
    assert reflect(Home.resolve(), agent.name).status == "skipped"  # nothing new: no model call


def test_dry_run_changes_nothing(tmp_path) -> None:
    agent = make_agent()
    observed(agent, corrected_session(tmp_path))
    outcome = reflect(Home.resolve(), agent.name, dry_run=True)
    assert outcome.status == "dry-run" and outcome.plan and outcome.plan.operations
    assert commits(agent) == 1
    assert ledger.agent_row(ledger.connect(Home.resolve().state_db), agent.name)["dirty"] == 1


def test_a_reverted_lesson_is_not_learned_again(tmp_path) -> None:
    agent = make_agent()
    observed(agent, corrected_session(tmp_path, "a.jsonl"))
    first = reflect(Home.resolve(), agent.name)
    assert main(["revert", agent.name, first.commit]) == 0
    observed(agent, corrected_session(tmp_path, "b.jsonl"))  # the same evidence again
    again = reflect(Home.resolve(), agent.name)
    assert again.status == "nothing"
    assert any("a person undid" in r for r in again.rejected)
    assert "uv run pytest" not in agent.memo_text()


def test_failed_reflection_is_recorded_and_leaves_the_agent_dirty(tmp_path) -> None:
    agent = make_agent()
    observed(agent, corrected_session(tmp_path))
    client = FakeClient([ReflectionFailed("overloaded", transient=True)])
    outcome = reflect(Home.resolve(), agent.name, client=client)
    assert outcome.status == "failed"
    conn = ledger.connect(Home.resolve().state_db)
    assert ledger.agent_row(conn, agent.name)["dirty"] == 1
    assert [e["kind"] for e in ledger.events_since(conn, agent.name, 0)] == ["reflection_failed"]
    assert commits(agent) == 1


HOSTILE = [
    {"op": "create_skill", "name": "../escape", "description": "d", "body": "x"},
    {"op": "create_skill", "name": ".git/hooks/pre-commit", "description": "d", "body": "x"},
    {"op": "create_skill", "name": "leaky", "description": "d", "body": f"use key {SECRET}"},
    {"op": "create_skill", "name": "hidden", "description": "d", "body": "do\u200b this"},
    {"op": "create_skill", "name": "huge", "description": "d", "body": "word " * 30000},
    {"op": "patch_skill", "name": "missing", "old": "a", "new": "b"},
    {"op": "update_memo", "section": "self", "content": "- remember " + SECRET},
]


def test_hostile_operations_reach_neither_the_tree_nor_any_git_object(tmp_path) -> None:
    agent = make_agent()
    observed(agent, corrected_session(tmp_path))
    ops = [
        *HOSTILE,
        {
            "op": "create_skill",
            "name": "fine",
            "description": "Use when fine.",
            "body": "1. Do the fine thing.\n",
        },
    ]
    outcome = reflect(Home.resolve(), agent.name, client=FakeClient([{"summary": "s", "operations": ops}]))
    assert outcome.status == "committed"
    assert len(outcome.rejected) == len(HOSTILE)
    assert sorted(p.name for p in agent.skills_dir.iterdir() if p.is_dir()) == ["fine"]
    blob = all_objects(agent)
    assert SECRET.encode() not in blob and "\u200b".encode() not in blob
    assert not (agent.path.parent / "escape").exists()
    assert not (agent.path / ".git" / "hooks" / "pre-commit").read_text().count("do this")


def test_malformed_answers_fail_without_writing(tmp_path) -> None:
    agent = make_agent()
    observed(agent, corrected_session(tmp_path))
    for bad in [
        '{"summary": "x", "operations": [',
        {"summary": 3, "operations": []},
        ["not", "a", "dict"],
        {"operations": "nope"},
    ]:
        outcome = reflect(Home.resolve(), agent.name, client=FakeClient([bad]))
        assert outcome.status == "failed", bad
    assert commits(agent) == 1
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_daily_token_budget_caps_spending(tmp_path) -> None:
    agent = make_agent()
    (agent.path / "agent.toml").write_text("[model]\ndaily_token_budget = 8000\nmax_tokens = 1000\n")
    observed(agent, corrected_session(tmp_path, "a.jsonl"))
    answer = Answer(
        {"summary": "n", "operations": [{"op": "nothing_to_save", "reason": "r"}]}, "m", 7000, 500
    )
    client = FakeClient([answer, answer])
    assert reflect(Home.resolve(), agent.name, client=client).status == "nothing"
    observed(agent, corrected_session(tmp_path, "b.jsonl"))
    second = reflect(Home.resolve(), agent.name, client=client)
    assert second.status == "skipped" and "budget" in second.reason
    assert len(client.requests) == 1


def test_the_daily_token_budget_counts_each_agents_own_tokens(tmp_path) -> None:
    Home.resolve().config_file.parent.mkdir(parents=True, exist_ok=True)
    Home.resolve().config_file.write_text("[model]\ndaily_token_budget = 8000\nmax_tokens = 1000\n")
    answer = Answer(
        {"summary": "n", "operations": [{"op": "nothing_to_save", "reason": "r"}]}, "m", 7000, 500
    )
    client = FakeClient([answer, answer])
    for name in ("first", "second"):  # 7,500 tokens spent by the first do not stop the second
        agent = make_agent(name)
        observed(agent, corrected_session(tmp_path, f"{name}.jsonl"))
        assert reflect(Home.resolve(), name, client=client).status == "nothing"
    assert len(client.requests) == 2


def test_real_sdk_over_http_request_is_budgeted_redacted_and_forces_the_tool(
    tmp_path, fake_messages_api, monkeypatch
) -> None:
    agent = make_agent()
    (Home.resolve().config_file).write_text(
        f'[model]\nbackend = "anthropic"\nbase_url = "{fake_messages_api.url}"\nmax_retries = 0\n'
        "[limits]\nbundle_tokens = 3000\n"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake-server-only")
    observed(agent, corrected_session(tmp_path, secret=SECRET))
    fake_messages_api.reply_tool(
        {
            "summary": "use uv",
            "operations": [
                {
                    "op": "update_memo",
                    "section": "strategies",
                    "content": "- Always use `uv run pytest` in app.",
                }
            ],
        },
        input_tokens=2100,
        output_tokens=90,
    )
    outcome = reflect(Home.resolve(), agent.name)
    assert outcome.status == "committed", outcome.reason
    (request,) = fake_messages_api.requests
    body = request.body
    assert body["tool_choice"] == {"type": "auto"}  # the default model refuses a forced choice
    assert body["tools"][0]["name"] == "apply_reflection"
    text = json.dumps(body)
    assert SECRET not in text and "[REDACTED:anthropic-key]" in text
    assert outcome.bundle.tokens <= 3000
    trailers = git_out(agent.path, "log", "-1", "--format=%(trailers)")
    assert "Evolve-Tokens: 2190" in trailers and "Evolve-Model: anthropic:claude-fake-1" in trailers


def test_symlinked_skill_folder_and_hostile_refs_write_nothing_outside(tmp_path) -> None:
    agent = make_agent()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: linked\ndescription: d\n---\n\n- keep me\n")
    (agent.skills_dir / "linked").symlink_to(outside, target_is_directory=True)
    observed(agent, corrected_session(tmp_path))
    hooks_before = sorted(p.name for p in (agent.path / ".git" / "hooks").iterdir())
    ops = [
        {"op": "patch_skill", "name": "linked", "old": "keep me", "new": "owned"},
        {"op": "retire_skill", "name": "linked", "reason": "r"},
        {"op": "create_skill", "name": "Linked", "description": "d", "body": "x"},
        {"op": "create_skill", "name": "li\u0307nked", "description": "d", "body": "x"},
        {"op": "create_skill", "name": "/etc/cron.d/x", "description": "d", "body": "x"},
    ]
    outcome = reflect(Home.resolve(), agent.name, client=FakeClient([{"summary": "s", "operations": ops}]))
    assert outcome.status in ("nothing", "failed") and len(outcome.rejected) == len(ops)
    assert (outside / "SKILL.md").read_text().endswith("- keep me\n")
    assert sorted(p.name for p in (agent.path / ".git" / "hooks").iterdir()) == hooks_before
    tracked = git_out(agent.path, "ls-files", "-s", "skills").splitlines()
    # the person's own symlink is committed as a symlink (their edit), never followed
    assert [line.split()[0] for line in tracked if line.endswith("skills/linked")] == ["120000"]
    assert len(tracked) == 2
