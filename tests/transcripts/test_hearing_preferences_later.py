"""A cue of later ("in the future", "going forward", "next time") names the agent's later work only.

Said to the agent, or opening its sentence, it asks how to work from then on; with the person or
the team as the actor and no "you", it is their own plan or what the product does then, and so
is the person's own plan right after the cue that opens it ("Next time I'll …").
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference

THE_AGENTS_LATER = [
    "Next time, ask me before you push.",
    "Going forward, we use pnpm.",
    "Please run the linter going forward.",
    "In the future you should write the tests first.",
    "I want the commit messages in English going forward.",
    "I'd like the tests to run first in the future, before any refactor.",
    "Use pnpm going forward",
    "I'd prefer that we rebase instead of merging going forward.",
    "We expect a changelog entry with each change in the future.",
    "We squash-merge every PR going forward, so do that with this one too.",
    "I'll tag the releases myself next time, so leave the version alone.",
    # twenty-first round: the same cues in the other lexicon languages
    "À l'avenir, utilise pnpm.",
    "À l'avenir, je veux que tu écrives les tests d'abord.",
    "En el futuro, quiero que uses pnpm.",
    "Künftig möchte ich, dass du die Tests zuerst schreibst.",
    "Künftig bitte immer pnpm verwenden.",
    "No futuro, quero que você use pnpm.",
    "In futuro voglio che tu scriva i test prima.",
    "以后提交信息都用英文。",
    "以后我想让你每次都先跑测试。",
]


@pytest.mark.parametrize("text", THE_AGENTS_LATER)
def test_a_cue_of_later_said_to_the_agent_states_a_preference(text):
    assert preference(text) is not None


SOMEONE_ELSES_LATER = [
    "Fine by me, I'll double-check the staging keys myself going forward.",
    "Keep the small model, since in the future I want to add offline search to the editor.",
    "When I quit mid-upload, next time the client starts it forgets the queue.",
    "We have to ship the beta first and we will add the export in the future.",
    "how does the widget know my settings, so the next time I load the page it keeps the dark theme",
    "Next time I'll rotate the certificates myself.",
    "In the future, I want to port the renderer to WebGPU.",
    # twenty-first round: the person's own plan after the cue, in the other lexicon languages
    "À l'avenir, je veux ajouter une recherche hors ligne.",
    "En el futuro quiero añadir búsqueda offline.",
    "Künftig will ich die Suche offline machen.",
    "No futuro, quero adicionar busca offline.",
    "In futuro voglio aggiungere la ricerca offline.",
    "以后我想加一个离线搜索功能。",
    "今后我们打算把渲染器移植到 WebGPU。",
    # the attack on the twenty-first round: "on va" ("we're going to"), 我会 ("I will")
    "A l'avenir on va ajouter un mode hors ligne.",
    "以后我会自己跑测试。",
]


@pytest.mark.parametrize("text", SOMEONE_ELSES_LATER)
def test_a_cue_of_later_with_the_person_as_actor_states_none(text):
    assert preference(text) is None


def test_another_standing_cue_in_the_sentence_still_counts():
    assert preference("I'll review it myself, and always run the tests in the future.") is not None
