"""The skills in question, in full: bodies in the bundle that a patch_skill can quote exactly."""

from __future__ import annotations

import re
import time

from evolve.cli import main
from evolve.home import Home
from evolve.metrics.usage import record_skill_read
from evolve.reflect.compose import compose
from evolve.reflect.operations import Limits, SkillState
from evolve.reflect.skillbodies import BODIES_SHARE, SKILL_TOKENS, excerpt, sections
from evolve.reflect.tokens import count_tokens
from evolve.store import ledger
from tests.helpers import bundle_of, evolve_commit, make_agent, skill_text
from tests.reflect.scenarios import Transcript

LINT_BODY = (
    "Run the linter before the tests.\n\n"
    "## Steps\n"
    "1. Run `ruff check .` and fix what it reports.\n"
    "2. Run `uv run pytest -q`.\n\n"
    "## Pitfalls\n"
    "- Never run `pip install` in this project.\n"
)


def _shown_bodies(text: str) -> dict[str, str]:
    """Skill name → the text between its <skill-body> tags."""
    block = r"^### ([a-z0-9-]+) · .*\n<skill-body (\w+)>\n(.*?)</skill-body \2>\n"
    found = re.findall(block, text, re.M | re.S)
    return {name: body for name, _fence, body in found}


def _skill_session(folder, name="lint-first", *, fails=False) -> Transcript:
    t = Transcript(folder / f"{name}.jsonl")
    t.user("Check the project before the release")
    t.tool("Skill", {"skill": name}, f"Launching skill: {name}")
    t.tool("Bash", {"command": "ruff check ."}, "E501 line too long" if fails else "ok", error=fails)
    t.say("Checked.")
    return t


def test_an_invoked_skill_is_shown_whole_and_a_patch_quoting_it_is_valid(tmp_path) -> None:
    agent = make_agent()
    evolve_commit(agent, {"skills/lint-first/SKILL.md": skill_text("lint-first", body=LINT_BODY).encode()})
    evolve_commit(agent, {"skills/unused/SKILL.md": skill_text("unused", body="- never invoked\n").encode()})
    t = _skill_session(tmp_path, fails=True)
    assert main(["observe", agent.name, str(t.path)]) == 0
    bundle = bundle_of(agent)
    shown = _shown_bodies(bundle.text)
    assert shown == {"lint-first": agent.skill("lint-first").body}  # byte-exact, only the one in question
    assert shown["lint-first"].strip() == LINT_BODY.strip()
    assert [b.name for b in bundle.bodies] == ["lint-first"]
    assert "skill_ineffective" in bundle.bodies[0].reasons[0]
    assert "- lint-first: Use when testing things." in bundle.text
    assert "its text is under Skills in question" in bundle.text
    old = "2. Run `uv run pytest -q`.\n"  # a line a model copies from the bundle
    answer = {
        "summary": "lint with the project's config",
        "operations": [
            {"op": "patch_skill", "name": "lint-first", "old": old, "new": "2. Run `make test`.\n"}
        ],
    }
    plan = compose(answer, SkillState.build(agent.skills(), agent.memo_text()), Limits())
    assert plan.rejected == [] and [op.kind for op in plan.operations] == ["patch_skill"]
    assert bundle.tokens <= bundle.budget


def test_a_long_body_shows_whole_leading_sections_and_names_the_rest(tmp_path) -> None:
    agent = make_agent()
    steps = "".join(f"{n}. Step {n}: " + "check the output carefully " * 6 + "\n" for n in range(1, 60))
    body = "Intro line.\n\n## Setup\n" + steps + "\n## Release\n- tag it\n\n## Rollback\n- revert it\n"
    evolve_commit(agent, {"skills/big/SKILL.md": skill_text("big", body=body).encode()})
    t = _skill_session(tmp_path, "big")
    assert main(["observe", agent.name, str(t.path)]) == 0
    bundle = bundle_of(agent)
    (shown_body,) = bundle.bodies
    assert agent.skill("big").body.startswith(shown_body.text)  # a prefix of whole lines
    assert shown_body.text.endswith("\n")
    assert shown_body.omitted and shown_body.omitted[-2:] == ["## Release", "## Rollback"]
    assert count_tokens(shown_body.text) <= SKILL_TOKENS
    assert "(not shown: " in bundle.text and "## Rollback" in bundle.text


def test_sections_ignore_headings_in_code_fences_and_rejoin_to_the_body() -> None:
    body = "pre\n## A\n```sh\n# not a heading\n```\n~~~\n## nor this\n~~~\n## B\nb\n"
    parts = sections(body)
    assert [h for h, _ in parts] == ["", "## A", "## B"]
    assert "".join(text for _, text in parts) == body
    text, omitted = excerpt(body, 10_000)
    assert (text, omitted) == (body, [])


def test_a_first_section_too_long_is_cut_at_a_line_never_mid_line() -> None:
    body = "## Only\n" + "".join(f"- rule {n} " + "word " * 30 + "\n" for n in range(200))
    text, omitted = excerpt(body, 300)
    assert count_tokens(text) <= 300 and text.endswith("\n") and body.startswith(text)
    assert omitted == ["the rest of ## Only"]


