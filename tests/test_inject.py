"""Injection: memo + skill index under budget, fair to new skills, never a broken skill."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evolve import config
from evolve.home import Home
from evolve.metrics.rates import write_rates_cache
from evolve.observe.records import drain_pending
from evolve.session import index as skillindex
from evolve.session.prompt import MATURE_RUNS, fit, leave_order, render
from evolve.store import ledger
from evolve.workspace.memo import STRATEGIES, replace_section
from evolve.workspace.skills import load_skill
from tests.helpers import make_agent, write_skill


def _spooled(home: Home) -> list[dict]:
    path = home.spool_dir / "hooks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_two_hundred_skills_stay_under_budget_and_a_new_skill_is_listed(evolve_home):
    agent = make_agent("demo")
    home = Home.resolve()
    usage = {}
    for number in range(199):
        name = f"skill-{number:03d}"
        write_skill(agent.path, name, f"Use when working on area {number} and " + "detail " * 12)
        usage[name] = {"impressions": 40, "runs_shown": 100 + number, "invocation_rate": number / 1000}
    write_skill(agent.path, "zz-new", "Use when the newest thing happens.")
    write_rates_cache(home.rates_cache("demo"), usage)
    injection = render(home, "demo", session="s-1")
    assert injection.chars == len(injection.text) <= 8000
    assert "zz-new" in injection.listed and "- zz-new: Use when the newest thing happens." in injection.text
    assert injection.left_out == 200 - len(injection.listed) > 0
    assert f"({injection.left_out} more skills are not listed here" in injection.text
    assert str(agent.skills_dir) in injection.text
    listed = set(injection.listed)
    kept = [usage[n]["invocation_rate"] for n in listed if n in usage]
    gone = [u["invocation_rate"] for n, u in usage.items() if n not in listed]
    assert min(kept) > max(gone)  # the least used left first
    assert _spooled(home) == [
        {
            "event": "impressions",
            "agent": "demo",
            "session_id": "s-1",
            "skills": injection.listed,
            "memo": {},  # no memo bullet yet
            "tip": agent.repo.tip(),  # the commit the lessons came from
            "at": _spooled(home)[0]["at"],
        }
    ]


def test_leave_order_spares_new_and_pinned_skills():
    stats = {
        "old-good": [50, MATURE_RUNS, 0.5],
        "old-bad": [50, 90, 0.0],
        "young": [3, MATURE_RUNS - 1, 0.0],
        "pinned-bad": [50, 90, 0.0],
    }
    order = leave_order(["young", "old-good", "old-bad", "pinned-bad", "brand-new"], stats, {"pinned-bad"})
    assert order == ["old-bad", "old-good", "young", "brand-new", "pinned-bad"]
    lines = {n: f"- {n}: x" for n in order}
    kept, left = fit(lines, order, room=sum(len(v) + 1 for v in lines.values()) - 1, note_room=0)
    assert left == 1 and "old-bad" not in kept


def test_broken_skills_are_never_listed(evolve_home):
    agent = make_agent("demo")
    write_skill(agent.path, "good")
    write_skill(agent.path, "misnamed", text="---\nname: other\ndescription: d\n---\n")
    write_skill(agent.path, "bad-yaml", text="---\nname: bad-yaml\ndescription: [x\n---\n")
    write_skill(agent.path, "too-long", body="word " * 5000)
    (agent.skills_dir / "no-file").mkdir()
    (agent.skills_dir / "Upper").mkdir()
    write_skill(agent.path, "Upper")
    injection = render(Home.resolve(), "demo", record=False)
    assert injection.listed == ["good"]
    assert _spooled(Home.resolve()) == []


def test_impressions_once_per_skill_and_session(evolve_home):
    agent = make_agent("demo")
    home = Home.resolve()
    write_skill(agent.path, "one")
    write_skill(agent.path, "two")
    first = render(home, "demo", session="abc")
    render(home, "demo", session="abc")  # a resumed session
    fresh = render(home, "demo")
    assert fresh.session and fresh.session != "abc"
    conn = ledger.connect(home.state_db)
    drain_pending(conn, home)
    rows = conn.execute("SELECT session, skill FROM impressions ORDER BY session, skill").fetchall()
    assert sorted((r[0], r[1]) for r in rows) == sorted(
        [("abc", "one"), ("abc", "two"), (fresh.session, "one"), (fresh.session, "two")]
    )
    conn.close()
    assert first.listed == ["one", "two"]


def test_without_the_index_every_valid_skill_still_counts_as_shown(evolve_home):
    agent = make_agent("demo")
    write_skill(agent.path, "one")
    write_skill(agent.path, "broken", text="nothing here")
    injection = render(Home.resolve(), "demo", session="s", include_index=False)
    assert "## Skills" not in injection.text and injection.listed == ["one"]


def test_memo_first_and_cut_with_a_note_when_over_budget(evolve_home):
    agent = make_agent("demo")
    write_skill(agent.path, "one")
    (agent.path / "agent.toml").write_text(
        (agent.path / "agent.toml").read_text() + "\n[limits]\nprompt_chars = 1500\n"
    )
    memo = replace_section(agent.memo_text(), STRATEGIES, "- always run the linter\n" * 200)
    agent.memo_path.write_text(memo)
    injection = render(Home.resolve(), "demo", record=False)
    assert injection.budget == 1500 and injection.chars <= 1500
    assert injection.text.startswith("# Memo (what I learned in earlier sessions)")
    assert "## Strategies for this user and domain" in injection.text
    assert "cut to fit the prompt budget" in injection.text and "- one: " in injection.text


def test_a_memo_of_megabytes_is_left_out_unread_with_a_note(evolve_home):
    # a log appended to memo.md by mistake (300 MB) held the session-start hook 20 s: it was
    # read, decoded and scanned whole to show the few thousand characters the budget allows
    agent = make_agent("demo")
    write_skill(agent.path, "one")
    agent.memo_path.write_text(replace_section(agent.memo_text(), STRATEGIES, "- a log line\n" * 100_000))
    injection = render(Home.resolve(), "demo", record=False)
    assert f"(left out: {agent.memo_path} is over 1 MB" in injection.text and "- one: " in injection.text
    assert "a log line" not in injection.text


def test_an_empty_memo_is_left_out(evolve_home):
    make_agent("demo")
    assert render(Home.resolve(), "demo", record=False).text == ""


def test_the_index_cache_follows_edits(evolve_home):
    agent = make_agent("demo")
    home = Home.resolve()
    path = write_skill(agent.path, "one", "Use when first.")
    assert "Use when first." in render(home, "demo", record=False).text
    path.write_text(path.read_text().replace("Use when first.", "Use when second."))
    assert "Use when second." in render(home, "demo", record=False).text
    path.write_text("broken")
    assert render(home, "demo", record=False).listed == []
    home.skill_index_cache("demo").write_text("{not json")
    write_skill(agent.path, "one", "Use when third.")
    assert "Use when third." in render(home, "demo", record=False).text


def test_defaults_match_the_config():
    from evolve.session import context

    limits = config.LimitsConfig()
    assert (context.DEFAULT_PROMPT_CHARS, context.DEFAULT_BODY_TOKENS) == (
        limits.prompt_chars,
        limits.skill_body_tokens,
    )


def test_prompt_cli_takes_the_fast_path(evolve_home):
    agent = make_agent("demo")
    write_skill(agent.path, "one")
    code = (
        "import sys, json, evolve.cli\n"
        "code = evolve.cli.main(['prompt', 'demo', '--session', 'x', '--json'])\n"
        "sys.stderr.write(json.dumps([code, sorted(m for m in ('argparse', 'tomllib', 'sqlite3', "
        "'yaml', 'git') if m in sys.modules)]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert json.loads(proc.stderr) == [0, []]
    data = json.loads(proc.stdout)
    assert data["listed"] == ["one"] and data["session"] == "x" and data["agent"] == "demo"


def test_prompt_cli_falls_back_to_argparse_for_anything_else(evolve_home, capsys):
    from evolve.cli import main

    make_agent("demo")
    with pytest.raises(SystemExit) as info:
        main(["prompt", "demo", "--bogus"])
    assert info.value.code == 2
    assert main(["--home", str(evolve_home), "prompt", "demo"]) == 0
    assert main(["prompt", "nobody"]) == 1
    assert "evolve init nobody" in capsys.readouterr().err


FRONTMATTERS = [
    "name: s\ndescription: Use when testing things.\n",
    'name: s\ndescription: "Use when \\"quoted\\" \\\\ and \\x2d\\x2d- dashes."\n',
    "name: s\ndescription: 'it''s single quoted'\n",
    'name: s\ndescription: d\nmetadata:\n  pinned: "true"\n  owner: me\n',
    "name: s\ndescription: Use when: a colon follows\n",
    "name: s\ndescription: yes\n",
    "name: s\ndescription: 2024-01-01\n",
    "name: s\ndescription: d # a comment\n",
    "name: s\ndescription: >\n  folded\n  text\n",
    "name: s\ndescription: d\nmetadata:\n  a: b\n    c: d\n",
    "name: s\ndescription: d\nmetadata:\n",
    "name: s\ndescription: d\nextra: x\n",
    "name: s\nname: t\ndescription: d\n",
    "name: s\ndescription: [a, b]\n",
    "name: s\ndescription: d\nmetadata: {pinned: 'true'}\n",
    "name: s\ndescription: d\nallowed-tools: Bash(git:*) Read\n",
    "",
]


@pytest.mark.parametrize("front", FRONTMATTERS)
def test_the_tiny_parser_agrees_with_evolve_skills(tmp_path, front):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{front}---\n\n- body\n")
    full = load_skill(folder)
    fast = skillindex.read_entry(folder, 5000)
    assert (fast.valid, fast.pinned) == (full.valid, full.pinned)
    if full.valid:
        assert fast.description == full.description


_TEXT = st.text(alphabet=st.sampled_from(list("ab :#'\"-\\x2d{}[]&*!|>%@`?,.01\t")), max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(
        st.sampled_from(["name", "description", "license", "compatibility"]), min_size=1, max_size=4
    ),
    values=st.lists(_TEXT, min_size=4, max_size=4),
)
def test_the_tiny_parser_never_disagrees_with_yaml(keys, values):
    raw = "".join(f"{k}: {v}\n" for k, v in zip(keys, values, strict=False))
    parsed = skillindex.simple_frontmatter(raw)
    if parsed is None:
        return
    assert parsed == yaml.safe_load(raw)


def test_a_renamed_memo_section_is_still_shown(evolve_home):
    """C5: `evolve prompt` silently dropped the content under a renamed heading."""
    agent = make_agent("a")
    text = agent.memo_text().replace(
        "## What I do well and where I often stumble\n", "## What I do well (mine)\n\n- I test first.\n"
    )
    agent.memo_path.write_text(text)
    shown = render(Home.resolve(), "a").text
    assert "## What I do well (mine)" in shown and "- I test first." in shown


def _park_fix(agent, proposal_id: str, skill: str, ops: list[str], kind: str = "reflection") -> None:
    """What a reflection leaves for review: a commit on proposals/<id> that patches `skill`."""
    from evolve.store.history import build_message
    from tests.helpers import EVOLVE, git

    branch = f"proposals/{proposal_id}"
    git(agent.path, "branch", branch, "main")
    path = f"skills/{skill}/SKILL.md"
    new = (agent.path / path).read_bytes().replace(b"step one", b"step one, fixed")
    message = build_message(
        f"reflect({agent.name}): patch skill {skill} (for review)",
        {"Evolve-Kind": kind, "Evolve-Reflection": proposal_id, "Evolve-Ops": ops},
    )
    with agent.repo.locked():
        agent.repo.commit_changes({path: new}, message, EVOLVE, branch=branch)


def test_a_fix_waiting_for_review_is_one_line_until_the_person_decides(evolve_home, capsys):
    from evolve.cli import main
    from tests.helpers import commit_all, git

    agent = make_agent("demo")
    write_skill(agent.path, "db-migrate")
    write_skill(agent.path, "lint-first")
    commit_all(agent.path, "my skills")  # a person's
    home = Home.resolve()
    assert "waits for the person's review" not in render(home, "demo", record=False).text
    _park_fix(agent, "0a1b2c3d4e5f6a7b", "db-migrate", ["patch_skill db-migrate"])
    _park_fix(agent, "ffff0000aaaa", "lint-first", ["create_skill other"], kind="")  # not a reflection
    note = (
        "(A fix to the skill db-migrate waits for the person's review: `evolve proposals demo`. "
        "Until it lands, where the memo and the skill differ, follow the memo.)"
    )
    text = render(home, "demo", record=False).text
    assert text.count(note) == 1 and text.index(note) < text.index("## Skills")
    assert json.loads(home.waiting_cache("demo").read_text())["proposals/0a1b2c3d4e5f6a7b"]["skills"] == [
        "db-migrate"
    ]
    git(agent.path, "pack-refs", "--all")  # git gc packs refs: still read without a git process
    assert note in render(home, "demo", record=False).text
    # within a small prompt budget: the note, the memo cut to what is left
    toml = (agent.path / "agent.toml").read_text()
    agent.memo_path.write_text(replace_section(agent.memo_text(), STRATEGIES, "- use `make migrate`\n" * 40))
    (agent.path / "agent.toml").write_text(toml + "\n[limits]\nprompt_chars = 1000\n")
    small = render(home, "demo", record=False)
    assert small.chars <= 1000 and note in small.text and "cut to fit the prompt budget" in small.text
    (agent.path / "agent.toml").write_text(toml)
    # the person rejects it: no session is told a fix waits any more
    assert main(["reject", "demo", "0a1b2c3d4e5f6a7b"]) == 0
    capsys.readouterr()
    assert main(["prompt", "demo"]) == 0
    assert "waits for the person's review" not in capsys.readouterr().out


def test_evolve_prompt_is_a_preview_unless_told_to_record(evolve_home, capsys):
    """Newcomer 13: reading what a session would see counts no impression."""
    import shlex

    from evolve.cli import main
    from evolve.integrations import claude_code

    agent = make_agent("demo")
    write_skill(agent.path, "one")
    home = Home.resolve()
    for _ in range(3):
        assert main(["prompt", "demo"]) == 0
        assert "- one: Use when testing things." in capsys.readouterr().out
    assert main(["prompt", "demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["session"] == ""
    assert _spooled(home) == []

    assert main(["prompt", "demo", "--session", "s-9"]) == 0
    capsys.readouterr()
    assert main(["prompt", "demo", "--record", "--json"]) == 0
    fresh = json.loads(capsys.readouterr().out)["session"]
    assert fresh and [(r["session_id"], r["skills"]) for r in _spooled(home)] == [
        ("s-9", ["one"]),
        (fresh, ["one"]),
    ]

    hook = claude_code.hook_command(sys.executable, home, "demo", "session-start", linked=False)
    proc = subprocess.run(  # a session's hook still records what the session was shown
        shlex.split(hook),
        input=json.dumps({"session_id": "from-the-hook"}).encode(),
        capture_output=True,
        timeout=60,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    assert proc.returncode == 0 and b"- one:" in proc.stdout
    assert _spooled(home)[-1]["session_id"] == "from-the-hook"
    conn = ledger.connect(home.state_db)
    drain_pending(conn, home)
    rows = conn.execute("SELECT DISTINCT session FROM impressions ORDER BY session").fetchall()
    conn.close()
    assert sorted(r[0] for r in rows) == sorted(["s-9", fresh, "from-the-hook"])


def test_an_accepted_fix_lands_without_for_review_in_its_subject(evolve_home, capsys):
    # newcomer 15: the accept's subject read "reflect(helper): patch skill … (for review)" on main
    from evolve.cli import main
    from tests.helpers import commit_all, git_out

    agent = make_agent("demo")
    write_skill(agent.path, "db-migrate")
    commit_all(agent.path, "my skills")
    _park_fix(agent, "0a1b2c3d4e5f6a7b", "db-migrate", ["patch_skill db-migrate"])
    assert main(["accept", "demo", "0a1b2c3d4e5f6a7b"]) == 0
    assert git_out(agent.path, "log", "-1", "--format=%s") == "reflect(demo): patch skill db-migrate"


def test_a_looping_skill_link_is_one_broken_skill_not_a_session_without_lessons(evolve_home):
    # scandir's is_dir() raised ELOOP: every session of the agent started with no memo and no skills
    agent = make_agent()
    write_skill(agent.path, "deploy", "Use when deploying.")
    (agent.path / "skills" / "loop1").symlink_to("loop2")
    (agent.path / "skills" / "loop2").symlink_to("loop1")
    agent.memo_path.write_text(replace_section(agent.memo_text(), STRATEGIES, "- Use pnpm, not npm."))
    text = render(Home.resolve(), agent.name).text
    assert "Use pnpm, not npm." in text and "deploy" in text and "loop1" not in text


def test_a_fifo_for_a_memo_or_a_skill_never_holds_up_the_session(evolve_home):
    # harden47: open() on a FIFO with no writer waits forever, and the SessionStart hook with it
    agent = make_agent()
    write_skill(agent.path, "deploy", "Use when deploying.")
    write_skill(agent.path, "piped", "Use when piping.")
    skill_file = agent.path / "skills" / "piped" / "SKILL.md"
    skill_file.unlink()
    os.mkfifo(skill_file)
    memo = agent.memo_path
    memo.unlink()
    os.mkfifo(memo)
    (agent.path / "agent.toml").unlink(missing_ok=True)
    os.mkfifo(agent.path / "agent.toml")
    Home.resolve().config_file.write_text("[limits]\nprompt_chars = 9000\n")  # the config read goes on
    proc = subprocess.run(
        [sys.executable, "-m", "evolve", "prompt", agent.name],
        capture_output=True,
        timeout=60,
        env={**os.environ, "EVOLVE_NO_WATCHER": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert b"deploy" in proc.stdout and b"piped" not in proc.stdout
    skill = load_skill(skill_file.parent)
    assert skill.problems and "not a regular file" in skill.problems[0]
