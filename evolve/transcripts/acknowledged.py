"""The agent's answer as evidence: a reply opening "You're right", "Sorry, my mistake" followed a correction.

People correct in words no lexicon lists ("the header is gone on mobile"); the agent they
correct answers in a few words that hardly vary: it admits the point or the mistake, in the
person's language. So the first words of the agent's answer tell that the message before
them corrected it, whoever typed it. Read only in the opening of the agent's first text after
the person's message, never after a session's first message with no agent text before it (nothing
to correct yet; a resumed session's first message follows the agent's) nor a pick
answering the agent's question ("pnpm", "yes, memory is enough": its "You're right" agrees). A
refusal ("Sorry, I can't help with that"), a polite disagreement ("I apologize, but …"), a
cheered agreement ("You're absolutely right!", said to new requests as often; not "You're
right! My mistake, …" nor "… I used the wrong file"), a suggestion taken up ("Good call", "Good
point", however said; not "Good point, I missed it") and a quoted dialogue admit nothing; a
bare "Sorry" admits when its sentence owns a mistake ("Sorry, but I broke it"). Standard
library only (the observer's path); every pattern is linear.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import replace

from evolve.transcripts.gated import GatedPattern
from evolve.transcripts.hearing import Heard
from evolve.transcripts.lexicons import prose
from evolve.transcripts.literals import Literals
from evolve.transcripts.replies import ACKNOWLEDGED as A_YES
from evolve.transcripts.replies import accepts
from evolve.transcripts.sentences import ends_asking, size

ACKNOWLEDGED = "acknowledged"  # the kind of correction: the agent's answer admitted it

LEAD = 40  # characters of the opening an admission may start after ("Oh no! You're right")
OPENING = 160  # characters of the agent's answer read

# What an agent answers to a correction: the person's point, or its own mistake. Not a bare
# "sorry" or "that's right" (a refusal, a yes to a question), not "great idea" (a new request)
_ADMISSION = re.compile(
    r"you(?:'re| are)(?: absolutely| totally| completely| quite| entirely| so)? (?:right|correct)\b"
    r"|(?:good|great|nice|sharp|excellent) (?:catch|eye|spot)\b|well spotted|good call\b"
    r"|(?:good|great|fair|valid|excellent) (?:point|observation)\b"
    r"|my (?:mistake|bad|apologies|error|oversight)\b|oversight on my part|i apologi[sz]e|apologies for"
    r"|sorry (?:about that|for (?:that|my|the (?:confusion|mistake|error|oversight|misunderstanding)))\b"
    r"|i (?:was wrong|stand corrected|misunderstood|misread)\b"
    r"|i made (?:a|an) (?:mistake|error)\b|that(?:'s| is| was) (?:on me|my mistake|my fault)"
    r"|thanks? (?:you )?for (?:catching|pointing|the correction|correcting|flagging|noticing|the heads.up)"
    # the person's frustration, owned ("I know this is frustrating", "entiendo tu frustración")
    r"|i (?:know|understand|hear|get) (?:that )?(?:this is|this has been|it's|it is|you're|you are|your)"
    r" (?:so |very |really |incredibly |extremely )?frustrat(?:ing|ed)|sorry for the frustration"
    r"|entiendo (?:tu|su) frustración|entendo (?:a |sua |a sua )frustração"
    r"|je comprends (?:votre|ta) frustration|ich verstehe (?:deine|ihre) frustration"
    r"|capisco (?:la tua|la sua) frustrazione"
    r"|понимаю ваше (?:раздражение|разочарование)|理解你的沮丧|理解您的沮丧"
    # es, pt, fr, de, it, nl
    r"|(?:tienes?|tenés) (?:toda la )?razón|perdón|disculpa|lo siento|mi error|buena observación|bien visto"
    r"|(?:você|voce) (?:está cert[oa]|tem razão)|tem razão|tens razão|desculp[ae]|peço desculpas|meu erro"
    r"|vous avez (?:tout à fait )?raison|tu as (?:tout à fait )?raison|désolée?\b|mes excuses|je m'excuse"
    r"|bien vu|mon erreur|c'est ma faute"
    r"|(?:du hast|hast du|sie haben|haben sie) (?:völlig |vollkommen |absolut )?recht"
    r"|entschuldig|mein fehler|gut erkannt"
    r"|hai (?:perfettamente |assolutamente )?ragione|ha (?:perfettamente )?ragione|mi scuso|scusami"
    r"|errore mio|colpa mia|je hebt gelijk|u heeft gelijk|mijn fout"
    # pl, cs, ru, uk, tr, id, vi
    r"|masz rację|przepraszam|mój błąd|máte pravdu|máš pravdu|omlouvám|moje chyba"
    r"|вы (?:абсолютно |совершенно )?правы|ты (?:абсолютно |совершенно )?прав|извините|прошу прощения"
    r"|моя ошибка|ви праві|ти прав|перепрошую|вибачте|моя помилка"
    r"|haklısınız|haklısın|özür dilerim|(?:anda|kamu) benar|mohon maaf|bạn nói đúng|xin lỗi"
    # ja, zh, ko
    r"|おっしゃる(?:通り|とおり)|ご指摘|申し訳|失礼しました|すみません"
    r"|说得对|说的对|說得對|抱歉|对不起|對不起|是我的错|我的错|不好意思"
    r"|是我的问题(?<!不是我的问题)|我的失误(?<!不是我的失误)|操作失误(?<!不是操作失误)|我疏忽|我搞错了|我弄错了|我理解错了|我误解了|私のミス|私の間違い"
    r"|죄송|지적해 주셔서|제 실수|맞습니다|맞아요|맞네요"
)
# An apology may open a refusal ("Sorry, I can't …"); "You're right, I can't believe I missed it" admits
_APOLOGY = re.compile(
    r"sorry|apolog|siento|perdón|disculp|desculp|désolé|excuse|entschuldig|scus|przepraszam|omlouvám"
    r"|извин|прощения|перепрошую|вибачте|özür|maaf|xin lỗi"
    r"|申し訳|失礼|すみません|抱歉|对不起|對不起|不好意思|죄송"
)
# Before the admission in its opening: "I don't think you're right" disputes the point
# (right before it: "Not sure what I was thinking — you're right" admits)
_DISPUTED = re.compile(r"\b(?:(?:don't|do not) think|not (?:sure|convinced))(?: that| if)? \Z")
# A sentence of thanks opening the answer ("Thanks! You're right that the retry helps", "Glad
# to hear it!"): it answers praise. Not "Thanks, good catch" nor "Thanks for catching that"
_THANKED = re.compile(
    r"(?:thanks|thank you|glad\b[^.!\n]*|gracias|merci|danke|obrigad[oa]|grazie|спасибо"
    r"|谢谢|ありがとう\w*|감사\w*) ?[.!！。]"
)
# "Sorry, I can't …": a refusal follows the admission in the same sentence
_REFUSAL = re.compile(
    r"\b(?:can't|cannot|can not|unable|not able|won't be able)\b|无法|不能|没法|できません|できない"
    r"|no puedo|não (?:consigo|posso)|je ne peux|ich kann (?:das )?nicht|non posso|не могу|할 수 없"
)
# "Yes, you're right": the agent confirms what the person asked, it admits nothing
_CONFIRMING = (
    "yes",
    "yeah",
    "absolutely",
    "exactly",
    "indeed",
    "correct",
    "sí",
    "sim",
    "oui",
    "ja,",
    "да",
    "はい",
    "네,",
    "네.",
    "네 ",
)
_DECORATION = " \t\r\n*_#>`-•🙏😅😬🤦‍♂️"
# "I apologize, but the button is still there": a polite disagreement, right after the apology, its
# word ended ("Entschuldigung, aber", "omlouvám se, ale") and after a dash or an ellipsis too
_APOLOGY_BUT = re.compile(
    r"\w*(?: se)?(?:[ ,，、;:—–-]|\.\.\.|…)*"
    r"(?:(?:but|however|though|pero|mas|mais|aber|ma|ale|ama|tapi|nhưng|но|але|однако)\b"
    r"|(?:ありません|ございません)?(?:が|けど)|하지만|합니다만|但|不过)"
)
# Agreement cheered ("You're absolutely right!", "Great point!"): agents cheer a new request or the
# person's own idea as often as they admit a mistake; "You're right, the X …" or an apology admits
_AGREED = re.compile(
    r"right|correct|point|observation|catch|spot|eye|call|razón|razão|raison|recht|ragione|gelijk|rację"
    r"|cert[oa]|pravdu|прав|haklı|benar|đúng|通り|说得对|說得對|说的对|맞|observación|visto|vu|erkannt"
)
# A suggestion taken up, however said ("Good call — let me measure it", "Good point. Currently it …"):
# agents answer the person's new idea so, and a correction with "You're right" or an apology;
# it admits only with an owned mistake after it ("Good point, I missed the header")
_TAKEN_UP = re.compile(
    r"good call|(?:good|great|fair|valid|excellent) (?:point|observation)|buena observación"
)
_PAUSE = re.compile(r"[ ,，、.;:—–-]*")
# "!", or an emoji of cheer ("You're absolutely right 🎯", "**Great catch**!"); not a sheepish one
# ("You're right 😅, the path was stale" admits)
_CHEERED = re.compile(r"[ *_]*(?:[!！‼]|(?![🙏😅😬🤦])[\U0001F300-\U0001FAFF\u2600-\u27BF])")
# A label's colon before the admission, a word or two opening a line ("Assistant: You're right";
# "：" is folded to ":"), or a colon before a quote or a line break ('A reply would be: "Sorry …"',
# "Example:\n"): a quoted dialogue. Not the colon of a time or an address ("At 09:15 — sorry about
# that"), nor one in its own sentence ("Here's what happened: my mistake, …"), nor a line break
# alone ("Hmm!\nYou're right, …" are its own words)
_LABEL = re.compile(r"(?:^|\n)\W*\w+(?: \w+)?:(?![0-9/])|:[ \t]*[\"“«「\n]")
# The agent owning a mistake in its own words, right after a cheer ("You're right! I used the wrong
# file", "Tienes razón! Me equivoqué") or after "Sorry, but" ("I apologize, but I misread the
# config"): an admission still. A past verb before "the wrong" ("I'll add the wrong-type check" owns
# nothing), not one guarding against it ("I added a check for the wrong type", "… to reject the
# wrong token"); not a thing left untold ("Good point. I forgot to mention YAML works already",
# "I should have mentioned it": the agent adds a fact); the verbs of a mistake in each lexicon language
_OWNED = re.compile(
    r"\bi(?:'ve|'d| have| had| must have)?(?: (?:accidentally|mistakenly|completely|totally|also))?"
    r" (?:forgot(?! to (?:mention|say|note|tell you)\b)|missed|overlooked|broke|messed up|mixed up"
    r"|misread|misunderstood|confused"
    r"|(?:[a-z]+ed|put|chose|took|wrote|read|ran|set|made|gave|had|got|sent|built|hit|went|did|left)"
    r"(?: (?!for\b|against\b|when\b|if\b|reject|catch|handl|detect|block|flag|ignor|skip|warn)[a-z]+){0,3}"
    r" (?:the |a )?wrong)\b"
    r"|\bi(?:'ve| have)? (?:accidentally|mistakenly|wrongly|incorrectly)\b"
    r"|\bi made an? (?:[a-z]+ )?(?:mistake|error)\b"
    r"|\bi (?:should|shouldn't|should not) have\b(?! (?:mentioned|said|noted)\b)"
    r"|me equivoqu|me confund|(?:se me )?olvid[éó]|equivocad|errei|me enganei|esqueci|errad[oa]"
    r"|je me suis tromp|j'ai (?:oublié|cassé|mal )|ich habe (?:\w+ ){0,3}(?:falsch|vergessen|übersehen)"
    r"|hab mich vertan|habe mich geirrt|ho sbagliato|mi sono sbagliat|ho dimenticato|sbagliat[oa]"
    r"|ошиб|перепутал|забыл|не тот|не ту|помилив|переплутав|забув|pomylił|zapomniał|błędn"
    r"|改错|弄错|搞错|写错|看错|用错|删错|忘了|漏了|遗漏|疏忽|間違え|見落と|勘違い|忘れて"
    r"|잘못|놓쳤|깜빡|실수|yanlış|unuttum|saya salah|keliru|nhầm|quên|spletl|zapomněl"
)


def admission(agent_after: str) -> str | None:
    """The admission opening the agent's answer, in its words, or None."""
    opening = _opening(agent_after)
    if not _may_admit(opening):
        return None  # most answers: none of an admission's words, told in C
    found = _ADMISSION.search(opening, 0, LEAD + 40)
    if found is None or found.start() > LEAD:
        found = _owned_after_apology(opening)  # "Sorry, but I broke it", "Oops, sorry! I forgot …"
    if found is None or opening.startswith(_CONFIRMING):
        return None
    if _LABEL.search(opening, 0, found.start()):
        return None  # not its own opening words: a dialogue quoted ("User: …\nAssistant: You're right")
    cheer = _CHEERED.match(opening, found.end()) if _AGREED.search(found.group()) else None
    if cheer or _TAKEN_UP.fullmatch(found.group()):
        said = cheer or _PAUSE.match(opening, found.end())  # the cheer, or the pause after the words
        if said and _OWNED.search(_next_sentence(opening, said.end())):
            return found.group()  # "You're right! I used the wrong file.", "Good point, I missed it"
        found = _ADMISSION.search(opening, found.end(), found.end() + LEAD)  # "You're right! My mistake, …"
        if found is None or _AGREED.search(found.group()):
            return None
    if _DISPUTED.search(opening, 0, found.start()) or _THANKED.match(opening, 0, found.start()):
        return None
    sentence = opening[found.end() :].split(".", 1)[0].split("\n", 1)[0]
    # right after the apology's word, or after what it is for ("Apologies for the confusion, but")
    cause = _APOLOGY_FOR.match(opening, found.end())
    but = _APOLOGY_BUT.match(opening, found.end()) or (cause and _APOLOGY_BUT.match(opening, cause.end()))
    disagrees = but and not _OWNED.search(_next_sentence(opening, but.end()))  # not "Sorry, but I broke it"
    if _APOLOGY.search(found.group()) and (_REFUSAL.search(sentence) or disagrees):
        return None
    return found.group()


