"""Pin, unpin, restore and prune: one commit each, exact bytes, pinned skills untouchable."""

from __future__ import annotations

import json
import os
import stat

import pytest

from evolve.cli import main
from evolve.errors import UserError
from evolve.reflect.apply import plan_now
from evolve.workspace.curate import plan_prune, prune, restore, set_pinned
from tests.helpers import commit_all, evolve_commit, git_out, head, make_agent, parsed_trailers, skill_text

QUIRKY = (
    "---\r\nname: tidy\r\n# my own comment\r\ndescription:   Use when tidying up.\r\n"
    "license: MIT\r\n---\r\n\r\nBody with trailing spaces   \r\n\tand a tab\r\n"
)


def test_pin_and_unpin_change_only_the_metadata_line(evolve_home):
    agent = make_agent("demo")
    path = agent.skills_dir / "tidy" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(QUIRKY.encode())
    commit_all(agent.path, "my skill")
    before = head(agent.path)
    done = set_pinned(agent, "tidy", True)
    pinned = path.read_bytes()
    added = 'license: MIT\r\nmetadata:\r\n  pinned: "true"\r\n'
    assert pinned == QUIRKY.replace("license: MIT\r\n", added).encode()
    assert agent.skill("tidy").pinned and agent.skill("tidy").valid
    assert done.commit == head(agent.path)
    assert git_out(agent.path, "rev-list", "--count", f"{before}..HEAD") == "1"
    assert parsed_trailers(agent.path)["Evolve-Kind"] == "pin"
    assert git_out(agent.path, "log", "-1", "--format=%s") == "pin(demo): tidy"
    again = set_pinned(agent, "tidy", True)
    assert again.commit is None and not again.changed and head(agent.path) == done.commit
    set_pinned(agent, "tidy", False)
    assert path.read_bytes() == QUIRKY.encode()
    assert parsed_trailers(agent.path)["Evolve-Kind"] == "unpin"
    assert git_out(agent.path, "status", "--porcelain") == ""


def test_pin_keeps_other_metadata_keys(evolve_home):
    agent = make_agent("demo")
    text = 'name: owned\ndescription: d\nmetadata:\n  owner: "me"\n'
    evolve_commit(agent, {"skills/owned/SKILL.md": f"---\n{text}---\n\nbody\n".encode()})
    original = (agent.skills_dir / "owned" / "SKILL.md").read_bytes()
    set_pinned(agent, "owned", True)
    assert agent.skill("owned").metadata == {"owner": "me", "pinned": "true"}
    set_pinned(agent, "owned", False)
    assert (agent.skills_dir / "owned" / "SKILL.md").read_bytes() == original


def test_inline_metadata_is_refused_with_a_remedy(evolve_home):
    agent = make_agent("demo")
    evolve_commit(
        agent,
        {"skills/inline/SKILL.md": b"---\nname: inline\ndescription: d\nmetadata: {owner: me}\n---\nbody\n"},
    )
    with pytest.raises(UserError, match="edit it by hand"):
        set_pinned(agent, "inline", True)


def test_a_reflection_cannot_patch_or_retire_a_pinned_skill(evolve_home):
    agent = make_agent("demo")
    evolve_commit(agent, {"skills/keep/SKILL.md": skill_text("keep", body="- old rule\n").encode()})
    set_pinned(agent, "keep", True)
    plan = plan_now(
        agent,
        {
            "summary": "x",
            "operations": [
                {"op": "patch_skill", "name": "keep", "old": "old rule", "new": "new rule"},
                {"op": "retire_skill", "name": "keep", "reason": "unused"},
            ],
        },
    )
    assert not plan.operations
    assert all("pinned" in r.reason for r in plan.rejected)


def _limits(agent, lines: str) -> None:
    """Tighter [limits] in agent.toml, committed; the agent's cached config dropped."""
    toml = agent.path / "agent.toml"
    toml.write_text(toml.read_text() + f"\n[limits]\n{lines}\n")
    commit_all(agent.path, "tighter limits")
    agent.__dict__.pop("config", None)


def _skills(agent, names):
    evolve_commit(agent, {f"skills/{n}/SKILL.md": skill_text(n).encode() for n in names})


def test_prune_evicts_the_least_used_never_pinned_or_broken(evolve_home):
    agent = make_agent("demo")
    _skills(agent, ["aa-pinned", "bb-unused", "cc-used", "dd-used-more"])
    evolve_commit(agent, {"skills/ee-broken/SKILL.md": b"---\nname: nope\ndescription: d\n---\n"})
    set_pinned(agent, "aa-pinned", True)
    _limits(agent, "max_skills = 3")
    usage = {"cc-used": {"last_used_at": 100.0}, "dd-used-more": {"last_used_at": 200.0}}
    assert plan_prune(agent, usage) == (["bb-unused", "cc-used"], [])
    before = head(agent.path)
    dry = prune(agent, usage, dry_run=True)
    assert dry.evicted == ["bb-unused", "cc-used"] and dry.commit is None and head(agent.path) == before
    done = prune(agent, usage)
    assert done.commit == head(agent.path)
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Kind"] == "prune" and trailers["Evolve-Evicted"] == "bb-unused, cc-used"
    assert sorted(s.name for s in agent.skills()) == ["aa-pinned", "dd-used-more", "ee-broken"]
    assert prune(agent, usage).commit is None  # at the cap: nothing to do


