"""Skill history read from git: created, updated and patch count, across renames and retires."""

from __future__ import annotations

from evolve.store.history import build_message
from tests import helpers
from tests.helpers import EVOLVE, commit_all, git, git_out, skill_text

BODY = "".join(
    f"- rule {i}: when the build step {i} fails, read its log before retrying\n" for i in range(12)
)

agent = helpers.agent  # the fixture: agent "demo" in the test's home


# -- skill history ----------------------------------------------------------------------
def _when(day: int) -> str:
    return f"2024-03-{day:02d}T10:00:00+00:00"


def _commit_at(agent, changes, day):
    message = build_message("reflect(demo): x", {"Evolve-Kind": "reflection"})
    with agent.repo.locked():
        return agent.repo.commit_changes(
            {k: (v.encode() if isinstance(v, str) else v) for k, v in changes.items()},
            message,
            EVOLVE,
            when=_when(day),
        )


def sk(name: str, extra: str = "") -> str:
    return skill_text(name, body=BODY + extra)


def test_skill_history_created_updated_patch_count(agent):
    _commit_at(agent, {"skills/alpha/SKILL.md": sk("alpha")}, 1)
    _commit_at(
        agent, {"skills/alpha/SKILL.md": sk("alpha", "- more\n"), "skills/beta/SKILL.md": sk("beta")}, 2
    )
    _commit_at(agent, {"skills/alpha/SKILL.md": sk("alpha", "- more\n- again\n")}, 3)
    _commit_at(agent, {"memo.md": b"# memo\n"}, 4)  # touches no skill
    _commit_at(agent, {"skills/beta/notes.md": "extra file in the folder\n"}, 5)
    history = agent.repo.skill_history()
    assert set(history) == {"alpha", "beta"}
    assert (history["alpha"].created_at, history["alpha"].updated_at, history["alpha"].patch_count) == (
        "2024-03-01T10:00:00Z",
        "2024-03-03T10:00:00Z",
        2,
    )
    assert (history["beta"].created_at, history["beta"].updated_at, history["beta"].patch_count) == (
        "2024-03-02T10:00:00Z",
        "2024-03-05T10:00:00Z",
        1,
    )


def test_skill_history_follows_a_folder_rename(agent):
    _commit_at(agent, {"skills/old-name/SKILL.md": sk("old-name")}, 1)
    _commit_at(agent, {"skills/old-name/SKILL.md": sk("old-name", "- patch\n")}, 2)
    _commit_at(
        agent, {"skills/old-name/SKILL.md": None, "skills/new-name/SKILL.md": sk("new-name", "- patch\n")}, 3
    )
    assert "R" in git_out(agent.path, "show", "-M", "--name-status", "--format=", "HEAD")[:1]
    history = agent.repo.skill_history()
    assert set(history) == {"new-name"}
    entry = history["new-name"]
    assert (entry.created_at, entry.updated_at, entry.patch_count) == (
        "2024-03-01T10:00:00Z",
        "2024-03-03T10:00:00Z",
        2,
    )


def test_skill_history_follows_a_person_git_mv(agent):
    _commit_at(agent, {"skills/first/SKILL.md": sk("first")}, 1)
    git(agent.path, "mv", "skills/first", "skills/second")
    path = agent.path / "skills/second/SKILL.md"
    path.write_text(path.read_text().replace("name: first", "name: second"))
    commit_all(agent.path, "rename")
    records = {r["name"]: r for r in agent.skill_records()}
    assert records["second"]["created_at"] == "2024-03-01T10:00:00Z"
    assert records["second"]["patch_count"] == 1


def test_skill_history_restarts_after_delete_and_recreate(agent):
    files = {
        "skills/gamma/SKILL.md": sk("gamma"),
        "skills/gamma/scripts/run.sh": "echo hi\n",
        "skills/gamma/references/more.md": "more\n",
    }
    _commit_at(agent, files, 1)
    _commit_at(agent, {"skills/gamma/SKILL.md": sk("gamma", "- p\n")}, 2)
    _commit_at(agent, dict.fromkeys(files), 3)  # retired, with its scripts
    assert agent.repo.skill_history() == {}
    _commit_at(agent, {"skills/gamma/SKILL.md": sk("gamma", "- reborn\n")}, 4)
    entry = agent.repo.skill_history()["gamma"]
    assert (entry.created_at, entry.updated_at, entry.patch_count) == (
        "2024-03-04T10:00:00Z",
        "2024-03-04T10:00:00Z",
        0,
    )
    assert len(entry.commits) == 1


def test_skill_history_of_a_new_repo_is_empty(agent):
    assert agent.repo.skill_history() == {}
    assert agent.skill_records() == []
