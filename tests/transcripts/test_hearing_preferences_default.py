"""A "by default" rules how the agent works, unless a subject and its verb follow: a thing's default."""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference


@pytest.mark.parametrize(
    "text",
    [
        "By default, answer in English.",
        "ok, and by default use pnpm",
        "By default we use tabs here.",
        "By default you should open a draft PR, not a ready one.",
        "by default your summaries must stay under ten lines",
        "Por defecto, responde en inglés.",
        "Standardmäßig die Tests zuerst ausführen.",
        "Standardmäßig sollst du pnpm verwenden.",
        "Por padrão, use pnpm.",
        "默认用中文回答。",
        "Usa pnpm por defecto.",
        "Par défaut, utilise pnpm.",
    ],
)
def test_by_default_about_the_agents_work_states_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Make the exporter pick the newest file. Also by default it should skip hidden folders.",
        "The CI log says: By default, tokens are not sent to jobs from forks.",
        "Thanks. By default the sidebar will stay collapsed on phones, right.",
        "By default, the search endpoint returns fifty hits per page.",
        "by default it's hidden behind the feature flag",
        "By default the importer doesn't touch archived projects.",
        # twenty-first round: the same default of a thing in the other lexicon languages
        "Por defecto, la API devuelve veinte resultados.",
        "Por defecto, el modo oscuro está apagado.",
        "Standardmäßig gibt die API zwanzig Treffer zurück.",
        "Standardmäßig ist das Feld leer.",
        "Por padrão, o app mostra vinte itens.",
        "Di default il server ascolta sulla porta 80.",
        "默认是关闭的。",
        "默认值为 20。",
        # the attack on the twenty-first round: the thing named before its default
        "El botón está desactivado por defecto.",
        "O botão fica desativado por padrão.",
        "Il pulsante è disattivato di default.",
        "Ok. La API devuelve 20 elementos por defecto.",
        "Par défaut, l'API renvoie vingt éléments.",
        "Par défaut le serveur écoute sur le port 3000.",
    ],
)
def test_by_default_about_what_a_thing_does_states_none(text):
    assert preference(text) is None
