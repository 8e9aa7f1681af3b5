"""`evolve report`: rates around each reflection, thin data said as such, one HTML file."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from evolve.cli import main
from evolve.clock import stamp as iso
from evolve.home import Home
from evolve.metrics.report import build
from evolve.metrics.report_html import line_chart, render
from evolve.metrics.usage import record_skill_read, store_impressions
from evolve.store import ledger
from tests.helpers import evolve_commit, make_agent, skill_text

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
T0 = time.time() - 30 * 86_400


def _run(conn, session: str, idx: int, at: float, **facts) -> None:
    conn.execute(
        "INSERT INTO runs (agent, path, session, idx, started_at, facts, observed_at) "
        "VALUES ('demo', ?, ?, ?, ?, ?, ?)",
        (f"/t/{session}.jsonl", session, idx, iso(at), json.dumps(facts), at),
    )


def _history(evolve_home) -> tuple:
    """Reflection 1 with 30 runs on each side, reflection 2 with only 4 runs after it.

    Also a skill shown often and never used, and one that mostly ends in real errors.
    """
    agent = make_agent("demo")
    evolve_commit(
        agent,
        {f"skills/{n}/SKILL.md": skill_text(n).encode() for n in ("useless", "harmful", "fine")},
        "edit(demo): skills",
        {"Evolve-Kind": "human_edit"},
    )
    first = evolve_commit(
        agent,
        {
            "memo.md": agent.memo_text()
            .replace(
                "## Strategies for this user and domain\n",
                "## Strategies for this user and domain\n\n- **always** run `make test` <script>x</script>\n",
            )
            .encode()
        },
        "reflect(demo): run the tests",
        {"Evolve-Kind": "reflection", "Evolve-Reflection": "r1"},
    )
    second = evolve_commit(
        agent,
        {"skills/fine/SKILL.md": skill_text("fine", body="- v2\n").encode()},
        "reflect(demo): refine fine",
        {"Evolve-Kind": "reflection"},
    )
    conn = ledger.connect(Home.resolve().state_db)
    at = T0
    for i in range(30):
        _run(conn, "before", i, at + i * 60, correction=i % 10 < 3, errors=int(i % 5 == 0))
    r1 = at + 30 * 60 + 1
    for i in range(30):
        _run(conn, "after", i, r1 + i * 60, correction=i % 10 == 0, errors=int(i % 10 == 5))
    r2 = r1 + 30 * 60 + 1
    for i in range(4):
        _run(conn, "late", i, r2 + i * 60, errors=1, ended_in_error=True)
    conn.execute(
        "INSERT INTO reflections (id, agent, at, outcome, commit_sha) VALUES "
        "('r1', 'demo', ?, 'committed', ?), ('r2', 'demo', ?, 'committed', ?)",
        (r1, first, r2, second),
    )
    store_impressions(conn, "demo", "after", ["useless", "harmful"], r1)
    for i in range(6):  # harmful: invoked in 6 runs of "after", 4 of which ended in a real error
        conn.execute(
            "UPDATE runs SET facts = ? WHERE session = 'after' AND idx = ?",
            (json.dumps({"errors": int(i < 4), "ended_in_error": i < 4}), 20 + i),
        )
        record_skill_read(conn, "demo", "harmful", "after", run_idx=20 + i, at=r1 + 100)
    return agent, conn, first, second


def test_rates_before_and_after_each_reflection(evolve_home):
    agent, conn, first, second = _history(evolve_home)
    data = build(conn, agent)
    one, two = data["reflections"]
    assert one["sha"] == first and two["sha"] == second
    assert one["before"] == {"runs": 30, "thin": False, "corrections_per_100": 30.0, "errors_per_100": 20.0}
    # after r1: the 30 runs of "after" and the 4 of "late" (all with errors); in "after",
    # corrections in runs 0 and 10 (20 was rewritten), real errors in 5, 15 and 20-23
    assert one["after"] == {
        "runs": 34,
        "thin": False,
        "corrections_per_100": round(200 / 34, 1),
        "errors_per_100": round(1000 / 34, 1),
    }
    assert one["change"] == {
        "corrections_per_100": round(round(200 / 34, 1) - 30.0, 1),
        "errors_per_100": round(round(1000 / 34, 1) - 20.0, 1),
    }
    assert two["after"] == {"runs": 4, "thin": True, "corrections_per_100": None, "errors_per_100": None}
    assert two["change"] == {"corrections_per_100": None, "errors_per_100": None}
    assert [u["name"] for u in data["useless"]] == ["useless"]
    assert data["harmful"] == [
        {"name": "harmful", "reason": "often ends in a real error", "rate": round(4 / 6, 4), "runs": 6}
    ]
    skills = {s["name"]: s for s in data["skills"]}
    assert skills["harmful"]["runs_shown"] == 30 and skills["harmful"]["runs_invoked"] == 6
    assert all(w["thin"] or w["shown"] >= 5 for w in skills["useless"]["weeks"])
    conn.close()


def test_windows_are_capped_at_fifty_runs_a_side(evolve_home):
    agent = make_agent("demo")
    sha = evolve_commit(
        agent,
        {"skills/a/SKILL.md": skill_text("a").encode()},
        "reflect(demo): a",
        {"Evolve-Kind": "reflection"},
    )
    conn = ledger.connect(Home.resolve().state_db)
    for i in range(120):
        _run(conn, "s", i, T0 + i * 60, correction=i < 60)
    conn.execute(
        "INSERT INTO reflections (id, agent, at, outcome, commit_sha) VALUES "
        "('r', 'demo', ?, 'committed', ?)",
        (T0 + 60 * 60 - 1, sha),
    )
    (item,) = build(conn, agent)["reflections"]
    assert item["before"]["runs"] == 50 and item["after"]["runs"] == 50
    assert item["before"]["corrections_per_100"] == 100.0 and item["after"]["corrections_per_100"] == 0.0
    assert item["change"]["corrections_per_100"] == -100.0
    conn.close()


def test_html_is_one_self_contained_file(evolve_home, tmp_path, capsys):
    _history(evolve_home)[1].close()
    target = tmp_path / "report.html"
    assert main(["report", "demo", "--html", str(target)]) == 0
    assert "written:" in capsys.readouterr().out
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") >= 2
    assert "<script" not in page and "<link" not in page and "src=" not in page
    assert "https://" not in page and "default-src 'none'" in page
    assert "<strong>always</strong>" in page and "<code>make test</code>" in page  # markdown memo
    assert "&lt;script&gt;x&lt;/script&gt;" in page  # raw HTML in the memo is shown, not run
    assert "too few runs to say (4)" in page
    assert main(["report", "demo", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"reflections", "weeks", "skills", "useless", "harmful", "window_days"}
    assert main(["report", "demo"]) == 0
    assert "too few runs to say (before 50, after 4)" in capsys.readouterr().out


def test_thin_weeks_leave_gaps_in_a_chart():
    svg = line_chart(["w1", "w2", "w3"], [("x", "#000", [1.0, None, 3.0])], 3.0)
    assert svg.count("<circle") == 2 and "<polyline" not in svg  # no line drawn across the gap


def test_an_empty_agent_says_there_is_nothing_yet(evolve_home):
    agent = make_agent("demo")
    conn = ledger.connect(Home.resolve().state_db)
    page = render(build(conn, agent), "")
    assert "No reflection has been committed yet" in page and "No runs in the window yet" in page
    conn.close()


def _chromium(page: Path, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt install chromium)")
def test_the_report_opens_in_headless_chromium_without_errors(evolve_home, tmp_path):
    _history(evolve_home)[1].close()
    target = tmp_path / "report.html"
    assert main(["report", "demo", "--html", str(target)]) == 0
    proc = _chromium(target, tmp_path / "profile")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "<h1>Did learning help?" in proc.stdout and "<svg" in proc.stdout
    assert "reflect(demo): run the tests" in proc.stdout
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert console == []
    # the check can fail: a page with a script error is noticed
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    assert any(
        "undefinedFunction" in line
        for line in _chromium(bad, tmp_path / "p2").stderr.splitlines()
        if "CONSOLE" in line
    )


def test_the_report_opens_with_a_verdict(evolve_home, capsys):
    """Ecosystem review: no one-line answer at the top of the report."""
    agent, conn, _, _ = _history(evolve_home)
    data = build(conn, agent)
    conn.close()
    # 30 runs before r1 (9 corrections, 6 real errors); 34 since (2 corrections, 10 real errors)
    assert data["headline"]["before"]["corrections_per_100"] == 30.0
    assert data["headline"]["after"]["runs"] == 34
    assert main(["report", "demo"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        f"Since the first reflection: corrections 30 → {round(200 / 34, 1):g} per 100 runs, "
        f"real errors 20 → {round(1000 / 34, 1):g} (30 runs before, 34 since)."
    )
    html = render(data, agent.memo_text())
    assert '<p class="verdict"><strong>Since the first reflection: corrections 30' in html


def test_runs_older_than_the_window_are_named_with_the_way_to_see_them(evolve_home, capsys):
    """Ecosystem review: a backfill of older transcripts showed "0 runs since …" and no hint."""
    make_agent("demo")
    conn = ledger.connect(Home.resolve().state_db)
    old = time.time() - 400 * 86_400
    for i in range(12):
        _run(conn, "backfill", i, old + i * 60)
    conn.close()
    assert main(["report", "demo"]) == 0
    out = capsys.readouterr().out
    assert "12 older runs (from " in out and "`evolve report demo --days 401` includes them" in out
    assert main(["report", "demo", "--days", "401", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == 12 and data["older_runs"]["count"] == 0


def test_a_long_summary_is_cut_with_an_ellipsis_and_an_undone_lesson_reads_as_markdown(
    evolve_home, tmp_path, capsys
):
    # newcomer 15: "…run the tests with ./: too few runs to say"; raw backticks under
    # "Lessons a person undid"
    agent, conn, first, _second = _history(evolve_home)
    long = "when the suite is flaky run the tests with ./scripts/check.sh twice before a push"
    third = evolve_commit(
        agent,
        {"skills/fine/SKILL.md": skill_text("fine", body="- v3\n").encode()},
        f"reflect(demo): {long}",
        {"Evolve-Kind": "reflection"},
    )
    conn.execute(
        "INSERT INTO reflections (id, agent, at, outcome, commit_sha) "
        "VALUES ('r3', 'demo', ?, 'committed', ?)",
        (time.time(), third),
    )
    conn.commit()
    assert main(["revert", "demo", first]) == 0
    capsys.readouterr()
    assert main(["report", "demo"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if third[:10] in line)
    assert f"{f'reflect(demo): {long}'[:49].rstrip()}… — too few runs to say" in line, line
    target = tmp_path / "report.html"
    assert main(["report", "demo", "--html", str(target)]) == 0
    undone = target.read_text().partition('id="undone"')[2]
    assert "<strong>always</strong> run <code>make test</code>" in undone, undone[:600]
    assert "`make test`" not in undone and "</code> - " not in undone
