"""The language the person asks the agent to talk and write in: "answer in German", "todo en inglés".

A language beside a verb of speaking or "all" / "always", or standing alone in its sentence ("In German
please"); not what another speaks, a state, a sight or a translation, nor the answer to the agent's
question of which language a thing is in. Standard library only (the observer's path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evolve.transcripts.sentences import (
    SENTENCE,
    SENTENCE_END,
    Spans,
    clause_before,
    ends_asking,
    sentence_start,
)


def answer_in_a_language(
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
    opening = sentence_start(words, start)
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
        and not _OTHER_SPEAKER.search(clause_before(words, start))
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
