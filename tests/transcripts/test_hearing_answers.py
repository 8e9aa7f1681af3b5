"""The agent's answer as evidence: a message it answers with an admission is a correction.

Written from how coding agents answer a correction (not from the labelled data): the person
says something no rule reads as a correction ("the vis library sets that itself"), and the
agent opens its answer with "You're absolutely right." or "Sorry about that, my mistake", in
the person's language. A refusal, a polite disagreement ("I apologize, but …"), a cheered
"You're absolutely right!" (said to a new request as often), a quoted dialogue, a session's
first message, an answer after the agent's own failed call, a brief pick answering the agent's
own question, a "Yes, you're right" confirming what the person asked, a suggestion taken up ("Good
call", "Good point", with no mistake owned after it) and everyday openings ("Great idea", "Sure",
"That's right") are not.
"""

from __future__ import annotations

import json

import pytest

from evolve.cli import main
from evolve.transcripts.acknowledged import admission
from tests.helpers import make_agent
from tests.reflect.scenarios import Transcript


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("You're absolutely right. The library sets it already.", "you're absolutely right"),
        ("You're absolutely right - I created placeholder content, not the docs.", "you're absolutely right"),
        ("You're right to be skeptical! I claimed results I never measured.", "you're right"),
        ("My apologies! I edited the wrong file.", "my apologies"),
        ("You're absolutely right! I apologize for the confusion.", "i apologize"),  # cheered, then owned
        ("You're absolutely right! My mistake, the loop ran twice.", "my mistake"),
        ("**You are correct** — the loop is not needed.", "you are correct"),
        ("Oh no! You’re right, the navigation went missing.", "you're right"),
        ("You\u200b’re right, I can't believe I missed that.", "you're right"),  # not a refusal
        ("Ｙｏｕ＇ｒｅ ｒｉｇｈｔ, the flag is set twice.", "you're right"),
        ("Thanks for the heads-up, the cache is stale.", "thanks for the heads-up"),
        ("Thanks, good catch: the path was stale.", "good catch"),
        ("Not sure what I was thinking. You're right, the loop is not needed.", "you're right"),
        ("Da hast du recht, der Button fehlt.", "hast du recht"),
        ("Você está certa, o botão sumiu.", "você está certa"),
        ("Ah, good catch. The test used the old path.", "good catch"),
        ("Sorry about that, I misread the config.", "sorry about that"),
        ("My apologies, I edited the wrong file.", "my apologies"),
        ("I apologize for the confusion.", "i apologize"),
        ("Thanks for catching that! Fixed the import.", "thanks for catching"),
        ("Tienes toda la razón, el botón debe quedarse.", "tienes toda la razón"),
        ("Você tem razão, o arquivo é outro.", "você tem razão"),
        ("Vous avez raison, je corrige le chemin.", "vous avez raison"),
        ("Du hast völlig recht, das ist die falsche Datei.", "du hast völlig recht"),
        ("Hai ragione, ho sbagliato file.", "hai ragione"),
        ("Вы правы, я перепутал файлы.", "вы правы"),
        ("申し訳ありません、ファイルを間違えました。", "申し訳"),
        ("你说得对，我改错了文件。", "说得对"),
        ("죄송합니다. 잘못된 파일을 수정했습니다.", "죄송"),
        # thirteenth round: the agent owns its mistake, or the person's frustration
        ("这是我的失误：我删掉了旧的配置文件。", "我的失误"),
        ("对，是我的问题，我没有读完整个文件。", "是我的问题"),
        ("맞습니다. 설정 파일 경로가 틀렸네요.", "맞습니다"),
        ("I know this is frustrating! The cache still holds the old build.", "i know this is frustrating"),
        ("I understand you're frustrated. The port is still taken.", "i understand you're frustrated"),
        ("Entiendo tu frustración, el puerto sigue ocupado.", "entiendo tu frustración"),
        # a cheer, then the agent owns its mistake in its own words; "but" owning one too
        ("Good catch! I forgot to bump the version in the lockfile.", "good catch"),
        ("**You're right!** I pointed the script at the wrong bucket.", "you're right"),
        ("¡Tienes razón! Me equivoqué de rama.", "tienes razón"),
        ("Vous avez raison ! J'ai oublié la migration.", "vous avez raison"),
        ("Du hast recht! Ich habe den Port falsch gesetzt.", "du hast recht"),
        ("您说得对！我把端口写错了。", "说得对"),
        ("Вы правы! Я забыл про миграцию.", "вы правы"),
        ("맞습니다! 제가 포트를 잘못 설정했습니다.", "맞습니다"),
        ("My apologies, but I overlooked the second call site.", "my apologies"),
        ("Perdón, pero me confundí de servidor.", "perdón"),
        ("Sorry, but I broke the login form with that refactor.", "sorry"),  # a bare apology, owned
        ("Oops, sorry! I forgot to commit the lockfile.", "sorry"),
        (
            "Apologies for the mix-up, but I deleted the wrong fixture.",
            "apologies for",
        ),  # owned after the but
        ("I'm sorry — I deleted the wrong branch.", "sorry"),
        ("You're absolutely right! I made a silly error in the regex.", "you're absolutely right"),
        ("Good point! I accidentally dropped the index in the migration.", "good point"),
        ("You're absolutely right! I should have read the README before editing.", "you're absolutely right"),
        # a line break or a colon before its own admission quotes nothing
        ("Hmm!\nYou're right, the cron runs in UTC.", "you're right"),
        ("Ok.\n\nMy mistake, the bucket name had a typo.", "my mistake"),
        ("At 09:15 — sorry about that, the job ran twice.", "sorry about that"),
        ("Here's what happened: my mistake, the env var was unset.", "my mistake"),
        ("You're right 😅, the cron string was off by an hour.", "you're right"),  # sheepish, no cheer
        # nineteenth round: a suggestion taken up admits only with an owned mistake after it
        ("Good point, I missed the header row in the export.", "good point"),
        ("Good point. I forgot to bump the version in the lockfile.", "good point"),
        ("Good call — my mistake, the loop ran twice.", "my mistake"),
        ("Fair point: I should have read the changelog first.", "fair point"),
        ("Good point, I forgot to set the viewport tag on the new page.", "good point"),
        ("Buena observación: me equivoqué de rama.", "buena observación"),
        # an oversight owned, after a suggestion taken up or alone
        ("Fair point, that was my oversight: the retry never reset its counter.", "my oversight"),
        ("Good call. That was an oversight on my part: the key ignored the locale.", "oversight on my part"),
    ],
)
def test_an_admission_opening_the_answer_is_found(answer, said):
    assert admission(answer) == said