def _may_admit(opening: str) -> bool:
    """Whether an admission's words may open the answer: a scan for their literals costs ~4 µs.

    Trying the regexes at every place of the window costs ~15 µs an answer; four in five hold none.
    """
    literals = _admission_literals()
    return literals is None or bool(literals.present(opening[: LEAD + 40]))


@functools.cache
def _admission_literals() -> Literals | None:
    """Literals one of which every match of `_ADMISSION` and `_BARE_APOLOGY` holds (None: not known).

    Found in the patterns themselves (`gated`), so new words of an admission need no list here.
    """
    groups = [GatedPattern(pattern.pattern).anchors for pattern in (_ADMISSION, _BARE_APOLOGY)]
    if not all(groups):
        return None
    return Literals(literal for anchors in groups for literal in anchors[0])


def _owned_after_apology(opening: str) -> re.Match[str] | None:
    """A bare "sorry" opening the answer whose sentence owns a mistake ("Sorry, but I broke it")."""
    apology = _BARE_APOLOGY.search(opening, 0, LEAD)
    if apology is None:
        return None
    rest = _APOLOGY_REST.match(opening, apology.end())
    return apology if rest and _OWNED.search(_next_sentence(opening, rest.end())) else None


# An apology's word from its start ("sorry", not the "scus" of "discuss"), and what ends it
_BARE_APOLOGY = re.compile(rf"(?<![a-z])(?:{_APOLOGY.pattern})")
_APOLOGY_REST = re.compile(r"\w*[ !！,，、.;:—–-]*")
# What an apology is for, up to its clause's end ("for the confusion", "la confusión", "за путаницу")
_APOLOGY_FOR = re.compile(r"[^,，、;:—–.!?。！？\n]{0,40}")


