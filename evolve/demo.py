"""`make demo`: the whole product, in a temporary home (or an empty $EVOLVE_HOME), no API key.

Part 1 is offline, on example transcripts (evolve/examples): a run where the agent recovered
from a real error, a run the user corrected, and a run whose only failures were transient
(which must teach nothing); the offline reflector turns the correction into a memo rule.

Part 2 uses the real `anthropic` backend against a local fake Messages API that serves the
answers a capable model gave to these bundles, recorded in examples/demo/model-answers.json:
no model is called and nothing leaves the machine (the output says so). A skill is created,
listed in the next session, invoked there, measured, patched after the user's correction,
reported on, and the patch is reverted.

`--keep` (`make demo KEEP=1`) leaves the temporary home for a look.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from evolve.cli import main as evolve
from evolve.clock import stamp

EXAMPLES = resources.files("evolve").joinpath("examples")


def step(title: str, *argv: str) -> None:
    sys.stdout.write(f"\n$ evolve {' '.join(argv)}\n# {title}\n")
    sys.stdout.flush()
    code = evolve(list(argv))
    sys.stdout.flush()
    if code != 0:
        raise SystemExit(f"demo step failed with exit code {code}: evolve {' '.join(argv)}")


def show(title: str, path: Path) -> None:
    sys.stdout.write(f"\n$ cat {path.name}\n# {title}\n{path.read_text()}")


def session(name: str, folder: Path) -> Path:
    """A shipped session, stamped as running just now (the report's window is relative)."""
    import time

    lines = [json.loads(line) for line in EXAMPLES.joinpath("demo", name).read_text().splitlines()]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    now = stamp(time.time())
    stamped = [{**line, "ts": now} for line in lines]
    target.write_text("".join(json.dumps(line) + "\n" for line in stamped))
    return target


@contextmanager
def recorded_model() -> Iterator[str]:
    """A Messages API on 127.0.0.1 answering each call with the next recorded answer; its URL."""
    answers = json.loads(EXAMPLES.joinpath("demo", "model-answers.json").read_text())["answers"]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            with lock:
                answer = answers.pop(0) if answers else None
            status, body = (200, _message(request, answer)) if answer else (500, _error("no answer left"))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _message(request: dict, answer: dict) -> dict:
    """A Messages API response whose one block calls the tool the request forces."""
    tool = (request.get("tool_choice") or {}).get("name", "apply_reflection")
    return {
        "id": "msg_demo",
        "type": "message",
        "role": "assistant",
        "model": "recorded-capable-model",
        "content": [{"type": "tool_use", "id": "toolu_demo", "name": tool, "input": answer}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 1500, "output_tokens": 200},
    }


def _error(message: str) -> dict:
    return {"type": "error", "error": {"type": "api_error", "message": message}}


def offline_part(home: Path) -> None:
    os.environ["EVOLVE_MODEL_BACKEND"] = "offline"
    examples = sorted(str(p) for p in EXAMPLES.iterdir() if p.name.endswith(".jsonl"))
    step("create an agent: a git repository holding its skills and memo", "init", "demo")
    step("read the example transcripts: runs and facts, no model", "observe", "demo", *examples)
    step(
        "score each run: a correction and a recovered error qualify; transient errors never do",
        "score",
        "demo",
    )
    step("a background cycle, run by hand: dirty gate, threshold, then one reflection", "cycle", "--now")
    step("every commit, told apart by trailers that carry the evidence", "log", "demo")
    step("the reflection as a diff", "review", "demo", "HEAD")
    show("what the agent sees next session", home / "agents" / "demo" / "memo.md")


def model_part(home: Path, url: str) -> None:
    os.environ["EVOLVE_MODEL_BACKEND"] = "anthropic"
    os.environ["ANTHROPIC_BASE_URL"] = url
    sys.stdout.write(
        "\n# Part 2: a capable model. Its answers to these two bundles were recorded and are served by\n"
        f"# a local fake Messages API at {url} (this process): the real anthropic backend\n"
        "# runs end to end, but no model is called and nothing leaves this machine.\n"
    )
    sessions = home / "demo-sessions"
    step(
        "a new session: the user corrects how release notes are written",
        *("observe", "demo", str(session("session-3.jsonl", sessions))),
    )
    step("reflect: the (recorded) model turns the correction into a skill", "reflect", "demo")
    step(
        "the next session lists the new skill (an impression is recorded)",
        "prompt",
        "demo",
        "--session",
        "demo-s4",
    )
    step(
        "in that session the agent invokes the skill, and the user corrects one thing",
        *("observe", "demo", str(session("session-4.jsonl", sessions))),
    )
    step("measured: shown, used, corrected after use", "skills", "demo")
    step("reflect: the (recorded) model patches the skill", "reflect", "demo")
    step("the patch as a diff", "review", "demo", "HEAD")
    step("did learning help? seven runs are too few to say, and the report says so", "report", "demo")
    step("a lesson you do not want is undone with a revert (and never re-learned)", "revert", "demo", "HEAD")
    skill = home / "agents" / "demo" / "skills" / "write-release-notes" / "SKILL.md"
    show("the skill as it was before the patch", skill)
    step("the skills, with their history from git", "skills", "demo")
    step("nothing new since: the next cycle skips the agent at zero cost", "cycle", "--now")


def run(home: Path) -> None:
    os.environ["EVOLVE_HOME"] = str(home)
    offline_part(home)
    with recorded_model() as url:
        model_part(home, url)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    keep = "--keep" in args
    given = os.environ.get("EVOLVE_HOME")
    if given:  # the person's choice of home: used, never deleted
        home = Path(given).expanduser().absolute()
        if home.exists() and any(home.iterdir()):
            raise SystemExit(
                f"EVOLVE_HOME={home} is not empty; the demo makes its own agent and settings: "
                "point EVOLVE_HOME at a new or empty folder, or unset it"
            )
        run(home)
        sys.stdout.write(f"\ndemo finished; its home is {home} (yours: nothing was deleted).\n")
        return 0
    folder = tempfile.mkdtemp(prefix="evolve-demo-")
    try:
        run(Path(folder) / "home")
    finally:
        if not keep:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
    if keep:
        sys.stdout.write(
            f"\ndemo finished; its home is kept: {folder}/home\n"
            f"look around: `EVOLVE_HOME={folder}/home evolve status`, "
            f"`git -C {folder}/home/agents/demo log`\n"
        )
    else:
        sys.stdout.write("\ndemo finished; its temporary home was removed (`make demo KEEP=1` keeps it).\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
