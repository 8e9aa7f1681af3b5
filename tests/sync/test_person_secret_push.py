"""A secret a person pastes into the memo or a skill is named, and not pushed without their word.

Red team B6: evolve committed the person's memo edit (plumbing: no pre-commit hook) and the
sync pushed the token to the server with no warning. Now the sync holds the push, says
which file, line and rule (never the secret), and `evolve sync --push-anyway NAME` pushes
it as it is; the person's text is never rewritten.
"""

from __future__ import annotations

import pytest

from evolve.errors import EXIT_USER
from evolve.sync.run import sync
from tests.sync_helpers import server_fsck

TOKEN = "ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789"


@pytest.fixture
def alone(machines, git_server):
    a, _b = machines
    a.create(git_server.url())
    return a, git_server


def server_memo(server) -> str:
    return server.git("agent", "show", "main:memo.md")


def test_a_pasted_token_holds_the_push_until_the_person_says_so(alone):
    a, server = alone
    a.add_to_memo(f"- release token is {TOKEN}")
    mine = a.read("memo.md")
    number = mine.splitlines().index(f"- release token is {TOKEN}") + 1
    code, out = a.sync()
    assert code == EXIT_USER
    assert f"a: refused: memo.md line {number} holds what looks like a secret (github-token)" in out, out
    assert "evolve sync --push-anyway a" in out and TOKEN not in out
    assert TOKEN not in server_memo(server)  # nothing reached the server
    assert a.read("memo.md") == mine and TOKEN in a.out("show", "main:memo.md")  # committed as written
    assert "Evolve-Kind: human_edit" in a.out("log", "-1", "--format=%B")
    assert sync(a.agent, push_first=True).state == "refused"  # the watcher's quick push too
    code, status, _err = a.evolve("status")
    assert f"memo.md line {number} holds what looks like a secret" in status and TOKEN not in status

    code, out, _err = a.evolve("sync", "--push-anyway", "a")
    assert code == 0, out
    assert TOKEN in server_memo(server)
    assert a.sync()[0] == 0  # the server has it: nothing holds the next sync
    server_fsck(server)


def test_a_secret_in_any_commit_holds_the_push_until_it_is_out_of_the_history(alone):
    a, server = alone
    a.write_skill("deploy", f"- Deploy with `gh release create` (token {TOKEN}).\n")
    code, out = a.sync()
    assert code == EXIT_USER and "skills/deploy/SKILL.md line 6" in out and "git commit --amend -a" in out
    a.write_skill("deploy", "- Deploy with `gh release create` (the token is in the vault).\n")
    code, out = a.sync()  # gone from the tip, still in the commit before: a push would carry it
    assert code == EXIT_USER and "skills/deploy/SKILL.md line 6" in out, out
    a.git("reset", "-q", "--soft", "HEAD~2")  # the person takes it out of what was not pushed yet
    a.commit("deploy skill, the token in the vault")
    code, out = a.sync()
    assert code == 0, out
    assert "vault" in server.git("agent", "show", "main:skills/deploy/SKILL.md")
    assert TOKEN not in server.git("agent", "log", "-p", "main")  # no pushed commit holds it


def test_a_token_in_a_comment_of_agent_toml_holds_the_push_too(alone):
    """Found by the attack on the fixed main: a token noted in agent.toml was pushed with no word.

    agent.toml travels to the server like the memo (`# deploy token …`).
    """
    a, server = alone
    toml = a.agent.path / "agent.toml"
    toml.write_text(toml.read_text() + f"\n# deploy token {TOKEN}\n")
    code, out = a.sync()
    assert code == EXIT_USER and "a: refused: agent.toml line" in out and TOKEN not in out, out
    assert TOKEN not in server.git("agent", "show", "main:agent.toml")
    code, out, _err = a.evolve("sync", "--push-anyway", "a")
    assert code == 0 and TOKEN in server.git("agent", "show", "main:agent.toml"), out


def test_a_token_in_a_persons_commit_message_holds_the_push_too(alone):
    """Found by the attack on the fixed main: a message is the person's text, pushed as well."""
    a, server = alone
    a.add_to_memo("- A plain rule.")
    a.commit(f"rule; deploy with token {TOKEN}")
    code, out = a.sync()
    assert code == EXIT_USER and "a: refused: the message of commit " in out and TOKEN not in out, out
    assert "(github-token)" in out and TOKEN not in server.git("agent", "log", "main")
    assert a.git("commit", "-q", "--amend", "-m", "rule").returncode == 0  # the advice: amend it
    code, out = a.sync()
    assert code == 0, out
    assert "A plain rule." in server_memo(server)


def test_push_anyway_takes_one_agent(alone):
    a, _server = alone
    code, _out, err = a.evolve("sync", "--push-anyway")
    assert code == EXIT_USER and "--push-anyway takes exactly one agent" in err
