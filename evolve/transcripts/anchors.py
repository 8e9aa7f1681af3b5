"""What a lesson names specifically, and whether a run comes back to that point.

A lesson (a memo bullet, a skill) is ignored when a run whose context carried it repeats
its point: the person corrects the agent, or states the preference, on what the lesson
names, or the real error it covers comes back. The words of a topic ("tests", "release",
the project's name and folder) are in every run of a project, so a match needs the
specific thing the lesson names: a command (`make migrate`), a file or path, a tool, an
error it quotes, a word it rejects ("never npm"). Which counts:

- in the person's words: any anchor of the lesson; a word the lesson rejects in plain
  prose (not as code) only when the run's own calls used it too (the agent did it);
- in a real error: the failing call runs what the lesson rejects, or the error text holds
  what the lesson quotes, or two of the lesson's anchors meet in the call and its error
  (one at least in the error).

The run's project (its folder, each parent, the folder's name) never counts. Pure and
deterministic, standard library only; every pattern is fixed here and runs in linear time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evolve.transcripts.words import stopwords

PERSON_KEYS = ("correction", "preference")
_CODE = re.compile(r"`([^`\n]{1,200})`")
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)")
_QUOTE = re.compile(r"[\"“«「]([^\"”»」\n]{3,300})[\"”»」]")
_RAW = re.compile(r"[\w~./@:+#=-]+")
_NEGATION = re.compile(
    r"\b(?:never|not|don't|don’t|dont|do not|avoid|instead of|rather than|no longer|stop using|without)\b"
)
_TOOL_WORD = re.compile(r"\b([A-Z][A-Za-z]+) tool\b")
_NAME = re.compile(r"[A-Za-z_]+")
TOOLS = frozenset(
    "Bash Read Write Edit MultiEdit NotebookEdit Grep Glob LS WebFetch WebSearch Task Agent Skill "
    "AskUserQuestion TodoWrite shell apply_patch".split()
)
# Words between a negation and what it rejects ("never use the …", "not to run …").
_FILLER = frozenset("a an the to use using run running call calling any this that these those be".split())
# Short words too common to be what a lesson rejects (longer ones: stopwords.txt).
_SHORT_WORDS = frozenset(
    "on in at of by as is it or and for with from if so we you our its can all new old".split()
)
MAX_PHRASE = 12  # tokens of a quoted phrase kept
AFTER_CUE = 4  # tokens after a negation searched for what it rejects
Anchor = str | tuple[str, ...]  # one term, or a phrase of several


def tokens(text: str) -> list[str]:
    """Lower-case words, commands, flags, file names and paths, trailing punctuation dropped."""
    return [token for raw in _RAW.findall(text.lower()) if (token := _token(raw))]


def _token(raw: str) -> str:
    """One lower-case match of _RAW as a token ("" when nothing of it names anything)."""
    if raw.isalnum():
        return raw if len(raw) > 1 else ""
    token = raw.rstrip(".:,;-+#=/").lstrip(":+#=@")
    return token if len(token) > 1 and any(c.isalnum() for c in token) else ""


def strong(token: str, code: bool = False) -> bool:
    """A token that names one thing: a path, a dotted name, a flag, an identifier, letters with digits.

    In code (`…`) a hyphenated name (`db-migrate`, `pnpm-lock`) or `a:b` counts too.
    """
    if token.isalpha():
        return False  # a plain word (most of them)
    if not any(c.isalpha() for c in token):
        return False  # numbers and versions name nothing on their own
    if "/" in token or token[0] == "~":
        return True
    if token[0] == "-":
        rest = token.lstrip("-")
        return len(rest) >= 2 and rest[0].isalpha()
    if "." in token:
        return any(len(part) >= 2 and part.isalpha() for part in token.split(".")[1:]) or token[0] == "."
    if "_" in token.strip("_") or "@" in token or any(c.isdigit() for c in token):
        return True
    return code and ("-" in token.strip("-") or ":" in token.strip(":"))


def _path_forms(token: str) -> Iterable[str]:
    """A path and every run of its segments ("a/b/c" → "a/b/c", "a/b", "b/c", "c", …)."""
    parts = [p for p in token.strip("/").removeprefix("~/").removeprefix("./").split("/") if p]
    for start in range(len(parts)):
        for end in range(start + 1, min(len(parts), start + 8) + 1):
            yield "/".join(parts[start:end])


def _anchor_form(token: str) -> str:
    """How a lesson's path is compared: without a leading `/`, `~/`, `./` or trailing `/`."""
    if "/" not in token and token[0] != "~":
        return token
    return token.strip("/").removeprefix("~/").removeprefix("./").removeprefix("~")


