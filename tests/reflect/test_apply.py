"""Applying a validated plan: one commit, trailers, eviction at the cap, exactly once."""

from __future__ import annotations

import pytest

from evolve.reflect.apply import apply_plan
from evolve.reflect.operations import Limits, SkillState, parse_answer
from evolve.workspace.curate import eviction_order
from tests.helpers import commit_all, git_out, head, make_agent, parsed_trailers, write_skill

TRAILERS = {
    "Evolve-Score": "1.70",
    "Evolve-Signals": ["user_correction"],
    "Evolve-Runs": ["s1#1"],
    "Evolve-Model": "fake:test",
    "Evolve-Bundle-Tokens": 900,
    "Evolve-Tokens": 1200,
}


def plan_for(agent, answer, blocked=()):
    state = SkillState.build(agent.skills(), agent.memo_text())
    return parse_answer(answer, state, Limits.from_config(agent.config.limits), blocked)


def create(name, body="1. Run `uv run pytest` before saying tests pass.\n"):
    return {"op": "create_skill", "name": name, "description": f"Use when {name} applies.", "body": body}


def test_one_commit_with_provenance_trailers() -> None:
    agent = make_agent()
    answer = {
        "summary": "use uv for tests",
        "operations": [
            create("run-tests-with-uv"),
            {
                "op": "update_memo",
                "section": "strategies",
                "content": "- When testing parser-app, always use `uv run pytest`.",
            },
        ],
    }
    before = head(agent.path)
    applied = apply_plan(agent, plan_for(agent, answer), reflection_id="r-1", trailers=TRAILERS)
    assert applied.sha == head(agent.path)
    assert git_out(agent.path, "rev-list", "--count", f"{before}..HEAD") == "1"
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Kind"] == "reflection"
    assert trailers["Evolve-Reflection"] == "r-1"
    assert trailers["Evolve-Ops"] == "create_skill run-tests-with-uv, update_memo strategies"
    assert trailers["Evolve-Signals"] == "user_correction"
    assert trailers["Evolve-Fingerprints"]
    assert git_out(agent.path, "log", "-1", "--format=%s") == "reflect(demo): use uv for tests"
    assert "uv run pytest" in (agent.skills_dir / "run-tests-with-uv" / "SKILL.md").read_text()
    assert "always use `uv run pytest`" in agent.memo_text()
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_exactly_once_per_reflection_id() -> None:
    agent = make_agent()
    plan = plan_for(agent, {"summary": "x", "operations": [create("alpha")]})
    first = apply_plan(agent, plan, reflection_id="same", trailers=TRAILERS)
    again = apply_plan(agent, plan, reflection_id="same", trailers=TRAILERS)
    assert again.already and again.sha == first.sha
    assert git_out(agent.path, "rev-list", "--count", "HEAD") == "2"


def test_pending_human_edit_committed_first_and_kept() -> None:
    agent = make_agent()
    (agent.path / "memo.md").write_text(agent.memo_text() + "\nA note of mine.\n")
    plan = plan_for(agent, {"summary": "x", "operations": [create("alpha")]})
    apply_plan(agent, plan, reflection_id="r", trailers=TRAILERS)
    subjects = git_out(agent.path, "log", "--format=%s").splitlines()
    assert subjects[0].startswith("reflect(demo)")
    assert subjects[1] == "edit(demo): memo.md"
    assert "A note of mine." in agent.memo_text()


def test_operation_on_a_file_changed_since_planning_is_dropped() -> None:
    agent = make_agent()
    write_skill(agent.path, "alpha", body="- old rule\n")
    commit_all(agent.path, "add alpha", no_verify=True)
    plan = plan_for(
        agent,
        {
            "summary": "x",
            "operations": [
                {"op": "patch_skill", "name": "alpha", "old": "old rule", "new": "new rule"},
                create("beta"),
            ],
        },
    )
    write_skill(agent.path, "alpha", body="- a person's rule\n")  # edited meanwhile
    applied = apply_plan(agent, plan, reflection_id="r", trailers=TRAILERS)
    assert "a person's rule" in (agent.skills_dir / "alpha" / "SKILL.md").read_text()
    assert [op.name for op in applied.operations] == ["beta"]
    assert any("changed since" in r.reason for r in applied.rejected)
    assert "Evolve-Rejected" in parsed_trailers(agent.path)


def test_retire_removes_the_folder_recoverably() -> None:
    agent = make_agent()
    write_skill(agent.path, "alpha")
    (agent.skills_dir / "alpha" / "notes.md").write_text("extra\n")
    commit_all(agent.path, "add alpha", no_verify=True)
    plan = plan_for(
        agent,
        {"summary": "x", "operations": [{"op": "retire_skill", "name": "alpha", "reason": "never used"}]},
    )
    applied = apply_plan(agent, plan, reflection_id="r", trailers=TRAILERS)
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


@pytest.mark.parametrize("cap", [4])
def test_create_at_the_cap_evicts_in_the_same_commit(cap: int) -> None:
    agent = make_agent()
    (agent.path / "agent.toml").write_text(f"[limits]\nmax_skills = {cap}\n")
    for name in ("used", "never", "pinned"):
        write_skill(agent.path, name)
    pinned = agent.skills_dir / "pinned" / "SKILL.md"
    pinned.write_text(pinned.read_text().replace("---\n\n", 'metadata:\n  pinned: "true"\n---\n\n', 1))
    write_skill(agent.path, "broken", text="no frontmatter\n")
    commit_all(agent.path, "skills", no_verify=True)
    agent.__dict__.pop("config", None)
    plan = plan_for(agent, {"summary": "x", "operations": [create("fresh")]})
    usage = {"used": {"last_used_at": 500.0}}
    applied = apply_plan(agent, plan, reflection_id="r", trailers=TRAILERS, usage=usage)
    assert applied.evicted == ["never"]
    assert parsed_trailers(agent.path)["Evolve-Evicted"] == "never"
    names = sorted(p.name for p in agent.skills_dir.iterdir() if p.is_dir())
    assert names == ["broken", "fresh", "pinned", "used"]
    assert "name: never" in git_out(agent.path, "show", f"{applied.sha}^:skills/never/SKILL.md")
