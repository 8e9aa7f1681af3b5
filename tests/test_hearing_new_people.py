"""What new people said that the rules missed (the twenty-third round, read from sets 23–27).

Each shape is tried in several languages, with the look-alikes it must leave alone.
"""

import pytest

from tests.transcripts.hearing_cases import DONE, heard

# What follows the opening sentence of a long reply: the next request, no failure word in it
_NEXT = (
    " Please go through the whole module with the plan we agreed on yesterday, then tell me what you"
    " will change before you touch anything, step by step, with the file names and the functions."
)
_NEXT_RU = (
    " Пройдись по всему модулю вместе с планом, о котором мы договорились вчера, и сначала расскажи,"
    " что именно ты поменяешь и зачем, по шагам, с именами файлов и функций, а потом уже меняй код."
)
_NEXT_PT = (
    " Revise o módulo inteiro junto com o plano que combinamos ontem e me diga o que vai mudar antes"
    " de mexer em qualquer coisa, passo a passo, com os nomes dos arquivos."
)


# A long reply whose opening sentence says the agent's work is still so, the rest asking for the
# next fix: up front, the "still" reports, however much follows it
@pytest.mark.parametrize(
    "text",
    [
        "The report still lists only the tested rows." + _NEXT,
        "Отчёт всё ещё содержит только проверенные строки." + _NEXT_RU,
        "O relatório ainda lista só as linhas testadas." + _NEXT_PT,
        "现在导出依然只记录了测试过的行，没测的都没有存进去。请你结合全局代码梳理一下数据从读取到保存的整个流向，"
        "先给我讲清楚你打算怎么改、改哪些文件、为什么这样改，再动手修改代码。",
    ],
)
def test_a_still_opening_a_long_reply_reports_a_failure(text):
    result = heard(text)
    assert result.correction and result.kind == "failure_report", result


@pytest.mark.parametrize(
    "text",
    [
        # a question: "still" asks, "还是" offers a choice
        "Is the report still needed for the demo?" + _NEXT,
        "标题是否就用现在这个？还是你有更好的名字？另外首页的副标题要换成英文，页脚保留邮箱和电话，"
        "这些都请你一起整理好，列成一张表发给我，我确认之后你再改页面，改完把截图也发给我。",
        # the person speaks of themselves
        "I still have to set up the staging server myself." + _NEXT,
        "Я всё ещё жду доступ к серверу от админа." + _NEXT_RU,
        "Eu ainda preciso configurar o servidor de homologação." + _NEXT_PT,
        "我还没建好测试数据库，等我建好了再说。你先把接口文档整理一下，列出每个接口的参数和返回值，"
        "再把错误码统一成一张表，最后补上每个接口的示例请求和示例响应，放在文档的最后一节里。",
        # further into a long reply, a "still" describes the new work
        "Add a dark mode toggle to the settings page and keep it in local storage, so the choice"
        " survives a reload; the light theme should still be the default for new visitors." + _NEXT,
    ],
)
def test_a_still_that_asks_or_speaks_of_the_person_in_a_long_reply_reports_nothing(text):
    assert not heard(text).correction


# The agent names a thing inside a compound ("docker-compose.yml", "src/config/settings.py"); the
# person rejects the thing by its own name
_COMPOSED = "I wrote docker-compose.yml for the stack and moved the values into src/config/settings.py."


@pytest.mark.parametrize(
    "text",
    [
        "no Docker please, run it with podman",
        "不用Docker，直接用podman跑",
        "pas de Docker, lance-le avec podman",
        "put them in the env file, not in settings",
    ],
)
def test_rejecting_a_part_of_the_agents_compound_name_is_a_correction(text):
    result = heard(text, before=_COMPOSED)
    assert result.correction and result.kind == "convention", result


def test_yao_bu_yao_asks_and_rejects_nothing():
    # "要不要" asks whether to: its "不要" is no "don't"
    assert not heard("要不要加一个docker的健康检查", before=_COMPOSED).correction


# The agent said what it looked at, neither done nor asking: a "still" up front reports all the same
_LOOKED = "I looked at the spawn code in the wave manager."


@pytest.mark.parametrize(
    "text",
    [
        "i checked and the boss still spawns twice, what's your plan",
        "я проверил, босс всё ещё появляется два раза за волну",
        "我看了一下，boss还是会刷出来两次，你打算怎么处理",
        "conferi e o chefe ainda nasce duas vezes por onda",
    ],
)
def test_a_still_up_front_reports_a_failure_when_the_agent_neither_claimed_nor_asked(text):
    result = heard(text, before=_LOOKED)
    assert result.correction and result.kind == "failure_report", result


