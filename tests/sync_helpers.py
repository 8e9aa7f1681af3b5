"""Machines for the sync tests: one evolve home each, its agent, its person, its reflections.

A `Machine` runs the real CLI in-process (`evolve --home H …`), reflects through the real
anthropic SDK against the shared fake Messages API, and lets its person edit, commit and
revert in the agent's repository with plain git. `fsck` checks the repository strictly.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from evolve.cli import main
from evolve.home import Home
from evolve.workspace.agent import Agent
from tests.helpers import skill_text

SELF = "What I do well and where I often stumble"
STRATEGIES = "Strategies for this user and domain"


def memo_op(section: str, content: str) -> dict:
    return {"op": "update_memo", "section": section, "content": content}


def create_op(name: str, body: str, description: str = "Use when testing the sync.") -> dict:
    return {"op": "create_skill", "name": name, "description": description, "body": body}


class Machine:
    """One machine: an evolve home with the agent `name`, driven like its person drives it."""

    def __init__(self, root: Path, api, capsys, name: str = "a", person: str = "Person") -> None:
        self.root, self.api, self.capsys, self.name, self.person_name = root, api, capsys, name, person
        root.mkdir(parents=True, exist_ok=True)
        (root / "config.toml").write_text(
            f'[model]\nbackend = "anthropic"\nbase_url = "{api.url}"\nmax_retries = 0\n'
        )

    @property
    def home(self) -> Home:
        return Home(self.root)

    @property
    def agent(self) -> Agent:
        return Agent.open(self.name, self.home)

    @property
    def path(self) -> Path:
        return self.home.agent_dir(self.name)

    def evolve(self, *args: str) -> tuple[int, str, str]:
        """`evolve --home H args…` → (exit code, stdout, stderr)."""
        self.capsys.readouterr()
        code = main(["--home", str(self.root), *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def ok(self, *args: str) -> str:
        code, out, err = self.evolve(*args)
        assert code == 0, (args, code, out, err)
        return out

    def sync(self, *args: str) -> tuple[int, str]:
        code, out, err = self.evolve("sync", *args)
        return code, out + err

    def sync_json(self) -> dict:
        code, out, err = self.evolve("sync", self.name, "--json")
        (result,) = json.loads(out)
        return result

    def reflect(self, *operations: dict, summary: str = "lessons") -> dict:
        """One reflection answered with `operations` (the real SDK, the fake API)."""
        self.api.reply_tool({"summary": summary, "operations": list(operations)})
        code, out, err = self.evolve("reflect", self.name, "--force", "--json")
        assert code == 0, (out, err)
        return json.loads(out)

    def join(self, url: str) -> None:
        self.ok("init", self.name, "--from", url)
        self.set_person()

    def create(self, url: str | None = None) -> None:
        self.ok("init", self.name)
        self.set_person()
        if url:
            self.ok("remote", self.name, url)

    def set_person(self) -> None:
        self.git("config", "user.name", self.person_name)
        self.git("config", "user.email", f"{self.person_name.lower()}@example.test")

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """The person at their terminal, in the agent's repository."""
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True)
        if check:
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    def out(self, *args: str) -> str:
        return self.git(*args).stdout.strip()

    def write(self, path: str, text: str) -> None:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def read(self, path: str) -> str:
        return (self.path / path).read_text()

    def add_to_memo(self, line: str, section: str = STRATEGIES) -> None:
        """The person types `line` under a memo heading (not committed)."""
        self.write("memo.md", self.read("memo.md").replace(f"## {section}\n", f"## {section}\n\n{line}\n"))

    def person_rule(self, line: str, section: str = STRATEGIES) -> None:
        """The person adds a memo line and commits it, as they would by hand."""
        self.add_to_memo(line, section)
        self.commit(line[:40])

    def reword(self, old: str, new: str, message: str = "my wording") -> None:
        """The person changes a line of the memo and commits it (a change, not an addition)."""
        self.write("memo.md", self.read("memo.md").replace(old, new))
        self.commit(message)

    def commit(self, message: str = "my edit") -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def write_skill(self, name: str, body: str) -> None:
        self.write(f"skills/{name}/SKILL.md", skill_text(name, body=body))

    def head(self) -> str:
        return self.out("rev-parse", "HEAD")

    def fsck(self) -> None:
        proc = self.git("fsck", "--strict", "--no-dangling", check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert self.out("status", "--porcelain") == "", self.out("status", "--porcelain")

    def subjects(self, rev: str = "HEAD") -> list[str]:
        return self.out("log", "--format=%s", rev).splitlines()


class Clone:
    """A team member (or an attacker) with a plain clone of the server."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        subprocess.run(["git", "clone", "-q", url, str(path)], check=True)
        self.git("config", "user.name", "Team")
        self.git("config", "user.email", "team@example.test")

    def git(self, *args: str, input: str | None = None) -> str:
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True, input=input)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc.stdout.strip()

    def merge(self, branch: str, style: str) -> None:
        """Merge `proposals/…` into main the way a server's button does, push, delete the branch."""
        self.git("fetch", "-q", "origin")
        if style == "merge":
            self.git("merge", "-q", "--no-ff", "-m", f"Merge {branch}", f"origin/{branch}")
        elif style == "fast-forward":  # the branch is left on the server, nothing of its own now
            self.git("merge", "-q", "--ff-only", f"origin/{branch}")
            self.git("push", "-q", "origin", "main")
            return
        elif style == "squash":
            self.git("merge", "-q", "--squash", f"origin/{branch}")
            self.git("commit", "-q", "-m", "Squashed: a lesson reviewed by the team (#7)")
        else:  # rebase: the proposal's commits re-made on main (new shas, the same messages)
            self.git("cherry-pick", f"origin/{branch}")
        self.git("push", "-q", "origin", "main", f":{branch}")

    def delete(self, branch: str) -> None:
        self.git("push", "-q", "origin", f":{branch}")


def a_line_on_both(a: Machine, b: Machine, line: str) -> None:
    """`line` in the memo on the server and on both machines (for each to change it its way)."""
    a.person_rule(line)
    assert a.sync()[0] == 0 and b.sync()[0] == 0


def review_on(machine: Machine, url: str) -> None:
    """The agent on the server with `review = true`: every lesson waits on a proposal branch."""
    machine.create(url)
    machine.write("agent.toml", machine.read("agent.toml").replace("review = false", "review = true"))
    machine.commit("every lesson waits for review")


def only_proposal(machine: Machine) -> str:
    (branch,) = machine.agent.repo.branches("proposals/")
    return branch


def sh(cwd, *args: str, input: str | None = None, env: dict | None = None) -> str:
    """A command in `cwd` that must succeed; its stdout."""
    proc = subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, input=input, env={**os.environ, **(env or {})}
    )
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout.strip()


def server_fsck(server, name: str = "agent") -> None:
    proc = subprocess.run(["git", "fsck", "--strict"], cwd=server.bare(name), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
