"""Weighted signals over a run's facts: what fires, what never does, where the line is."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from evolve import config
from evolve.schedule.signals import DEFAULT_WEIGHTS, Scored, SignalSettings, score_run, weakness_keywords
from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons

PYTEST_FAILURE = """\
============================= test session starts ==============================
plugins: timeout-2.3.1
tests/test_api.py F
>       assert resp.status_code == 503
E       assert 200 == 503
tests/test_api.py:12: AssertionError
FAILED tests/test_api.py::test_retry - assert 200 == 503
============================== 1 failed in 0.12s ===============================
"""

# (correction, guarded look-alike, fresh task) per language
REQUESTS = {
    "en": (
        "No, that's not what I asked: keep the old name.",
        "No worries, thanks! What's wrong with the CI job?",
        "Add a --verbose flag to the CLI and document it.",
    ),
    "zh": (
        "不对，我说的是保留旧的名字",
        "没问题，不错！接下来为什么 CI 报错了？",
        "给命令行加一个 --verbose 参数并写文档",
    ),
    "de": (
        "Nein, das ist falsch: behalte den alten Namen.",
        "Kein Problem, nicht schlecht! Was ist falsch am CI-Job?",
        "Füge der CLI eine Option --verbose hinzu und dokumentiere sie.",
    ),
    "es": (
        "No, eso está mal: te dije que mantuvieras el nombre.",
        "No hay problema, ¡nada mal! ¿Qué está mal en el CI?",
        "Agrega una opción --verbose a la CLI y documéntala.",
    ),
    "fr": (
        "Non, c'est faux : je t'ai dit de garder l'ancien nom.",
        "Pas de problème, pas mal ! Qu'est-ce qui ne va pas avec la CI ?",
        "Ajoute une option --verbose à la CLI et documente-la.",
    ),
    "ja": (
        "違う、古い名前のままにしてと言ったでしょ",
        "問題ないです、大丈夫。CI で何が違うの？",
        "CLI に --verbose オプションを追加してドキュメントを書いて",
    ),
    "hi": (
        "नहीं, यह गलत है: मैंने कहा था पुराना नाम रखो",
        "कोई बात नहीं! क्या गलत है CI में?",
        "CLI में --verbose विकल्प जोड़ो और उसका दस्तावेज़ लिखो",
    ),
    "pt": (
        "Não, está errado: eu disse para manter o nome antigo.",
        "Sem problema! O que está errado no CI?",
        "Adicione uma opção --verbose à CLI e documente-a.",
    ),
}

MEMO_SELF = """\
- I often forget to run database migrations before the integration tests
- Quoting shell paths that contain spaces trips me up
  (continuation lines belong to the bullet)
