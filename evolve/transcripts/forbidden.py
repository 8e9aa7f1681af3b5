"""A negated order whose verb is what the agent just reported doing: "don't rename the files".

After "I renamed the files to kebab-case", "don't rename the files" forbids what the agent did:
it was wrong to. The order opens a sentence ("I don't rename by hand" speaks of the person); its
verb is the word after the negation ("don't", "не", "不要") or, where the negation follows it
("変更しないで", "수정하지 마"), the word before; it matches a word of the agent's text by its stem
("add" ↔ "added", "stop renaming" ↔ "renamed"), a shared prefix of five letters or more
("reformat" ↔ "reformatted"), or, in CJK text, its characters. Not a word the agent said it did
not do or only offers to ("I did not rename …", "没有删除", "I could rename …"). And what it
forbids is what the agent did: the order names no thing ("stop renaming", "do not retry,"), a
pronoun or "everything" ("don't rename them"), or a word of the agent's clause with that verb
("don't rename the files" ↔ "renamed the files"); "don't add tests yet" after "I added the
endpoint", "don't change anything else", "don't deploy until I say so" set the scope or the time
of the next work. Pure functions on folded words (`lexicons.prose`); standard library only (the
observer's path).
"""

from __future__ import annotations

import os
import re

from evolve.transcripts.sentences import SHORT, Spans, opens_a_sentence
from evolve.transcripts.words import stopwords

ORDERS = ("dont", "dont_before")  # the cue kinds: the verb after the negation, the verb before it

# Words between the negation and its verb ("don't ever touch", "不要再改", "не надо", "ne les renomme")
_FILLER = re.compile(
    r"(?:\s|(?:please|pls|ever|even|just|again|you|more|anymore|bitte|mehr|plus|надо|нужно|больше"
    r"|le|la|les|l'|lui|leur|me|te|nous|vous|se)\b"
    r"|再|去|要|给我|帮我|随便|乱|擅自|自己)*"
)
_LATIN_VERB = re.compile(r"[^\W\d_][\w'-]*")
_CJK = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af]")
_CJK_VERB = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af]{2}")  # two ideographs (or Hangul syllables)
_CJK_BEFORE = re.compile(r"[\u4e00-\u9fff\uac00-\ud7af]{2}\Z")
_PREFIX = 5  # letters two forms of one verb share at least ("reformat" ↔ "reformatted")
_ENDINGS = ("", "s", "es", "d", "ed", "ing")
# Verbs every request says (an order about how to talk or think, not about the work just done),
# and the short words a negation meets before its verb or instead of one ("stop for a while")
_GENERAL = frozenset(
    "be is are have has do does did get go make let know think worry forget mind hesitate want need "
    "see say tell ask try care like understand bother wait "
    "the a an for to in on of at by with and or it its this that my your all any pas".split()
)
# The agent's own negation, offer or plan shortly before the word: it did not do it ("I did not
# rename", "没有删"), only offers to ("I could rename them", "want me to rename") or will ("I'll add")
_NOT_DONE = re.compile(
    r"(?:\b(?:not|never|no|without|won't|didn't|don't|haven't|wasn't|could|would|should|can|may|"
    r"might|shall|want me to|if you(?: want| like)?|suggest|recommend|will|going to|about to|plan to|next)\b"
    r"|n't\b|'ll\b|不|没|未|않|안 )"
    r"[^.!?\n。！？]{0,40}\Z"
)
_NOT_DONE_REACH = 60  # characters before the agent's word its negation or offer is looked for in
# The order's very word in the agent's text reports doing it after a subject, an auxiliary or a
# list's dash ("I push", "j'ai renommé", "Saya mengubah", "đã sửa", "- Add type hints"), or names
# what it made ("added retry logic"); else it names a thing ("the build passes", "see commit abc123")
_DOER = re.compile(
    r"(?:^|\n|[-*•] |\d[.)] |\b(?:i|we|i've|we've|have|has|had|just|also|then|ai|avons|habe|hat|haben|ho|ha"
    r"|abbiamo|saya|kami|aku|toi|đa|vua|added|created|implemented|introduced|wrote|built|enabled|included"
    r"|inserted|set up)(?: (?:a|an|the|some|new|basic|simple))* )\Z"
)
_DOER_REACH = 30  # characters before the agent's word its subject or auxiliary is looked for in
# "migration", "installer", "изменения", "оновлення": a thing the act makes or does
_THING_ENDINGS = ("ion", "ions", "ment", "ments", "er", "ers", "or", "ors", "ние", "ния", "ний", "ння")
# A CJK verb the agent did: its aspect after it ("删除了", "修改过", "改完"), or its doer or
# "already" before it ("我删除", "已修改", "- 修改"); "这个修改很小", "部署脚本" name things
_CJK_DONE_AFTER = re.compile("[了过完好]")
_CJK_DOER = re.compile(r"(?:^|\n|[-*•] |已经?|刚刚?|我们?|并|都|也)\s*\Z")