def _next_sentence(opening: str, start: int) -> str:
    """The sentence opening at `start`, past the Markdown and emoji between ("! **I used …**")."""
    rest = opening[start : start + 2 * LEAD].lstrip(_DECORATION)
    end = _SENTENCE_END.search(rest)
    return rest[: end.start()] if end else rest


_SENTENCE_END = re.compile(r"[.!?。！？\n]")


def _opening(agent_after: str) -> str:
    """The first OPENING characters of the answer, lower case, without its Markdown and emoji.

    Compatibility forms folded (fullwidth letters, a "ʼ" or "’" for the apostrophe) and
    invisible characters dropped: a zero-width space inside "you're" hides no admission.
    """
    opening = unicodedata.normalize("NFKC", agent_after[:OPENING]).translate(_INVISIBLE_AND_APOSTROPHES)
    return opening.lstrip(_DECORATION).lower()


_INVISIBLE_AND_APOSTROPHES = str.maketrans(
    "\u2019\u02bc", "''", "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"
)  # "’" and "ʼ" read as "'"; zero-width and direction marks dropped


# The person asked for the words themselves: "translate 'I'm sorry' into French", "how do I say
# excuse me in Japanese?", "write an apology note": the answer's "Désolé" admits nothing. A
# request only: "the French translation is wrong" may still be answered "You're right"
_ASKS_FOR_WORDS = re.compile(
    r"\btranslate\b|\btraduc(?:e|ir|i)\b|\btraduz|\btraduire\b|\bübersetze?\b|翻译成|翻訳して|\bпереведи|\bпереклади"
    r"|\bhow (?:do (?:i|you|we) |would (?:i|you) |to |can i )say\b"
    r"|\bapolog(?:y|ies|ize|ise)\b[^.?!\n]{0,40}\b(?:note|letter|e-?mail|message|text|post|tweet|reply)"
    r"|\b(?:note|letter|e-?mail|message|text|reply) (?:of|to) apolog"
)


