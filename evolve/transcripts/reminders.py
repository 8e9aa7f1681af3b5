"""A rule said again, a reminder, a thing forgotten: cues that sound like a rule and may not be one.

"How many times do I have to tell you …?" only sounds like a question: the rule was given before.
"Remember we already have a logger", "I remind you of the demo", "you forgot the semicolon", "I keep
telling you the build is broken" recall a fact, a subject, a thing or a failure: no rule for later.
Preferences weighs its standing cues with these. Standard library only (the observer's path).
"""

from __future__ import annotations

import re

from evolve.transcripts.sentences import CLAUSE_BREAK, Spans, clause_before, sentence_end_at

# "do you always …?" asks, it does not instruct; "how many times do I have to tell you …?", "we
# keep mentioning this, why …?", "already forgot …?" only sound like questions: the rule was given
# before (the `standing` cues of a rule said again, in every lexicon language; the words are folded).
# Forgotten, not "in case you forget" ("… se te olvida", "… tu oublierais"), which asks when asked
SAID_AGAIN = re.compile(
    r"\b(?:keep (?:telling|saying|mentioning|asking|repeating)|how many times|forgot|forget again"
    r"|olvido|olvidaste|oublie|vergessen|esqueceu|dimenticat\w*)\b|zapomnia|забыл|забув|又忘|忘了|また忘"
    r"|cuantas veces|combien de fois|wie oft|quante volte|quantas vezes|сколько раз|скільки разів|ile razy"
    r"|多少次|多少遍|何度|何回"
)
# Those and the cues of a reminder or of a rule told before, whose matter may be a failure; not in
# a question ("Did I remind you to push?", "Have I told you this before?" ask)
_GIVEN_BEFORE = re.compile(
    SAID_AGAIN.pattern + r"|\b(?:told you|remind|repeat myself)\b"
    r"|recuerdo|rappelle|erinnere|oft gesagt|lembro|ricordo|напомина|нагаду|przypomin|提醒"
)
# A condition before a failure: "if the build fails, do not merge" is a rule for that case
_CONDITION = re.compile(
    r"\b(?:when|if|whenever|unless|until|once|cuando|si|quand|lorsque|wenn|falls|sobald|se|quando"
    r"|если|когда|якщо|коли|jesli|jezeli|gdy|kiedy)\b|如果|当|とき"
)


def tells_a_failure(words: str, span: tuple[str, int, int], found: Spans) -> bool:
    """Whether a rule said again tells of a failure rather than how to work.

    "I keep telling you the build is broken", "te recuerdo que el login no funciona": a symptom
    said again, a correction's matter. The failure in the clause told, not in a later one ("we keep
    mentioning this same thing, please tell me why you are unable to …" says how to work), and no
    "same (thing)" that is the repetition itself.
    """
    _, start, end = span
    if not _GIVEN_BEFORE.search(words, start, end):
        return False
    stop = sentence_end_at(words, end)
    repeated = {at for _, at, _ in found.get("again", ())}
    return any(
        end <= at < stop
        and at not in repeated
        and not CLAUSE_BREAK.search(words[end:at].lstrip(" ,:;，："))
        and not _CONDITION.search(words, end, at)
        for _, at, _ in found.get("failure", ())
    )


