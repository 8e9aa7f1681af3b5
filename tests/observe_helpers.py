"""Shared pieces of the observe tests: Claude Code lines shaped like real ones, state.db views."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evolve.observe import ingest as observe
from evolve.store import ledger

AGENT = "demo"
START = datetime(2026, 2, 10, 21, 0, tzinfo=UTC)


def api_error_line(attempt: int, status: int = 529, kind: str = "overloaded_error") -> dict:
    """Claude Code's `system/api_error` retry line (before the common keys are added)."""
    return {
        "type": "system",
        "subtype": "api_error",
        "level": "error",
        "error": {
            "status": status,
            "error": {"type": "error", "error": {"type": kind, "message": kind.replace("_", " ")}},
        },
        "retryInMs": 1000,
        "retryAttempt": attempt,
        "maxRetries": 10,
    }


def assistant_line(block: dict, msg_id: str, request_id: str) -> dict:
    """An assistant line of one content block, as Claude Code logs each (before the common keys)."""
    return {
        "type": "assistant",
        "requestId": request_id,
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [block],
        },
    }


def result_line(tool_id: str, content: str, is_error: bool | None = None, tur=None) -> dict:
    """A user line of one tool result, with Claude Code's `toolUseResult` when given."""
    block: dict = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    line = {"type": "user", "message": {"role": "user", "content": [block]}}
    if tur is not None:
        line["toolUseResult"] = tur
    return line


def synthetic_line(text: str, msg_id: str) -> dict:
    """The assistant line Claude Code writes when the API failed for good."""
    return {
        "type": "assistant",
        "isApiErrorMessage": True,
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": text}],
        },
    }


class Transcript:
    """Claude Code JSONL lines shaped like real ones (one content block per assistant line)."""

    def __init__(
        self, session: str = "5e55a0c1-0000-4000-8000-000000000001", sidechain: bool = False, tag: str = "u"
    ):
        self.session = session
        self.sidechain = sidechain
        self.tag = tag  # keeps uuids and ids unique across transcripts of one test
        self.lines: list[bytes] = []
        self.n = 0
        self.last: str | None = None

    # -- raw lines -------------------------------------------------------------------
    def add(self, obj: dict, parent: str | None | bool = True) -> str:
        self.n += 1
        uuid = f"{self.tag}-{self.n:05d}"
        head = {
            "parentUuid": self.last if parent is True else (parent or None),
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": "/work/project",
            "sessionId": self.session,
            "version": "2.1.38",
        }
        stamp = (START + timedelta(seconds=self.n)).strftime("%Y-%m-%dT%H:%M:%S.123Z")
        line = {**head, **obj, "uuid": uuid, "timestamp": stamp}
        self.lines.append(json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode())
        self.last = uuid
        return uuid

    def raw(self, data: bytes) -> None:
        self.lines.append(data)

    # -- conversation ----------------------------------------------------------------
    def user(self, content, parent: str | None | bool = True, **extra) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra}, parent)

    def text(self, text: str) -> str:
        block = {"type": "text", "text": text}
        return self.add(assistant_line(block, f"msg_{self.tag}{self.n:05d}", f"req_{self.tag}{self.n:05d}"))

    def tool(self, name: str, tool_input: dict) -> str:
        tool_id = f"toolu_{self.tag}{self.n + 1:05d}"
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        self.add(assistant_line(block, f"msg_{self.tag}{self.n:05d}", f"req_{self.tag}{self.n:05d}"))
        return tool_id

    def result(self, tool_id: str, content: str, is_error: bool | None = None, tur=None) -> str:
        return self.add(result_line(tool_id, content, is_error, tur))

    def call(self, name: str, tool_input: dict, output: str = "ok", error: bool = False) -> str:
        tool_id = self.tool(name, tool_input)
        if error:
            self.result(tool_id, output, is_error=True, tur=f"Error: {output}")
        else:
            self.result(tool_id, output)
        return tool_id

    def skill(self, name: str, error: bool = False) -> str:
        tool_id = self.tool("Skill", {"skill": name})
        if error:
            self.result(tool_id, f"Skill {name} failed to load", is_error=True)
        else:
            self.result(tool_id, f"Launching skill: {name}")
            self.user([{"type": "text", "text": f"# {name}\n\nthe skill body"}], isMeta=True)
        return tool_id

    def interrupt(self) -> str:
        return self.user([{"type": "text", "text": "[Request interrupted by user]"}])

    def api_error(self, attempt: int, status: int = 529, kind: str = "overloaded_error") -> str:
        return self.add(api_error_line(attempt, status, kind))

    def synthetic(self, text: str) -> str:
        return self.add(synthetic_line(text, f"synthetic-{self.n}"))

    def run(self, request: str, answer: str = "Done.", parent: str | None | bool = True) -> str:
        """A whole simple run: request, one successful tool call, an answer."""
        self.user(request, parent)
        self.call("Bash", {"command": "ls"}, "a.txt")
        return self.text(answer)

    # -- files -----------------------------------------------------------------------
    def data(self, start: int = 0) -> bytes:
        return b"".join(line + b"\n" for line in self.lines[start:])

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data())
        return path

    def append(self, path: Path, start: int) -> None:
        """Append the lines from index `start` on."""
        with path.open("ab") as handle:
            handle.write(self.data(start))


# -- helpers -----------------------------------------------------------------------------
@pytest.fixture
def conn(tmp_path):
    connection = ledger.connect(tmp_path / "state" / "state.db")
    yield connection
    connection.close()


def observe_paths(conn, *paths: Path, fmt: str = "claude_code", **kwargs):
    return observe.observe(conn, AGENT, [(str(p), fmt) for p in paths], **kwargs)


def stored(conn, path: Path | None = None) -> list[dict]:
    """Stored runs (facts + columns), in index order."""
    query = "SELECT * FROM runs WHERE agent = ?"
    args: list = [AGENT]
    if path is not None:
        query += " AND path = ?"
        args.append(str(path))
    rows = conn.execute(query + " ORDER BY path, idx", args).fetchall()
    return [
        {
            **json.loads(r["facts"]),
            "_idx": r["idx"],
            "_superseded": r["superseded"],
            "_observed_at": r["observed_at"],
            "_complete": r["complete"],
            "_session": r["session"],
        }
        for r in rows
    ]


def facts(runs: list[dict]) -> list[dict]:
    return [{k: v for k, v in run.items() if not k.startswith("_")} for run in runs]


def dirty(conn) -> bool:
    row = ledger.agent_row(conn, AGENT)
    return bool(row and row["dirty"])


def clean(conn) -> None:
    ledger.clear_dirty(conn, AGENT, started=1e12)
    assert not dirty(conn)


def cursor_row(conn, path: Path):
    return conn.execute("SELECT * FROM cursors WHERE agent = ? AND path = ?", (AGENT, str(path))).fetchone()


def invocations(conn) -> list[tuple]:
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT skill, session, run_idx, tool_use_id, source FROM invocations "
            "WHERE agent = ? ORDER BY id",
            (AGENT,),
        ).fetchall()
    ]


def two_runs() -> Transcript:
    t = Transcript()
    t.run("Fix the failing test in parser.py")
    t.run("Now add a changelog entry")
    return t


MANY_RUNS = "9e953218-585f-4692-89df-9e0747a31c68"  # 11 runs, 745 kB
REWOUND = "03eb5929-52b3-4b13-ada3-b93ae35806b8"  # 7 runs, 3 abandoned by a rewind


def real_file(claude_data: Path, session: str) -> Path:
    (path,) = claude_data.rglob(f"*__{session}.jsonl")
    return path
