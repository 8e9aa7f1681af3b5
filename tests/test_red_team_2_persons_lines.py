"""The second red-team pass, as scripted people: a person's lines and commits stay theirs.

A person's restored skill, amended commit, typo fix, CRLF or lone CR, long section and
save in the middle of a reflection all stay the person's: the model's operations land
around them, wait for them or are refused. Same fixtures as tests/test_red_team_2.py.
"""

from __future__ import annotations

from evolve.cli import main
from tests import people
from tests.helpers import git_out, skill_text
from tests.people import SELF, STRATEGIES, memo, person, skill, write

agent, ans = people.agent, people.ans  # the people fixtures


# --- 6. evolve restore of a person's skill makes it evolve's: retired without review ------
def test_restored_persons_skill_is_still_the_persons(agent, ans, capsys):
    write(agent, "skills/my-own/SKILL.md", skill_text("my-own", body="- Always tag releases as vX.Y.Z\n"))
    person(agent, "add", "-A")
    person(agent, "commit", "-qm", "my own skill")
    person(agent, "rm", "-rq", "skills/my-own")
    person(agent, "commit", "-qm", "oops")
    assert main(["restore", "a", "my-own"]) == 0
    capsys.readouterr()
    code, out = ans({"op": "retire_skill", "name": "my-own", "reason": "looks unused"})
    assert (agent.skills_dir / "my-own" / "SKILL.md").exists(), out


# --- 7. git commit --amend of evolve's reflection: the person's edit becomes evolve's ------
def test_amended_reflection_keeps_persons_line(agent, ans):
    ans(memo("strategies", "- Model line that I will correct by hand."))
    path = agent.path / "memo.md"
    path.write_text(
        path.read_text().replace(
            "- Model line that I will correct by hand.", "- My corrected line, mine now."
        )
    )
    assert person(agent, "commit", "-qa", "--amend", "--no-edit").returncode == 0
    ans(memo("strategies", "- A brand new strategy from the model."))
    assert "My corrected line, mine now." in agent.memo_text(), agent.memo_text()


# --- 17. a lone CR in a person's memo line shifts authorship: their later line is dropped ---
def test_lone_cr_does_not_shift_authorship(agent, ans):
    ans(memo("strategies", "- Evolve line one here for sure.\n- Evolve line two here too."))
    path = agent.path / "memo.md"
    text = path.read_bytes().decode()
    text = text.replace(f"## {SELF}\n\n", f"## {SELF}\n\n- pasted\rfrom an old Mac file\n")
    text = text.replace("- Evolve line two here too.", "- Evolve line two here too.\n- MY OWN LINE, keep it.")
    path.write_bytes(text.encode())
    person(agent, "commit", "-qam", "mine")
    ans(memo("strategies", "- A completely new strategy."))
    assert "MY OWN LINE" in agent.memo_text(), agent.memo_text()