def test_prune_says_when_pinned_and_broken_keep_it_over_the_cap(evolve_home):
    agent = make_agent("demo")
    _skills(agent, ["one", "two"])
    evolve_commit(agent, {"skills/bad/SKILL.md": b"broken"})
    set_pinned(agent, "one", True)
    _limits(agent, "max_skills = 1")
    evict, notes = plan_prune(agent, {})
    assert evict == ["two"] and "never evicted" in notes[0]


def _folder(agent, name):
    folder = agent.skills_dir / name
    return {
        str(p.relative_to(folder)): (p.read_bytes(), os.access(p, os.X_OK))
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_restore_brings_back_exactly_the_retired_content(evolve_home):
    agent = make_agent("demo")
    folder = agent.skills_dir / "deploy"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill_text("deploy", body="- v1\n").encode())
    (folder / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\necho deploy\n")
    (folder / "scripts" / "run.sh").chmod(0o755)
    (folder / "references").mkdir()
    (folder / "references" / "blob.bin").write_bytes(bytes(range(256)))
    commit_all(agent.path, "a skill with files")
    (folder / "SKILL.md").write_bytes(skill_text("deploy", body="- v2, the one to keep\n").encode())
    commit_all(agent.path, "patch it")
    wanted = _folder(agent, "deploy")
    retired = evolve_commit(
        agent,
        {f"skills/deploy/{p}": None for p in wanted},
        "reflect(demo): retire deploy",
        {"Evolve-Kind": "reflection", "Evolve-Retired": "deploy"},
    )
    assert not folder.exists()
    done = restore(agent, "deploy")
    assert _folder(agent, "deploy") == wanted
    assert stat.S_IMODE((folder / "scripts" / "run.sh").stat().st_mode) & 0o100
    trailers = parsed_trailers(agent.path)
    assert trailers["Evolve-Kind"] == "restore" and trailers["Evolve-Restored-From"] == retired
    assert done.commit == head(agent.path) and done.restored_from == retired
    assert git_out(agent.path, "status", "--porcelain") == ""
    assert git_out(agent.path, "diff", f"{retired}^", "HEAD", "--", "skills/deploy") == ""
    with pytest.raises(UserError, match="exists"):
        restore(agent, "deploy")
    with pytest.raises(UserError, match="never had"):
        restore(agent, "ghost")


def test_restore_after_prune_and_over_todays_limits(evolve_home):
    agent = make_agent("demo")
    evolve_commit(
        agent,
        {
            "skills/long/SKILL.md": skill_text("long", body="word " * 3000).encode(),
            "skills/short/SKILL.md": skill_text("short").encode(),
        },
    )
    _limits(agent, "max_skills = 1\nskill_body_tokens = 1000")
    original = (agent.skills_dir / "long" / "SKILL.md").read_bytes()
    assert prune(agent, {"short": {"last_used_at": 5.0}}).evicted == ["short"]  # long is broken now
    evolve_commit(
        agent, {"skills/long/SKILL.md": None}, "reflect(demo): retire long", {"Evolve-Kind": "reflection"}
    )
    done = restore(agent, "long")
    assert (agent.skills_dir / "long" / "SKILL.md").read_bytes() == original
    assert any("at most 1000" in note for note in done.notes)
    restore(agent, "short")
    assert any("over max_skills = 1" in note for note in restore_notes(agent))
    from evolve.commands.doctor import diagnose

    found = {(f["where"], f["level"]): f["problem"] for f in diagnose(agent.home)}
    assert "over max_skills = 1" in found[("demo: skills/", "warning")]  # reported, never cut
    assert "at most 1000" in found[("demo: skills/long/SKILL.md", "error")]


def restore_notes(agent):
    evolve_commit(
        agent, {"skills/short/SKILL.md": None}, "reflect(demo): retire short", {"Evolve-Kind": "reflection"}
    )
    return restore(agent, "short").notes


def test_the_commands(evolve_home, capsys):
    agent = make_agent("demo")
    _skills(agent, ["one", "two"])
    assert main(["pin", "demo", "one", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "pin"
    assert main(["pin", "demo", "one"]) == 0
    assert "already pinned" in capsys.readouterr().out
    assert main(["unpin", "demo", "one"]) == 0
    capsys.readouterr()
    assert main(["prune", "demo", "--dry-run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dry_run"] and data["evicted"] == [] and data["max_skills"] == 200
    evolve_commit(
        agent, {"skills/two/SKILL.md": None}, "reflect(demo): retire two", {"Evolve-Kind": "reflection"}
    )
    assert main(["restore", "demo", "two"]) == 0
    assert "restored two" in capsys.readouterr().out
    assert main(["restore", "demo", "two"]) == 1
    assert "exists" in capsys.readouterr().err