# "remember" (or "I remind you") before a fact of the task at hand ("remember we already have a
# logger", "remember we will have custom tables", "remember this only applies to …", "I remind you
# that we already …"), where things stand now ("remember we currently are in Mac OS") or the role
# the agent plays ("remember that you are a skilled web developer"): a reminder, not a rule for
# later ("remember when you open a PR, …", "remember, we are a tabs shop" and "remember we are not
# using docker anymore" may be rules). The words are folded: "já", "già" are read as "ja", "gia"
_REMINDER = re.compile(
    r"(?:remember|recuerda|acuerdate|lembre-se|lembra|rappelle-toi|souviens-toi|ricorda|ricordati|merk dir"
    r"|记住|记得|覚えて"
    r"|(?:i )?remind you|te recuerdo|je te rappelle|ti ricordo|te lembro"
    r"|ich erinnere dich daran|напоминаю|нагадую|przypominam|提醒你)(?: that| que| che)?\Z"
)
_FACT_OF_THE_TASK = re.compile(
    r",? +(?:(?:that|que|che) )?(?:we(?:'ll| already| will| won't| have| had)|this only|ya|ja|gia"
    r"|we(?:'re| are)? currently|you(?:'re| are) an?)\b"
)
# Where someone is now ("remember we're on staging now", "I'm on Windows now", "recuerda que ahora
# estamos en staging", 记住，我们现在在 staging): the place of the moment; not "from now on", and "we're
# on staging" with no "now" may be how things stay
_WHERE_NOW = re.compile(
    r",? +(?:(?:that|que) )?(?:(?:we(?:'re| are)|i(?:'m| am)|you(?:'re| are)) (?:on|in|at) [^.!?]*?"
    r"(?<!from )\b(?:right )?now\b(?! on\b)|ahora (?:estamos|estoy|estas) en|agora (?:estamos|estou) em)"
    r"|[，,]? *(?:我们|我|你)现在在"
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


# A reminder for this step only ("记住，目前这一步先不写程序", "remember, for now just the plan",
# "recuerda que por ahora …", "覚えて、今回は …") and any cue of a rule said of it ("Always use npm for
# now", "por ahora no toques la base"): how to do the work at hand, not from now on. Not "not just
# (even) for now", "for now and always", nor "for now on" (a "from now on" mistyped)
_FOR_NOW = re.compile(
    r"(?<!\bnot )(?<!not just )(?<!not only )(?<!not even )"
    r"(?<!no solo )(?<!pas seulement )(?<!non solo )(?<!nicht nur )"
    r"(?:\b(?:for now|this time|for the moment|at this stage|this step|por ahora|de momento|esta vez"
    r"|pour l'instant|pour le moment|cette fois|vorerst|erstmal|diesmal|por enquanto|desta vez|dessa vez"
    r"|per ora|per il momento|questa volta|пока что|на этот раз)\b"
    r"|目前|暂时|这次|这一步|今回|とりあえず|今のところ)"
    r"(?! on\b|,? (?:and|y|et|e|und) (?:always|forever|every time|later|beyond"
    r"|siempre|toujours|sempre|immer))"
)


def for_the_step_at_hand(words: str, start: int, stop: int, alone: bool = False) -> bool:
    """Whether words[start:stop] say the step at hand ("for now", "this time", 目前, 今回 …).

    `alone`: they are only that, set before a clause ("For now, …", "目前，…").
    """
    if not alone:
        return _FOR_NOW.search(words, start, stop) is not None
    found = _FOR_NOW.match(words, start, stop)
    return found is not None and not words[found.end() : stop].strip(" ,，:：")


def a_reminder(cue: str) -> bool:
    """Whether a cue is "remember" (or "I remind you") in a lexicon language."""
    return _REMINDER.match(cue.strip()) is not None


def reminds(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a "remember" cue reminds of a fact of this task, of the day or of this step: no rule."""
    _, start, end = span
    if not a_reminder(words[start:end]):
        return False
    stop = sentence_end_at(words, end)
    of_the_moment = _OF_THE_DAY.search(words, end, stop) is not None or for_the_step_at_hand(words, end, stop)
    fact = any(told.match(words, end) for told in (_FACT_OF_THE_TASK, _WHERE_NOW))
    return of_the_moment or fact


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


def of_a_thing(words: str, span: tuple[str, int, int]) -> bool:
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


def forgot_by_another(words: str, span: tuple[str, int, int]) -> bool:
    """Whether a cue of a rule forgotten again follows a subject other than the agent in its clause."""
    _, start, end = span
    forgot = _FORGOTTEN.search(words, start, end) is not None
    return forgot and _ANOTHER_SUBJECT.search(clause_before(words, start)) is not None