- Good at small refactors
"""

TRANSIENT_TEXTS = {
    "timeout": "curl: (28) Connection timed out after 10001 milliseconds",
    "429": "429 Client Error: Too Many Requests for url: https://api.github.com/x",
    "overloaded": 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}',
    "connection reset": "Error: read ECONNRESET\n    at TCP.onStreamRead (node:internal)",
    "dns": "npm ERR! network request failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org",
    "503": "HTTP/1.1 503 Service Unavailable",
}


def run(**facts):
    """Facts of a plain, quiet run, with some overridden."""
    base = {
        "tool_calls": 3,
        "errors": 0,
        "transient_errors": 0,
        "aborted": False,
        "correction": False,
        "skills": [],
        "ended_in_error": False,
        "recovered": False,
        "request": "Add a README",
        "tool_inputs_text": "",
        "error_texts": [],
    }
    base.update(facts)
    return base


def test_interface_names_and_defaults():
    assert DEFAULT_WEIGHTS == {
        "user_correction": 0.9,
        "user_preference": 0.9,
        "lesson_ignored": 0.9,
        "skill_ineffective": 0.85,
        "error_recovered": 0.8,
        "known_weakness": 0.7,
        "complexity": 0.5,
    }
    settings = SignalSettings()
    assert (settings.threshold, settings.complexity_tool_calls) == (0.7, 20)
    assert settings.weights == DEFAULT_WEIGHTS
    assert score_run(run()) == Scored(signals={}, score=0.0, reflect=False)


def test_settings_from_config():
    signals = config.SignalsConfig(
        threshold=1.0, complexity_tool_calls=5, weights={**DEFAULT_WEIGHTS, "complexity": 1.5}
    )
    settings = SignalSettings.from_config(signals)
    assert settings.threshold == 1.0 and settings.complexity_tool_calls == 5
    assert score_run(run(tool_calls=6), settings).reflect


# --------------------------------------------------------------------------- corrections

DONE = "Done: the function is renamed and the tests pass."  # what the agent said before


@pytest.mark.parametrize(("lang", "text"), [(lang, t[0]) for lang, t in REQUESTS.items()])
def test_a_correction_in_every_language_passes_the_threshold(lang, text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.language == lang
    scored = score_run(run(request=text, correction=heard.correction))
    assert scored.signals == {"user_correction": 0.9}, lang
    assert scored.score > 0.7 and scored.reflect


@pytest.mark.parametrize(("lang", "text"), [(lang, t[1]) for lang, t in REQUESTS.items()])
def test_guarded_phrases_score_nothing(lang, text):
    scored = score_run(run(request=text, correction=hear(load_lexicons(), text, DONE).correction))
    assert scored.score == 0, lang


@pytest.mark.parametrize(("lang", "text"), [(lang, t[2]) for lang, t in REQUESTS.items()])
def test_a_fresh_request_scores_zero(lang, text):
    scored = score_run(run(request=text, correction=hear(load_lexicons(), text, first=True).correction))
    assert scored == Scored({}, 0.0, False), lang


# --------------------------------------------------------------------------- transient


WEAKNESS_REQUEST = "Run the database migrations before the integration tests"


def test_transient_only_runs_score_zero():
    # facts as observe records them: transient errors counted apart, no real error text;
    # even a careless "ended in error" / "recovered" cannot fire anything
    facts = run(
        errors=0,
        transient_errors=3,
        recovered=True,
        ended_in_error=True,
        skills=["deploy"],
        request=WEAKNESS_REQUEST,
    )
    assert score_run(facts, weaknesses=weakness_keywords(MEMO_SELF)).score == 0


@pytest.mark.parametrize("kind", list(TRANSIENT_TEXTS))
def test_transient_errors_recorded_as_real_still_score_zero(kind):
    # the facts call them real (an older pattern set, say); the texts say otherwise
    text = TRANSIENT_TEXTS[kind]
    facts = run(
        errors=2,
        error_texts=[text, text],
        recovered=True,
        ended_in_error=True,
        skills=["deploy"],
        request=WEAKNESS_REQUEST,
    )
    assert score_run(facts, weaknesses=weakness_keywords(MEMO_SELF)).score == 0, kind


def test_capped_error_texts_do_not_hide_real_errors():
    # 7 real errors, only the first 5 texts kept: the count wins over the sample
    facts = run(errors=7, recovered=True, error_texts=[TRANSIENT_TEXTS["429"]] * 5)
    assert score_run(facts).signals == {"error_recovered": 0.8}


def test_a_run_ending_on_a_transient_error_is_no_ineffective_skill():
    facts = run(
        errors=2,
        transient_errors=1,
        skills=["deploy"],
        ended_in_error=True,
        error_texts=[PYTEST_FAILURE, TRANSIENT_TEXTS["overloaded"]],
    )
    assert "skill_ineffective" not in score_run(facts).signals


def test_user_transient_patterns_apply_to_error_texts():
    text = "corp-vpn: tunnel dropped"
    facts = run(errors=1, recovered=True, error_texts=[text])
    assert score_run(facts).signals == {"error_recovered": 0.8}
    settings = SignalSettings(transient_patterns=("tunnel dropped",))
    assert score_run(facts, settings).score == 0


# --------------------------------------------------------------------------- errors and skills


@pytest.mark.parametrize(
    "text",
    [
        PYTEST_FAILURE,
        "Error: ENOENT: no such file or directory, open '/app/package.json'",
        "fatal: not a git repository (or any of the parent directories): .git",
    ],
)
def test_real_error_recovered(text):
    scored = score_run(run(errors=1, recovered=True, error_texts=[text]))
    assert scored.signals == {"error_recovered": 0.8}
    assert scored.reflect


def test_recovered_needs_a_real_error():
    assert score_run(run(recovered=True)).score == 0
    mixed = run(errors=1, transient_errors=2, recovered=True, error_texts=[PYTEST_FAILURE])
    assert score_run(mixed).signals == {"error_recovered": 0.8}


def test_skill_ineffective():
    facts = run(errors=1, skills=["deploy"], ended_in_error=True, error_texts=[PYTEST_FAILURE])
    scored = score_run(facts)
    assert scored.signals == {"skill_ineffective": 0.85} and scored.reflect


def test_skill_ineffective_excludes_aborted_runs_and_runs_without_skills():
    facts = run(errors=1, skills=["deploy"], ended_in_error=True, aborted=True)
    assert score_run(facts).score == 0
    assert score_run(run(errors=1, ended_in_error=True)).score == 0
    assert score_run(run(errors=1, skills=["deploy"], ended_in_error=False)).score == 0


# --------------------------------------------------------------------------- complexity


@pytest.mark.parametrize(("calls", "fires"), [(20, False), (21, True), (0, False)])
def test_complexity_boundary(calls, fires):
    scored = score_run(run(tool_calls=calls))
    assert ("complexity" in scored.signals) is fires
    assert not scored.reflect  # 0.5 alone never passes 0.7


def test_complexity_plus_correction():
    scored = score_run(run(tool_calls=40, correction=True))
    assert scored.signals == {"user_correction": 0.9, "complexity": 0.5}
    assert scored.score == pytest.approx(1.4) and scored.reflect


# --------------------------------------------------------------------------- known weakness


def test_weakness_keywords_one_set_per_bullet():
    keywords = weakness_keywords(MEMO_SELF)
    assert len(keywords) == 3
    assert keywords[0] == {"database", "migration", "integration", "test"}
    assert "bullet" in keywords[1] and "space" in keywords[1]  # continuation joined, plural
    assert keywords[2] == {"small", "refactor"}
    assert weakness_keywords("") == []


def test_known_weakness_hit_alone_does_not_exceed_the_threshold():
    facts = run(
        errors=1, error_texts=[PYTEST_FAILURE], request="Run the migrations, then the integration test suite"
    )
    scored = score_run(facts, weaknesses=weakness_keywords(MEMO_SELF))
    assert scored.signals == {"known_weakness": 0.7}
    assert scored.score == 0.7 and not scored.reflect  # a lone 0.7 does not exceed 0.7


def test_known_weakness_matches_tool_inputs_and_error_texts():
    facts = run(
        errors=1,
        request="make it pass",
        tool_inputs_text="psql -f schema.sql",
        error_texts=[
            "ERROR: relation does not exist (run the migration first)\n"
            "sqlalchemy.exc.ProgrammingError: database is behind"
        ],
    )
    assert "known_weakness" in score_run(facts, weaknesses=weakness_keywords(MEMO_SELF)).signals


def test_known_weakness_with_a_correction_and_no_error():
    facts = run(correction=True, request="You forgot the database migrations again")
    scored = score_run(facts, weaknesses=weakness_keywords(MEMO_SELF))
    assert scored.signals == {"user_correction": 0.9, "known_weakness": 0.7}


@pytest.mark.parametrize(
    "request_text",
    [
        "Fix the migration",  # one keyword only
        "Often forget, always before",  # stopwords only
        "Run the db migration in CI",  # 'db' and 'ci' are too short
    ],
)
def test_known_weakness_misses(request_text):
    error = "fatal: not a git repository (or any of the parent directories): .git"
    facts = run(errors=1, error_texts=[error], request=request_text)
    assert score_run(facts, weaknesses=weakness_keywords(MEMO_SELF)).score == 0


def test_known_weakness_needs_a_real_error_or_a_correction():
    request = WEAKNESS_REQUEST
    assert score_run(run(request=request), weaknesses=weakness_keywords(MEMO_SELF)).score == 0
    transient = run(request=request, errors=0, transient_errors=1)
    assert score_run(transient, weaknesses=weakness_keywords(MEMO_SELF)).score == 0


def test_words_of_transient_errors_do_not_count_for_a_weakness():
    bullets = weakness_keywords("- Registry lookups fail behind the proxy")
    facts = run(
        errors=2,
        request="install deps",
        error_texts=["npm ERR! proxy registry getaddrinfo ENOTFOUND", PYTEST_FAILURE],
    )
    assert score_run(facts, weaknesses=bullets).score == 0


def test_plural_and_case_are_ignored():
    bullets = weakness_keywords("- Snapshots go stale after Renderer changes")
    facts = run(errors=1, error_texts=["AssertionError"], request="update the SNAPSHOT of renderers")
    assert "known_weakness" in score_run(facts, weaknesses=bullets).signals


# --------------------------------------------------------------------------- settings


def test_custom_weights_change_the_result():
    facts = run(tool_calls=30)
    assert not score_run(facts).reflect
    heavy = SignalSettings(weights={**DEFAULT_WEIGHTS, "complexity": 0.75})
    assert score_run(facts, heavy).reflect
    off = SignalSettings(weights={**DEFAULT_WEIGHTS, "user_correction": 0.0})
    assert score_run(run(correction=True), off) == Scored({}, 0.0, False)
    partial = SignalSettings(weights={"complexity": 1.0})  # others keep their defaults
    assert score_run(run(tool_calls=30, correction=True), partial).score == pytest.approx(1.9)


def test_threshold_is_strict_and_configurable():
    halves = SignalSettings(weights={**DEFAULT_WEIGHTS, "user_correction": 0.35, "complexity": 0.35})
    assert not score_run(run(correction=True, tool_calls=30), halves).reflect  # 0.7 == 0.7
    low = SignalSettings(threshold=0.4)
    assert score_run(run(tool_calls=21), low).reflect


def test_facts_may_be_an_object_and_may_be_missing():
    @dataclass
    class Facts:
        tool_calls: int = 25
        errors: int = 1
        recovered: bool = True
        skills: list = field(default_factory=list)
        error_texts: list = field(default_factory=list)

    assert score_run(Facts()).signals == {"error_recovered": 0.8, "complexity": 0.5}
    assert score_run({}).score == 0
    assert score_run({"tool_calls": None, "errors": "x"}).score == 0
