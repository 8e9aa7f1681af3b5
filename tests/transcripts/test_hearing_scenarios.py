"""The everyday scenarios a person meets: each correction and each stated preference is heard.

Written from the issue's descriptions (not from the labelled data): a release done the wrong
way, a script that no longer exists, release notes the person wants one way, each in a
Claude Code transcript shaped like the real ones (tests/reflect/scenarios.py); then what
`evolve score` shows, and what the offline reflection writes for the next session.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from tests.helpers import make_agent
from tests.reflect.scenarios import Transcript

RELEASE_FIX = (
    "That's not how we release here. The version lives in two files, package.json and "
    "src/version.ts, and the tag is created by CI after the merge."
)
MIGRATE_FIX = "That script was removed in the spring. Migrations are applied with `make migrate` now."
NOTES_ANSWER = (
    "German, and only what users notice: leave out refactors and CI. That's how we always want release notes."
)


def release(t: Transcript) -> None:
    t.user("Cut release 1.4")
    t.tool("Bash", {"command": "npm version minor"}, "v1.4.0")
    t.tool("Bash", {"command": "git push --follow-tags"}, "ok")
    t.say("Released v1.4.0: bumped the version with npm and pushed the tag.")
    t.user(RELEASE_FIX)
    t.tool("Edit", {"file_path": "src/version.ts", "old_string": "1.3.0", "new_string": "1.4.0"}, "ok")
    t.say("Both files now say 1.4.0; CI will tag it.")


def migrate(t: Transcript) -> None:
    t.user("Apply the new migration")
    t.tool(
        "Bash",
        {"command": "./scripts/migrate.sh"},
        "bash: ./scripts/migrate.sh: No such file or directory",
        error=True,
    )
    t.tool("Bash", {"command": "ls scripts"}, "seed.sh")
    t.say("The migrate script is missing; I could write a new ./scripts/migrate.sh for you.")
    t.user(MIGRATE_FIX)
    t.tool("Bash", {"command": "make migrate"}, "applied 1 migration")
    t.say("Applied with make migrate.")


def notes_by_question_tool(t: Transcript) -> None:
    t.user("Write the release notes for 1.4")
    t.ask(
        {"Which language and scope for the notes?": ["English, everything", "English, user-facing only"]},
        {"Which language and scope for the notes?": NOTES_ANSWER},
    )
    t.say("Here are the German release notes with the user-facing changes.")


def notes_by_plain_reply(t: Transcript) -> None:
    t.user("Write the release notes for 1.4")
    t.tool(
        "Bash", {"command": "git log --oneline v1.3.0..HEAD"}, "a1 fix login\nb2 ci: cache\nc3 refactor db"
    )
    t.say("I have the 3 commits since v1.3.0. Which language should the notes be in? Every commit?")
    t.user(NOTES_ANSWER)
    t.say("Hier sind die Release Notes: Anmeldung repariert.")


def scored(tmp_path, build) -> Transcript:
    make_agent()
    t = Transcript(tmp_path / "session.jsonl", cwd="/home/dev/shop")
    build(t)
    assert main(["observe", "demo", "--format", "claude_code", str(t.path)]) == 0
    return t


@pytest.mark.parametrize(
    ("build", "said", "kind"),
    [(release, RELEASE_FIX, "negation"), (migrate, MIGRATE_FIX, "contradiction")],
    ids=["release", "migrate"],
)
def test_the_first_correction_of_each_scenario_is_heard(tmp_path, capsys, build, said, kind):
    scored(tmp_path, build)
    capsys.readouterr()
    assert main(["score", "demo", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    corrected = [r for r in runs if "user_correction" in r["signals"]]
    assert [r["request"] for r in corrected] == [said[:200]]
    assert corrected[0]["correction_cue"] and corrected[0]["reflect"]


@pytest.mark.parametrize(
    "build", [notes_by_question_tool, notes_by_plain_reply], ids=["question-tool", "plain-reply"]
)
def test_a_preference_given_as_an_answer_is_heard_and_learned(tmp_path, capsys, build):
    scored(tmp_path, build)
    capsys.readouterr()
    assert main(["score", "demo", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    preferred = [r for r in runs if "user_preference" in r["signals"]]
    assert len(preferred) == 1 and preferred[0]["reflect"]
    assert "that's how we" in preferred[0]["preference_cue"]
    # the offline reflection keeps it, in the person's words, for the next session
    assert main(["reflect", "demo"]) == 0
    capsys.readouterr()
    assert main(["prompt", "demo"]) == 0
    assert "That's how we always want release notes." in capsys.readouterr().out