@dataclass(frozen=True)
class Anchors:
    """The specific things a lesson names.

    `terms`: single anchors (paths, names, commands written as code); `phrases`: commands
    of several words and quoted text, as token tuples; `tools`: tool names as written;
    `rejected`: the anchors (and phrases) it rejects; `loose`: words it rejects in plain
    prose, which need the run's own calls to confirm them.
    """

    terms: frozenset[str] = frozenset()
    phrases: frozenset[tuple[str, ...]] = frozenset()
    quoted: frozenset[tuple[str, ...]] = frozenset()
    tools: frozenset[str] = frozenset()
    rejected: frozenset[str | tuple[str, ...]] = frozenset()
    loose: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.terms or self.phrases or self.quoted or self.tools or self.loose)

    def keys(self) -> frozenset[str]:
        """The tokens of which the person's words must hold one for `said_again` to match (tools aside)."""
        return self.terms | self.loose | {p[0] for p in self.phrases | self.quoted}


def _code_anchors(code: str) -> tuple[set[str], set[tuple[str, ...]], set[str]]:
    """(terms, phrases, tools) of one code span or code line: the command and its specific parts."""
    stripped = code.strip()
    if stripped in TOOLS:
        return set(), set(), {stripped}
    found = tokens(stripped)
    terms = {_anchor_form(t) for t in found if strong(t, code=True)}
    phrases: set[tuple[str, ...]] = set()
    if found and found[0].isalpha():
        if len(found) > 1 and found[1].isalpha():
            phrases.add((found[0], found[1]))  # the command and its subcommand: `make migrate`
        elif found[0] not in stopwords():
            terms.add(found[0])  # `pnpm`, `pytest -x`
    return terms, phrases, set()


def _segments(text: str) -> list[tuple[bool, str]]:
    """(is code, text) in order: inline code spans and the lines of fenced blocks are code."""
    out: list[tuple[bool, str]] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            out.append((True, line))
            continue
        start = 0
        for match in _CODE.finditer(line):
            out.append((False, line[start : match.start()]))
            out.append((True, match.group(1)))
            start = match.end()
        out.append((False, line[start:]))
    return out


def lesson_anchors(text: str, name: str = "") -> Anchors:
    """The anchors of a lesson's text (a memo bullet, or a skill's description and body).

    `name`: a skill's name, an anchor of its own when it names one thing (`db-migrate`).
    """
    terms: set[str] = set()
    phrases: set[tuple[str, ...]] = set()
    tools: set[str] = set()
    rejected: set[str | tuple[str, ...]] = set()
    loose: set[str] = set()
    if name and strong(name, code=True):
        terms.add(name)
    pending = 0  # tokens still to look at after a negation
    for is_code, part in _segments(text):
        if is_code:
            span_terms, span_phrases, span_tools = _code_anchors(part)
            terms |= span_terms
            phrases |= span_phrases
            tools |= span_tools
            if pending and (span_terms or span_phrases):
                rejected |= span_phrases or span_terms
                pending = 0
            pending = max(0, pending - 1)
            continue
        lowered = part.lower()
        tools |= {m.group(1) for m in _TOOL_WORD.finditer(part) if m.group(1) in TOOLS}
        cues = [m.end() for m in _NEGATION.finditer(lowered)]
        seen = 0  # the cues passed so far: a token after one is what it may reject
        for match in _RAW.finditer(lowered):
            while seen < len(cues) and cues[seen] <= match.start():
                seen, pending = seen + 1, AFTER_CUE
            word = _token(match.group(0))
            if not word:
                continue
            if strong(word):
                terms.add(_anchor_form(word))
            if pending and word not in _FILLER:
                if strong(word):
                    rejected.add(_anchor_form(word))
                elif word.isalpha() and word not in stopwords() and word not in _SHORT_WORDS:
                    loose.add(word)
                pending = 0
            elif pending:
                pending -= 1
        if seen < len(cues):
            pending = AFTER_CUE  # the prose ends with a negation: it rejects the code after it
    quoted = {
        tuple(found[:MAX_PHRASE])
        for match in _QUOTE.finditer(text)
        if len(found := tokens(match.group(1))) >= 2
    }
    return Anchors(
        frozenset(terms),
        frozenset(phrases),
        frozenset(quoted),
        frozenset(tools),
        frozenset(rejected),
        frozenset(loose - terms),
    )


@dataclass(frozen=True)
class Text:
    """A run's text as matching reads it: its tokens (and every path's segments), tools named."""

    words: tuple[str, ...] = ()
    found: frozenset[str] = frozenset()
    where: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    tools: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str, tool: str = "") -> Text:
        words = tuple(tokens(text))
        found = set(words)
        where: dict[str, list[int]] = {}
        for index, word in enumerate(words):
            where.setdefault(word, []).append(index)
            if "/" in word or word[0] == "~":
                found.update(_path_forms(word))
        named = {w for w in _NAME.findall(text) if w in TOOLS} | ({tool} if tool else set())
        return cls(words, frozenset(found), {k: tuple(v) for k, v in where.items()}, frozenset(named))

    def has(self, anchor: str | tuple[str, ...]) -> bool:
        if isinstance(anchor, str):
            return anchor in self.found
        for start in self.where.get(anchor[0], ()):
            if self.words[start : start + len(anchor)] == anchor:
                return True
        return False