@pytest.mark.parametrize(
    "text",
    [
        "We will still need a boss for the last wave, add one that spawns after the timer ends",
        "delete all stale branches on the remote and local",  # Czech "stále" folds to English "stale"
        # with no claim before it, a "still" beside what should be, or after praise, asks for more work
        "我看了，还是要在最后一波加一个boss",
        "я посмотрел, всё ещё нужно добавить босса в последнюю волну",
        "the waves look good now, still the boss should spawn later",
        "olhei, ainda precisa de um chefe na última onda",
    ],
)
def test_a_still_of_the_persons_plan_or_a_stale_thing_reports_nothing(text):
    assert not heard(text, before=_LOOKED).correction


# The person states what is still so and asks to keep it: a constraint on the next work, not a
# failure, after the agent's claim or after text of the agent's that asks nothing
_NEXT_KEPT = " Then add the new endpoint next to it and document both in the README with an example of each."


@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "The old API is still used by the mobile app, keep it.",
        "The old API is still used by the mobile app, so keep it running next to the new one." + _NEXT_KEPT,
        "Старый API всё ещё используется мобильным приложением, поэтому оставь его." + _NEXT_RU,
        "A API antiga ainda é usada pelo app móvel, então mantenha ela." + _NEXT_PT,
        "La API vieja todavía la usa la app móvil, así que mantenla." + _NEXT_KEPT,
        "L'ancienne API est toujours utilisée par l'application mobile, donc garde-la." + _NEXT_KEPT,
        "旧的API仍然被移动端在用，所以先保留它。在旁边加一个新的接口，把两个接口都写进README，附上请求和响应的例子，"
        "并且给旧接口的每个响应加上弃用的响应头，让客户端能注意到这个变化。然后再补上测试。",
        "古いAPIはまだモバイルアプリで使われているので、残しておいてください。新しいエンドポイントを横に追加して、"
        "両方をREADMEに例付きで書いて、古い方のレスポンスには非推奨のヘッダーを付けてください。テストもお願いします。",
    ],
)
def test_a_still_the_person_asks_to_keep_reports_nothing(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        # a failure word beside the "keep": the state kept is a failure all the same
        "The login still fails on Safari, so keep the old build deployed until it works." + _NEXT,
        # "keep looking" carries on the work, it keeps nothing
        "The boss still spawns twice in the last wave, keep looking at the timer." + _NEXT,
    ],
)
def test_a_still_beside_a_failure_or_a_keep_going_still_corrects(text, before):
    assert heard(text, before=before).correction


# With no claim before it, what should be in a later clause of the "still"'s sentence says what the
# person expected: the "still" clause before it reports what they saw
@pytest.mark.parametrize(
    "text",
    [
        "The header still overlaps the nav on mobile, it should sit below it." + _NEXT,
        "Шапка всё ещё перекрывает меню на телефоне, а нужно, чтобы она была ниже." + _NEXT_RU,
        "O cabeçalho ainda cobre o menu no celular, ele deveria ficar embaixo." + _NEXT_PT,
        "头部在手机上还是盖住了导航栏，应该在导航栏下面才对。请你把整个页面的布局从头到尾检查一遍，先告诉我问题出在哪个文件、"
        "哪一行样式，为什么会这样，打算怎么改，确认之后再动手。",
    ],
)
def test_a_still_then_what_should_be_reports_a_failure_when_the_agent_neither_claimed_nor_asked(text):
    result = heard(text, before=_LOOKED)
    assert result.correction and result.kind == "failure_report", result


# Polish "dalej" is "next" or "further" as often as "still" ("dalej dodaj …", "i tak dalej"), and
# Italian "ancora un …" is "one more": a request, not a report; in their "still" phrases they report
_NEXT_PL = (
    " Użyj tych samych komponentów co w panelu ustawień i zachowaj styl przycisków, który już mamy,"
    " a na koniec zaktualizuj README o krótki opis nowych funkcji."
)
_NEXT_IT = (
    " Usa le stesse fixture dei test esistenti, metti tutto nel file dei permessi e poi aggiorna il"
    " README con una breve descrizione dei nuovi casi coperti."
)


@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "Dalej dodaj przycisk wylogowania w nagłówku i ostrzeżenie o końcu sesji." + _NEXT_PL,
        "Przyciski, formularze i tak dalej zrób w tym samym stylu." + _NEXT_PL,
        "Aggiungi ancora un test per il caso in cui la lista è vuota." + _NEXT_IT,
    ],
)
def test_dalej_and_ancora_un_ask_for_more_and_report_nothing(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    "text",
    [
        "dalej jest pusta strona po odświeżeniu",
        "dalej to samo po odświeżeniu strony",
        "è ancora rotto dopo il riavvio",
        "ancora niente, la pagina resta bianca",
    ],
)
def test_dalej_and_ancora_in_their_still_phrases_report_a_failure(text):
    result = heard(text)
    assert result.correction and result.kind == "failure_report", result


