"""The Python API: open_agent → session → system_prompt / record_run / record_skill_read.

And the example agent, on the real anthropic SDK, against the fake Messages API server.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from evolve.api import open_agent
from evolve.errors import UserError
from evolve.store import ledger
from tests.helpers import evolve_commit, make_agent, skill_text

ROOT = Path(__file__).resolve().parents[1]
MEMO = (
    "# Memo of helper\n\n## What I do well and where I often stumble\n\n- I skip reading notes.\n\n"
    "## Strategies for this user and domain\n"
)


@pytest.fixture
def helper(evolve_home):
    agent = make_agent("helper")
    evolve_commit(
        agent,
        {
            "memo.md": MEMO.encode(),
            "skills/count-words/SKILL.md": skill_text(
                "count-words", "Use when counting words.", "- split on whitespace\n"
            ).encode(),
        },
    )
    return agent


def rows(sql: str, *args) -> list[tuple]:
    conn = ledger.connect(open_agent("helper").home.state_db)
    try:
        return [tuple(r) for r in conn.execute(sql, args).fetchall()]
    finally:
        conn.close()


def test_system_prompt_adds_memo_and_index_and_records_impressions(helper):
    session = open_agent("helper").session("s1")
    prompt = session.system_prompt("You are helpful.")
    assert prompt.startswith("You are helpful.\n\n")
    assert "I skip reading notes." in prompt and "- count-words: Use when counting words." in prompt
    session.record_run([])
    assert rows("SELECT skill, session FROM impressions") == [("count-words", "s1")]


def conversation() -> list[dict]:
    return [
        {"role": "user", "content": "How many words are in notes.txt?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {"path": "note.txt"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_1",
                    "is_error": True,
                    "content": "No such file: note.txt",
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "tu_2", "name": "read_skill", "input": {"skill": "count-words"}}
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_2", "content": "- split"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "tu_3", "name": "read_file", "input": {"path": "notes.txt"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu_3",
                    "content": [{"type": "text", "text": "one two three"}],
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Three words."}]},
        {"role": "user", "content": "That's wrong, you forgot the title line"},
        {"role": "assistant", "content": [{"type": "text", "text": "Four words."}]},
    ]


def test_record_run_appends_only_new_messages_and_observes_them(helper):
    session = open_agent("helper").session("s1", cwd="/work")
    messages = conversation()
    for turn in (2, 5, 8, 10):  # after every turn, with the whole list each time
        session.record_run(messages[:turn])
    session.record_run(messages)
    lines = [json.loads(line) for line in session.transcript_path.read_text().splitlines()]
    assert [line["msg"] for line in lines] == sorted(line["msg"] for line in lines)
    assert sum(line["type"] == "user" for line in lines) == 2
    [skill] = [line for line in lines if line["type"] == "skill"]
    assert (skill["name"], skill["call_id"], skill["msg"]) == ("count-words", "tu_2", 3)
    # a new process resuming the session writes nothing twice
    open_agent("helper").session("s1").record_run(messages)
    assert len(session.transcript_path.read_text().splitlines()) == len(lines)
    runs = rows("SELECT idx, complete, cwd, facts FROM runs WHERE agent = 'helper' ORDER BY idx")
    first, second = json.loads(runs[0][3]), json.loads(runs[1][3])
    assert runs[0][1:3] == (1, "/work") and runs[1][1] == 0
    # a failed read, then another read: reading a file is never the fix of an error
    assert first["tool_calls"] == 3 and first["errors"] == 1 and not first["recovered"]
    assert first["skills"] == [{"name": "count-words", "tool_use_id": "tu_2"}]
    assert second["correction"] and second["request"].startswith("That's wrong")
    assert rows("SELECT dirty FROM agents WHERE name = 'helper'") == [(1,)]


def test_record_run_judges_corrections_by_the_agents_signals(helper):
    (helper.path / "agent.toml").write_text('[signals.correction_phrases]\nen = ["zorblax"]\n')
    messages = [
        {"role": "user", "content": "count the words in notes.txt"},
        {"role": "assistant", "content": "42 words."},
        {"role": "user", "content": "zorblax: count lines too"},
        {"role": "assistant", "content": "7 lines."},
    ]
    open_agent("helper").session("s1").record_run(messages)
    facts = [json.loads(f) for (f,) in rows("SELECT facts FROM runs WHERE agent = 'helper' ORDER BY idx")]
    assert [f["correction"] for f in facts] == [False, True]


def test_a_skill_read_counts_once_per_tool_use(helper):
    session = open_agent("helper").session("s1")
    assert session.record_skill_read("count-words", tool_use_id="tu_2")
    assert not session.record_skill_read("count-words", tool_use_id="tu_2")
    session.record_run(conversation())
    assert rows("SELECT skill, tool_use_id, session, run_idx FROM invocations") == [
        ("count-words", "tu_2", "s1", 0)
    ]
    assert session.record_skill_read("count-words")  # no id: every read counts
    with pytest.raises(UserError):
        session.record_skill_read("../etc")


def test_open_agent_and_sessions_check_their_input(evolve_home):
    with pytest.raises(UserError, match="evolve init ghost"):
        open_agent("ghost")
    created = open_agent("fresh", create=True)
    assert (created.agent.path / ".git").is_dir() and open_agent("fresh").name == "fresh"
    assert len(created.session().id) == 32
    for bad in ("../x", ".hidden", "a/b", "x" * 129):
        with pytest.raises(UserError):
            created.session(bad)


def load_example():
    spec = importlib.util.spec_from_file_location("anthropic_agent", ROOT / "examples" / "anthropic_agent.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_example_agent_learns_through_the_api(helper, fake_messages_api, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    (tmp_path / "notes.txt").write_text("one two three\n")
    api = fake_messages_api
    api.reply_message(
        [{"type": "tool_use", "id": "toolu_a", "name": "read_skill", "input": {"skill": "count-words"}}],
        stop_reason="tool_use",
    )
    api.reply_message(
        [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "../outside.txt"}},
        ],
        stop_reason="tool_use",
    )
    api.reply_message(
        [{"type": "tool_use", "id": "toolu_c", "name": "read_file", "input": {"path": "notes.txt"}}],
        stop_reason="tool_use",
    )
    api.reply_text("notes.txt has 3 words.")
    example = load_example()
    code = example.main(
        ["--agent", "helper", "--base-url", api.url, "--session", "run1", "How many words are in notes.txt?"]
    )
    assert code == 0 and capsys.readouterr().out == "notes.txt has 3 words.\n"
    first = api.requests[0].body
    assert "I skip reading notes." in first["system"] and "- count-words:" in first["system"]
    assert first["model"] == "claude-sonnet-5-5"  # the agent's configured model
    last = api.requests[-1].body["messages"]
    assert last[2]["content"][0]["content"].startswith("---\nname: count-words")
    assert last[4]["content"][0]["is_error"] is True
    assert rows("SELECT skill, tool_use_id FROM invocations") == [("count-words", "toolu_a")]
    assert rows("SELECT skill, session FROM impressions") == [("count-words", "run1")]
    [(facts,)] = rows("SELECT facts FROM runs WHERE agent = 'helper'")
    facts = json.loads(facts)
    assert facts["tool_calls"] == 3 and facts["errors"] == 1 and not facts["recovered"]  # reads fix nothing


# -- a trimmed or summarised history never drops a turn (A6) -----------------------------
def requests_recorded(session) -> list[str]:
    return [
        json.loads(line)["text"]
        for line in session.transcript_path.read_text().splitlines()
        if json.loads(line)["type"] == "user"
    ]


def test_a_trimmed_history_still_records_the_new_turns(helper):
    """A6: after the app summarised its history, the user's correction was dropped (runs: 0)."""
    session = open_agent("helper").session("s1")
    messages = conversation()[:8]  # 8 messages, the last one the answer "Three words."
    session.record_run(messages)
    summary = {"role": "user", "content": "Summary of the conversation so far: counted words."}
    correction = {"role": "user", "content": "That's wrong, you forgot the title line"}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Four words."}]}
    result = session.record_run([summary, messages[-1], correction, answer])
    assert result["runs"] >= 1
    assert requests_recorded(session) == ["How many words are in notes.txt?", correction["content"]]
    facts = [json.loads(f) for (f,) in rows("SELECT facts FROM runs WHERE agent = 'helper' ORDER BY idx")]
    assert facts[-1]["correction"] is True
    # the summarised list keeps growing: only what is new is added, nothing twice
    again = {"role": "user", "content": "Now count the lines"}
    session.record_run([summary, messages[-1], correction, answer, again])
    assert requests_recorded(session)[-1] == "Now count the lines"
    assert len(requests_recorded(session)) == 3
    lines = [json.loads(line) for line in session.transcript_path.read_text().splitlines()]
    assert [line["msg"] for line in lines] == sorted(line["msg"] for line in lines)


