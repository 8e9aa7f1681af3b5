"""Applying an answer: planned again under the lock, one commit, a pair when a person must decide.

Asserted on what a person sees: `git log`, trailers one line per item, file bytes.
"""

from __future__ import annotations

import pytest

from evolve.reflect.apply import apply_plan, plan_now
from evolve.workspace.curate import eviction_order
from tests.helpers import (
    commit_all,
    evolve_commit,
    git,
    git_out,
    head,
    make_agent,
    parsed_trailers,
    skill_text,
    trailer_lines,
    write_skill,
)

TRAILERS = {
    "Evolve-Score": "1.70",
    "Evolve-Signals": ["user_correction"],
    "Evolve-Runs": ["s1#1"],
    "Evolve-Model": "fake:test",
    "Evolve-Bundle-Tokens": 900,
    "Evolve-Tokens": 1200,
}


def create(name, body="1. Run `uv run pytest` before saying tests pass.\n"):
    return {"op": "create_skill", "name": name, "description": f"Use when {name} applies.", "body": body}


def apply(agent, answer, reflection_id="r", **kwargs):
    return apply_plan(
        agent, plan_now(agent, answer), reflection_id=reflection_id, trailers=TRAILERS, **kwargs
    )


def test_one_commit_with_provenance_trailers() -> None:
    agent = make_agent()
    answer = {
        "summary": "use uv for tests",
        "operations": [
            create("run-tests-with-uv"),
            {"op": "update_memo", "section": "strategies", "content": "- When testing parser-app, use `uv`."},
            {
                "op": "update_memo",
                "section": "self",
                "content": "- I forget to run the linter before pushing.",
            },
        ],
    }
    before = head(agent.path)
    applied = apply(agent, answer, "r-1")
    assert applied.sha == head(agent.path)
    assert git_out(agent.path, "rev-list", "--count", f"{before}..HEAD") == "1"
    trailers = parsed_trailers(agent.path)
    assert (trailers["Evolve-Kind"], trailers["Evolve-Reflection"]) == ("reflection", "r-1")
    assert trailer_lines(agent.path)["Evolve-Ops"] == [
        "create_skill run-tests-with-uv",
        "update_memo strategies",
        "update_memo self",
    ]
    assert git_out(agent.path, "log", "-1", "--format=%s") == "reflect(demo): use uv for tests"
    assert "uv run pytest" in (agent.skills_dir / "run-tests-with-uv" / "SKILL.md").read_text()
    assert "use `uv`" in agent.memo_text() and "linter before pushing" in agent.memo_text()
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_exactly_once_per_reflection_id() -> None:
    agent = make_agent()
    answer = {"summary": "x", "operations": [create("alpha")]}
    first = apply(agent, answer, "same")
    again = apply(agent, answer, "same")
    assert again.already and again.sha == first.sha
    assert git_out(agent.path, "rev-list", "--count", "HEAD") == "2"


def test_pending_human_edit_committed_first_and_kept() -> None:
    agent = make_agent()
    (agent.path / "memo.md").write_text(agent.memo_text() + "\nA note of mine.\n")
    apply(agent, {"summary": "x", "operations": [create("alpha")]})
    subjects = git_out(agent.path, "log", "--format=%s").splitlines()
    assert subjects[0].startswith("reflect(demo)") and subjects[1] == "edit(demo): memo.md"
    assert "A note of mine." in agent.memo_text()


def test_a_persons_edit_made_while_the_model_thought_wins() -> None:
    agent = make_agent()
    evolve_commit(agent, {"skills/alpha/SKILL.md": skill_text("alpha", body="- old rule\n").encode()})
    answer = {
        "summary": "x",
        "operations": [
            {"op": "patch_skill", "name": "alpha", "old": "old rule", "new": "new rule"},
            create("beta"),
        ],
    }
    plan = plan_now(agent, answer)  # the model answered against this state…
    write_skill(agent.path, "alpha", body="- a person's rule\n")  # …then the person edited alpha
    applied = apply_plan(agent, plan, reflection_id="r", trailers=TRAILERS)
    assert "a person's rule" in (agent.skills_dir / "alpha" / "SKILL.md").read_text()
    assert [op.name for op in applied.plan.operations] == ["beta"]
    (rejected,) = applied.plan.rejected
    assert "does not occur" in rejected.reason
    assert trailer_lines(agent.path)["Evolve-Rejected"] == [rejected.line()]
    assert git_out(agent.path, "log", "-1", "--format=%s") == "reflect(demo): create skill beta (1 rejected)"