@pytest.mark.parametrize(
    "answer",
    [
        "Sorry, I can't help with deleting another user's files.",
        "I apologize, but I cannot access that URL.",
        "Great idea! I'll add a dark mode toggle.",
        "Sure, let me run the tests.",
        "That's right: the config lives in ~/.config/app.",
        "I'll look into the failing test. " + "x" * 60 + " you're right about the cache.",  # not its opening
        "Sorry for the wait, here is the summary.",
        "Yes, you're absolutely correct! Claude Code can read several folders.",  # confirms a question
        "抱歉，目前我无法直接搜索这个平台。",  # a refusal, in the person's language
        "Lo siento, no puedo abrir ese enlace.",
        "Oops — the linter found 3 problems in utils.py.",  # a reaction to what it found, no admission
        "Oh no, 12 tests fail after the upgrade.",
        "I don't think you're right: save() invalidates the cache.",  # disputes the point
        "I'm not sure that you're right; the cache is rebuilt on save.",
        "Thanks! You're right that the retry loop makes it sturdier.",  # answers praise
        "Glad to hear it works! My apologies for the slow start.",
        "Merci ! Vous avez raison, la boucle suffit.",
        "네, 맞습니다. 설정은 ~/.config 에 있습니다.",  # "yes, correct": confirms a question
        "这不是我的问题，是服务器返回了 500。",  # "this is not my problem"
        "这不是操作失误，是依赖版本不兼容。",
        "Frustrating timeouts like these usually come from the proxy.",  # names a frustration, owns none
        # fourteenth round: agreement cheered, as agents answer a new request or the person's idea
        "You're absolutely right! Let me rename the endpoints to readable names.",
        "Excellent point! Here's the architecture using composition.",
        "Good catch! I'll add the guard as well.",
        "Tienes razón! Voy a crear una versión mejorada.",
        "Você está certo! Vou criar uma versão melhorada.",
        "您说得对！让我添加这个功能。",
        "맞습니다! 그 기능을 추가하겠습니다.",
        "You're absolutely right! Good catch, adding the guard.",
        "Great point! Sorry, I can't change the vendor's schema.",
        "You're absolutely right 🎯 Let me wire up the webhook.",  # an emoji cheers as "!" does
        "**Great catch**! Adding the retry too.",
        "¡Buena observación! Agrego la paginación.",
        "Bien vu ! J'ajoute la pagination.",
        "Gut erkannt! Ich ergänze die Paginierung.",
        "You're absolutely right! I added a guard for the wrong content type.",  # guards, owns nothing
        "You're absolutely right! I wrote tests to reject the wrong token.",
        # nineteenth round: a suggestion taken up, however said, as agents answer the person's new idea
        "Good point: a package.json keeps it cross-platform.",
        "Good call — let me measure it against the live API rather than guess.",
        "**B — Dashboard grid.** Good call: it keeps every panel in view.",
        "Good point. Currently the history lists every download, not what was applied.",
        "Great point, I'll add a second approach for the archive.",
        "Fair point — the review flag comes straight from the API.",
        "Valid observation; the list can be paginated as well.",
        "Excellent observation. Adding the cache header now.",
        "Good call, you're right that one file is simpler.",
        "Buena observación, agrego la paginación.",
        # a fact left untold is no mistake owned (attack50)
        "Good point. I forgot to mention: the exporter already writes YAML.",
        "Good call — I should have mentioned the cache is per user; adding the flag now.",
        "You're absolutely right! I forgot to say the importer skips archived rows.",
        # a polite disagreement after an apology
        "I apologize, but the button is still there on my end.",
        "Sorry, but the test passes here: the fixture loads the old data.",
        "Sorry for the wait. I missed nothing in the spec, here is the list.",  # another sentence
        "Let me discuss what I missed in the design doc.",  # no apology: the "scus" of "discuss"
        "Lo siento, pero el archivo sigue ahí.",
        "Désolé, mais le fichier est bien là.",
        "申し訳ありませんが、ボタンはまだ表示されています。",
        "抱歉，但是这个按钮在我这里还在。",
        "죄송하지만 버튼은 아직 있습니다.",
        "Entschuldigung, aber die Datei liegt im richtigen Ordner.",  # the apology's word ended
        "Omlouvám se, ale soubor tam je.",
        "I apologize — but the migration already ran on staging.",
        "Sorry about that... but the job is green on CI.",
        # … and after what the apology is for
        "Apologies for the mix-up, but the endpoint already returns JSON.",
        "I apologize for any confusion, but the cache is cleared on every deploy.",
        "Perdón por la confusión, pero la tabla ya tenía ese índice.",
        "Извините за путаницу, но миграция уже применена.",
        # a dialogue the agent quotes, not its own opening words
        "User: the header is gone\nAssistant: You're right, I removed it.",
        "Example:\nYou're right, my mistake.",
        'A typical reply would be: "Sorry about that, fixed."',
        "Assistant：你说得对，我改错了。",
        "",
    ],
)
def test_no_admission_where_the_agent_admits_nothing(answer):
    assert admission(answer) is None


