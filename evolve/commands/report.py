"""`evolve report`: did learning help? Text, JSON, or one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

from evolve.commands.output import emit_json, say
from evolve.errors import UserError
from evolve.home import Home
from evolve.workspace.agent import Agent


def report(
    home: Home, name: str, html: str | None = None, days: float | None = None, as_json: bool = False
) -> int:
    from evolve.metrics.report import build, text_summary
    from evolve.metrics.usage import refresh_rates
    from evolve.observe.adherence import judge
    from evolve.observe.records import drain_pending
    from evolve.store import ledger

    agent = Agent.open(name, home)
    with ledger.opened(home.state_db) as conn:
        drain_pending(conn, home)
        judge(conn, agent)  # which runs ignored a lesson: the lessons' part
        refresh_rates(conn, home, name)
        data = build(conn, agent, window_days=days)
    if html:
        from evolve.metrics.report_html import render

        target = Path(html).expanduser()
        try:
            target.write_text(render(data, agent.memo_to_parse()), encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}; pick another path") from None
        data["html"] = str(target.absolute())
    if as_json:
        emit_json(data)
    else:
        say(text_summary(data))
        if html:
            say(f"\nwritten: {data['html']} (open it in a browser)")
    return 0