def test_what_touches_a_persons_lines_waits_on_a_proposal_made_with_the_commit() -> None:
    agent = make_agent()
    evolve_commit(
        agent, {"skills/deploy/SKILL.md": skill_text("deploy", body="- step one\n- step two\n").encode()}
    )
    (agent.skills_dir / "deploy" / "SKILL.md").write_text(skill_text("deploy", body="- step one\n- step 2\n"))
    commit_all(agent.path, "fix a typo")  # the person's own line: "- step 2"
    answer = {
        "summary": "deploy rules",
        "operations": [
            {"op": "patch_skill", "name": "deploy", "old": "- step one", "new": "- step one: build"},
            {"op": "patch_skill", "name": "deploy", "old": "- step 2", "new": "- step two: ship"},
            {"op": "update_memo", "section": "self", "content": "- I skip the build step."},
        ],
    }
    applied = apply(agent, answer, "pair-1")
    text = (agent.skills_dir / "deploy" / "SKILL.md").read_text()
    assert "- step one: build\n- step 2\n" in text  # the person's line is where they left it
    assert applied.proposal == "proposals/pair-1" and applied.proposal_sha
    proposal = git_out(agent.path, "show", "proposals/pair-1:skills/deploy/SKILL.md")
    assert "- step one: build\n- step two: ship" in proposal  # on top of what landed
    assert git_out(agent.path, "rev-parse", "proposals/pair-1^") == applied.sha
    for rev in ("HEAD", "proposals/pair-1"):
        assert parsed_trailers(agent.path, rev)["Evolve-Reflection"] == "pair-1"
    main = trailer_lines(agent.path)
    assert main["Evolve-Ops"] == ["patch_skill deploy", "update_memo self"]
    assert main["Evolve-Waiting"] == ["patch_skill deploy: its 'old' text touches lines a person wrote"]
    assert main["Evolve-Proposal"] == ["pair-1"]
    assert trailer_lines(agent.path, "proposals/pair-1")["Evolve-Ops"] == ["patch_skill deploy"]
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert git(agent.path, "fsck", "--strict").returncode == 0


def test_retire_removes_the_folder_recoverably() -> None:
    agent = make_agent()
    evolve_commit(
        agent, {"skills/alpha/SKILL.md": skill_text("alpha").encode(), "skills/alpha/notes.md": b"extra\n"}
    )
    applied = apply(
        agent,
        {"summary": "x", "operations": [{"op": "retire_skill", "name": "alpha", "reason": "never used"}]},
    )
    assert not (agent.skills_dir / "alpha").exists()
    assert parsed_trailers(agent.path)["Evolve-Retired"] == "alpha"
    assert "extra" in git_out(agent.path, "show", f"{applied.sha}^:skills/alpha/notes.md")


def test_eviction_order() -> None:
    candidates = {
        "old-never": {"created_at": "2026-01-01T00:00:00Z", "last_used_at": None},
        "new-never": {"created_at": "2026-03-01T00:00:00Z", "last_used_at": None},
        "used-long-ago": {"created_at": "2025-01-01T00:00:00Z", "last_used_at": 100.0},
        "used-recently": {"created_at": "2025-01-01T00:00:00Z", "last_used_at": 900.0},
    }
    assert eviction_order(candidates) == ["old-never", "new-never", "used-long-ago", "used-recently"]


@pytest.mark.parametrize("cap", [5])
def test_create_at_the_cap_evicts_in_the_same_commit_never_a_persons_skill(cap: int) -> None:
    agent = make_agent()
    (agent.path / "agent.toml").write_text(f"[limits]\nmax_skills = {cap}\n")
    commit_all(agent.path, "cap")
    evolve_commit(
        agent, {f"skills/{n}/SKILL.md": skill_text(n).encode() for n in ("used", "never", "pinned")}
    )
    pinned = agent.skills_dir / "pinned" / "SKILL.md"
    pinned.write_text(pinned.read_text().replace("---\n\n", 'metadata:\n  pinned: "true"\n---\n\n', 1))
    write_skill(agent.path, "broken", text="no frontmatter\n")
    write_skill(agent.path, "mine")  # a person's own skill, never used: still never evicted
    commit_all(agent.path, "my skills", no_verify=True)
    agent.__dict__.pop("config", None)
    usage = {"used": {"last_used_at": 500.0}}
    applied = apply(agent, {"summary": "x", "operations": [create("fresh")]}, usage=usage)
    assert applied.evicted == ["never"]
    assert parsed_trailers(agent.path)["Evolve-Evicted"] == "never"
    names = sorted(p.name for p in agent.skills_dir.iterdir() if p.is_dir())
    assert names == ["broken", "fresh", "mine", "pinned", "used"]
    assert "name: never" in git_out(agent.path, "show", f"{applied.sha}^:skills/never/SKILL.md")