LONG_BODY = "".join(f"## Part {n}\n" + "- keep this rule in mind always " * 12 + "\n" for n in range(12))
PINNED = "---\nname: pinned-one\ndescription: Use it.\nmetadata:\n  pinned: 'true'\n---\n\n- fixed\n"


def test_a_skill_often_ending_in_errors_is_in_question_unless_pinned(tmp_path) -> None:
    agent = make_agent()
    evolve_commit(agent, {"skills/gamma/SKILL.md": skill_text("gamma", body="- rule\n").encode()})
    evolve_commit(agent, {"skills/pinned-one/SKILL.md": PINNED.encode()})
    conn = ledger.connect(Home.resolve().state_db)
    now = time.time()
    for idx in range(4):  # both invoked four times, every run ended in a real error
        conn.execute(
            "INSERT INTO runs (agent, path, session, idx, started_at, facts, observed_at) "
            "VALUES ('demo', 'p', 'S', ?, ?, '{\"errors\": 1, \"ended_in_error\": true}', ?)",
            (idx, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 600 + idx)), now - 600),
        )
        for name in ("gamma", "pinned-one"):
            record_skill_read(conn, "demo", name, "S", run_idx=idx, at=now - 500 + idx)
    conn.commit()
    conn.close()
    bundle = bundle_of(agent, now=now)
    assert [(b.name, b.reasons) for b in bundle.bodies] == [("gamma", ["often ends in a real error"])]
    assert _shown_bodies(bundle.text) == {"gamma": "\n- rule\n"}


def test_all_bodies_together_stay_within_their_share_of_the_budget(tmp_path) -> None:
    agent = make_agent()
    (agent.path / "agent.toml").write_text("[limits]\nbundle_tokens = 3000\n")
    for name in ("alpha", "beta", "gamma"):
        evolve_commit(agent, {f"skills/{name}/SKILL.md": skill_text(name, body=LONG_BODY).encode()})
        assert main(["observe", agent.name, str(_skill_session(tmp_path, name).path)]) == 0
    bundle = bundle_of(agent)
    assert count_tokens(LONG_BODY) > BODIES_SHARE * 3000  # one whole body would not fit
    assert bundle.bodies and sum(b.tokens for b in bundle.bodies) <= BODIES_SHARE * 3000
    assert all(agent.skill(b.name).body.startswith(b.text) and b.omitted for b in bundle.bodies)
    assert bundle.tokens <= 3000


def test_the_real_cli_skill_call_brings_the_project_skill_body(claude_data) -> None:
    agent = make_agent()
    body = "## Steps\n1. Always run the tests first.\n2. Tag with vX.Y.Z.\n"
    evolve_commit(agent, {"skills/release-cut/SKILL.md": skill_text("release-cut", body=body).encode()})
    files = sorted((claude_data / "real-cli-2.1.332").glob("*.jsonl"))
    assert main(["observe", agent.name, *map(str, files)]) == 0
    bundle = bundle_of(agent)
    assert _shown_bodies(bundle.text).get("release-cut") == "\n" + body


def test_a_skill_a_person_wrote_or_edited_is_marked_as_theirs(tmp_path) -> None:
    from tests.helpers import commit_all

    agent = make_agent()
    evolve_commit(agent, {"skills/lint-first/SKILL.md": skill_text("lint-first", body=LINT_BODY).encode()})
    evolve_commit(agent, {"skills/release/SKILL.md": skill_text("release", body=LINT_BODY).encode()})
    # the person fixes one line of evolve's skill, and writes a skill of their own
    skill = agent.path / "skills" / "lint-first" / "SKILL.md"
    skill.write_text(skill.read_text().replace("`pip install`", "`pip install` or `poetry add`"))
    (agent.path / "skills" / "mine").mkdir()
    (agent.path / "skills" / "mine" / "SKILL.md").write_text(skill_text("mine", body=LINT_BODY))
    commit_all(agent.path, "my fixes")
    for name in ("lint-first", "release", "mine"):
        assert main(["observe", agent.name, str(_skill_session(tmp_path, name, fails=True).path)]) == 0
    headings = dict(re.findall(r"^### ([a-z-]+) · (.*)$", bundle_of(agent).text, re.M))
    waits = ": a patch touching their lines waits for their review"
    assert headings["lint-first"].endswith(" · a person wrote its lines under ## Pitfalls" + waits)
    assert headings["mine"].endswith(" · a person wrote all of it" + waits)
    assert "a person wrote" not in headings["release"]  # evolve's own: a patch lands
    # an edit not committed yet is the person's too (the bundle fails closed)
    release = agent.path / "skills" / "release" / "SKILL.md"
    release.write_text(release.read_text().replace("fix what it reports", "fix what it reports first"))
    headings = dict(re.findall(r"^### ([a-z-]+) · (.*)$", bundle_of(agent).text, re.M))
    assert headings["release"].endswith(" · a person wrote all of it" + waits)
