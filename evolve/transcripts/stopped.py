"""Replies to an agent the person just stopped: a mistake, a go-on, an aside, or a turn.

What says the stop was a mistake, lets the agent go on, or is an aside rather than a turn
(used by hearing's `turned` and `redirects`).

Words as `prose` leaves them (no accents, 间 for 間). Standard library only; every pattern is
a literal alternation, anchored or tried on a window of a few characters (linear time).
"""

from __future__ import annotations

import re

# the person stopped the agent by mistake ("my bad, I hit escape by accident", "par erreur",
# "sem querer", "不小心"): nothing to correct (words as `prose` leaves them: no accents, 间 for 間)
UNMEANT = re.compile(
    r"\b(?:by (?:accident|mistake)|accidentally|my (?:bad|mistake|fault)|wrong key"
    r"|par (?:erreur|accident|megarde)|aus versehen|versehentlich|sin querer|sem querer"
    r"|por (?:error|accidente|equivocacion|engano|acidente)"
    r"|nao (?:era|queria) (?:para )?parar|no queria (?:parar|detener)|случаино|по ошибке)\b"
    r"|不小心|误按|按错|间違え|うっかり"
)
# a statement that lets the stopped agent go on ("the tests pass now, go ahead", "my laptop
# slept, pick up where you left off") or praises its work with no "but" ("this part is done right, now …")
CARRY_ON = re.compile(
    r"\b(?:go ahead|proceed|move on|keep (?:on|working)|pick (?:it )?up|re-?run"
    r"|where you (?:left off|stopped|were))\b"
)
PRAISE = re.compile(
    r"\b(?:(?:is|are|looks?|seems?|sounds?|was|were) (?:\w+ )?(?:fine|good|great|right|correct|perfect)"
    r"|thanks|thank you|awesome|love it|makes sense)\b"
)
BUT = re.compile(r"\bbut\b")


# "if" before a "not" makes it a condition ("if not, …", "si no funciona", "se não for …")
CONDITION = re.compile(r"\b(?:if|si|se|wenn|falls|если|якщо|jeśli|jeżeli|pokud|kalau|jika|nếu|eğer)\W+\Z")
# a person who stopped the agent only to add something ("not sure, but …", "not only …")
# or speaks of themselves ("I'm not at my desk", "I have not read it yet")
ASIDE = re.compile(
    r"(?:not|no) (?:sure|certain|your fault|a big deal|idea|clue|worries|only|just|going|urgent|you)\b"
)
SELF = re.compile(r"\bi(?:'m| am|'ve| have| had| did| do| was)? \Z")