@dataclass(frozen=True)
class Point:
    """What a run says about the agent's work: the person's words, each real error with its call."""

    said: str = ""  # "correction" or "preference" when the person spoke, else ""
    words: Text = Text()
    errors: tuple[tuple[Text, Text], ...] = ()  # (the failing call, its error text)
    calls: frozenset[str] = frozenset()  # every token of every call the run made
    project: frozenset[str] = frozenset()  # its folder, the folder's parents, the folder's name


def project_terms(cwd: str | None) -> frozenset[str]:
    """The run's folder as anchors would read it: never the specific thing on its own."""
    if not cwd:
        return frozenset()
    parts = [p for p in cwd.lower().strip("/").split("/") if p]
    found = {"/".join(parts[:end]) for end in range(1, len(parts) + 1)}
    return frozenset(found | ({parts[-1]} if parts else set()))


def person_words(facts: Mapping) -> tuple[str, str]:
    """(how, text): what the person said that corrects the agent or states a preference."""
    texts = []
    if facts.get("correction"):
        texts.append(str(facts.get("correction_reply") or facts.get("request") or ""))
    if facts.get("preference"):
        texts.append(str(facts.get("preference_text") or ""))
    how = next((key for key in PERSON_KEYS if facts.get(key)), "")
    return how, "\n".join(t for t in texts if t)


def run_point(facts: Mapping, *, errors: bool = True) -> Point:
    """The point a run makes, from its stored facts (`errors`: its real errors too)."""
    how, said = person_words(facts)
    pairs = []
    if errors:
        texts = [str(t) for t in facts.get("error_texts") or [] if t]
        calls = [str(c) for c in facts.get("error_calls") or []]
        for number, text in enumerate(texts):
            call = calls[number] if number < len(calls) else ""
            tool = call.split(":", 1)[0].strip() if ":" in call else call.strip()
            pairs.append((Text.of(call, tool if tool in TOOLS else ""), Text.of(text)))
    return Point(
        how,
        Text.of(said),
        tuple(pairs),
        frozenset(tokens(str(facts.get("tool_inputs_text") or ""))),
        project_terms(facts.get("cwd")),
    )


@dataclass(frozen=True)
class Match:
    """Why a run repeats a lesson's point: how (correction, preference, error) and what matched."""

    how: str
    terms: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"how": self.how, "terms": list(self.terms)}


def _shown(anchor: str | tuple[str, ...]) -> str:
    return anchor if isinstance(anchor, str) else " ".join(anchor)


def said_again(anchors: Anchors, point: Point) -> Match | None:
    """The person's words come back to what the lesson names (corrections, preferences)."""
    if not point.said:
        return None
    words, skip = point.words, point.project
    every: list[Anchor] = [*anchors.terms, *anchors.phrases, *anchors.quoted]
    found = [a for a in every if a not in skip and words.has(a)]
    found += [t for t in anchors.tools if t in words.tools]
    found += [w for w in anchors.loose if w not in skip and words.has(w) and w in point.calls]
    return Match(point.said, tuple(sorted({_shown(a) for a in found}))) if found else None


def failed_again(anchors: Anchors, point: Point) -> Match | None:
    """A real error of the run is the one the lesson covers (see the module docstring)."""
    skip = point.project
    named: list[Anchor] = [*anchors.terms, *anchors.phrases]
    plain = [a for a in named if a not in skip]
    refused: list[Anchor] = [*anchors.rejected, *anchors.loose]
    for call, error in point.errors:
        rejected = [a for a in refused if a not in skip and call.has(a)]
        if rejected:
            return Match("error", tuple(sorted({_shown(a) for a in rejected})))
        quoted = [q for q in anchors.quoted if error.has(q)]
        if quoted:
            return Match("error", tuple(sorted(_shown(q) for q in quoted)))
        in_error = {a for a in plain if error.has(a)}
        in_call = {a for a in plain if call.has(a)} | {t for t in anchors.tools if t in call.tools}
        if in_error and len(in_error | in_call) >= 2:
            return Match("error", tuple(sorted(_shown(a) for a in in_error | in_call)))
    return None


def covered(anchors: Anchors, point: Point) -> Match | None:
    """The run repeats the lesson's point: the person says it again, or its error comes back."""
    if not anchors:
        return None
    return said_again(anchors, point) or failed_again(anchors, point)
