"""Skill metrics: hand-built run histories give hand-computed rates (docs/metrics.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from evolve.cli import main
from evolve.clock import stamp as iso
from evolve.commands.skills import KEYS
from evolve.home import Home
from evolve.metrics.rates import RunRecord, skill_usage, tally
from evolve.metrics.usage import prune_state, record_skill_read, store_impressions
from evolve.observe import ingest as observe
from evolve.observe.records import drain_pending
from evolve.store import ledger, spool
from tests.helpers import evolve_commit, make_agent, skill_text, write_skill


def test_tally_matches_hand_computed_rates():
    a = [
        RunRecord("A", "a", 0, ended_real=True, real_error=True, files_written=("x.py",)),
        RunRecord("A", "a", 1, correction=True, transient=True),  # after a0: a correction
        # the person changed a2's file before the next request (observe's user_edited_files)
        RunRecord("A", "a", 2, aborted=True, files_written=("y.py",), user_edited=("y.py",)),
        RunRecord("A", "a", 3),
        RunRecord("A", "a", 4),
    ]
    b = [RunRecord("B", "b", 0), RunRecord("B", "b", 1)]
    c = [RunRecord("C", "c", 0)]
    shown = {"A": {"s1", "s2"}, "B": {"s1"}}
    invoked = {("A", 0): {"s1"}, ("A", 1): {"s1"}, ("A", 2): {"s1"}, ("A", 4): {"s2"}, ("C", 0): {"s1"}}
    counts = tally(a + b + c, shown, invoked)
    s1, s2 = counts[("s1", None)], counts[("s2", None)]
    # s1: shown in A's 5 runs and B's 2; invoked in a0, a1, a2 (shown) and c0 (not shown)
    assert (s1.shown, s1.shown_invoked, s1.invoked) == (7, 3, 4)
    # corrected after: a0 (next is a correction), a2 (the person changed y.py); not a1, c0
    assert s1.edited_after == 2
    # judged: a0 (real error, counts), c0; a1 (transient only) and a2 (aborted) in neither part
    assert (s1.judged, s1.ineffective) == (2, 1)
    assert s1.rates() == {
        "invocation_rate": round(3 / 7, 4),
        "post_use_edit_rate": 0.5,
        "ineffective_rate": 0.5,
    }
    assert s2.rates() == {"invocation_rate": 0.2, "post_use_edit_rate": 0.0, "ineffective_rate": 0.0}


def test_a_run_with_transient_errors_that_ended_in_a_real_one_is_judged():
    runs = [RunRecord("A", "a", 0, transient=True, ended_real=True, real_error=True)]
    counts = tally(runs, {}, {("A", 0): {"s"}})[("s", None)]
    assert (counts.judged, counts.ineffective, counts.shown) == (1, 1, 0)
    assert counts.rates()["invocation_rate"] is None  # never shown: no rate, not 0


def test_weekly_buckets_split_the_counts():
    runs = [RunRecord("A", "a", 0, "2026-01-05T10:00:00Z"), RunRecord("A", "a", 1, "2026-01-12T10:00:00Z")]
    from evolve.metrics.rates import iso_week

    counts = tally(runs, {"A": {"s"}}, {("A", 1): {"s"}}, bucket=iso_week)
    assert counts[("s", "2026-W02")].shown == 1 and counts[("s", "2026-W02")].invoked == 0
    assert counts[("s", "2026-W03")].rates()["invocation_rate"] == 1.0


def _line(**fields) -> str:
    return json.dumps(fields) + "\n"


def _transcript(path: Path, session: str, start: float, runs: list[list[dict]]) -> None:
    lines, t = [], start
    for events in runs:
        for event in events:
            t += 1
            lines.append(_line(session=session, ts=iso(t), **event))
    path.write_text("".join(lines))


def test_rates_from_state_db_with_tool_use_id_dedup(evolve_home, capsys):
    agent = make_agent("demo")
    home = Home.resolve()
    now = time.time()
    start = now - 3600
    s1 = evolve_home.parent / "s1.jsonl"
    _transcript(
        s1,
        "S1",
        start,
        [
            [
                {"type": "user", "text": "build the parser"},
                {"type": "skill", "name": "s1", "call_id": "c1"},
                {"type": "tool_call", "tool": "Write", "call_id": "w1", "input": {"file_path": "x.py"}},
                {
                    "type": "tool_result",
                    "call_id": "w1",
                    "error": True,
                    "output": "SyntaxError: invalid syntax",
                },
            ],
            [
                {"type": "user", "text": "that's wrong, fix it"},
                {"type": "skill", "name": "s1", "call_id": "c2"},
                {"type": "tool_call", "tool": "Bash", "call_id": "b1", "input": {"command": "pytest"}},
                {
                    "type": "tool_result",
                    "call_id": "b1",
                    "error": True,
                    "transient": True,
                    "output": "connection reset by peer",
                },
                {"type": "assistant", "text": "the network failed; tests pass locally"},
            ],
            [
                {"type": "user", "text": "now add tests"},
                {"type": "skill", "name": "s1", "call_id": "c3"},
                {"type": "interrupt", "text": "[Request interrupted by user]"},
            ],
            [
                {"type": "user", "text": "please continue with the docs"},
                {"type": "tool_call", "tool": "Write", "call_id": "w2", "input": {"file_path": "docs.md"}},
                {"type": "tool_result", "call_id": "w2", "output": "ok"},
            ],
            [
                {"type": "user", "text": "add a changelog"},
                {"type": "skill", "name": "s2", "call_id": "c4"},
                {"type": "assistant", "text": "done"},
            ],
        ],
    )
    s2 = evolve_home.parent / "s2.jsonl"
    _transcript(
        s2,
        "S2",
        start + 100,
        [[{"type": "user", "text": "hello"}], [{"type": "user", "text": "what does the parser do"}]],
    )
    conn = ledger.connect(home.state_db)
    store_impressions(conn, "demo", "S1", ["s1", "s2"], start)
    store_impressions(conn, "demo", "S1", ["s1"], start + 5)  # a resumed session: still one each
    store_impressions(conn, "demo", "S2", ["s1"], start + 100)
    # the PostToolUse hook reports c1 before the transcript is observed
    spool.append(
        home.spool_dir,
        {
            "event": "skill",
            "agent": "demo",
            "skill": "s1",
            "tool_use_id": "c1",
            "session_id": "S1",
            "at": start + 2,
        },
    )
    assert drain_pending(conn, home) == {"invocation": 1}
    observe.observe_file(conn, "demo", s1, "generic", now)
    observe.observe_file(conn, "demo", s2, "generic", now)
    # the Python API: a read without a run index, placed in S2's second run; one in no run
    assert record_skill_read(conn, "demo", "s1", "S2", at=start + 104)
    assert record_skill_read(conn, "demo", "s1", "S3", tool_use_id="api-1", at=start + 200)
    assert not record_skill_read(conn, "demo", "s1", "S3", tool_use_id="api-1", at=start + 201)

    usage = skill_usage(conn, "demo", now=now)
    one, two = usage["s1"], usage["s2"]
    assert (one["impressions"], one["invocations"]) == (2, 5)  # c1 counted once
    assert (one["runs_shown"], one["runs_invoked"]) == (7, 4)
    assert one["invocation_rate"] == round(4 / 7, 4)
    assert one["post_use_edit_rate"] == 0.25  # run 0 of S1: the next request corrects it
    assert one["ineffective_rate"] == 0.5  # run 0 (real error) of S1 and S2's read; not 1, 2
    assert one["last_used_at"] == pytest.approx(start + 200, abs=2)  # when used, not when observed
    assert (two["impressions"], two["invocations"], two["runs_shown"]) == (1, 1, 5)
    assert (two["invocation_rate"], two["post_use_edit_rate"], two["ineffective_rate"]) == (0.2, 0.0, 0.0)
    ids = [r[0] for r in conn.execute("SELECT run_idx FROM invocations WHERE tool_use_id = 'c1'")]
    assert ids == [0]  # the hook's row was placed in its run when the transcript arrived
    # a window that starts after the runs: nothing to rate, but the last use is still known
    later = skill_usage(conn, "demo", now=now + 200 * 86_400)["s1"]
    assert (later["invocations"], later["runs_shown"], later["invocation_rate"]) == (0, 0, None)
    assert later["last_used_at"] == pytest.approx(start + 200, abs=2) and later["window_days"] == 180
    conn.close()
    # `evolve skills`: SHOWN and USED both count runs, so USE% is USED / SHOWN (ecosystem review:
    # SHOWN counted sessions, 2 here, beside a rate over runs)
    for name in ("s1", "s2"):
        write_skill(agent.path, name)
    capsys.readouterr()
    assert main(["skills", "demo"]) == 0
    [row] = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("s1 ")]
    assert row[:6] == ["s1", "ok", "7", "4", "57%", "25%"]


def test_skills_json_has_every_key_and_null_rates(evolve_home, capsys):

    agent = make_agent("demo")
    evolve_commit(agent, {"skills/tidy/SKILL.md": skill_text("tidy").encode()})
    assert main(["skills", "demo", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    for key in (
        "name",
        "description",
        "impressions",
        "invocations",
        "invocation_rate",
        "post_use_edit_rate",
        "ineffective_rate",
        "last_used_at",
        "created_at",
        "updated_at",
        "patch_count",
        "pinned",
        "valid",
        "problems",
        "path",
    ):
        assert key in record, key
    assert list(record) == list(KEYS)
    assert record["invocation_rate"] is None and record["ineffective_rate"] is None
    assert record["impressions"] == 0 and record["window_days"] == 180
    assert main(["skills", "demo", "tidy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "tidy"
    assert main(["skills", "demo"]) == 0
    assert "rates over the last 180 days" in capsys.readouterr().out


def test_prune_state_deletes_only_old_run_data(evolve_home):
    conn = ledger.connect(Home.resolve().state_db)
    now = time.time()
    old, new = now - 200 * 86_400, now - 86_400
    for number, when in enumerate((old, new)):
        conn.execute(
            "INSERT INTO runs (agent, path, session, idx, started_at, facts, observed_at) "
            "VALUES ('a', 'p', 's', ?, ?, '{}', ?)",
            (number, iso(when), now),
        )
        conn.execute(
            "INSERT INTO impressions (agent, skill, session, at) VALUES ('a', 'k', ?, ?)",
            (f"s{number}", when),
        )
        conn.execute("INSERT INTO invocations (agent, skill, source, at) VALUES ('a', 'k', 'x', ?)", (when,))
        conn.execute("INSERT INTO events (agent, kind, at) VALUES ('a', 'e', ?)", (when,))
        conn.execute(
            "INSERT INTO reflections (id, agent, at, outcome) VALUES (?, 'a', ?, 'nothing')",
            (f"r{number}", when),
        )
        ledger.add_context(conn, "a", f"s{number}", when, None, {"self": ["0123456789ab"]})
        conn.execute(
            "INSERT INTO ignored (agent, path, idx, session, kind, lesson, place, how, at) "
            "VALUES ('a', 'p', ?, 's', 'memo', '0123456789ab', 'self', 'correction', ?)",
            (number, when),
        )
    conn.execute(
        "INSERT INTO runs (agent, path, session, idx, facts, observed_at) VALUES ('a', 'p', 's', 9, '{}', ?)",
        (old,),
    )  # no start time: observed_at decides
    conn.execute(
        "INSERT INTO cursors (agent, path, adapter, cursor, updated_at) "
        "VALUES ('a', 'p', 'generic', '{}', ?)",
        (old,),
    )
    deleted = prune_state(conn, now, 180)
    assert deleted == {
        "runs": 2,
        "impressions": 1,
        "memo_impressions": 1,
        "session_starts": 1,
        "ignored": 1,
        "invocations": 1,
        "events": 1,
        "cycles": 0,
    }
    for table in (
        "runs",
        "impressions",
        "memo_impressions",
        "session_starts",
        "ignored",
        "invocations",
        "events",
    ):
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 1, table  # noqa: S608
    assert conn.execute("SELECT COUNT(*) FROM reflections").fetchone()[0] == 2  # the report's anchors
    assert conn.execute("SELECT COUNT(*) FROM cursors").fetchone()[0] == 1  # never re-read old runs
    conn.close()


def test_bundle_skill_line_carries_the_rates(evolve_home):
    from evolve.reflect.bundle import build_bundle

    agent = make_agent("demo")
    evolve_commit(agent, {"skills/tidy/SKILL.md": skill_text("tidy").encode()})
    conn = ledger.connect(Home.resolve().state_db)
    now = time.time()
    conn.execute(
        "INSERT INTO runs (agent, path, session, idx, started_at, facts, observed_at) "
        "VALUES ('demo', 'p', 'S', 0, ?, '{\"errors\": 1, \"ended_in_error\": true}', ?)",
        (iso(now - 60), now),
    )
    store_impressions(conn, "demo", "S", ["tidy"], now - 60)
    record_skill_read(conn, "demo", "tidy", "S", run_idx=0, at=now - 30)
    bundle = build_bundle(conn, agent, now=now)
    line = next(line for line in bundle.text.splitlines() if line.startswith("- tidy:"))
    assert "used in 100% of the runs it was shown in" in line
    assert "100% of its uses ended in a real error" in line
    assert bundle.skills[0]["ineffective_rate"] == 1.0
    conn.close()


def test_maintain_prunes_and_refreshes_every_agents_rates_cache(evolve_home):
    from evolve.metrics.usage import maintain

    make_agent("demo")
    home = Home.resolve()
    conn = ledger.connect(home.state_db)
    now = time.time()
    store_impressions(conn, "demo", "S", ["tidy"], now - 10)
    store_impressions(conn, "demo", "old", ["tidy"], now - 400 * 86_400)
    result = maintain(conn, home, now)
    assert result == {
        "deleted": {
            "runs": 0,
            "impressions": 1,
            "memo_impressions": 0,
            "session_starts": 0,
            "ignored": 0,
            "invocations": 0,
            "events": 0,
            "cycles": 0,
        },
        "refreshed": ["demo"],
    }
    cached = json.loads(home.rates_cache("demo").read_text())
    assert cached["skills"] == {"tidy": [1, 0, None]}
    conn.close()
