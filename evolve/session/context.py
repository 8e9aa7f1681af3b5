"""The memo as a new session sees it: the one renderer, for the hook and `evolve prompt`.

On the session-start hot path: the standard library (os), evolve.store.files, evolve.workspace.memo and
conflicts (git only for a memo that could hold short conflict markers). Every section
with content is shown, in the memo's order, the person's own sections and any text above
the first section included: what a person wrote for the agent is never silently dropped.
`memo_view` also says which bullets (lessons) made it into the text whole: what the
session's context carried, recorded with its impressions.
"""

from __future__ import annotations

import os

from evolve.regular import open_regular, read_regular
from evolve.workspace import conflicts, memo

MEMO_TITLE = "# Memo (what I learned in earlier sessions)"
MEMO_CAP = memo.MEMO_CAP  # bytes of memo.md a session reads
DEFAULT_PROMPT_CHARS = 8000  # = config.LimitsConfig (a test checks): no TOML parse when unset
DEFAULT_BODY_TOKENS = 5000  # = config.LimitsConfig.skill_body_tokens
_LIMIT_KEYS = (b"prompt_chars", b"skill_body_tokens")


def limits(home_config: str, agent_config: str) -> tuple[int, int]:
    """(prompt_chars, skill_body_tokens); config files are parsed only when they set one.

    evolve.config (tomllib, eight dataclasses) costs as much as the rest of the hook.
    """
    linked = os.path.islink(agent_config)  # noqa: PTH114 - never read through a link (it may leave the repo)
    files: list[str | None] = [home_config, None if linked else agent_config]
    found = False
    for at, name in enumerate(files):
        try:
            data = read_regular(name) if name else b""  # a FIFO here would hold up the session
        except OSError:
            files[at] = None  # unreadable: its defaults (config.load would refuse it)
            continue
        found = found or any(key in data for key in _LIMIT_KEYS)
    if not found:
        return DEFAULT_PROMPT_CHARS, DEFAULT_BODY_TOKENS
    from pathlib import Path

    from evolve import config as config_mod

    configured = config_mod.load(*(Path(name) if name else None for name in files)).limits
    return configured.prompt_chars, configured.skill_body_tokens


def read_memo(memo_path: str | os.PathLike[str], room: int) -> str | None:
    """What a session can show of memo.md ("" when absent, a link or no file); None: over MEMO_CAP.

    The one reader of `evolve prompt`, a linked session and a plugin's, which showed one memo
    three ways. A memo over MEMO_CAP is a log appended by mistake (300 MB held the
    session-start hook 20 s): left out, by its size. Of the rest only what can show in `room`
    is read, decoded and scanned: the hook stays fast for a memo of 1 MB too. A byte that is
    not UTF-8 (an editor's Latin-1) is replaced, never the whole memo dropped. Never read
    through a link: it may lead out of the repository.
    """
    if os.path.islink(memo_path):  # noqa: PTH114 - no pathlib on the hot path
        return ""
    try:
        # a FIFO: no wait
        with open_regular(os.fspath(memo_path), encoding="utf-8", errors="replace") as handle:
            if os.fstat(handle.fileno()).st_size > MEMO_CAP:
                return None
            return handle.read(room * 4 + 4096)  # a longer memo is cut anyway
    except OSError:
        return ""


def memo_view(
    memo_text: str | None, room: int, memo_path: str | os.PathLike[str]
) -> tuple[str, dict[str, list[str]]]:
    """The memo as a session sees it, and the ids of the bullets it shows whole, by section key.

    The text: the memo's sections that hold anything, under one title, cut (and said so)
    beyond `room`; a memo holding a merge's conflict markers, or over MEMO_CAP (`memo_text`
    None), is left out with a note (the agent would read both sides, or a log). One scan of
    the memo for both: the session-start hook records the ids. A bullet the budget cut, or a
    memo left out, is not shown: only lessons the session could read count as in its context.
    """
    if memo_text is None:  # read_memo: over MEMO_CAP
        size = f"is over {MEMO_CAP >> 20} MB: no memo is that long"
        note = f"{MEMO_TITLE}\n\n(left out: {os.fspath(memo_path)} {size})"
        return (note if len(note) <= room else ""), {}
    folder = os.path.dirname(memo_path)  # noqa: PTH120 - no pathlib on the hot path
    if conflicts.conflicted(folder, {memo.MEMO_FILE: memo_text}):
        note = f"{MEMO_TITLE}\n\n(left out: {os.fspath(memo_path)} holds unresolved merge conflict markers)"
        return (note if len(note) <= room else ""), {}
    parts = []
    found = memo.sections(memo_text)
    preamble = memo_text[: found[0].line_start] if found else memo_text
    lines = preamble.strip().split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]  # the memo's own title: ours replaces it
    if "\n".join(lines).strip():
        parts.append("\n".join(lines).strip())
    bullets: dict[str, list[str]] = {}
    keys = {heading: key for key, heading in memo.HEADINGS.items()}
    for section in found:
        content = memo_text[section.content_start : section.content_end].strip()
        if content:
            parts.append(f"## {section.heading}\n\n{content}")
        key = keys.get(section.heading)
        if key is not None and key not in bullets:
            bullets[key] = memo.bullets(content)
    if not parts:
        return "", {}  # headings only: nothing learned yet
    text = MEMO_TITLE + "\n\n" + "\n\n".join(parts)
    text = text.replace("\r\n", "\n")
    if len(text) > room:
        note = f"\n… (cut to fit the prompt budget; the whole memo is in {os.fspath(memo_path)})"
        text = text[: max(0, room - len(note))].rstrip() + note
        whole = {key: {memo.normalise(b) for b in items} for key, items in bullets.items()}
        bullets = {  # what is left of each section: its bullets the cut text holds whole
            key: [b for b in items if memo.normalise(b) in whole.get(key, ())]
            for key, items in memo.section_bullets(text).items()
        }
    ids = {key: list(dict.fromkeys(memo.lesson_id(b) for b in items)) for key, items in bullets.items()}
    return text, {key: found for key, found in ids.items() if found}