# "not just X" takes X in: it rejects nothing the agent named
_PATHS = "Updated frontend/src/components/LoginForm.tsx and the e2e test in cypress/e2e/login.cy.ts."


@pytest.mark.parametrize(
    "text",
    [
        "Add an e2e test for signup too, not just login.",
        "Ajoute un test e2e pour l'inscription aussi, pas seulement login.",
        "Schreib auch einen e2e-Test für die Registrierung, nicht nur login.",
        "Добавь e2e-тест и для регистрации, не только login.",
        "Adicione um teste e2e para o cadastro também, não só login.",
    ],
)
def test_not_just_a_thing_the_agent_named_rejects_nothing(text):
    assert not heard(text, before=_PATHS).correction


# A part of the agent's compound named in the opening of a request for new work is where the work
# goes ("…, not for the config loader"); the agent's whole word rejected there still counts
@pytest.mark.parametrize(
    "text",
    [
        "Now add a test for the parser, not for the config loader.",
        "Add the health check to the settings page, not to the docker setup.",
        "Ajoute un test pour le parseur, pas pour le config loader.",
        "Добавь тест для парсера, а не для config loader.",
    ],
)
def test_a_part_of_the_agents_compound_in_a_new_request_rejects_nothing(text):
    assert not heard(text, before=_COMPOSED).correction


def test_the_agents_whole_word_rejected_in_a_new_request_still_counts():
    result = heard("Add the tests with pytest, not unittest.", before="I wrote the tests with unittest.")
    assert result.correction and result.kind == "convention", result


# "still" after "be / stand / stay / hold / keep …" or before "while / when" means motionless: a spec
_NEXT_SPEC = (
    " Add a toggle for reduced motion in the settings as well, honour the system's preference by"
    " default, and write a test that checks the default for a new player."
)


@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "The water animation should be still when the game is paused." + _NEXT_SPEC,
        "Make the camera stand still during cutscenes, then follow the player again." + _NEXT_SPEC,
        "The background must stay still on mobile, no parallax there." + _NEXT_SPEC,
        "Keep the header still while the page scrolls and put a shadow under it." + _NEXT_SPEC,
    ],
)
def test_a_still_that_means_motionless_reports_nothing(text, before):
    assert not heard(text, before=before).correction


def test_a_still_before_a_verb_after_be_still_reports():
    result = heard("The header is still jumping when I scroll down." + _NEXT, before=_LOOKED)
    assert result.correction and result.kind == "failure_report", result


# "we're / I'm / we are still …" speaks of the person as "we still …" does
@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "We're still on Python 3.8 in production." + _NEXT,
        "We are still on the free plan of the hosting provider." + _NEXT,
        "I'm still the only one deploying this service." + _NEXT,
    ],
)
def test_a_still_of_the_person_with_be_reports_nothing(text, before):
    assert not heard(text, before=before).correction


def test_a_still_of_the_person_with_a_failure_word_reports():
    result = heard("I'm still getting the same error on the login page." + _NEXT, before=_LOOKED)
    assert result.correction and result.kind == "failure_report", result


# "还是…吧" closing its clause suggests ("rather …, let's"); "всё равно как/какой …" is "no matter how":
# neither reports, in a long reply either
@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "还是用React吧，Vue我们团队不熟悉。你用Vite模板新建一个项目，然后把现有的组件都迁移过去，"
        "路由用react-router，状态管理用zustand，样式继续用tailwind，完成后跑一下构建。",
        "还是你来决定吧，两个方案我都可以接受。你选一个之后把理由写在设计文档里，然后开始实现，先做数据库的迁移脚本，"
        "再做接口，最后做前端页面，每一步完成之后都提交一次，方便我审查代码。",
        "Всё равно какой, выбери цвет сам и продолжай." + _NEXT_RU,
    ],
)
def test_a_suggesting_haishi_or_a_no_matter_vsyo_ravno_reports_nothing(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    "text",
    [
        "还是很慢，打开页面要等五秒。请你结合全局代码梳理一下数据从读取到保存的整个流向，先讲清楚你打算怎么改，再动手修改代码吧。",
        "Всё равно долго грузится, секунд пять." + _NEXT_RU,
    ],
)
def test_haishi_and_vsyo_ravno_reporting_still_report(text):
    result = heard(text, before=_LOOKED)
    assert result.correction and result.kind == "failure_report", result