def _classify(capsys, monkeypatch, rows: list[dict]) -> list[dict]:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(r) + "\n" for r in rows)))
    assert main(["classify"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_classify_hears_the_answer_but_never_after_a_sessions_first_message(capsys, monkeypatch, evolve_home):
    said = "the vis library sets group.visible itself, less work"
    out = _classify(
        capsys,
        monkeypatch,
        [
            {"text": said, "agent_before": "I loop over the items."},
            {"text": said, "agent_before": "I loop.", "agent_after": "You're right, using it."},
            {"text": said, "first": True, "agent_after": "You're right, using it."},
            {"text": said, "agent_after": "Sorry, I can't do that."},
            {
                "text": "npm",
                "agent_before": "Which package manager?",
                "agent_after": "You're right, npm it is.",
            },
        ],
    )
    assert [row["correction"] for row in out] == [False, True, False, False, False]
    assert out[1]["cue"] == 'the agent answered "you\'re right"'


def test_classify_hears_the_answer_to_a_resumed_sessions_first_message(capsys, monkeypatch, evolve_home):
    """A session resumed after the agent's text: its first message may correct that text."""
    before = "I split the backend into eight apps: users, tenants, missions, matching and four more."
    rows = [
        {"text": "do we really need that many apps?", "first": True, "agent_before": before},
        {"text": "do we really need that many apps?", "first": True, "agent_before": " \n"},
        {"text": "do we really need that many apps?", "first": True},
    ]
    for row in rows:
        row["agent_after"] = "You're right, two of them own no models. Folding them into missions."
    out = _classify(capsys, monkeypatch, rows)
    assert [row["correction"] for row in out] == [True, False, False]


def test_classify_hears_an_answer_to_the_agents_question_that_pushes_back(capsys, monkeypatch, evolve_home):
    asked = "I'll add a config.example.yaml at the root. Should I also document each key?"
    rows = [
        ("there is a config.sample.yaml in docs/ already, why a second one?", "You're right, I'll reuse it."),
        ("non, le fichier existe déjà dans docs/, regarde avant", "Vous avez raison, je me suis trompé."),
        ("yes", "You're right, documenting them helps."),  # a pick: the agent agrees with it
        ("the second option", "Sorry, I misread: the second one."),
        ("是的，都写上", "你说得对，我都加上。"),  # 6 characters, each as three: a pick still
        ("document each key and the defaults", "You're absolutely right! Adding both."),  # a cheer
    ]
    out = _classify(
        capsys,
        monkeypatch,
        [{"text": text, "agent_before": asked, "agent_after": after} for text, after in rows],
    )
    assert [row["correction"] for row in out] == [True, True, False, False, False, False]


def test_classify_leaves_a_pick_the_agent_takes_up(capsys, monkeypatch, evolve_home):
    """A longer pick that opens with no yes, answered "Good call": the agent agrees, it admits nothing."""
    asked = "I can keep the layout in one file (A) or split it per panel (B). Which one do you want?"
    rows = [
        ("Let's go with option B since it keeps each panel small", "Good call — B keeps each panel small."),
        ("B, and default the grid to three columns please", "Good call. Splitting per panel now."),
        ("Let's go with option B since A is already in the repo", "Good point, I missed that A exists."),
    ]
    out = _classify(
        capsys,
        monkeypatch,
        [{"text": text, "agent_before": asked, "agent_after": after} for text, after in rows],
    )
    assert [row["correction"] for row in out] == [False, False, True]


def test_classify_leaves_a_long_yes_taking_the_agents_offer(capsys, monkeypatch, evolve_home):
    """A yes opening the answer takes the offer at any length; its "You're right" agrees with it."""
    asked = "I can cache the results in memory or in Redis. Which one do you prefer?"
    rows = [
        ("Yes, memory is enough for now, we have one instance only", "You're right, memory keeps it simple."),
        ("Oui, en mémoire, c'est plus simple pour l'instant", "Vous avez raison, c'est plus simple."),
        ("Sí, en memoria, con una sola instancia alcanza", "Tienes razón, alcanza con memoria."),
        ("好的，先放内存里，反正只有一个实例", "您说得对，内存就够了。"),
        ("yes but Redis is already running, you set it up yesterday", "You're right, I forgot it was there."),
        ("Ja, aber Redis läuft schon, seit gestern", "Du hast recht, das hatte ich vergessen."),
    ]
    out = _classify(
        capsys,
        monkeypatch,
        [{"text": text, "agent_before": asked, "agent_after": after} for text, after in rows],
    )
    assert [row["correction"] for row in out] == [False, False, False, False, True, True]


def test_classify_leaves_an_answer_that_gives_the_words_asked_for(capsys, monkeypatch, evolve_home):
    before = "I added the greeting screen."
    rows = [
        ("Translate 'I'm sorry, the shop is closed' into French", "Désolé, la boutique est fermée."),
        ("how do I say excuse me in Japanese?", "すみません (sumimasen) is the usual way."),
        ("write an apology note for the late delivery", "My apologies for the delay in your order …"),
        ("the greeting screen shows twice", "You're right, it is mounted twice."),  # a correction still
        ("the French translation of the banner shows English", "You're right, the key was missing."),
    ]
    out = _classify(
        capsys,
        monkeypatch,
        [{"text": text, "agent_before": before, "agent_after": after} for text, after in rows],
    )
    assert [row["correction"] for row in out] == [False, False, False, True, True]


def _the_words_asked_for(t: Transcript) -> None:
    t.user("Add a greeting screen")
    t.say("Added the greeting screen.")
    t.user("How do I say 'sorry for the wait' in Spanish? It goes on the banner.")
    t.say("Perdón por la espera. I put it on the banner.")


def _observed(tmp_path, capsys, build) -> list[dict]:
    make_agent()
    t = Transcript(tmp_path / "session.jsonl", cwd="/home/dev/app")
    build(t)
    assert main(["observe", "demo", "--format", "claude_code", str(t.path)]) == 0
    capsys.readouterr()
    assert main(["score", "demo", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_observe_hears_a_correction_the_agent_admitted(tmp_path, capsys):
    said = "the vis library sets group.visible itself, less work"

    def build(t: Transcript) -> None:
        t.user("Hide the empty groups in the timeline")
        t.tool("Edit", {"file_path": "src/timeline.js", "old_string": "a", "new_string": "b"}, "ok")
        t.say("I loop over the items and hide each empty group.")
        t.user(said)
        t.say("You're absolutely right. Using the library's visible property is much cleaner.")
        t.tool("Edit", {"file_path": "src/timeline.js", "old_string": "b", "new_string": "c"}, "ok")
        t.say("Done: the groups use group.visible now.")

    runs = _observed(tmp_path, capsys, build)
    corrected = [r for r in runs if "user_correction" in r["signals"]]
    assert [r["request"] for r in corrected] == [said]
    assert corrected[0]["correction_cue"] == 'the agent answered "you\'re absolutely right"'


def _a_first_message_and_an_answer_to_its_own_failure(t: Transcript) -> None:
    t.user("Add a dark mode toggle")
    t.say("You're right to want one! I'll add it to the header.")  # a session's first message
    t.tool("Edit", {"file_path": "src/header.js", "old_string": "a", "new_string": "b"}, "ok")
    t.user("Now run the tests")
    t.tool("Bash", {"command": "npm tset"}, "npm ERR! unknown command: tset", error=True)
    t.say("Oops, my mistake: a typo in the command.")  # its own failure, not the person's point
    t.tool("Bash", {"command": "npm test"}, "12 passing")
    t.say("All 12 tests pass.")


def _an_answer_to_the_agents_question(t: Transcript) -> None:
    t.user("Set up the project")
    t.say("Should I use npm or pnpm?")
    t.user("pnpm")
    t.say("You're right, pnpm fits the monorepo. Installing.")
    t.tool("Bash", {"command": "pnpm install"}, "done")


def _an_answer_to_its_own_timed_out_call_or_a_stop(t: Transcript) -> None:
    t.user("Add a rates module")
    t.tool("Edit", {"file_path": "src/rates.py", "old_string": "a", "new_string": "b"}, "ok")
    t.say("Added src/rates.py.")
    t.user("Now fetch the latest rates from the API")
    t.tool(
        "Bash",
        {"command": "curl https://api.example.com/rates"},
        "curl: (28) Connection timed out",
        error=True,
    )
    t.say("Sorry about that, the request timed out. Retrying.")  # a transient failure of its own
    t.user("Then store them in the cache table")
    t.user_interrupt()
    t.say("Sorry about that, stopping here.")  # answers the stop, not the message


def _words_typed_into_the_agents_question_form(t: Transcript) -> None:
    t.user("Add a rates module")
    t.say("Added src/rates.py.")
    t.user("Set up the package tooling")
    t.say("Let me ask a couple of things first.")  # its words before the form ask nothing
    question = "Which package manager should I use?"
    t.ask({question: ["npm", "pnpm"]}, {question: "use bun, it is faster"})  # typed, no option
    t.say("You're right, bun is faster. Installing.")


@pytest.mark.parametrize(
    "build",
    [
        _a_first_message_and_an_answer_to_its_own_failure,
        _an_answer_to_the_agents_question,
        _an_answer_to_its_own_timed_out_call_or_a_stop,
        _words_typed_into_the_agents_question_form,
        _the_words_asked_for,
    ],
)
def test_observe_leaves_answers_that_admit_nothing_to_the_person_alone(build, tmp_path, capsys):
    runs = _observed(tmp_path, capsys, build)
    assert not [r for r in runs if "user_correction" in r["signals"]], runs


def test_observe_hears_the_answer_after_claude_codes_empty_text_placeholder(tmp_path, capsys):
    said = "the vis library sets group.visible itself, less work"

    def build(t: Transcript) -> None:
        t.user("Hide the empty groups in the timeline")
        t.say("I loop over the items and hide each empty group.")
        t.user(said)
        t.say("(no content)")  # Claude Code's text block for an empty one, before a call
        t.tool("Read", {"file_path": "src/timeline.js"}, "const groups = …")
        t.say("You're absolutely right. The library's visible property does it.")

    runs = _observed(tmp_path, capsys, build)
    assert [r["request"] for r in runs if "user_correction" in r["signals"]] == [said]


def test_observe_hears_an_answer_to_its_question_that_pushes_back(tmp_path, capsys):
    said = "there is a config.sample.yaml in docs/ already, why a second one?"

    def build(t: Transcript) -> None:
        t.user("Add an example config")
        t.say("I'll add config.example.yaml at the root. Should I document each key too?")
        t.user(said)
        t.say("You're right, I missed the one in docs/. Reusing it.")
        t.tool("Edit", {"file_path": "docs/config.sample.yaml", "old_string": "a", "new_string": "b"}, "ok")

    runs = _observed(tmp_path, capsys, build)
    corrected = [r for r in runs if "user_correction" in r["signals"]]
    assert [r["request"] for r in corrected] == [said]
