"""The words a message shares with the agent's: the terms it used, and the one a person rejects.

"not npm" after the agent ran npm, "不用Docker Compose" after it wrote docker-compose.yml: a
rejection counts when it names something the agent just used — a specific word (a tool, a
file, a command), not one every sentence holds. Standard library only (the observer's path).
"""

from __future__ import annotations

import re

from evolve.transcripts.lexicons import Lexicons, prose
from evolve.transcripts.matches import by_kind
from evolve.transcripts.sentences import SENTENCE, Spans, is_question_at, new_work_until
from evolve.transcripts.words import stopwords

# A word, a command, a file name, without the period or colon after it ("with jquery." names
# jquery); a run of non-ASCII letters is a word of its own (CJK runs hold no spaces:
# "现有skill" is two words, so "skill" can be one the agent used)
_TERM = re.compile(r"[a-z0-9_](?:[a-z0-9_./@:+#-]*[a-z0-9_/@+#-])?|[^\x00-\x7f\s\W]+|[^\x00-\x7f\s]+")

_MIN_TERM = 3
_JOINER = re.compile(r"[-._/]")  # what joins the parts of a file name, a path, a compound
# after a "not": "not just", "pas seulement", "nicht nur", "не только", "não só" take the thing in
_INCLUSIVE = re.compile(
    r" (?:just|only|merely|seulement|uniquement|nur|solo|solamente|so|apenas|только|jen|tylko)\b"
)


def rejected(
    lexicons: Lexicons, text: str, words: str, found: Spans, agent_words: str, asked: bool
) -> str | None:
    """A word the person rejects ("not npm") that the agent just used, or None.

    Only the message's opening sentence counts, in a short reply too: further on, "not X"
    is the spec of new work ("…; the scripts should not use npm").
    In the answer to the agent's question only a "not" that opens it objects: further on,
    "no X" is what the answer asks for ("validate the fields, no remembered login").
    """
    if "contrast" not in found and "contrast_before" not in found:
        return None
    if "`" in text:  # the rejected word is often code: read the message with it
        words = prose(text, keep_code=True)
        found = by_kind(lexicons, words, ("contrast", "contrast_before"))
    agent_terms = set(_TERM.findall(agent_words))
    # a thing the agent named inside a compound ("docker-compose.yml", "src/config/settings.py"),
    # but in the opening of a request for new work it says where the work goes ("add a test for
    # the parser, not for the config loader")
    parts = {part for term in agent_terms for part in _JOINER.split(term)} - agent_terms
    new_work = new_work_until(words)
    spans = [(span, "contrast") for span in found.get("contrast", ())]
    spans += [(span, "contrast_before") for span in found.get("contrast_before", ())]
    for (_, start, end), kind in spans:
        if is_question_at(words, start) or start > SENTENCE or asked and start:
            continue  # "should it use X, not Y?" asks
        if kind == "contrast" and _INCLUSIVE.match(words, end):
            continue  # "not just login" takes it in
        if kind == "contrast":
            near = _TERM.findall(words[end : end + 40])[:3]
        else:
            near = _TERM.findall(words[max(0, start - 40) : start])[-3:]
        for term in near:
            named = term in agent_terms or term in parts and start >= new_work
            if named and _specific(term):
                return term
    return None


def shared_term(words: str, agent_words: str) -> str | None:
    """The first specific word of the message that the agent's words hold too."""
    agent_terms = set(_TERM.findall(agent_words))
    return next((t for t in _TERM.findall(words) if t in agent_terms and _specific(t)), None)


def _specific(term: str) -> bool:
    """A word that names something (a tool, a file, a command), not one every sentence has."""
    if len(term) < _MIN_TERM or term.isdigit() or term in _COMMON:
        return False
    return not term.isalpha() or len(term) < 4 or term not in stopwords()


# Three-letter words too common to show what the person rejects (longer ones: stopwords.txt).
_COMMON = frozenset(
    "the and but for nor not yes you your our are was has had how its new now old one two all any "
    "ask can get got let may out own put run see set too use way who why did does file code "
    "les des une pas que qui est sur par pour avec dans der die das und ist ein nicht los las del "
    "que por con una ".split()
)
