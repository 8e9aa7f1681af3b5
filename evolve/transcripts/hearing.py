"""Hearing the person: does a message correct the agent, state a standing preference, and why.

A phrase list alone hears few real corrections: people report that it still fails right
after the agent said it was done, ask "why did you …?", restate a convention ("we use pnpm
here, not npm") or contradict the agent's claim with what they see. So a message is judged
with what the agent said just before it (did it claim success, ask a question?), whether it
opens the session, and whether the turn before was an API error or an interruption (a
retry, not a correction). Every verdict names its cue, so "why did this count?" has an
answer. Local and deterministic: lexicons (data/corrections.toml, data/cues.toml) and a few
rules, no model. Standard library only (the observer's path).
"""

from __future__ import annotations

from dataclasses import dataclass

from evolve.transcripts.forbidden import (
    ORDERS,
    done_by_agent,
    forbids_named,
    keep_orders,
    order_clause,
    outside,
    verbs,
)
from evolve.transcripts.lexicons import Lexicons, prose
from evolve.transcripts.matches import (
    AFTER_ERROR_KINDS,
    AFTER_STOP_KINDS,
    AGENT_KINDS,
    BESIDE_A_LANGUAGE,
    FIRST_KINDS,
    MESSAGE_KINDS,
    OPEN_QUESTION,
    OPEN_QUESTION_TAIL,
    PREFERS,
    WEIGHED,
    by_kind,
    in_a_closing_note,
    language_of,
    over,
    still_fails,
)
from evolve.transcripts.preferences import LONG, says_always
from evolve.transcripts.preferences import preference as standing_preference
from evolve.transcripts.replies import (
    ACKNOWLEDGED,
    ANSWER_WORDS,
    NEGATED,
    PRAISED,
    accepts,
    asks_to_keep,
    declines_with_thanks,
    heads_a_list,
    offers_a_choice,
    only_an_answer,
    opening_end,
    opens_a_question,
    past_a_cut_fence,
    persists_up_front,
    says_nothing_still,
    still_so,
    still_so_unasked,
    still_works,
    suggests,
    urgent,
)
from evolve.transcripts.sentences import (
    SENTENCE,
    SHORT,
    Spans,
    asked_which,
    ends_asking,
    in_a_condition,
    is_question_at,
    new_work_until,
    opens_a_sentence,
    opens_the_reply,
    pasted_at,
    sentence_end,
    size,
)
from evolve.transcripts.stopped import ASIDE, BUT, CARRY_ON, CONDITION, PRAISE, SELF, UNMEANT
from evolve.transcripts.terms import rejected, shared_term

# How a person corrects (the kinds `evolve classify` and the metrics report).
NEGATION, FAILURE_REPORT, PUSHBACK = "negation", "failure_report", "pushback"
CONTRADICTION, CONVENTION, RULE, FACT = "contradiction", "convention", "rule", "fact"
UNDO, STOP = "undo", "stop"

_REPAIR_GAP = 16  # characters between "fix" and the failure it names ("fix the build errors")
_BRIEF = 40  # characters: a reply this brief says one thing ("the same", "try again")
_URGENT = 80  # characters: a "don't …!" this brief forbids what the agent is about to do
_BESIDE_ORDERS = WEIGHED.difference(ORDERS)  # the cues left to weigh once a "don't" is not the agent's doing


@dataclass(frozen=True, slots=True)
class Heard:
    """What a message says about the agent's work; `cue` says why, in words."""

    correction: bool = False
    preference: bool = False
    kind: str | None = None  # how it corrects (NEGATION, FAILURE_REPORT, ...)
    cue: str | None = None  # why it is a correction
    preference_cue: str | None = None  # why it is a preference
    language: str | None = None

    @property
    def why(self) -> str | None:
        """Every cue, in words: what `evolve classify` prints."""
        return "; ".join(cue for cue in (self.cue, self.preference_cue) if cue) or None


NOTHING = Heard()


