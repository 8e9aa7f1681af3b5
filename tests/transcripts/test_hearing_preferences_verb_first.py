"""A rule said verb first: "Usa siempre pnpm", "Utilise toujours pnpm", "Verwende immer pnpm".

Most lexicon languages put "always" after the imperative ("Usa siempre …", "Używaj zawsze …"): the
order opens its sentence as "Always use pnpm" does. What a thing always does is no order ("Funciona
siempre así", "Falla siempre en el login"), nor what is still so ("Utilise toujours le vieux titre ?").
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference


@pytest.mark.parametrize(
    "text",
    [
        "Usa siempre pnpm en este proyecto, nunca npm.",
        "Ok, pregúntame siempre antes de borrar algo.",
        "Utilise toujours pnpm.",
        "Verwende immer pnpm.",
        "Faça sempre os testes primeiro.",
        "Fai sempre i test prima.",
        "Używaj zawsze pnpm.",
        "Используй всегда pnpm.",
    ],
)
def test_always_after_the_imperative_opening_a_sentence_is_a_rule(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Funciona siempre así.",
        "Falla siempre en el login.",
        "usa siempre lo mismo y no funciona",
        "Utilise toujours le vieux titre ?",
        "Benutze immer noch npm?",
        "El script usa siempre el puerto 3000.",
        "Mach immer weiter so.",
    ],
)
def test_always_after_a_verb_that_describes_is_no_rule(text):
    assert preference(text) is None