def keep_orders(words: str, found: Spans) -> None:
    """Leave in `found` only the negations that give an order: opening a sentence of a brief reply."""
    for kind in ORDERS:
        spans = found.pop(kind, ())
        orders = [span for span in spans if span[1] < SHORT and opens_a_sentence(words, span[1])]
        if orders:
            found[kind] = orders


def verbs(words: str, found: Spans) -> list[tuple[int, re.Match[str]]]:
    """Each order's verb that can name the agent's work, and its negation's far edge (what a quote spans).

    Not a negated failure word: "не работает", "non funziona" after "it works now" report, order nothing.
    """
    after = ((span[1], _verb_after(words, span[2])) for span in found.get("dont", ()))
    before = ((span[2], _verb_before(words, span[1])) for span in found.get("dont_before", ()))
    failures = found.get("failure", ())
    return [
        (edge, verb)
        for edge, verb in (*after, *before)
        if verb
        and _telling(verb.group())
        and not any(start < verb.end() and verb.start() < end for _, start, end in failures)
    ]


def _telling(verb: str) -> bool:
    """Whether a verb can name the agent's work: CJK, or a Latin word no request says anyway."""
    if _CJK_VERB.fullmatch(verb):
        return True
    return len(verb) >= 3 and verb not in _GENERAL and verb not in stopwords()


def _verb_after(words: str, end: int) -> re.Match[str] | None:
    """The verb right after a negation ending at `end` ("don't ever *rename*", "不要*删除*")."""
    at = _FILLER.match(words, end)
    start = at.end() if at else end
    if _CJK.match(words, end - 1):  # "别Docker": a CJK negation's verb is CJK, a Latin word is a thing
        return _CJK_VERB.match(words, start)
    return _CJK_VERB.match(words, start) or _LATIN_VERB.match(words, start)


def _verb_before(words: str, start: int) -> re.Match[str] | None:
    """The verb right before a negation that follows it ("*変更*しないで", "*수정*하지 마")."""
    return _CJK_BEFORE.search(words, max(0, start - 2), start)


