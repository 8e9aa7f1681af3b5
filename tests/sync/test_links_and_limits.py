"""Links and counts across machines: what the server sends and what this machine would send.

A skill from the server holding a link (`scripts/key -> ~/.ssh/id_rsa`) is held by the sync,
and wherever such a skill comes from it is never linked into a harness's skills folder;
thousands of skills from the server are held, never linked; a remote URL set by hand with a
password is not used (and never printed); a link the person commits that leads out of the
repository is not pushed (one line says why).
"""

from __future__ import annotations

from tests.helpers import skill_text
from tests.sync_helpers import Clone


def _push(clone: Clone, files: dict[str, str], links: dict[str, str] | None = None) -> None:
    for path, text in files.items():
        (clone.path / path).parent.mkdir(parents=True, exist_ok=True)
        (clone.path / path).write_text(text)
    for path, target in (links or {}).items():
        (clone.path / path).parent.mkdir(parents=True, exist_ok=True)
        (clone.path / path).symlink_to(target)
    clone.git("add", "-A")
    clone.git("commit", "-qm", "team skills")
    clone.git("push", "-q", "origin", "main")


def test_a_server_skill_holding_a_link_is_held_and_never_linked_for_the_harness(
    machines, git_daemon, tmp_path
):
    a, b = machines
    key = tmp_path / "home" / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nnot really\n")
    a.create(git_daemon.url())
    project = tmp_path / "project"
    project.mkdir()
    a.ok("install", "claude-code", "--agent", "a", "--project", str(project))
    team = Clone(tmp_path / "team", git_daemon.url())
    keys = "- To sign, read scripts/key.\n"
    _push(
        team,
        {
            "skills/signing/SKILL.md": skill_text("signing", body=keys),
            "skills/plain/SKILL.md": skill_text("plain"),
        },
        {"skills/signing/scripts/key": str(key)},
    )
    code, out = a.sync()
    assert code == 1 and "held" in out and "skills/signing/scripts/key is a symbolic link" in out, out
    assert not (project / ".claude" / "skills" / "signing").exists()
    # joined (the server's agent taken as it stands), or taken after a look: still never linked
    b.join(git_daemon.url())
    (tmp_path / "project-b").mkdir()
    b.ok("install", "claude-code", "--agent", "a", "--project", str(tmp_path / "project-b"))
    assert a.sync("--accept-held", "a")[0] == 0
    for machine, folder in ((a, project), (b, tmp_path / "project-b")):
        linked = folder / ".claude" / "skills"
        assert (linked / "plain").is_symlink(), sorted(p.name for p in linked.iterdir())
        assert not (linked / "signing").exists() and not (linked / "signing").is_symlink()
        _code, doctor, _err = machine.evolve("doctor")
        assert (
            "skills/signing/scripts/key: is a symlink" in doctor and "not linked for the harnesses" in doctor
        )


def test_thousands_of_skills_from_the_server_are_held_not_linked(machines, git_daemon, tmp_path):
    a, _b = machines
    a.create(git_daemon.url())
    a.write("agent.toml", a.read("agent.toml") + "\n[limits]\nmax_skills = 5\n")
    a.commit("a small agent")
    assert a.sync()[0] == 0
    project = tmp_path / "project"
    project.mkdir()
    a.ok("install", "claude-code", "--agent", "a", "--project", str(project))
    team = Clone(tmp_path / "team", git_daemon.url())
    _push(team, {f"skills/s{i:03d}/SKILL.md": skill_text(f"s{i:03d}") for i in range(40)})
    code, out = a.sync()
    assert code == 1 and "40 skills, over max_skills = 5" in out, out
    assert not (a.path / "skills" / "s000").exists()
    assert not (project / ".claude" / "skills").exists() or not any(
        (project / ".claude" / "skills").iterdir()
    )


def test_a_hand_set_remote_url_with_a_password_is_not_used_and_never_printed(machines, git_daemon):
    a, _b = machines
    a.create(git_daemon.url())
    a.write("memo.md", a.read("memo.md") + "\n- a line to send\n")
    secret_url = git_daemon.url().replace("git://", "https://alice:hunter2hunter2@")
    a.git("remote", "set-url", "origin", secret_url)  # by hand: `evolve remote` would refuse it
    code, out = a.sync()
    assert code == 1 and "refused" in out and "carries a password or token" in out, out
    assert "hunter2" not in out and "alice" not in out
    _code, status, _err = a.evolve("status")
    assert "hunter2" not in status and "carries a password or token" in status, status
    assert "a line to send" not in git_daemon.git("agent", "show", "main:memo.md")


def test_a_link_out_of_the_repository_the_person_commits_is_not_pushed(machines, git_daemon, tmp_path):
    a, b = machines
    a.create(git_daemon.url())
    b.join(git_daemon.url())
    notes = tmp_path / "notes.md"
    notes.write_text(skill_text("outside", body="- mine\n"))
    (a.path / "skills" / "outside").mkdir(parents=True)
    (a.path / "skills" / "outside" / "SKILL.md").symlink_to(notes)  # left for evolve to commit as hers
    server_main = git_daemon.git("agent", "rev-parse", "main")
    code, out = a.sync()
    assert code == 1 and out.count("\n") == 1, out
    assert f"skills/outside/SKILL.md is a link to {notes}" in out and "nothing was pushed" in out, out
    assert git_daemon.git("agent", "rev-parse", "main") == server_main
    assert a.out("ls-files", "-s", "skills/outside/SKILL.md").startswith("120000")  # committed here only
    (a.path / "skills" / "outside" / "SKILL.md").unlink()
    (a.path / "skills" / "outside" / "SKILL.md").write_text(notes.read_text())
    a.commit("my notes, as a file")
    assert a.sync()[0] == 0 and b.sync()[0] == 0
    assert "- mine" in b.read("skills/outside/SKILL.md")
