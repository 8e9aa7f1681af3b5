"""The user's words wherever they are: answers to the agent's questions, rejection feedback, interrupts.

What the person typed is judged by the correction lexicon like a request; an option they
picked never is.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from evolve.reflect import fitting
from evolve.schedule import pending
from evolve.store import ledger
from evolve.transcripts import claude_code, parse_file
from evolve.transcripts.model import ANSWER, FEEDBACK, REPLY
from evolve.transcripts.reader import loads_object
from tests.helpers import bundle_of, make_agent
from tests.reflect.scenarios import Transcript

ASKED = {"Which package manager should I use?": ["npm", "pnpm"], "Run the e2e tests too?": ["Yes", "No"]}
# The shared sessions' answers: every one is an offered option, so none may score.
SHARED_ANSWERS = {
    "claude-code-log/-src-deep-manifest__a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl": 2,
    "spotter/subagent.jsonl": 1,
}


def _replies(path) -> list:
    state = claude_code.new_state(path.stem)
    found, offset = [], 0
    for line in path.read_bytes().split(b"\n"):
        found += [e for e in claude_code.parse_line(line, offset, state) if e.kind == REPLY]
        offset += len(line) + 1
    return found


def _bundle(agent):
    """The bundle, and the runs scored as the bundle saw them."""
    with ledger.opened(agent.home.state_db) as conn:
        scored = pending.scored_runs(conn, agent.name, agent.config, "")
    return bundle_of(agent), scored


@pytest.mark.parametrize(("name", "count"), SHARED_ANSWERS.items())
def test_picked_options_in_the_shared_sessions_are_shown_but_never_score(claude_data, name, count) -> None:
    path = claude_data / name
    replies = _replies(path)
    assert [r.name for r in replies] == [ANSWER] * count
    assert all(r.text.startswith('"') and " → " in r.text and not r.typed for r in replies)
    runs = [r for r in parse_file(path) if r.start_offset <= replies[0].offset < max(r.end_offset, 1)]
    assert runs and all(not r.replies and not r.correction_reply for r in runs)


def test_the_shared_answer_appears_in_the_bundle_as_the_users_words(claude_data) -> None:
    agent = make_agent()
    name = next(iter(SHARED_ANSWERS))
    assert main(["observe", agent.name, str(claude_data / name)]) == 0
    bundle, _ = _bundle(agent)
    assert (
        "USER (answering the agent's question): \"How should corrupted archives be reported in the "
        'manifest?" → "Option C: Extra field"' in bundle.text
    )


def test_a_typed_answer_that_corrects_scores_a_picked_one_does_not(tmp_path) -> None:
    agent = make_agent()
    picked = Transcript(tmp_path / "picked.jsonl")
    picked.user("Set up the project tooling")
    picked.ask(ASKED, {"Which package manager should I use?": "pnpm", "Run the e2e tests too?": "No"})
    picked.say("Using pnpm.")
    typed = Transcript(tmp_path / "typed.jsonl")
    typed.user("Set up the project tooling")
    typed.ask(ASKED, {"Which package manager should I use?": "No, I told you: always use uv here, not npm"})
    typed.say("Using uv.")
    assert main(["observe", agent.name, str(picked.path), str(typed.path)]) == 0
    bundle, scored = _bundle(agent)
    by_file = {r.path.rsplit("/", 1)[-1]: r for r in scored}
    assert "user_correction" not in by_file["picked.jsonl"].signals
    assert "user_correction" in by_file["typed.jsonl"].signals
    assert by_file["typed.jsonl"].facts["correction_reply"].startswith("No, I told you")
    assert '→ "No, I told you: always use uv here, not npm" (typed)' in bundle.text
    assert '"Which package manager should I use?" → "pnpm"; "Run the e2e tests too?" → "No"' in bundle.text


def test_rejection_feedback_is_the_users_words_and_scores_a_correction(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl")
    t.user("Update the dependencies")
    t.reject(
        "Bash",
        {"command": "rm package-lock.json && npm install"},
        said="No, never delete the lockfile; run npm ci",
    )
    t.user("Go on")
    clarify = Transcript(tmp_path / "c.jsonl")
    clarify.user("Plan the migration")
    clarify.reject(
        "AskUserQuestion",
        {"questions": []},
        said="The user wants to clarify these questions. Ask them again differently.",
    )
    assert main(["observe", agent.name, str(t.path), str(clarify.path)]) == 0
    bundle, scored = _bundle(agent)
    first = next(r for r in scored if r.path.endswith("s.jsonl") and r.run == 0)
    assert "user_correction" in first.signals and first.facts["aborted"]
    assert first.facts["replies"] == ["No, never delete the lockfile; run npm ci"]
    assert "USER (rejecting the call): No, never delete the lockfile; run npm ci" in bundle.text
    planned = next(r for r in scored if r.path.endswith("c.jsonl"))
    assert "user_correction" not in planned.signals and planned.facts["replies"] == []
    assert [e.name for e in _replies(t.path)] == [FEEDBACK] and _replies(clarify.path) == []


def test_the_message_after_an_interrupt_is_shown_with_the_interrupted_run(tmp_path) -> None:
    agent = make_agent()
    t = Transcript(tmp_path / "s.jsonl")
    t.user("Hide the groups that do not match the filter")
    t.tool("Read", {"file_path": "/app/filters.js"}, "ok")
    t.user_interrupt("[Request interrupted by user for tool use]")
    t.user("No, you can set group.visible using the vis library, which is less work")
    t.say("Done with group.visible.")
    assert main(["observe", agent.name, str(t.path)]) == 0
    bundle, _ = _bundle(agent)
    interrupted = next(r for r in bundle.runs if r.run == 0)
    assert "[the user interrupted the agent]" in interrupted.rendered
    # Both runs are shown: the interrupted one points to the next instead of repeating it.
    assert "USER (after interrupting the agent): [their message starts the next run]" in interrupted.rendered
    assert bundle.text.count("you can set group.visible") == 1
    alone = fitting.Shown(
        interrupted, interrupted.lines, True, 0, {line.position for line in interrupted.lines}
    )
    assert "USER (after interrupting the agent): No, you can set group.visible" in fitting.render_run(alone)


def test_answers_decode_alike_through_the_schema_and_through_json(tmp_path) -> None:
    t = Transcript(tmp_path / "s.jsonl")
    t.user("Set up")
    t.ask(ASKED, {"Which package manager should I use?": 'uv, "always"', "Run the e2e tests too?": "Yes"})
    t.reject(
        "Edit", {"file_path": "/a.py", "old_string": "x", "new_string": "y"}, said="Stop, use ruff --fix"
    )
    fast = [(e.kind, e.name, e.text, e.typed) for e in _replies(t.path)]
    state, slow, offset = claude_code.new_state(t.path.stem), [], 0
    for line in t.path.read_bytes().split(b"\n"):
        obj = loads_object(line)
        if obj is not None:
            events = claude_code.parse_object(obj, offset, offset + len(line) + 1, state)
            slow += [(e.kind, e.name, e.text, e.typed) for e in events if e.kind == REPLY]
        offset += len(line) + 1
    assert fast == slow and len(fast) == 2
    assert fast[0][3] == 'uv, "always"'  # exact, from toolUseResult's answers
    assert json.loads(t.path.read_text().splitlines()[2])["toolUseResult"]["answers"]