def asks_for_words(text: str) -> bool:
    """Whether the message asks for words an admission may be made of (a translation, an apology)."""
    lowered = text.lower()
    return any(hint in lowered for hint in _WORDS_HINTS) and _ASKS_FOR_WORDS.search(lowered) is not None


# A literal every alternative of _ASKS_FOR_WORDS holds: most messages hold none (searched in C)
_WORDS_HINTS = ("transl", "tradu", "übersetz", "翻译", "翻訳", "перев", "перекл", "say", "apolog")


# Characters (a CJK one as three) under which the answer to the agent's question picks an option
# ("pnpm", "the second one"); a longer one may push back ("There is already a .env.sample at
# the root, how does this factor in?"), and the agent's admission then tells a correction
_PICK = 20
# An objection right after the yes opening an answer ("yeah but Redis is already running")
_BUT = re.compile(r"(?:but|pero|mais|aber|mas|ma|ale|но|однако)\b|但|不过|でも|하지만")


def picks_an_option(agent_before: str, text: str) -> bool:
    """Whether the message answers the agent's question with a pick: its "You're right" agrees with it.

    A brief answer, or a yes opening one at any length ("Oui, en mémoire, c'est plus simple"): it
    takes the offer and says why. Not a yes followed by an objection ("yes but Redis is running").
    """
    if not ends_asking(agent_before):
        return False
    words = prose(text)
    yes = A_YES.match(words) if accepts(words) else None
    return size(words) < _PICK or yes is not None and not _BUT.match(words, yes.end())


def answered(
    heard: Heard, agent_after: str, agent_before: str = "", first: bool = False, text: str = ""
) -> Heard:
    """`heard`, a correction too where the agent's answer to the message admits one.

    Never a session's first message with nothing before it to correct (a resumed session's
    first message follows the agent's text, and may correct it), nor a pick answering the
    agent's question (`agent_before` asked: "You're right" agrees with the person's pick), nor
    one to a message (`text`) asking for the words themselves.
    """
    fresh = first and not agent_before.strip()
    if heard.correction or fresh or not agent_after or picks_an_option(agent_before, text):
        return heard
    said = admission(agent_after)
    return (
        heard
        if said is None or asks_for_words(text)
        else replace(heard, correction=True, kind=ACKNOWLEDGED, cue=answer_cue(said))
    )


def answer_cue(said: str) -> str:
    """Why a message counts as a correction when the agent's answer admitted it, in words."""
    return f'the agent answered "{said}"'