# Where a clause ends: a mark, or a word joining the next one ("don't add tests yet, just finish …",
# "renamed the files and updated the imports")
_CLAUSE_END = re.compile(
    r"[,;:.!?\n，。！？；：、]|\s(?:and|but|just|instead|then|because|since|und|aber|sondern|et|mais|e|ma|mas"
    r"|y|pero|и|но|а|і|та|але|i|ale|dan|tapi|và|nhưng)\b|但|然后|并|就|而"
)
_CLAUSE_START = re.compile(
    r".*(?:[,;:.!?\n，。！？；：、]|\s(?:and|but|just|then|и|но|und|et|mais|e|ma)\b)", re.DOTALL
)
_CLAUSE_REACH = 120  # characters a clause is looked for in on either side of its verb
# A word of the order that sets the scope or the time of the next work, not the agent's last:
# "anything else", "the other files", "the rest", "yet", "until I say so", "this time", "先别"
_SCOPE = re.compile(
    r"\b(?:else|other|others|another|rest|either|more|further|additional|sonst|andere[nmrs]?|weitere[nmrs]?"
    r"|autres?|reste|другие|другое|других|другой|остальн\w*|ещё|еще|інш\w*|решт\w*|inn[eya]\w*|reszt\w*"
    r"|outr[oa]s?|resto|altr[ieo]|lain\w*|khác)\b|其他|其它|别的|其余|另外|更多|他の|ほかの|その他|以外|다른|나머지"
)
_LATER = re.compile(
    r"\b(?:yet|until|till|unless|before|for now|this time|noch|bis|erst|avant|jusqu|пока|поки|jeszcze|dopóki"
    r"|ainda|até|antes|finché|prima|dulu|sampai|sebelum|chưa|trước)\b|先|暂时|之前|まだ|前に|までは|아직|전에|까지"
)
# A word that says the agent's act is not to be repeated: the act was unwanted, whatever the time
_REPEAT = re.compile(r"\b(?:again|anymore|any more|mehr|plus|больше|більше|więcej|lagi|nữa)\b|再|もう|다시")
# Words of a clause that name no thing: articles, pronouns, prepositions, "please", "everything"
_NAMELESS = frozenset(
    "i we you me us my our your it its it's that this these those them they he she him her there here what "
    "the a an to in on of at for from with by into onto as so any anything everything all do please pls "
    "ever even just again anymore now up down out off over back away "
    "die der das den dem des ein eine einen es sie ihn ihm bitte so im an auf mit zu von für alles nichts "
    "le la les l un une des du de d ce ça cela ceci en y à au aux pour dans sur avec pas me te nous vous lui "
    "leur tout rien il lo i gli le di da su con per questo questa quello ciò li tutto niente non "
    "o os as um uma do da dos das em no na com por para isso isto eles elas tudo nada não "
    "их его её ее это этого эти то так в на с из к по для мне нам тебе всё все ничего пожалуйста надо нужно "
    "не уже їх його її це цього ці у з до мені будь ласка нічого ich go jej tego te tak w z dla mi proszę "
    "już nic nie wszystko itu ini nya tersebut ke dari yang dengan untuk tolong semua jangan nó cái này đó "
    "các những của ở vào trong với nhé đừng "
    "它 它们 这个 那个 这些 那些 这里 一切 所有 これ それ あれ 全部 이것 이거 그거 저거 그것 모두".split()
)
# A word that says where the thing is, and opens what names it: "add type hints *to* the tests"
_WHERE = re.compile(
    r"\b(?:to|in|into|inside|on|at|for|from|under|within|im|auf|für|dans|pour|sur|em|no|na|para|nel|per|su"
    r"|в|во|на|для|у|w|dla|di|ke|untuk|pada|ở|cho|trong)\b"
)
_WIDE_RUN = re.compile(r"[\u30a0-\u30ff\u4e00-\u9fff\uac00-\ud7af]+")  # katakana, CJK, Hangul: no particles
# Chinese particles and measure words between the characters of things ("新的分支": "新", "分支")
_PARTICLE = re.compile("[的了个一把被在和与及是也都]")
_CONTENT = re.compile(_WIDE_RUN.pattern + r"|[^\W\d_\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af][\w'-]*")


def forbids_named(words: str, edge: int, verb: re.Match[str]) -> tuple[frozenset[str], ...] | None:
    """What an order names beside its verb: its object, and each place it names ("to the tests").

    Each group a thing of its own; none for "stop renaming", "don't rename them", "never push
    directly". None where it sets the scope or the time of the next work ("don't change anything
    else", "don't add tests yet", "don't deploy until I say so"); "don't push again" is about the push done.
    """
    before, after = _clause(words, min(edge, verb.start()), max(edge, verb.end()))
    clause = before + " " + after
    if _SCOPE.search(clause) or _LATER.search(clause) and not _REPEAT.search(clause):
        return None
    groups = (_things(part) for part in _WHERE.split(clause))
    return tuple(group for group in groups if group)


def done_by_agent(verb: str, agent_words: str, named: tuple[frozenset[str], ...] = ()) -> str | None:
    """The agent's word that is a form of `verb`, each thing the order `named` alike in its clause.

    Not where the agent's text denies doing it, only offers to or says it will.
    """
    if _CJK_VERB.fullmatch(verb):
        spots = [(found.start(), verb) for found in re.finditer(re.escape(verb), agent_words)]
    else:
        stem = _stem(verb)
        words = _LATIN_VERB.finditer(agent_words)
        spots = [(word.start(), word.group()) for word in words if _same_verb(stem, word.group())]
    for at, word in spots:
        if _NOT_DONE.search(agent_words, max(0, at - _NOT_DONE_REACH), at):
            continue
        if not _reports_doing(agent_words, at, word, verb):
            continue
        agents = _things(" ".join(_clause(agent_words, at, at + len(word))))
        if all(_overlap(group, agents) for group in named):
            return word
    return None


