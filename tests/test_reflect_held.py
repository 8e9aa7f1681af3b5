"""`evolve reflect` while a person's git work holds the agent, and a dry run whose model call fails.

Newcomer findings 4 and 5, red team C3: during a merge (or a rebase, cherry-pick or revert
in progress, or with conflict markers committed past the pre-commit hook) a reflection
stops with exit 75 and the command that ends the hold, forced or not, and never offers
`--force`; `evolve status` says what holds the agent. A dry run whose model call fails says
so and exits 1.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from evolve.cli import main
from evolve.errors import EXIT_BUSY, EXIT_USER
from evolve.home import Home
from evolve.store import ledger
from tests import people
from tests.helpers import git_out
from tests.people import memo, person

agent, ans = people.agent, people.ans  # the people fixtures

ABORT = {
    "merge": "git merge --abort",
    "cherry-pick": "git cherry-pick --abort",
    "revert": "git revert --abort",
    "rebase": "git rebase --abort",
    "git am": "git am --abort",  # found by the attack on the fixed main: it said `git rebase --abort`
}


def edit_memo(agent, old: str, new: str, message: str) -> str:
    path = agent.path / "memo.md"
    path.write_text(path.read_text().replace(old, new))
    assert person(agent, "commit", "-qam", message).returncode == 0
    return git_out(agent.path, "rev-parse", "HEAD")


def start(operation: str, agent) -> None:
    """Leave `operation` stopped on a conflict in memo.md, as a person's terminal would."""
    edit_memo(agent, "- s1", "- base rule", "base")
    if operation == "revert":
        first = edit_memo(agent, "- base rule", "- rule two", "two")
        edit_memo(agent, "- rule two", "- rule three", "three")
        done = person(agent, "revert", "--no-edit", first)
    else:
        person(agent, "switch", "-qc", "side")
        side = edit_memo(agent, "- base rule", "- the side's rule", "side")
        person(agent, "switch", "-q", "main")
        edit_memo(agent, "- base rule", "- main's rule", "main")
        if operation == "merge":
            done = person(agent, "merge", "side")
        elif operation == "cherry-pick":
            done = person(agent, "cherry-pick", side)
        elif operation == "git am":
            patch = person(agent, "format-patch", "-1", "--stdout", side).stdout
            done = subprocess.run(["git", "am"], cwd=agent.path, input=patch, capture_output=True, text=True)
        else:
            person(agent, "switch", "-q", "side")
            done = person(agent, "rebase", "main")
    assert done.returncode != 0, done.stdout + done.stderr  # stopped on the conflict


@pytest.mark.parametrize("operation", ["merge", "cherry-pick", "revert", "rebase", "git am"])
def test_reflect_during_a_git_operation_exits_75_with_its_abort_and_never_offers_force(
    operation, agent, ans, capsys
):
    ans(memo("strategies", "- s1"))
    start(operation, agent)
    head = git_out(agent.path, "rev-parse", "HEAD")
    with ledger.opened(Home.resolve().state_db) as conn:  # a session happened: there is news
        ledger.mark_dirty(conn, "a")
    for args in ([], ["--force"], ["--dry-run"], ["--force", "--dry-run"]):
        assert main(["reflect", "a", *args]) == EXIT_BUSY, args
        captured = capsys.readouterr()
        assert ABORT[operation] in captured.err and "--force" not in captured.err + captured.out, args
    assert git_out(agent.path, "rev-parse", "HEAD") == head
    assert not ans.api.requests or all("<<<<<<<" not in json.dumps(r.body) for r in ans.api.requests)

    assert main(["status", "--json"]) == 0
    [held] = [a["held"] for a in json.loads(capsys.readouterr().out)["agents"]]
    assert held["what"] == f"a {operation}" and ABORT[operation] in held["reason"]
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("a "))
    assert f"held by a {operation}" in row and ABORT[operation] in out
    assert row.rstrip().endswith(f"held by a {operation}")  # once: not "held by …, held"


def test_conflict_markers_committed_past_the_hook_hold_the_agent_until_resolved(agent, ans, capsys):
    ans(memo("strategies", "- s1"))
    start("merge", agent)
    assert person(agent, "commit", "-qam", "merged, sort of", "--no-verify").returncode == 0  # red team C3
    assert "<<<<<<<" in git_out(agent.path, "show", "HEAD:memo.md")
    for args in ([], ["--force"]):
        ans.api.reply_tool({"summary": "more", "operations": [memo("self", "- x")]})
        assert main(["reflect", "a", *args]) == EXIT_BUSY
        err = capsys.readouterr().err
        assert "memo.md holds merge conflict markers" in err and "resolve them and commit" in err
        assert "--force" not in err
    assert main(["status", "--json"]) == 0
    [held] = [a["held"] for a in json.loads(capsys.readouterr().out)["agents"]]
    assert held["what"] == "conflict markers in memo.md"

    text = (agent.path / "memo.md").read_text()
    resolved = "\n".join(
        line for line in text.splitlines() if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))
    )
    (agent.path / "memo.md").write_text(resolved + "\n")
    assert person(agent, "commit", "-qam", "resolved").returncode == 0
    code, out = ans(memo("self", "- x"))
    assert code == 0 and "landed: update_memo self" in out


def test_a_dry_run_whose_model_call_fails_says_so_and_exits_1(agent, fake_messages_api, capsys):
    fake_messages_api.reply_error(529, "Overloaded")
    assert main(["reflect", "a", "--force", "--dry-run"]) == EXIT_USER
    out = capsys.readouterr().out
    assert "the model call failed: the model API is overloaded" in out
    assert out.rstrip().endswith("(dry run: nothing was changed)")
    fake_messages_api.reply_error(529, "Overloaded")
    assert main(["reflect", "a", "--force", "--dry-run", "--json"]) == EXIT_USER
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "failed" and data["reason"].startswith("the model API is overloaded")
    assert "bundle_text" in data  # still the preview of what the model would have seen
    with ledger.opened(Home.resolve().state_db) as conn:
        assert ledger.last_failure(conn, "a") is None  # a dry run records nothing
