"""Hearing a standing preference: the person says how things are done from now on.

"Always …", "from now on …", "we use X here", "answer in German": the cues of cues.toml
(`standing`, `standing_lead`, `rule`, `speak` with `in_language`), weighed by where they
stand in the message. Standard library only (the observer's path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evolve.transcripts.sentences import (
    SENTENCE,
    SENTENCE_END,
    SHORT,
    ends_asking,
    is_question_at,
    opens_a_sentence,
    sentence_end,
    size,
)

Spans = dict[str, list[tuple[str, int, int]]]  # kind -> (language, start, end), in text order


def preference(
    words: str,
    found: Spans,
    first: bool = False,
    offered: Callable[[], bool] = lambda: False,
    agent_words: Callable[[], str] = lambda: "",
) -> tuple[str, str] | None:
    """(language, cue) when the message states how things should be done from now on.

    In a session's first message, a language to speak in counts in its opening sentence only
    ("Talk to me in Portuguese, …" sets the session; ".md files all in Japanese" deep in a
    long first task is about its documents). `offered`: whether the agent's text before offered
    options ("I prefer the second one" then picks one); `agent_words`: the agent's text before,
    folded (read only where a language stands alone).
    """
    spans = [
        span
        for span in found.get("standing", ())
        if not _reminds(words, span)
        and not _of_a_thing(words, span)
        and not _forgot_by_another(words, span)
        and not _tells_a_failure(words, span, found)
    ]
    rules = found.get("rule", []) if size(words) < SHORT else []  # a rule of a long new request is its spec
    stops = [span for span in rules if _of_the_moment(words, span) and not _scoped(words, span)]
    spans += [span for span in rules if span not in stops]

    spans += [
        span
        for span in found.get("standing_lead", ())
        if (
            opens_a_sentence(words, span[1])
            or _after_ne(words, span)
            or _instead_of_a_stop(words, span, stops, found.get("failure", ()))
        )
        and not _describes(words, span)
        and not _reminds(words, span)
        and not _means_still(words, span, found)
        and not _wishes_once(words, span, found)
        and not _a_things_default(words, span)
        and not (span[1] == 0 and _picks(words, found, offered))
    ]
    spans = [span for span in spans if not _configures(words, span)]
    languages = _answer_in_a_language(words, found, agent_words)
    spans += [span for span in languages if not first or _opening(words, span)]
    for lang, start, end in sorted(spans, key=lambda span: span[1]):
        if _later_for_another(words, start, end):
            continue
        if not is_question_at(words, end) or _SAID_AGAIN.search(words, start, end):
            return lang, f"states a standing preference: “{words[start:end].strip()}”"
    return None


# "do you always …?" asks, it does not instruct; "how many times do I have to tell you …?", "we
# keep mentioning this, why …?", "already forgot …?" only sound like questions: the rule was given
# before (the `standing` cues of a rule said again, in every lexicon language; the words are folded).
# Forgotten, not "in case you forget" ("… se te olvida", "… tu oublierais"), which asks when asked
_SAID_AGAIN = re.compile(
    r"\b(?:keep (?:telling|saying|mentioning|asking|repeating)|how many times|forgot|forget again"
    r"|olvido|olvidaste|oublie|vergessen|esqueceu|dimenticat\w*)\b|zapomnia|забыл|забув|又忘|忘了|また忘"
    r"|cuantas veces|combien de fois|wie oft|quante volte|quantas vezes|сколько раз|скільки разів|ile razy"
    r"|多少次|多少遍|何度|何回"
)
# Those and the cues of a reminder or of a rule told before, whose matter may be a failure; not in
# a question ("Did I remind you to push?", "Have I told you this before?" ask)
_GIVEN_BEFORE = re.compile(
    _SAID_AGAIN.pattern + r"|\b(?:told you|remind|repeat myself)\b"
    r"|recuerdo|rappelle|erinnere|oft gesagt|lembro|ricordo|напомина|нагаду|przypomin|提醒"
)
# A condition before a failure: "if the build fails, do not merge" is a rule for that case
_CONDITION = re.compile(
    r"\b(?:when|if|whenever|unless|until|once|cuando|si|quand|lorsque|wenn|falls|sobald|se|quando"
    r"|если|когда|якщо|коли|jesli|jezeli|gdy|kiedy)\b|如果|当|とき"
)


def _tells_a_failure(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a rule said again tells of a failure rather than how to work.

    "I keep telling you the build is broken", "te recuerdo que el login no funciona": a symptom
    said again, a correction's matter. The failure in the clause told, not in a later one ("we keep
    mentioning this same thing, please tell me why you are unable to …" says how to work), and no
    "same (thing)" that is the repetition itself.
    """
    _, start, end = span
    if not _GIVEN_BEFORE.search(words, start, end):
        return False
    stop = _sentence_end_at(words, end)
    repeated = {at for _, at, _ in found.get("again", ())}
    return any(
        end <= at < stop
        and at not in repeated
        and not _CLAUSE_BREAK.search(words[end:at].lstrip(" ,:;，："))
        and not _CONDITION.search(words, end, at)
        for _, at, _ in found.get("failure", ())
    )


