"""The documentation cites only what the repository holds (C19: a cited reference was missing)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]
# `path/to/file.md` or `.py` in backticks, or a Markdown link (from the repository, evolve/ or the
# doc's folder); placeholders (<name>, ~, *) are runtime paths and never match
CITED = re.compile(r"`([\w./-]+/[\w.-]+\.(?:md|py))`|\]\(([\w./-]+\.(?:md|py))\)")


def test_every_cited_file_exists():
    missing = []
    for doc in DOCS:
        for match in CITED.finditer(doc.read_text(encoding="utf-8")):
            cited = match.group(1) or match.group(2)
            if not any((base / cited).exists() for base in (ROOT, ROOT / "evolve", doc.parent)):
                missing.append(f"{doc.relative_to(ROOT)}: {cited}")
    assert missing == []
