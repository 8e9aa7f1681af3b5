"""What the hearing tests share: the agent's usual words before a message, and hearing one after them."""

from __future__ import annotations

from evolve.transcripts.hearing import Heard, hear
from evolve.transcripts.lexicons import load_lexicons

# What the agent said before the person's words, unless a test says otherwise: it claims done.
DONE = "Done: I renamed the function and the tests pass now."
# The agent asking which tool to use: what follows may answer it rather than state a preference.
ASKED_WHICH_TOOL = "Which package manager should I use for the new workspace?"


def heard(text: str, *, first: bool = False, before: str = DONE) -> Heard:
    return hear(load_lexicons(), text, "" if first else before, first=first)


def preference(text: str, before: str = DONE, *, first: bool = False) -> str | None:
    """The cue of the standing preference heard in the message, or None."""
    found = heard(text, first=first, before=before)
    return found.preference_cue if found.preference else None