# --- 18. a person's long section: a short model update is refused with a misleading reason ---
def test_short_update_to_persons_long_section(agent, ans):
    path = agent.path / "memo.md"
    mine = "\n".join(f"- my rule {n:02d}: always double-check step {n:02d} of the deploy." for n in range(38))
    path.write_text(path.read_text().replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n{mine}\n"))
    person(agent, "commit", "-qam", "my rules")
    data = ans.json(memo("strategies", "- Use uv."))
    op = data["operations"][0]
    assert op["status"] == "landed" or "content is" not in op["reason"], op


# --- 20. a guard-flagged reflection drops the person's memo lines (protect off) -------------
def test_flagged_reflection_keeps_persons_lines(agent, ans, capsys):
    path = agent.path / "memo.md"
    path.write_text(
        path.read_text().replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n- MY OWN STRATEGY LINE\n")
    )
    person(agent, "commit", "-qam", "mine")
    data = ans.json(memo("strategies", "- Read the docs at https://docs.example-unknown.dev first."))
    assert data["proposal"], data
    pid = data["proposal"].removeprefix("proposals/")
    assert main(["accept", "a", pid]) == 0
    assert "MY OWN STRATEGY LINE" in agent.memo_text(), agent.memo_text()


# --- 25. a common global git setting (blame.ignoreRevsFile) switches protection off --------
def test_blame_ignore_revs_file_does_not_unprotect(agent, ans, monkeypatch, tmp_path):
    import os

    cfg = os.environ["GIT_CONFIG_GLOBAL"]
    with open(cfg, "a") as handle:
        handle.write("[blame]\n\tignoreRevsFile = .git-blame-ignore-revs\n")
    path = agent.path / "memo.md"
    path.write_text(
        path.read_text().replace(f"## {STRATEGIES}\n", f"## {STRATEGIES}\n\n- MY OWN STRATEGY LINE\n")
    )
    person(agent, "commit", "-qam", "mine")
    ans(memo("strategies", "- A model strategy."))
    assert "MY OWN STRATEGY LINE" in agent.memo_text(), agent.memo_text()


# --- 21. a person's save while evolve plans under its lock is overwritten without a trace ----
def test_save_during_apply_window_is_not_lost(agent, ans, monkeypatch):
    import evolve.reflect.apply as apply_mod

    real = apply_mod.plan_now  # only apply_plan's own call (run.py imported its own reference)
    path = agent.path / "memo.md"

    import evolve.reflect.run  # noqa: F401 - imported first, so it keeps the real plan_now

    saves = []

    def person_saves_during_planning(*args, **kwargs):
        plan = real(*args, **kwargs)  # the memo was read under the lock; the person hits save now
        if not saves:
            path.write_text(path.read_text().replace(f"## {SELF}\n", f"## {SELF}\n\n- PERSON SAVED THIS\n"))
            saves.append(1)
        return plan

    monkeypatch.setattr(apply_mod, "plan_now", person_saves_during_planning)
    code, out = ans(memo("strategies", "- A model strategy for the window."))
    assert code == 0 and "landed" in out, out
    assert "PERSON SAVED THIS" in path.read_text() and "A model strategy for the window" in path.read_text()
    kinds = git_out(agent.path, "log", "-2", "--format=%s")
    assert kinds.splitlines()[1].startswith("edit(a)"), kinds  # their save committed as theirs first


# --- 24. a CRLF skill a person wrote: a capable model's patch (LF text) is refused ---------
def test_crlf_skill_patch(agent, ans):
    text = skill_text("deploy", body="# Deploy\n\n- Build it.\n- Ship it on Tuesdays.\n").replace(
        "\n", "\r\n"
    )
    (agent.skills_dir / "deploy").mkdir()
    (agent.skills_dir / "deploy" / "SKILL.md").write_bytes(text.encode())
    person(agent, "add", "-A")
    person(agent, "commit", "-qm", "windows skill")
    ans(skill("other", "- something else entirely here.\n"))
    data = ans.json(
        {
            "op": "patch_skill",
            "name": "deploy",
            "old": "- Build it.\n- Ship it on Tuesdays.",
            "new": "- Build it.\n- Ship it on Tuesdays.\n- Tag it.",
        }
    )
    assert data["operations"][0]["status"] in ("landed", "waiting"), data["operations"]


# --- 28. evolve restore killed mid-way: the next write commits evolve's files as the PERSON's --
def test_killed_restore_is_not_committed_as_a_persons_edit(agent, ans, capsys):
    import subprocess
    import sys

    ans(skill("lint", "- Run ruff check before every commit you make.\n"))
    ans({"op": "retire_skill", "name": "lint", "reason": "unused"})
    code = (
        "import os, evolve.store.repo as r\n"
        "r.Repo.commit_changes = lambda *a, **k: os._exit(9)\n"  # SIGKILL right before the commit
        "from evolve.cli import main; main(['restore', 'a', 'lint'])\n"
    )
    subprocess.run([sys.executable, "-P", "-c", code], check=False)
    assert main(["status"]) == 0
    capsys.readouterr()
    ans(memo("self", "- Another lesson for the self section."))
    kinds = git_out(agent.path, "log", "--format=%s | %(trailers:key=Evolve-Source,valueonly)", "-3")
    assert "edit(a): skills/lint" not in kinds, kinds


# --- 35. an enormous memo: the apply step was quadratic (minutes under the lock) ----------
def test_an_enormous_memo_of_a_persons_notes_takes_a_lesson_and_keeps_every_note(agent, ans):
    """How long it takes is `make bench`'s business (bench_apply: 10x the memo, about 10x the time)."""
    path = agent.path / "memo.md"
    notes = "".join(f"- person note {k}\n\n" for k in range(5000))  # ~120 KB, 10k lines
    path.write_text(path.read_text().replace("# Memo of a\n", "# Memo of a\n\n" + notes))
    person(agent, "commit", "-qam", "my notes")
    code, out = ans(memo("self", "- a new lesson for self here"))
    assert code == 0 and "landed" in out
    assert path.read_text().count("- person note ") == 5000


# --- 36. a typo fix makes that one line the person's: patches elsewhere land, a retire waits ---
def test_a_typo_fix_makes_only_that_line_the_persons(agent, ans):
    ans(skill("lint", "- Run ruf before committing.\n- Fix every warning you see.\n"))
    path = agent.skills_dir / "lint" / "SKILL.md"
    path.write_text(path.read_text().replace("ruf ", "ruff "))
    person(agent, "commit", "-qam", "typo")
    data = ans.json(
        {"op": "patch_skill", "name": "lint", "old": "every warning", "new": "every warning and error"},
        {"op": "retire_skill", "name": "lint", "reason": "superseded"},
    )
    assert [o["status"] for o in data["operations"]] == ["landed", "rejected"], data["operations"]
    assert "created or patched earlier" in data["operations"][1]["reason"]
    data = ans.json({"op": "retire_skill", "name": "lint", "reason": "superseded"})
    assert data["operations"][0]["status"] == "waiting", data["operations"]