def hear(
    lexicons: Lexicons,
    text: str,
    agent_before: str = "",
    *,
    first: bool = False,
    after_error: bool = False,
    agent_did: str = "",
) -> Heard:
    """Judge one message the person typed.

    `agent_before`: the agent's last text before it; `agent_did`: what it just did (tool
    inputs: commands, files), where the words a person rejects show up too (both empty in a
    later message: the agent answered, what it said is unknown); `first`: the session's first
    message (nothing to correct yet: only outright words in its opening count);
    `after_error`: the turn before ended in an API error or an interruption.
    """
    if not text or not text.strip():
        return NOTHING
    words = prose(text)
    kinds: tuple[str, ...]
    if first:
        kinds = FIRST_KINDS
    elif after_error:  # "don't" and "no" are looked for only where they count: most messages need not pay
        kinds = AFTER_STOP_KINDS if len(words) < _BRIEF else AFTER_ERROR_KINDS
    elif len(words) < _URGENT and ("!" in words or "！" in words):  # "don't delete that folder!"
        kinds = (*MESSAGE_KINDS, "forbid")
    else:
        kinds = MESSAGE_KINDS
    found = by_kind(lexicons, words, kinds)
    if "in_language" in found and "speak" not in found:  # "all" / "always" counts beside a language only
        found.update(by_kind(lexicons, words, BESIDE_A_LANGUAGE))
    if "forbid" in found and not after_error and not urgent(words, found["forbid"]):
        del found["forbid"]  # outside a stop, only a "don't …!" opening a brief reply forbids
    keep_orders(words, found)  # "I don't …" says, "don't …" orders
    message = _Message(lexicons, text, words, found)
    preference = standing_preference(
        words,
        found,
        first,
        lambda: message.offered(agent_before),
        lambda: message.agent_cues(agent_before)[0],
    )
    if preference is None and size(text) >= LONG:  # a shorter one was read whole
        preference = in_a_closing_note(lexicons, text)
    correction = message.correction(agent_before, agent_did, first, after_error)
    if correction is None and preference is None:
        return NOTHING
    kind, cue = correction or (None, None)
    language = language_of(lexicons, found)
    preference_cue = preference[1] if preference else None
    return Heard(correction is not None, preference is not None, kind, cue, preference_cue, language)


