"""What the hearing tests share: the agent's usual words before a message, and hearing one after them."""

from __future__ import annotations

from evolve.transcripts.hearing import Heard, hear
from evolve.transcripts.lexicons import load_lexicons

# What the agent said before the person's words, unless a test says otherwise: it claims done.
DONE = "Done: I renamed the function and the tests pass now."


def heard(text: str, *, first: bool = False, before: str = DONE) -> Heard:
    return hear(load_lexicons(), text, "" if first else before, first=first)
