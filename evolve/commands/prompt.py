"""`evolve prompt`: what the agent sees at the start of a session (memo + skill index).

A reading command: a preview records no impression (the shown counts and rates stay the
sessions'); `--session ID` records them for that session, as the hooks do, and `--record`
for a new one.
"""

from __future__ import annotations

import sys

from evolve.home import Home


def prompt(
    home: Home, name: str, session: str | None = None, record: bool = False, as_json: bool = False
) -> int:
    from evolve.session.prompt import render

    injection = render(home, name, session=session, record=record or bool(session))
    if as_json:
        import json

        data = {"agent": name, **injection.to_dict()}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(injection.text)
    return 0
