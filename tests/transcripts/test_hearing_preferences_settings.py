"""What a standing preference is not, and what it still is: a setting, an option picked, a rule to record.

A setting asked for keeps the rule itself ("configure git so it signs every commit"), "I prefer …"
answering the agent's options picks one, "toujours" says "still" as well as "always"; a request to
record a rule ("add this to your memory") and a habit on a configuring verb ("always configure …
with TLS") are preferences.
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.transcripts.hearing_cases import ASKED_WHICH_TOOL, DONE, preference


# Sixteenth round: a setting asked for carries the rule; "I prefer …" picks one of the agent's
# options; "toujours" says "still" as well as "always"; a stop order over all the agent writes holds
@pytest.mark.parametrize(
    "text",
    [
        "configure git so that from now on it signs every commit",
        "set it up so we never have to type the token again",
        "add the build folder to gitignore so it stays out going forward",
        "настрой линтер так, чтобы он запускался без моего участия",
        "今後は毎回ドライランで起動するように設定ファイルを書き換えてください",
    ],
)
def test_a_setting_that_will_keep_the_rule_is_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "From now on, always run the type checker before you push.",
        "We use tabs here, never spaces.",  # no setting named in the sentence
        "Always keep the config in sync with the docs.",  # a config named, not one asked for
        "From now on, set up a venv for every new project.",
        "From now on, update the settings page when you add a flag.",
    ],
)
def test_a_rule_that_asks_for_no_setting_is_still_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("I prefer the second approach", ASKED_WHICH_TOOL),
        ("Prefiro a versão com menos arquivos", "Posso manter as duas versões, ou prefere a mais curta."),
        ("I'd rather keep both handlers for now", "Both handlers work. Which one do you prefer"),
    ],
)
def test_i_prefer_opening_the_answer_to_the_agents_options_picks_one(text, before):
    assert preference(text, before) is None


@pytest.mark.parametrize(
    "text",
    [
        "I prefer small commits with one change each.",  # after the agent's claim: how to work
        "Ok. I prefer named exports over default ones.",  # not opening the reply
    ],
)
def test_i_prefer_after_no_offer_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    ["Toujours pas.", "toujours rien", "Toujours la même erreur", "Immer noch kaputt.", "toujours ..."],
)
def test_toujours_saying_still_is_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    ["Toujours répondre en français.", "Toujours utiliser const dans ce projet", "Immer Tabs verwenden."],
)
def test_toujours_opening_an_instruction_is_a_preference_and_no_failure(text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.preference and not heard.correction


def test_a_stop_order_over_everything_the_agent_writes_is_a_preference():
    assert preference("Stop using em dashes in anything you write for me") is not None


@pytest.mark.parametrize("text", ["추측하지 마", "거짓말하지 마, 로그를 봐"])
def test_a_korean_dont_guess_is_an_order_of_the_moment(text):
    assert preference(text) is None


# Sixteenth round: a request to record a rule where the agent keeps it states the rule
@pytest.mark.parametrize(
    "text",
    [
        "good catch, add this to your memory",
        "Add this to the ruleset: every handler logs its request id.",
        "put that in your instructions so it sticks",
        "write a short note in docs/ recording this preference",
    ],
)
def test_asking_to_record_a_rule_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "add this to the readme under Setup",
        "add a new rule to the linter config",
        "add this route to the router",
    ],
)
def test_adding_a_thing_to_a_file_or_tool_records_no_rule(text):
    assert preference(text) is None


# A standing cue on the configuring verb itself makes configuring the habit asked for: no setting
# will keep the rule, the agent must (attack46)
@pytest.mark.parametrize(
    "text",
    [
        "From now on always configure new services with TLS.",
        "Never configure anything globally, keep it per project.",
        "Siempre configura el logging antes de todo.",
        "Nunca configures nada globalmente.",
    ],
)
def test_a_standing_cue_on_the_configuring_verb_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Configure prettier to always use single quotes.",
        "Configura eslint para que siempre use comillas simples.",
        "set it up so we never have to log in again",
    ],
)
def test_a_standing_cue_inside_the_setting_asked_for_is_still_no_preference(text):
    assert preference(text) is None


# "I prefer …" answering the agent's question picks an option, unless an "always" / "never" in its
# sentence makes it a rule for later (attack46)
@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("I prefer that you always run the tests before committing.", "Want me to commit now?"),
        ("I prefer you always ask before installing packages.", "Shall I install lodash?"),
        ("Prefiro que você sempre escreva testes primeiro.", "Quer que eu comece?"),
    ],
)
def test_i_prefer_with_a_standing_cue_answering_a_question_is_a_preference(text, before):
    assert preference(text, before) is not None


def test_i_prefer_describing_what_always_happens_still_picks_an_option():
    assert preference("I prefer the one that always returns a list", "Which one do you prefer?") is None


# A request to record a rule names the agent's memory or rules, not a part of a document nor a
# tool's rule set (attack46)
@pytest.mark.parametrize(
    "text",
    [
        "Add this to the instructions section of the README.",
        "Put it in the guidelines doc under testing.",
        "Add this rule to eslintrc: no-console.",
        "add this rule to the linter config",
    ],
)
def test_adding_to_a_document_part_or_a_tools_rules_records_no_rule(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text", ["add this rule to CLAUDE.md", "save that in memory", "Please add this rule: no default exports."]
)
def test_recording_a_rule_where_the_agent_keeps_it_is_a_preference(text):
    assert preference(text) is not None


# An article after "toujours" says "still" ("toujours le vieux titre") unless the sentence orders
# the work: "toujours les tests d'abord" is "always tests first" (attack46)
@pytest.mark.parametrize(
    "text", ["Toujours les tests d'abord.", "Toujours la doc en premier, ensuite le code."]
)
def test_toujours_before_an_order_of_work_is_a_preference_and_no_failure(text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.preference and not heard.correction


@pytest.mark.parametrize("text", ["Toujours le vieux titre.", "Toujours la même erreur d'abord sur staging."])
def test_toujours_before_what_is_still_there_reports_it(text):
    heard = hear(load_lexicons(), text, DONE)
    assert heard.correction and not heard.preference


# An open question ("Anything else?") or the agent's own taste ("I prefer to …") offers no
# options: "I prefer …" after it states how to work (attack46)
@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("I prefer single quotes in Python.", "Done, the tests pass. Anything else?"),
        ("Prefiro commits pequenos.", "Pronto. Mais alguma coisa?"),
        ("I prefer tabs.", "Done. I prefer to keep helpers private, so I moved it."),
    ],
)
def test_i_prefer_after_no_options_offered_is_a_preference(text, before):
    assert preference(text, before) is not None


def test_i_prefer_answering_which_the_person_would_prefer_still_picks_one():
    assert preference("I prefer B.", "Would you prefer A or B") is None


# A request to record a rule is heard in the other lexicon languages too (attack46)
@pytest.mark.parametrize(
    "text",
    [
        "Guarda esto en tu memoria.",
        "Ajoute ça à tes instructions.",
        "Salve isso na sua memória.",
        "Запиши это себе в память.",
        "把这条加到你的记忆里。",
        "これをメモリに保存して。",
    ],
)
def test_asking_to_record_a_rule_is_a_preference_in_every_language(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Guarda esto en la carpeta docs.",
        "Ajoute ça à la liste des tâches.",
        "Добавь это в правила линтера.",
        "把这条加到 eslint 规则里。",
        "eslintのルールに追加して。",
    ],
)
def test_adding_to_a_folder_or_a_tools_rules_records_no_rule_in_any_language(text):
    assert preference(text) is None


# A settings file named is no setting asked for unless it is changed (attack46; the English
# "Always keep the config in sync" above)
@pytest.mark.parametrize(
    "text", ["これからはいつも設定ファイルを確認してから始めて。", "以后总是先看一下配置文件再开始。"]
)
def test_reading_a_settings_file_as_a_habit_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "以后每次都修改配置文件来关闭遥测。",
        "以后把配置文件改成每次都关闭遥测。",
        "今後は必ずキャッシュを無効にするように、設定ファイル（config/app.yml）を変更して。",
    ],
)
def test_changing_a_settings_file_so_it_keeps_the_rule_is_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Ne configure jamais le proxy à la main.",  # the configuring verb is the habit ruled
        "Ne jamais utiliser var.",
        "Merci. Ne pousse jamais sur main sans me demander.",
    ],
)
def test_ne_before_jamais_opens_a_french_rule_as_never_does(text):
    assert preference(text) == "states a standing preference: “jamais”"
    assert preference(text, first=True) == "states a standing preference: “jamais”"


@pytest.mark.parametrize(
    "text",
    [
        "Je ne l'ai jamais vu.",  # what happened, not how to work
        "Ça ne marche jamais.",
        "Configure le proxy pour ne jamais demander le mot de passe.",  # a setting keeps the rule
        "Ne marche jamais sur Firefox, ton correctif.",  # "(ça) ne marche jamais": it never works
        "Ne fonctionne jamais au premier lancement.",
    ],
)
def test_jamais_inside_a_statement_or_a_setting_states_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "note this down in CLAUDE.md for future sessions",
        "Jot that down in your memory: the staging db is read-only.",
        "in future sessions, run the linter before committing",
    ],
)
def test_a_note_to_keep_for_future_sessions_is_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Use port 4000 for now, not for future sessions.",
        "Skip the slow tests this time only, not in future sessions.",
        "Answer tersely today, but not in future conversations.",
    ],
)
def test_a_one_off_request_not_for_future_sessions_is_no_preference(text):
    assert preference(text) is None


@pytest.mark.parametrize("text", ["note this down in the README", "note it down in the changelog"])
def test_a_note_in_a_project_document_is_a_task(text):
    assert preference(text) is None