# "I prefer …", "prefiro …" opening the answer to the agent's question: it picks one of the options
# offered, for this task ("I prefer to drop them", "prefiro a segunda")
_CHOICE = re.compile(
    r"(?:i|we|je|on) (?:prefer|prefere)\b|(?:i'd|i would) rather\b|prefiro|prefiero|preferisco|preferimos"
    r"|preferiamo|prefere|preferuj"
)


def _picks(words: str, found: Spans, offered: Callable[[], bool]) -> bool:
    """Whether "I prefer …" opening the message picks one of the options the agent offered.

    An "always" / "never" in its sentence makes it a rule for later, whatever was asked ("I prefer
    you always ask before installing", "prefiro que você sempre escreva os testes primeiro").
    """
    if not _CHOICE.match(words):
        return False
    stop = _sentence_end_at(words, 0)
    for span in found.get("standing_lead", ()):
        if 0 < span[1] < stop and not _describes(words, span) and not _means_still(words, span, found):
            return False
    return offered()


# "configure it to always use this key", "set up so we never have to log in", "настроить …
# без моего разрешения", "今後は…設定ファイルを書き換えて": a setting is asked for and will hold the
# rule; the agent has nothing to keep in mind (the words are folded: "設定" is read as "设定", "й" as "и").
# A settings file or page named is no setting asked for unless it is changed ("いつも設定ファイルを
# 確認してから始めて" is how to work, as "Always keep the config in sync" is)
_CONFIGURE = re.compile(
    r"\b(?:configure[ds]?|configuring|set (?:it |this |that |things |everything )?up so|gitignore"
    r"|configur(?:ar|er|ez|a|e)|konfigurier[a-z]*|einstellen|настро(?:и|ите|ить|ил|ила|или))\b"
    r"|(?:设定|配置)(?!ファイル|文件|档|画面|页|项|值|値)|全局"
    r"|(?:设定|配置)(?:ファイル|文件|档)[^。!?]{0,40}?(?:書き换|変更|变更|編集|编辑|修改|更新|改成|写入|書い)"
    r"|(?:修改|更新|编辑|改)(?:一下)?(?:设定|配置)"
)


# Between a standing cue and the configuring verb it rules: "always configure", "from now on always
# configure", "never, configure" (at most one word: "from now on, configure git so …" is too far off)
_BEFORE_THE_VERB = re.compile(r"[ ,]*(?:[^\W\d_]+ )?")


def _configures(words: str, span: tuple[str, int, int]) -> bool:
    """Whether the sentence holding a standing cue asks to configure something that will keep it.

    A cue just before the configuring verb ("always configure new services with TLS", "nunca
    configures nada globalmente") makes configuring the habit asked for, not a setting that keeps
    a rule.
    """
    _, at, end = span
    opening = _sentence_start(words, at)
    framed = _after_ne(words, span)  # "Ne configure jamais …": the verb inside "ne … jamais" is the habit
    return any(
        not (framed and verb.end() <= at)
        and (verb.start() < end or _BEFORE_THE_VERB.fullmatch(words, end, verb.start()) is None)
        for verb in _CONFIGURE.finditer(words, opening, _sentence_end_at(words, at))
    )


def _sentence_start(words: str, at: int) -> int:
    """Where the sentence holding `at` opens, past its spaces."""
    opening = max((m.end() for m in SENTENCE_END.finditer(words, max(0, at - SENTENCE), at)), default=0)
    return len(words) - len(words[opening:].lstrip()) if opening < at else opening