def _reports_doing(agent_words: str, at: int, word: str, verb: str) -> bool:
    """Whether the agent's `word` at `at`, a form of the order's `verb`, says it did it, not names a thing."""
    if _CJK_VERB.fullmatch(verb):
        done = _CJK_DONE_AFTER.match(agent_words, at + len(word))
        return done is not None or _CJK_DOER.search(agent_words, max(0, at - 3), at) is not None
    if word != verb:
        return not word.endswith(_THING_ENDINGS)  # "renamed", "running", "переименовал"; not "migration"
    return _DOER.search(agent_words, max(0, at - _DOER_REACH), at) is not None


def order_clause(words: str, edge: int, verb: re.Match[str]) -> tuple[int, int]:
    """Where the clause of an order (its negation's far edge `edge`, its verb) starts and ends."""
    before, after = _clause(words, min(edge, verb.start()), max(edge, verb.end()))
    return min(edge, verb.start()) - len(before), max(edge, verb.end()) + len(after)


def _clause(words: str, start: int, end: int) -> tuple[str, str]:
    """The words of the clause of `words[start:end]` before it and after it."""
    head = words[max(0, start - _CLAUSE_REACH) : start]
    opening = _CLAUSE_START.match(head)
    tail = words[end : end + _CLAUSE_REACH]
    closing = _CLAUSE_END.search(tail)
    return head[opening.end() if opening else 0 :], tail[: closing.start() if closing else len(tail)]


def _things(words: str) -> frozenset[str]:
    """The words of a clause that can name a thing: no pronoun or article; CJK by pairs of characters."""
    things: set[str] = set()
    for word in _CONTENT.findall(words):
        if word in _NAMELESS or len(word) > 4 and word.endswith("ly"):  # "blindly": a manner, no thing
            continue
        if _WIDE_RUN.fullmatch(word):  # pairs of characters within the runs between particles
            pairs = {run[at : at + 2] for run in _PARTICLE.split(word) for at in range(len(run) - 1)}
            things.update(pair for pair in pairs if pair not in _NAMELESS)
        else:
            things.add(word)
    return frozenset(things)


def _overlap(named: frozenset[str], agents: frozenset[str]) -> bool:
    """Whether the order and the agent's clause name a thing alike ("files" ↔ "file", "файлы" ↔ "файлов")."""
    return any(_alike(one, other) for one in named for other in agents)


def _alike(one: str, other: str) -> bool:
    """One word, or two forms of one: a shared prefix of four letters or more, all but two of the shorter."""
    if one == other:
        return True
    shared = len(os.path.commonprefix((one, other)))
    return shared >= 4 and shared >= min(len(one), len(other)) - 2


def _stem(word: str) -> str:
    """An English form without its -ing / -ed / -s ("adding" → "add", "renames" → "renam")."""
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            base = word[: -len(ending)]
            return base[:-1] if len(base) > 3 and base[-1] == base[-2] else base
    return word


def _same_verb(stem: str, word: str) -> bool:
    """Whether `word` is a form of the verb `stem`: a long enough shared prefix, or the same stem."""
    if len(stem) >= _PREFIX:
        return word[:_PREFIX] == stem[:_PREFIX]
    if not word.startswith(stem[:-1] if stem.endswith("e") else stem):
        return False
    return _stem(word) == stem or word in {stem + ending for ending in _ENDINGS} or word == stem[:-1] + "ing"


def outside(found: Spans, clauses: list[tuple[int, int]]) -> Spans:
    """`found` without the cues that lie within any of `clauses`."""
    kept: Spans = {}
    for kind, spans in found.items():
        left = [s for s in spans if not any(start <= s[1] and s[2] <= end for start, end in clauses)]
        if left:
            kept[kind] = left
    return kept
