"""A run comes back to a lesson's point only on the specific thing it names, never on its topic."""

from __future__ import annotations

import pytest

from evolve.transcripts.anchors import covered, lesson_anchors, run_point, said_again, tokens

SHOP = "/home/dev/shop"


def said(text: str, *, calls: str = "", how: str = "correction", cwd: str = SHOP) -> dict:
    """The facts of a run in which the person said `text` after the agent made `calls`."""
    facts = {"request": text, "tool_inputs_text": calls, "cwd": cwd}
    if how == "correction":
        facts["correction"] = True
    else:
        facts.update(preference=True, preference_text=text)
    return facts


def failed(call: str, error: str, cwd: str = SHOP) -> dict:
    return {"error_texts": [error], "error_calls": [call], "tool_inputs_text": call, "cwd": cwd, "errors": 1}


def test_the_rejected_word_of_a_lesson_matches_the_person_saying_it_again() -> None:
    lesson = lesson_anchors("In this shop use `pnpm`, never `npm`.")
    match = covered(
        lesson, run_point(said("No, we use pnpm here, not npm.", calls="Bash: npm install lodash"))
    )
    assert match is not None and match.how == "correction" and "npm" in match.terms
    preference = covered(lesson, run_point(said("Always pnpm in this repo, never npm", how="preference")))
    assert preference is not None and preference.how == "preference"


def test_a_rejected_word_in_plain_prose_needs_the_agent_to_have_used_it() -> None:
    lesson = lesson_anchors("Deploy to production only: not the staging database.")
    assert lesson.loose == {"staging"}
    assert covered(lesson, run_point(said("no, not staging!", calls="Bash: ls"))) is None
    match = covered(lesson, run_point(said("no, not staging!", calls="Bash: deploy --env staging")))
    assert match is not None and match.terms == ("staging",)


@pytest.mark.parametrize(
    ("lesson", "words", "calls"),
    [
        # the same topic words: tests, release, the project's folder and name
        (
            "Before a release run `make test` and update CHANGELOG.md.",
            "the tests still fail before the release",
            "",
        ),
        (f"In {SHOP} use `pnpm` for every install.", f"the shop page is broken again in {SHOP}", "Bash: ls"),
        (
            "Release notes go in the shop's wiki, newest first.",
            "wrong: the release date is off in the shop",
            "",
        ),
        ("Run the tests with `pytest -x` before a commit.", "no, tests first, then the commit message", ""),
        ("I forget to read generated migrations.", "you forgot the migration again", "Bash: make migrate"),
        ("Never use the `Write` tool on lockfiles.", "write a better commit message", "Bash: git commit"),
    ],
)
def test_a_lesson_that_only_shares_the_topic_stays_silent(lesson: str, words: str, calls: str) -> None:
    assert covered(lesson_anchors(lesson), run_point(said(words, calls=calls))) is None


def test_a_skill_sharing_only_its_topic_stays_silent_and_its_name_or_command_match() -> None:
    skill = (
        "---\nname: release-cut\ndescription: Use when cutting a release of the shop.\n---\n\n"
        "1. Run `make test`.\n2. Tag with `git tag vX.Y.Z` and push with `git push --tags`.\n"
    )
    lesson = lesson_anchors(skill, "release-cut")
    for words in ("the release notes need the date", "the shop tests fail on the release branch"):
        assert covered(lesson, run_point(said(words))) is None, words
    assert covered(lesson, run_point(said("you skipped git push --tags again"))) is not None
    assert covered(lesson, run_point(said("your release-cut skill tags too early"))) is not None


def test_the_error_a_lesson_covers_recurs() -> None:
    lesson = lesson_anchors(
        'Run migrations with `make migrate`, never `alembic upgrade head` directly ("password '
        'authentication failed").'
    )
    direct = covered(lesson, run_point(failed("Bash: alembic upgrade head", "Traceback … OperationalError")))
    assert direct is not None and direct.how == "error" and direct.terms == ("alembic upgrade",)
    quoted = covered(
        lesson, run_point(failed("Bash: ./run.sh", 'FATAL: password authentication failed for "x"'))
    )
    assert quoted is not None and quoted.how == "error"


def test_following_a_lesson_and_failing_for_another_reason_is_no_recurrence() -> None:
    lesson = lesson_anchors("Run migrations with `make migrate` (it loads .env.dev).")
    point = run_point(failed("Bash: make migrate", "IntegrityError: duplicate key value in users"))
    assert covered(lesson, point) is None
    other = lesson_anchors("Before a release run `make test` and update CHANGELOG.md.")
    assert (
        covered(other, run_point(failed("Bash: make test", "FAILED tests/test_cart.py::test_total"))) is None
    )
    # two of its anchors meet in the call and the error: that is the error it covers
    both = run_point(failed("Bash: make migrate", "error: cannot read .env.dev: no such file"))
    assert covered(lesson, both) is not None


def test_a_tool_and_a_file_are_anchors_and_paths_match_by_their_segments() -> None:
    lesson = lesson_anchors(
        "Never use the `Write` tool on package-lock.json; edit `migrations/versions/` by hand."
    )
    assert lesson.tools == {"Write"}
    assert covered(lesson, run_point(said("you used Write on the lockfile again"))) is not None
    match = covered(
        lesson, run_point(said("look at /home/dev/api/migrations/versions/0042.py again", cwd=""))
    )
    assert match is not None and match.terms == ("migrations/versions",)


def test_recurrence_reads_only_the_persons_words() -> None:
    lesson = lesson_anchors("never `alembic upgrade head`")
    assert said_again(lesson, run_point(failed("Bash: alembic upgrade head", "boom"))) is None
    assert said_again(lesson, run_point(said("stop calling alembic upgrade head yourself"))) is not None


def test_tokens_keep_paths_flags_and_dotted_names_whole() -> None:
    assert tokens("Run (`pnpm i --frozen-lockfile`) in ./web/app.py, e.g. now.") == [
        "run",
        "pnpm",
        "--frozen-lockfile",
        "in",
        "./web/app.py",
        "e.g",
        "now",
    ]