@pytest.mark.parametrize(
    "text",
    [
        "всё равно когда я открываю главную, требует авторизацию",
        "всё равно что-то не так с авторизацией на главной",
        "还是有不够小的吧？",
    ],
)
def test_vsyo_ravno_when_or_something_and_a_tag_question_haishi_still_correct(text):
    assert heard(text).correction


# With no claim before it, praise silences a "still" only in its own sentence and with no "but"
# between: "looks good, but … still …" and "Thanks for looking. … still …" report
@pytest.mark.parametrize(
    "text",
    [
        "The header looks good, but the footer still overlaps the content on small screens." + _NEXT,
        "Thanks for looking. The footer still overlaps the content on small screens." + _NEXT,
    ],
)
def test_a_still_after_praise_and_but_or_a_thanks_sentence_reports(text):
    result = heard(text, before=_LOOKED)
    assert result.correction and result.kind == "failure_report", result


# A "still" opening a heading of a list ("Still on the plan:", "Still open:") names what is left to
# do; with a failure or "same" in the heading it reports
@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "Still on the plan: add tests next, then the docs, then the release notes.",
        "Still on the plan for today: the pagination for the users table and a search box." + _NEXT,
        "Still open: the export button, the filters panel and the empty state of the table." + _NEXT,
    ],
)
def test_a_still_heading_a_list_reports_nothing(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    "text",
    [
        "Still the same: the button does nothing when I click it." + _NEXT,
        "Still broken: the login page returns 500 after the form is sent." + _NEXT,
    ],
)
def test_a_still_heading_with_a_failure_or_same_reports(text):
    assert heard(text, before=_LOOKED).correction


# "ainda mais / aún más / todavía más" is "even more": a request to go further, not "still"
_NEXT_ES = (
    " Después escribe pruebas para la navegación y actualiza el README con capturas de la nueva barra"
    " y de la versión móvil, por favor."
)


@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "Hazlo aún más simple: quita el menú lateral y deja solo la barra de arriba." + _NEXT_ES,
        "Haz la página todavía más rápida, con caché en el servidor." + _NEXT_ES,
        "Deixe a página ainda mais rápida, com cache no servidor." + _NEXT_PT,
    ],
)
def test_even_more_asks_for_more_and_reports_nothing(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    "text",
    [
        "todavía no carga la página de perfil",
        "aún sale el mismo error al guardar",
        "ainda aparece a tela branca",
    ],
)
def test_todavia_aun_ainda_as_still_report(text):
    result = heard(text)
    assert result.correction and result.kind == "failure_report", result


# The person as subject, but what they still cannot do: a report ("我还是登不上去", "я всё ещё не могу
# войти"), after a claim or neutral agent text
@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "我还是登不上去，输入新密码之后页面只是刷新了一下。请你把整个登录模块从头到尾检查一遍，先告诉我问题出在哪个文件，"
        "为什么会这样，打算怎么改，确认之后再动手。",
        "Я всё ещё не могу войти с новым паролем." + _NEXT_RU,
        "Eu ainda não consigo entrar com a senha nova." + _NEXT_PT,
        "We still cannot deploy to staging from the pipeline." + _NEXT,
    ],
)
def test_what_the_person_still_cannot_do_reports_a_failure(text, before):
    result = heard(text, before=before)
    assert result.correction and result.kind == "failure_report", result


# A "still" of what still works ("the tests still pass and …", "всё ещё работает, …") says nothing broke
@pytest.mark.parametrize("before", [DONE, _LOOKED])
@pytest.mark.parametrize(
    "text",
    [
        "The tests still pass and the app starts." + _NEXT,
        "Старые тесты всё ещё проходят, и приложение запускается." + _NEXT_RU,
        "Os testes antigos ainda passam e o app sobe normalmente." + _NEXT_PT,
        "旧的测试仍然通过，应用也能正常启动。请你结合全局代码梳理一下数据从读取到保存的整个流向，先给我讲清楚你打算怎么改、"
        "改哪些文件、为什么这样改，再动手修改代码。",
    ],
)
def test_a_still_of_what_still_works_reports_nothing(text, before):
    assert not heard(text, before=before).correction


@pytest.mark.parametrize(
    "text",
    [
        "The old login still works without the token." + _NEXT,
        "The tests still do not pass on Windows." + _NEXT,
    ],
)
def test_a_still_works_of_what_should_not_or_a_negated_pass_reports(text):
    assert heard(text, before=_LOOKED).correction
