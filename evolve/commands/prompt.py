"""`evolve prompt`: what the agent sees at the start of a session (memo + skill index)."""

from __future__ import annotations

import sys

from evolve.home import Home


def prompt(home: Home, name: str, session: str | None = None, as_json: bool = False) -> int:
    from evolve.session.prompt import render

    injection = render(home, name, session=session)
    if as_json:
        import json

        data = {"agent": name, **injection.to_dict()}
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(injection.text)
    return 0
