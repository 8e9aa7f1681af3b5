"""An example agent on the anthropic SDK that learns from its own use with evolve.

    evolve init helper
    ANTHROPIC_API_KEY=... python examples/anthropic_agent.py --agent helper "Summarise notes.txt"

Two tools: `read_file` (a text file under the current folder) and `read_skill` (one of the
agent's skills, by name). evolve adds the memo and the skill index to the system prompt,
records every turn as a run and each skill read as an invocation; `evolve watch` (or
`evolve cycle`) later turns the runs worth learning from into skills and memo lines.
`--base-url` points the SDK at any server speaking the Messages API (a local one too).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anthropic

from evolve.api import Session, open_agent

BASE_PROMPT = "You are a small command-line assistant. Use the tools when they help; answer briefly."
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a UTF-8 text file under the current folder.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
    {
        "name": "read_skill",
        "description": "Read one of your skills (its SKILL.md) before following it.",
        "input_schema": {
            "type": "object",
            "properties": {"skill": {"type": "string"}},
            "required": ["skill"],
        },
    },
]


def run_tool(session: Session, name: str, tool_input: dict, tool_use_id: str, root: Path) -> tuple[str, bool]:
    """(output, is_error) of one tool call."""
    if name == "read_skill":
        skill = str(tool_input.get("skill", ""))
        path = session.agent.skills_dir / skill / "SKILL.md"
        if "/" in skill or not path.is_file():
            return f"Error: no skill named {skill!r}", True
        session.record_skill_read(skill, tool_use_id=tool_use_id)
        return path.read_text(encoding="utf-8"), False
    if name == "read_file":
        target = (root / str(tool_input.get("path", ""))).resolve()
        if root != target and root not in target.parents:
            return "Error: only files under the current folder can be read", True
        try:
            return target.read_text(encoding="utf-8")[:20_000], False
        except (OSError, UnicodeDecodeError) as exc:
            return f"Error: {exc}", True
    return f"Error: unknown tool {name!r}", True


def answer(
    client: anthropic.Anthropic, session: Session, task: str, model: str, root: Path, max_turns: int = 8
) -> str:
    """The tool loop; the run is recorded after every turn, so a crash loses nothing."""
    system = session.system_prompt(BASE_PROMPT)
    messages: list[dict] = [{"role": "user", "content": task}]
    for _ in range(max_turns):
        response = client.messages.create(
            model=model, max_tokens=1024, system=system, tools=TOOLS, messages=messages
        )  # type: ignore[arg-type]
        messages.append(
            {
                "role": "assistant",
                "content": [block.model_dump(exclude_none=True) for block in response.content],
            }
        )
        calls = [block for block in response.content if block.type == "tool_use"]
        if response.stop_reason != "tool_use" or not calls:
            session.record_run(messages)
            return "".join(block.text for block in response.content if block.type == "text")
        results = []
        for call in calls:
            output, is_error = run_tool(session, call.name, dict(call.input or {}), call.id, root)
            results.append(
                {"type": "tool_result", "tool_use_id": call.id, "content": output, "is_error": is_error}
            )
        messages.append({"role": "user", "content": results})
        session.record_run(messages)
    return f"(stopped after {max_turns} turns)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", help="what to ask the agent")
    parser.add_argument("--agent", default="helper", help="the evolve agent (created if missing)")
    parser.add_argument("--home", help="evolve's home (default: $EVOLVE_HOME or the user data dir)")
    parser.add_argument("--model", help="the model (default: the agent's [model] name)")
    parser.add_argument("--base-url", help="a Messages API server (default: Anthropic)")
    parser.add_argument("--session", help="continue this session id")
    args = parser.parse_args(argv)
    agent = open_agent(args.agent, args.home, create=True)
    session = agent.session(args.session, cwd=str(Path.cwd()))
    client = anthropic.Anthropic(base_url=args.base_url) if args.base_url else anthropic.Anthropic()
    model = args.model or agent.agent.config.model.name
    print(answer(client, session, args.task, model, Path.cwd().resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