class _Message:
    """One message's matches, and the rules that weigh them with the agent's words."""

    def __init__(self, lexicons: Lexicons, text: str, words: str, found: Spans) -> None:
        self.lexicons, self.text, self.words, self.found = lexicons, text, words, found
        self.agent: tuple[str, Spans] | None = None  # the agent's words and their cues, read on need

    def quote(self, span: tuple[str, int, int]) -> str:
        return self.words[span[1] : span[2]].strip()

    def correction(
        self, agent_before: str, agent_did: str, first: bool, after_error: bool
    ) -> tuple[str, str] | None:
        """(kind, cue) of a correction, or None."""
        words, found = self.words, self.found
        strong = found.get("phrases")
        if first and strong:  # further into a session's first message, they describe the task
            opening = opening_end(words)
            strong = [span for span in strong if span[1] < opening]
        if not strong and (first or found.keys().isdisjoint(WEIGHED)):
            return None  # most messages: no cue to weigh, the agent's words need no reading
        if declines_with_thanks(words, found) or over(found):
            return None
        if strong and (not only_an_answer(words, strong) or not self.asked(agent_before)):
            return NEGATION, f"says the agent got it wrong: “{self.quote(strong[0])}”"
        forbid = found.get("forbid")  # the interruption says the agent was at work, words or not
        if forbid and "retry" not in found and after_error:  # looked for in a brief reply after a stop
            return RULE, f"tells the agent not to, right after stopping it: “{self.quote(forbid[0])}”"
        if forbid and not after_error and agent_before.strip() and not self.asked(agent_before):  # "don't …!"
            return RULE, f"tells the agent not to, urgently: “{self.quote(forbid[0])}” …!"
        # "no, in …", "you're not checking …" opening a short reply to a stopped agent: it did the wrong thing
        # (looked for right after an interruption or an API error only; a "no" may answer its question)
        refuse = [s for s in found.get("refuse", ()) if opens_the_reply(words, s[1])]
        if refuse and "retry" not in found and size(words) < SHORT and not self.asked(agent_before):
            return NEGATION, f"says no right after stopping the agent: “{self.quote(refuse[0])}”"
        if first:
            return None  # nothing the agent said yet: only outright words count
        # Not the first message, but no agent text (a prompt-only log, a turn of tools only): the
        # agent answered, what it said is unknown; the rules that need no claim or question still count
        # "toujours" opening a sentence says "always" as often as "still" ("j'ai toujours …" says still);
        # a "还是" inside a question asks "or"
        persist = [
            span
            for span in found.get("persist", ())
            if not says_always(words, span, found) and not offers_a_choice(words, span)
        ]
        if after_error and ("retry" in found or size(words) < _BRIEF):
            return None  # a retry after an API error or an interruption
        turned = self.turned(agent_before) if after_error and size(words) < SHORT else None
        if turned:
            return turned
        forbidden, next_work = self.orders_of_agent_verbs(agent_before)  # "do not retry" after retries
        if forbidden:
            order, did = forbidden
            return NEGATION, f"forbids what the agent just did: “{order}” after its “{did}”"
        if next_work:  # "don't change anything else": its "don't" and words tell the next work, no correction
            found = self.found = outside(found, next_work)
        if found.keys().isdisjoint(_BESIDE_ORDERS):
            return None  # a "don't" was all there was to weigh
        if "retry" in found and not persist and len(words) < 100 and not still_fails(found):
            return None  # "there was a timeout, please continue"
        if "pushback" in found and ("?" in self.text or "？" in self.text):
            return PUSHBACK, f"challenges the agent: “{self.quote(found['pushback'][0])}”"
        if "challenge" in found and not self.asked(agent_before):  # else it asks what the question means
            return PUSHBACK, f"challenges the agent: “{self.quote(found['challenge'][0])}”"
        opener = found.get("opener")
        if opener and opens_the_reply(words, opener[0][1], after=ACKNOWLEDGED):
            return CONTRADICTION, f"objects to what the agent said: “{self.quote(opener[0])}” …"
        scorn = [span for span in found.get("scorn", ()) if span[1] < SHORT]
        if scorn:
            return NEGATION, f"scorns the agent's work: “{self.quote(scorn[0])}”"
        halt = found.get("halt", ())
        whole = [
            span
            for span in halt
            if not words[: span[1]].strip(" ¡") and not words[span[2] :].strip(" .!。！")
        ]
        if whole:  # the message is only that word ("¡Para!" opens with its mark)
            return STOP, f"tells the agent to stop: “{self.quote(whole[0])}”"
        undo = [span for span in found.get("undo", ()) if span[1] < SHORT]
        if undo and "yours" in found:
            yours = self.quote(found["yours"][0])
            return UNDO, f"asks to undo what the agent did: “{self.quote(undo[0])}” … “{yours}”"
        praised = PRAISED.match(words)
        if praised and not persist and "again" not in found:
            # "perfect… except it crashes", "Perfecto, ahora no compila": a failure in the sentence
            # after the praise is sarcasm ("Great, thanks. The error is gone." is not)
            after = len(words) - len(words[praised.end() :].lstrip(" ,.!…，。！"))
            end = sentence_end(words, after)
            stop = end.start() if end else len(words)
            if not any(after <= span[1] < stop for span in found.get("failure", ())):
                return None  # "Great! Now the footer should …": a "still" after the praise reports a failure
        asked = self.asked(agent_before)
        agent, said = self.agent_cues(agent_before)
        # It says it did the work, or shows the code it changed (aider's SEARCH/REPLACE blocks)
        claimed = "claim" in said or "```" in agent_before or bool(agent_did)
        short = size(words) < SHORT
        failure = found.get("failure")
        again = persist or found.get("again") or []
        # "yes, the same for the CLI …" takes up the agent's offer: the same work, no failure
        accepted = asked and not persist and accepts(words)
        # near the start: further into a long new request, "the same" describes what it wants
        # the opening sentence of a request for new work describes it ("add a button that does the same");
        # a "still" there reports ("add the import, it still fails")
        spec = new_work_until(words)
        again = [span for span in again if (0 if persist else spec) <= span[1] < SHORT]
        heading = bool(persist) and heads_a_list(
            words, persist[0], [*(failure or ()), *found.get("again", ())]
        )
        # a "still" opening the reply that says nothing is still so ("still, great work", "immer noch super")
        # nor one the person asks to keep ("the old API is still used by the app, keep it"), nor "还是…吧",
        # nor a heading ("Still open: …"), nor what still works ("the tests still pass and …")
        persists = (
            persist
            and not (persist[0][1] == 0 and says_nothing_still(words, persist[0]))
            and not asks_to_keep(words, persist[0], failure or [])
            and not suggests(words, persist[0])
            and not still_works(words, persist[0])
            and not heading
        )
        # a "still" after the agent's claim in a short reply, or up front in any reply the agent did not
        # ask ("依然很慢，…", "i checked and it still spawns twice")
        up_front = persists and persists_up_front(words, persist[0])
        unclaimed = up_front and not asked and still_so_unasked(words, persist[0])
        still_reported = persists and (claimed and (short or up_front) or unclaimed)
        if again and not accepted and (failure or "observe" in found) or still_reported:
            span = (failure or found.get("observe") or again)[0]
            return FAILURE_REPORT, f"reports it still fails: “{self.quote(again[0])}” … “{self.quote(span)}”"
        # "still the old title", "всё равно …" opening a brief reply: nothing changed, claimed or not
        opening_still = persist and persist[0][1] == 0 and len(words) < _URGENT and not asked and not heading
        if opening_still and still_so(words, persist[0]):
            return FAILURE_REPORT, f"says it is still so: “{self.quote(persist[0])}” …"
        if again and claimed and len(words) < _BRIEF and not words[again[-1][2] :].strip(" .!。！"):
            return FAILURE_REPORT, f"says nothing changed after the agent's claim: “{self.quote(again[-1])}”"
        # near the start (a long new task may mention one), and said, not asked ("is it fixed now?")
        upto = min(SHORT, pasted_at(words)) if failure else 0
        # not the "нет" that answers the agent's question
        early = [
            s
            for s in failure or ()
            if spec <= s[1] < upto
            and not self.to_repair(s)
            and not asked_which(words, s[1], s[2])
            and not (asked and only_an_answer(words, [s]))
            and not in_a_condition(words, s[1], s[2])
        ]
        asks_back = [s for s in early if is_question_at(words, s[1])]  # "is it fixed now?" asks
        early = [s for s in early if s not in asks_back]
        if claimed and short and any(NEGATED.search(self.quote(s)) for s in asks_back):
            return PUSHBACK, f"doubts what the agent said: “{self.quote(asks_back[0])}?”"
        # what the agent wrote names files or commands (`app.py`): it reports work it did, and
        # a failure said up front is about that work
        worked = bool(early) and early[0][1] < SENTENCE and "`" in agent_before or "yours" in found
        # "yes, show the errors in a banner" takes up an offer that named them ("yes, errors
        # everywhere now" reports a failure)
        offered = accepted and bool(early) and self.quote(early[0]) in agent
        if early and (claimed or worked) and not offered:
            cue = f"reports a failure right after the agent said it was done: “{self.quote(early[0])}”"
            return FAILURE_REPORT, cue
        # what the agent said and did (the words of its tool inputs), read only for a cue that needs it
        if "contrast" in found or "contrast_before" in found or "changed" in found and short:
            used = agent + " " + prose(agent_did, keep_code=True) if agent_did else agent
            term = rejected(self.lexicons, self.text, self.words, self.found, used, asked)
            if term:
                return CONVENTION, f"rejects “{term}”, which the agent just used"
            shared = shared_term(words, used) if "changed" in found and short else None
            if shared:
                changed = self.quote(found["changed"][0])
                return FACT, f"corrects a fact about “{shared}” the agent relied on: “{changed}”"
        exists = found.get("exists")
        # with "don't create" or a rule: a bare "not" beside it says nothing of the agent's work
        refused = [s for k in ("contrast", "rule") for s in found.get(k, ()) if not _bare(self.quote(s))]
        if exists and exists[0][1] < SHORT and (refused or "weak" in found):
            return FACT, f"says what the agent would make is already there: “{self.quote(exists[0])}”"
        # a "why" opening a short question ("…, why?" after a statement asks about the statement)
        why = [s for s in found.get("why", ()) if s[1] < SENTENCE and opens_a_question(words, s)]
        if why and short and (claimed or not asked):  # a mere question of the agent's is asked back
            return PUSHBACK, f"questions what the agent just did: “{self.quote(why[0])} …?”"
        weak = [
            s
            for s in found.get("weak", ())
            if spec <= s[1] < SHORT
            and not is_question_at(words, s[1])
            and not in_a_condition(words, s[1], s[2])
        ]
        if weak and claimed and not asked:
            return NEGATION, f"pushes back on what the agent said it did: “{self.quote(weak[0])}”"
        contrast = [s for s in found.get("contrast", ()) if not in_a_condition(words, s[1], s[2])]
        if claimed and not asked and "observe" in found and (contrast or weak):
            return (
                CONTRADICTION,
                f"contradicts the agent's claim with what they see: “{self.quote(found['observe'][0])}”",
            )
        # a rule in a long new request, or in the answer to "what shall we do?", is its spec
        rule = found.get("rule") or found.get("scope")
        if rule and short and (claimed or not asked):
            return RULE, f"sets a rule for how the agent works: “{self.quote(rule[0])}”"
        return None

    def turned(self, agent_before: str) -> tuple[str, str] | None:
        """(kind, cue) when a short reply to the agent the person just stopped at work says it went wrong.

        "…, not in my project", "use X instead of Y" turn it; "the sdk is at ~/sdk", "our line
        length is 80" tell it how things are (an order opens with its verb). Not when the stop
        was a mistake ("my bad, I hit escape") or the agent had asked something.
        """
        words = self.words
        if UNMEANT.search(words) or self.asked(agent_before):
            return None
        turn = self.redirects(words)
        if turn:
            return NEGATION, f"turns the agent it just stopped: “{self.quote(turn)}”"
        said = [s for s in self.found.get("subject", ()) if opens_the_reply(words, s[1])]
        carries_on = CARRY_ON.search(words) or PRAISE.search(words) and not BUT.search(words)
        if said and "?" not in words and not carries_on:  # a question anywhere: it asks, tells nothing
            return FACT, f"tells the agent it just stopped how things are: “{self.quote(said[0])} …”"
        return None

    def redirects(self, words: str) -> tuple[str, int, int] | None:
        """A "not" / "instead of" said, not asked, in the opening sentence of a reply to a stopped agent.

        Not one after "if" ("if not, …", "se não for …": a condition), nor an aside ("not sure",
        "not your fault", "not only …"): the person may have stopped the agent only to add
        something; nor a bare "no" opening the reply, which may agree or wait ("no you're
        right", "no wait"): whether it refuses is the `refuse` cue's to say.
        """
        spans = (s for kind in ("contrast", "contrast_before") for s in self.found.get(kind, ()))
        first_end = sentence_end(words, 0)
        return next(
            (
                span
                for span in spans
                if span[1] < SENTENCE
                and (first_end is None or span[1] < first_end.start())
                and not is_question_at(words, span[1])
                and not CONDITION.search(words, max(0, span[1] - 12), span[1])
                and not ASIDE.match(words, span[1])
                and not SELF.search(words, max(0, span[1] - 7), span[1])
                and not (opens_the_reply(words, span[1]) and ANSWER_WORDS.fullmatch(self.quote(span) + " "))
            ),
            None,
        )

    def orders_of_agent_verbs(
        self, agent_before: str
    ) -> tuple[tuple[str, str] | None, list[tuple[int, int]]]:
        """A "don't rename …" of what the agent just did and its word for it, or the orders' clauses.

        The clauses are those of the orders of the agent's verbs that tell the next work ("don't
        change anything else", "don't add tests yet"): their words are no correction either. In a
        brief reply (a long one is a new task's spec: "Do NOT change the landing page …"); not after
        the agent's question: "don't rename them" answers "Want me to rename the files?".
        """
        words = self.words
        orders = verbs(words, self.found)
        if not orders or not agent_before or size(words) >= SHORT or self.asked(agent_before):
            return None, []
        agent = self.agent_cues(agent_before)[0]
        next_work = []
        for edge, verb in orders:
            if not done_by_agent(verb.group(), agent):
                continue
            named = forbids_named(words, edge, verb)
            did = done_by_agent(verb.group(), agent, named) if named is not None else None
            if did:  # the order from its negation to its verb, or from its verb to its negation
                return (words[min(edge, verb.start()) : max(edge, verb.end())], did), []
            next_work.append(order_clause(words, edge, verb))
        return None, next_work

    def to_repair(self, span: tuple[str, int, int]) -> bool:
        """Whether a failure word is what the person asks to fix ("analyse the error"), not a report.

        The verb opens the request and the failure follows it, or comes right before it where
        the object comes first ("エラーを修正して").
        """
        _, start, end = span
        before = (
            0 <= start - r_end <= _REPAIR_GAP and opens_a_sentence(self.words, r_start)
            for _, r_start, r_end in self.found.get("repair", ())
        )
        return any(before) or any(0 <= r_start - end <= 2 for _, r_start, _ in self.found.get("repair", ()))

    def agent_cues(self, agent_before: str) -> tuple[str, Spans]:
        """The agent's words and its claims and questions in them, read once and only on need."""
        if self.agent is None:
            agent = prose(past_a_cut_fence(agent_before)) if agent_before else ""
            said = by_kind(self.lexicons, agent, AGENT_KINDS, guards=False) if agent else {}
            self.agent = agent, said
        return self.agent

    def asked(self, agent_before: str) -> bool:
        """Whether the agent's text just before ends asking the person something."""
        agent, said = self.agent_cues(agent_before)
        return bool(agent) and (ends_asking(agent) or "asks" in said)

    def offered(self, agent_before: str) -> bool:
        """Whether the agent just offered options: it asked, or named what the person prefers."""
        agent = self.agent_cues(agent_before)[0]
        if self.asked(agent_before) and not OPEN_QUESTION.search(agent[-OPEN_QUESTION_TAIL:]):
            return True
        return PREFERS.search(agent) is not None


def _bare(cue: str) -> bool:
    """A lone short Latin word ("not", "pas", "nie"): a negation that may be about anything."""
    return cue.isascii() and cue.isalpha() and len(cue) <= 5
