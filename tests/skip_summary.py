"""Why tests were skipped, said at the end of every run (`make test`), a line per reason.

Without it a run ends with "40 skipped" and nothing says that most need `../shared`'s data
(or root, or chromium); `pytest -rs` still names each test.
"""

from __future__ import annotations

from collections import Counter


def pytest_terminal_summary(terminalreporter) -> None:
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped or "s" in (terminalreporter.config.option.reportchars or ""):
        return  # none, or -rs lists them already
    reasons = Counter(_reason(report) for report in skipped)
    terminalreporter.write_sep("-", f"{len(skipped)} skipped, and why (`pytest -rs` names each test)")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:5d}  {reason}")


def _reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")