# French puts "jamais" after its verb: "Ne configure jamais le proxy", "N'utilise jamais var" and
# "Ne jamais utiliser var" open a sentence with a rule as "Never …" does; not a verb of working
# whose subject was dropped ("(ça) ne marche jamais sur Firefox": it reports, it asks no habit)
_NE = re.compile(r"(?:ne |n')(?!(?:marche|fonctionne) )(?:[^\W\d_]+ )?")


def _after_ne(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a standing cue comes right after the "ne" (and one verb) opening its sentence."""
    _, at, _ = span
    return (
        words[at:].startswith("jamais") and _NE.fullmatch(words, _sentence_start(words, at), at) is not None
    )


# "toujours" is "always" and "still", "immer" opens "immer noch" ("still"): inside a "still", a
# standing cue says still when the sentence ends there, a negation, "the same" or a noun's article
# follows (what is still there, not what to do: "toujours le vieux titre" against "toujours utiliser
# const"), or the sentence reports a failure ("toujours pas", "toujours la même erreur", "toujours ...")
_STILL_AFTER = re.compile(
    r" *(?:[.…!?,;:]|\Z)| +(?:pas|rien|aucune?|plus|pareil|pareille"
    r"|le|la|les|l|un|une|des|du|ce|cet|cette|ces)\b"
)


def says_always(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a "still" (persist) cue opening a sentence is a standing "always" cue here."""
    leads = found.get("standing_lead", ())
    return span in leads and opens_a_sentence(words, span[1]) and not _means_still(words, span, found)


def _means_still(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a cue that is also a "still" (persist) cue reads as "still" here, not "always"."""
    _, start, end = span
    holding = [p_end for _, p_start, p_end in found.get("persist", ()) if p_start <= start and end <= p_end]
    if not holding:
        return False
    stop = _sentence_end_at(words, end)
    fails = any(end <= f_start < stop for _, f_start, _ in found.get("failure", ()))
    still_after = _STILL_AFTER.match(words, end) is not None and not _FIRST.search(words, end, stop)
    return max(holding) > end or fails or still_after


# An order of work says how to work, not what is still there: "toujours les tests d'abord" (always
# tests first), "immer die Doku zuerst", against "toujours le vieux titre"
_FIRST = re.compile(r"\b(?:d'abord|en premier|avant tout|en priorite|zuerst|als erstes)\b")


# "stop using X", "deja de …", "хватит …": an order to stop what the agent is doing now (a
# correction of the moment), not how to work from now on ("never use X", "without asking me" and
# "stop asking me" are)
_STOP_ORDER = re.compile(
    r"(?:stop|hor auf|deja de|arrete de|pare de|para de|prestan|перестань|хватит|berhenti|smetti(?:la)? di"
    r"|досить|przestan),? "
    r"(?!(?:zu |se |me |mi )?(?:ask|frag|pregunt|demand|pergunt|спраш|питат|pyta|chied|bertanya|pt))"
)


# "내 시간 낭비하지 마" ("don't waste my time"), "추측하지 마" ("stop guessing"), "거짓말하지 마": what
# the agent does wrong now, like English "stop guessing"; its "하지 마" ("don't") is no rule for later
_WASTING = re.compile(r"(?:낭비(?:하게 )?|추측|짐작|가정|거짓말|지어내|무시|과장)\Z")


def _of_the_moment(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a rule cue orders the agent to stop what it does now, or to stop wasting time."""
    start = span[1]
    return (
        _STOP_ORDER.match(words, start) is not None
        or _WASTING.search(words, max(0, start - 8), start) is not None
    )


# Beyond the moment, in the stop order's sentence: "stop using tabs in this project", "stop adding
# emojis, ever" (the other lexicon languages' "en este proyecto", "nie wieder" are standing cues)
# "stop using em dashes in anything you write" (what the agent writes, from now on)
_STANDING_SCOPE = re.compile(
    r"\b(?:in (?:this|our) (?:project|repo|repository|codebase)|ever"
    r"|(?:any|every)thing you (?:write|say|send|produce|generate))\b"
)


def _scoped(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a stop order's sentence says it holds beyond this task."""
    end = span[2]
    return _STANDING_SCOPE.search(words, end, _sentence_end_at(words, end)) is not None


def _instead_of_a_stop(
    words: str,
    span: tuple[str, int, int],
    stops: Sequence[tuple[str, int, int]],
    failures: Sequence[tuple[str, int, int]],
) -> bool:
    """Whether an "always" / "never" cue follows a stop order in its sentence: what to do instead.

    "stop using var, always use const", "deja de usar var, usa siempre const": the stop order
    sets a rule for later once the same sentence says how to work from now on. Not what the
    stopped thing does: "…, it's always wrong", "…, siempre falla" (a failure right after).
    """
    _, start, end = span
    after = [
        stop_end
        for _, _, stop_end in stops
        if stop_end <= start and _sentence_end_at(words, stop_end) >= start
    ]
    if not after:
        return False
    clause = _CLAUSE_BREAK.split(words[max(after) : start])[-1].strip()
    fails = any(0 <= f_start - end <= 1 for _, f_start, _ in failures)
    return not _SUBJECT.match(clause) and not fails


_CLAUSE_BREAK = re.compile(r"[,;，；]")
# A subject opening the clause before "always": it tells what something does, not how to work
_SUBJECT = re.compile(
    r"(?:it|it's|that|that's|this|they|which|he|she|eso|esto|c'est|il|elle|das|es|er|sie|это|он|она|оно)\b"
)


def _sentence_end_at(words: str, index: int) -> int:
    """Where the sentence holding `index` ends (the dot of "moment.js" ends none)."""
    mark = sentence_end(words, index)
    return mark.start() if mark else len(words)


# A finished verb after "always" / "never" ("but never used", "so it always returns null"):
# what something does, not how to work ("never embed", "always pass" are instructions)
_DESCRIBED = re.compile(r" +[a-z]+(?:(?<![eb])ed|(?<![sui])s)\b")


def _describes(words: str, span: tuple[str, int, int]) -> bool:
    """Whether an "always" / "never" cue goes on describing, not instructing."""
    _, start, end = span
    return words[start:end].strip() in ("always", "never") and _DESCRIBED.match(words, end) is not None


# "remember" (or "I remind you") before a fact of the task at hand ("remember we already have a
# logger", "remember we will have custom tables", "remember this only applies to …", "I remind you
# that we already …"): a reminder, not a rule for later
# ("remember when you open a PR, …" and "remember, we are a tabs shop" may be rules). The words are
# folded: "já", "già" are read as "ja", "gia"
_REMINDER = re.compile(
    r"(?:remember|recuerda|lembre-se|lembra|rappelle-toi|ricorda"
    r"|(?:i )?remind you|te recuerdo|je te rappelle|ti ricordo|te lembro"
    r"|ich erinnere dich daran|напоминаю|нагадую|przypominam|提醒你)(?: that| que| che)?\Z"
)
_FACT_OF_THE_TASK = re.compile(
    r",? +(?:(?:that|que|che) )?(?:we(?:'ll| already| will| won't| have| had)|this only|ya|ja|gia)\b"
)
# A reminder dated today or tomorrow ("the deadline is tomorrow", "завтра релиз", "przypominam, że
# jutro …", "明天要发布") is of an event of the moment; "from tomorrow on", "à partir de demain", "ab
# morgen", "da domani", "从明天", "明日から" start a rule (folded words: "mañana" is read as "manana")
_OF_THE_DAY = re.compile(
    r"(?<!from )(?<!starting )(?<!partir de )(?<!\bab )(?<!\bda )(?<!jeden )"
    r"\b(?:today|tomorrow|tonight|this (?:morning|afternoon|evening)|hoy|manana|esta (?:tarde|noche)"
    r"|aujourd'hui|demain|ce soir|heute|morgen|oggi|domani|stasera|hoje|amanha"
    r"|сегодня|завтра|сьогодні|dzisiaj|dzis|jutro)\b"
    r"|(?<!从)(?:今天|明天|今晚|今日|明日)(?!から|起|开始)"
)


def _reminds(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a "remember" cue reminds of a fact of this task or of the day rather than setting a rule."""
    _, start, end = span
    if _REMINDER.match(words[start:end].strip()) is None:
        return False
    of_the_day = _OF_THE_DAY.search(words, end, _sentence_end_at(words, end)) is not None
    return of_the_day or _FACT_OF_THE_TASK.match(words, end) is not None


# Told or reminded again "about" / "of" a thing, asked again "for" or "whether" ("I remind you of
# the demo", "I keep asking you for the logs", "how many times have I told you about this bug",
# "напоминаю о встрече", "przypominam o spotkaniu", "нагадую про зустріч"): a subject or a request
# said again, no rule
_TELLS_AGAIN = re.compile(
    r"(?:(?:telling|asking|reminding|told|remind) you|\btold|напоминаю|нагадую|przypominam)\Z"
)
# (", if …" after the cue is a rule's case: "I keep telling you, if the build fails, …")
_OF_A_THING = re.compile(r" +(?:you +)?(?:about|of|for|whether|if|о|об|обо|про|o)\b")
# "You forgot again" (or "in case you forget") before an article or a "what" forgot a thing ("…
# the semicolon", "… le nom du fichier", "… what the error said", "… your password"), not a rule
# ("… to run the migrations", "… que los tests van primero"); Slavic nouns have no article: a thing
# unless an infinitive or a "that" follows ("забыл импорт" against "забыл запустить линтер", "забыл,
# что …", "zapomniałeś uruchomić") (folded words: "oublié" is read as "oublie", "uruchomić" as
# "uruchomic")
_FORGOT = re.compile(  # and "in case you forget", "por si se te olvida", "au cas où tu oublierais" …
    r"(?:(?:forgot|olvido|oublie|esqueceu|dimenticato)(?: again| otra vez| de novo)?"
    r"|forget|olvida|oublierais|esqueca|dimentichi)\Z"
)
_A_THING_FORGOTTEN = re.compile(
    r",? +(?:(?:the|a|an|my|your|its|our|their|what|where|which|how|who|el|la|los|las|un|una|mi|tu|su|sus"
    r"|donde|como|cual|le|les|du|des|mon|ma|mes|ton|ta|tes|son|sa|ses|ce|cette|ou|comment|quel|quelle|quels"
    r"|quelles|o|os|as|um|uma|meu|minha|seu|sua|onde|il|lo|gli|i|dove|come|quale|chi)\b|l')"
)
_SLAVIC_FORGOT = re.compile(r"(?:забыл|забыла|забув|забула|zapomnia\w*)\Z")
_SLAVIC_THING_FORGOTTEN = re.compile(
    r",? +(?!(?:что|чтобы|що|щоб|ze|zeby|aby)\b|\w+(?:ть|ти|чь|ться|тись|тися|c)\b)\w"
)


def _of_a_thing(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a cue of a rule said again is said of a thing: told about it, asked for it, forgot it."""
    _, start, end = span
    cue = words[start:end].strip()
    if _TELLS_AGAIN.search(cue):
        return _OF_A_THING.match(words, end) is not None
    if _FORGOT.search(cue):
        return _A_THING_FORGOTTEN.match(words, end) is not None
    return _SLAVIC_FORGOT.search(cue) is not None and _SLAVIC_THING_FORGOTTEN.match(words, end) is not None


# Forgotten by the person or someone else, not by the agent: "我又忘了密码", "Ich habe schon wieder
# vergessen …", "Я опять забыл …", "Ele já esqueceu …" (the cues of the other lexicon languages
# name the agent: "you forgot", "tu as oublié", "se te olvidó", "zapomniałeś", "hai dimenticato")
_FORGOTTEN = re.compile(r"vergessen|забыл|забув|esqueceu|忘")
_ANOTHER_SUBJECT = re.compile(
    r"\b(?:ich|er|wir|я|он|она|мы|они|він|вона|ми|вони|eu|ele|ela|eles|elas)\b|我|他|她"
)


def _forgot_by_another(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a cue of a rule forgotten again follows a subject other than the agent in its clause."""
    _, start, end = span
    forgot = _FORGOTTEN.search(words, start, end) is not None
    return forgot and _ANOTHER_SUBJECT.search(_clause_before(words, start)) is not None


def _opening(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a cue stands in the message's opening sentence."""
    end = SENTENCE_END.search(words)
    return span[1] < SENTENCE and (end is None or span[2] <= end.start())


def _answer_in_a_language(
    words: str, found: Spans, agent_words: Callable[[], str]
) -> list[tuple[str, int, int]]:
    """A language and, in its sentence, a verb of speaking or "all" / "always", or nothing but a "please".

    "answer in German", "пиши на русском"; "put all titles in English", "todo el código siempre en
    inglés": the language of whatever the agent writes, not of one answer or one file. Beside "all",
    not a state ("the labels are all in English"), a sight or a translation's language. Alone, not
    the answer to the agent's question of which language.
    """
    languages = found.get("in_language")
    if not languages:
        return []
    spoken = _beside(words, languages, found.get("speak", ()))
    told = [span for span in _beside(words, languages, found.get("whole", ())) if not _as_it_is(words, span)]
    alone = [span for span in languages if _alone(words, span)]
    if alone and _TRANSLATION.search(words):  # "Traduis ce paragraphe. En anglais.": what to translate into
        alone = []
    if len({words[start:end] for _, start, end in alone}) > 1:  # "1. In English 2. In Spanish": items
        alone = []
    return spoken + told + [span for span in alone if not _asked_which_language(agent_words(), words, span)]


# What may stand beside a language that is a sentence of its own: "日本語でお願いします", "em
# português", "en anglais !", "In German please" ask the agent to talk in it (the words are folded:
# "proszę" is read as "prosze", "й" as "и")
_POLITE = frozenset(
    (
        "please", "pls", "plz", "por favor", "bitte", "per favore", "prosim", "prosze", "tolong", "lutfen",
        "пожалуиста", "будь ласка", "s'il te plait", "s'il vous plait", "お願いします", "お願い",
        "请", "谢谢", "부탁해요", "부탁합니다", "",
    )
)  # fmt: skip
_BESIDE = " ,.!;:-–—…。！，、"


def _alone(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a language is a sentence of its own, with at most a "please" before or after it."""
    _, start, end = span
    opening = _sentence_start(words, start)
    if _NUMBERED.search(words, max(0, opening - 4), opening):  # "2. In Spanish": an item of a list
        return False
    before = words[opening:start].strip(_BESIDE)
    closing = SENTENCE_END.search(words, end)  # "。" too: "日本語でお願いします。現在…"
    after = words[end : closing.start() if closing else len(words)].strip(_BESIDE)
    return before in _POLITE and after in _POLITE


_NUMBERED = re.compile(r"(?<![\w.])\d{1,2}[.)] *\Z")


# The agent's question of which language ("Which language should the README be in?", "en français
# ou en anglais ?", "На каком языке писать документацию?", "何語で書きますか？"): a language alone
# after it picks the language of what was asked about, for this task, as "I prefer the second one"
# picks an option (folded words: "języku" is read as "jezyku"; "мов…" is Ukrainian's "language")
_LANGUAGE_WORD = re.compile(
    r"\b(?:languages?|locales?|idiomas?|langues?|sprachen?|lingu[ae]|jezyk\w*|jazyk\w*|jazyc\w*"
    r"|язык\w*|мов(?:а|и|у|ою|ами)|dil(?:de|i|inde)?|ngon ngu)\b|语言|言語|何語|언어|भाषा"
)
# unless it asks how it should talk to the person ("Should I answer in Spanish or in English?",
# "На каком языке тебе отвечать?"): then the answer is how to talk
_TALK = re.compile(
    r"\b(?:answer|respond|reply|talk|speak|communicate|chat|responda|responder|contestar|hablar|repondre"
    r"|reponde|parler|antworten|antworte|sprechen|rispondere|rispondo|parlare|falar|odpowiadac|rozmawiac)\b"
    r"|отвеча|говорить|общаться|відповіда|回答|回复|交流|返答|話"
)
_QUESTION_TAIL = 300  # characters before the agent's last question mark that may hold its question
_LANGUAGE_CUE_EDGES = "用で으로 "  # beside a language's name in a cue: "用中文", "日本語で", "영어로"


def _asked_which_language(agent: str, words: str, span: tuple[str, int, int]) -> bool:
    """Whether the agent's text before ends asking which language for a thing, or names the one answered."""
    if not agent or not ends_asking(agent):
        return False
    mark = max(agent.rfind("?"), agent.rfind("？"))
    tail = agent[max(0, mark - _QUESTION_TAIL) : mark]
    opening = max((found.end() for found in SENTENCE_END.finditer(tail)), default=0)
    question = tail[opening:]
    if _TALK.search(question):
        return False
    name = words[span[1] : span[2]].split()[-1].strip(_LANGUAGE_CUE_EDGES)
    return _LANGUAGE_WORD.search(question) is not None or (bool(name) and name in question)


def _beside(
    words: str, languages: Sequence[tuple[str, int, int]], cues: Sequence[tuple[str, int, int]]
) -> list[tuple[str, int, int]]:
    """The languages with one of `cues` in their sentence."""
    return [
        (lang, start, end)
        for lang, start, end in languages
        if any(
            abs(start - c_start) < SENTENCE
            and not SENTENCE_END.search(words, min(c_end, end), max(c_start, start))
            for _, c_start, c_end in cues
        )
        and not _OTHER_SPEAKER.search(_clause_before(words, start))
    ]


# Someone or something else that speaks: "a bot that replies in Italian", "so users can
# speak to it in German", "write the app's UI in Spanish", "the product's labels always in English"
# set the language of the work, in every lexicon language (the words are folded: "aplicación" is
# "aplicacion"; kanji read as simplified Chinese, so Japanese by its katakana)
_OTHER_SPEAKER = re.compile(
    r"\b(?:users?|customers?|visitors?|people|(?:chat)?bots?|apps?|ui|website|site|products?|labels?"
    r"|usuari[oa]s?|clientes?|productos?|aplicacion|etiquetas?|sitio"
    r"|produtos?|aplicativo|aplicacao|rotulos?"
    r"|utilisateurs?|clients?|produits?|application|etiquettes?"
    r"|benutzer|nutzer|kunden|produkte?|anwendung|beschriftung(?:en)?|webseite"
    r"|utenti|prodott[oi]|applicazione|etichett[ae]|sito"
    r"|uzytkownik\w*|klient\w*|produkt\w*|aplikac\w*|uzivatel\w*|zakaznik\w*"
    r"|пользовател\w*|клиент\w*|продукт\w*|приложени\w*|сайт\w*"
    r"|користувач\w*|продукт\w*|застосун\w*"
    r"|kullanici\w*|musteri\w*|urun\w*|uygulama\w*|pengguna|produk|aplikasi)\b"
    r"|用户|客户|产品|应用|网站|页面|标签|ユーザー|アプリ|プロダクト|サイト|ラベル|사용자|유저|고객|제품|앱|라벨"
)


def _clause_before(words: str, at: int) -> str:
    """The words of the clause holding `at`, up to it (at most SENTENCE characters).

    A comma, a colon or a "but" closes the clause: "as a product manager, answer me in English",
    "我是产品经理，用中文回答我" and "the app is in Spanish but answer me in English" name the
    person or the product, not what speaks in the language.
    """
    window = words[max(0, at - SENTENCE) : at]
    ends = [*_CLAUSE_END.finditer(window)]
    return window[ends[-1].end() :] if ends else window


_CLAUSE_END = re.compile(
    r"[.!?\n。！？,;:，；：、]|\b(?:but|pero|mais|aber|ma|mas|но|але|ale|ama|tapi)\b|但是|可是|不过"
)


# "… are (all) in English", "… están en inglés", "I see all the labels in English": what is, not how
# to write; "translate all …": the language is the task's (the words are folded: "están" is "estan")
_STATE = re.compile(
    r"\b(?:is|are|was|were|esta|estan|son|sind|ist|sont|est|sao|sono)"
    r" +(?:(?:all|todos|todas|todo|alle|tous|toutes|tutti|tutte|tudo) +)?\Z"
)
_TRANSLATION = re.compile(r"translat|tradu[cz]|tradui|ubersetz|tłumacz|翻译|翻訳|번역|перев[ео]д|переклад")
_TRANSLATION_OR_SIGHT = re.compile(
    _TRANSLATION.pattern + r"|\b(?:i (?:can )?see|i get|veo|vejo|je vois|ich sehe|я вижу)\b|我看到|看到的"
    # what a product shows ("the app shows / muestra todo en inglés") is a sight, not how to write
    r"|\b(?:shows|displays|muestra|muestran|affiche|affichent|zeigt|zeigen|mostra|mostram|показывает)\b"
)


def _as_it_is(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a language beside "all" names a state, a sight or a translation rather than how to write."""
    _, start, end = span
    opening = max((m.end() for m in SENTENCE_END.finditer(words, max(0, start - SENTENCE), start)), default=0)
    closing = SENTENCE_END.search(words, end)
    stop = closing.start() if closing else len(words)
    state = _STATE.search(words, max(0, start - 30), start)
    return state is not None or _TRANSLATION_OR_SIGHT.search(words, opening, stop) is not None


# "in the future", "going forward", "next time" say when the agent works again only in a sentence
# that speaks to it ("next time, ask me first", "please run the linter going forward", "in the
# future you should …") or that the cue opens ("Going forward, we use pnpm."); with the person or
# the team as the actor and no "you", it is their own plan or what the product does ("in the future
# I want to add offline search", "I'll check the keys myself going forward", "when I quit, next time
# the client starts …"); "I want / I'd like / I expect <something> going forward" still asks the
# agent ("I'd prefer that we use pnpm going forward"). Opening the sentence, the cue rules ("Going
# forward, we use pnpm") unless the person's own plan follows it ("Next time I'll run it myself")
_LATER = re.compile(r"in the future|going forward|next time")
_TO_THE_AGENT = re.compile(r"\b(?:you|your|yours|yourself|please|pls|plz)\b")
_WISHED = re.compile(r"\b(?:i|we)(?:'d| would)? (?:want|like|prefer|need|expect|require|insist)\b(?! to\b)")
# an order after the team's way, in its sentence: "We squash every PR going forward, so do that",
# "I'll review PRs going forward, so leave them open", "…, make sure the commits are tidy"
_ORDERED = re.compile(r"[,;:—–] *(?:so |then )?(?:do|follow|apply|stick to|keep to|make sure|leave|mind)\b")
_ONESELF = re.compile(r"\b(?:i|we)(?:'ll|'m|'ve|'d)?(?!')\b")
_OWN_PLAN = re.compile(
    r"[ ,]*i(?:'ll| will|'m going to| am going to| want to| plan to| intend to| need to| might| may)\b"
)


def _later_for_another(words: str, start: int, end: int) -> bool:
    """Whether a cue of later names the person's or the product's later, not the agent's work."""
    if not _LATER.fullmatch(words[start:end].strip()):
        return False
    opening, stop = _sentence_start(words, start), _sentence_end_at(words, end)
    if any(said.search(words, opening, stop) for said in (_TO_THE_AGENT, _WISHED, _ORDERED)):
        return False
    if opens_a_sentence(words, start):
        return _OWN_PLAN.match(words, end) is not None
    return _ONESELF.search(words, opening, stop) is not None


# "我希望" ("I wish") asks for a result of this task ("我希望能把报表导出成 CSV", "我希望设置页用 Vue
# 重写"); with a word of every time in its sentence ("以后", "每次", "总是" …) it asks how
# to work from now on ("我希望以后每次提交前都先跑测试")
def _wishes_once(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a "我希望" cue wishes for one result, with no word of every time in its sentence."""
    _, start, end = span
    if words[start:end].strip() != "我希望":
        return False
    opening, stop = _sentence_start(words, start), _sentence_end_at(words, end)
    habitual = (cue for kind in ("standing", "standing_lead") for cue in found.get(kind, ()))
    return not any(opening <= at < stop and at != start for _, at, _ in habitual)


# "by default" before a subject and its verb tells what something does unless set otherwise ("by
# default it should scan the repo", "By default, tokens are not sent to forks"): the product's
# default, not how the agent works ("By default, answer in English", "by default use pnpm")
_AUXILIARIES = frozenset(
    "is are was were should shall will would must can could has have does".split()
    + "isn't aren't wasn't doesn't won't".split()
)
_THE_AGENT = frozenset(("you", "your", "u", "ur"))
# a thing named by its article ("By default, the API returns 20 items", "by default this flag …") or
# a subject with its verb in one word ("by default it's off"): what it does, whatever the verb
_A_THING = frozenset(
    ("the", "this", "these", "those", "its", "their", "it's", "that's", "there's", "they're")
)


def _a_things_default(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a "by default" cue goes on to tell what something does: a subject, then its verb."""
    _, start, end = span
    if words[start:end].strip() != "by default":
        return False
    subject, *verbs = words[end : end + SENTENCE].lstrip(" ,").split(" ", 3)[:3]
    if subject in _A_THING:
        return True
    # "by default you should run the tests", "by default your answers should be short": the agent's
    return subject not in _THE_AGENT and any(word in _AUXILIARIES for word in verbs)