def test_a_repeated_answer_is_not_taken_for_the_recorded_one(helper):
    """An earlier match on a tie: "Done." said twice must not hide the request between them."""
    session = open_agent("helper").session("s1")
    done = {"role": "assistant", "content": "Done."}
    first = [{"role": "user", "content": "deploy it"}, done]
    session.record_run(first)
    resumed = open_agent("helper").session("s1")  # a new process: nothing in memory
    resumed.record_run(
        [{"role": "user", "content": "Summary: deployed."}, done, {"role": "user", "content": "again"}, done]
    )
    assert requests_recorded(resumed) == ["deploy it", "again"]


def test_the_example_agent_keeps_recording_a_continued_session(
    helper, fake_messages_api, tmp_path, monkeypatch, capsys
):
    """A6: `examples/anthropic_agent.py --session ID` restarts its list: the second task was lost."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    example = load_example()
    fake_messages_api.reply_text("notes.txt has 3 words.")
    argv = ["--agent", "helper", "--base-url", fake_messages_api.url, "--session", "sessA"]
    assert example.main([*argv, "Summarise notes.txt"]) == 0
    fake_messages_api.reply_text("Listed.")
    assert example.main([*argv, "No, don't summarise; always list the file names instead"]) == 0
    capsys.readouterr()
    session = open_agent("helper").session("sessA")
    assert requests_recorded(session) == [
        "Summarise notes.txt",
        "No, don't summarise; always list the file names instead",
    ]
    facts = [json.loads(f) for (f,) in rows("SELECT facts FROM runs WHERE agent = 'helper' ORDER BY idx")]
    assert len(facts) == 2 and facts[1]["correction"] is True


# -- the API checks what it is given (C17) -----------------------------------------------
@pytest.mark.parametrize("bad", ["a message as text", [1, 2, 3], None, {"role": "user", "content": "x"}])
def test_record_run_refuses_what_is_not_a_message_list(helper, bad):
    """C17: record_run("text") and [1, 2, 3] were accepted silently; None was a bare TypeError."""
    session = open_agent("helper").session("s1")
    with pytest.raises(TypeError, match="record_run"):
        session.record_run(bad)
    assert not session.transcript_path.exists()


def test_reading_a_skill_that_does_not_exist_counts_nothing(helper):
    """C17: record_skill_read("no-such-skill") returned True and counted an invocation."""
    session = open_agent("helper").session("s1")
    assert session.record_skill_read("no-such-skill", tool_use_id="tu_9") is False
    assert rows("SELECT skill FROM invocations") == []
    assert session.record_skill_read("count-words", tool_use_id="tu_9") is True


def test_a_tool_input_nested_too_deep_never_crashes_record_run(helper):
    """B5 for the API: a tool input nested 3,000 levels deep raised RecursionError."""
    deep: dict = {}
    node = deep
    for _ in range(3000):
        node["a"] = {}
        node = node["a"]
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shell", "input": deep}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        {"role": "assistant", "content": "done"},
    ]
    session = open_agent("helper").session("s1")
    assert session.record_run(messages)["runs"] == 1
    assert session.record_run(messages)["runs"] == 0
    [call] = [json.loads(x) for x in session.transcript_path.read_text().splitlines() if '"tool_call"' in x]
    assert call["input"] == {"a": "[dict nested too deep to show]"}


def test_the_readme_snippet_runs_as_written(evolve_home, fake_messages_api, monkeypatch):
    """C18: the README's snippet never left its loop and used undefined names."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Use from Python", 1)[1]
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_messages_api.url)
    helper = make_agent("helper")
    evolve_commit(helper, {"skills/notes/SKILL.md": skill_text("notes").encode()})
    fake_messages_api.reply_message(
        [{"type": "tool_use", "id": "toolu_1", "name": "read_skill", "input": {"skill": "notes"}}],
        stop_reason="tool_use",
    )
    fake_messages_api.reply_text("Done: grouped under Added and Fixed.")
    exec(compile(snippet, "README.md", "exec"), {})  # noqa: S102 - the README's own code
    assert len(fake_messages_api.requests) == 2
    assert "- notes:" in fake_messages_api.requests[0].body["system"]
    assert rows("SELECT skill, tool_use_id FROM invocations") == [("notes", "toolu_1")]
    assert rows("SELECT count(*) FROM runs WHERE agent = 'helper'") == [(1,)]
