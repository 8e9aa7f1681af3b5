"""The parity round's forms, attacked: what people type that corrects nothing, and what they miss.

The misses: corrections in other registers, abbreviations, common misspellings.

Each sentence is our own, written as a person types it to a coding agent after the agent's claim
of success (`CLAIMS`), after a claim that closes on an offer of more, or after a turn whose
words are unknown (a prompt-only log). The parity matrix is `tests/test_hearing_parity.py`.
"""

from __future__ import annotations

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons
from tests.hearing.parity_sentences import CLAIMS

# The agent's claim closing on an open offer of more help ("Anything else?")
CLAIMS_OFFERING_MORE = {
    "ru": CLAIMS["ru"] + " Нужно что-нибудь ещё?",
    "pl": CLAIMS["pl"] + " Czy mogę jeszcze w czymś pomóc?",
}
UNKNOWN = ""  # the agent answered, what it said is unknown (a prompt-only log)

# (language, what the agent said before, the person's message): each must be heard
HEARD = [
    ("ja", CLAIMS["ja"], "うまくいかなかった"),
    ("ja", CLAIMS["ja"], "うまくいかなかったです。"),
    ("ko", CLAIMS["ko"], "안됨"),
    ("ko", CLAIMS["ko"], "똑같아요."),
    ("ko", CLAIMS["ko"], "아직도 똑같아"),
    ("fr", CLAIMS["fr"], "ne marche tjr pas"),
    ("fr", CLAIMS["fr"], "ça marche tjrs pas"),
    ("de", CLAIMS["de"], "funktioniert immernoch nicht"),
    ("de", CLAIMS["de"], "Immernoch der gleiche Fehler."),
    ("es", CLAIMS["es"], "¡Para ya!"),
    ("fr", CLAIMS["fr"], "Je l'ai déjà dit, pas de console.log."),
    ("it", CLAIMS["it"], "L'ho già detto, niente console.log."),
    ("fr", CLAIMS["fr"], "Je l'ai déjà dit au début : pas de console.log."),
    ("it", CLAIMS["it"], "L'ho già detto all'inizio, niente console.log."),
    ("vi", CLAIMS["vi"], "Tôi đã nói với bạn rồi, không dùng console.log."),
    ("ru", CLAIMS["ru"], "Я уже говорил, никаких console.log."),
    ("pl", UNKNOWN, "Nie, to nadal nie działa, dzięki."),
    ("zh", CLAIMS["zh"], "不，用 PostgreSQL。"),
    ("es", CLAIMS["es"], "Todavía no probaste los tests."),
    ("it", CLAIMS["it"], "Non hai ancora provato i test."),
    ("zh", CLAIMS["zh"], "还是没测通，报 500。"),
    ("tr", CLAIMS["tr"], "Geri al şunu."),
    ("pl", CLAIMS["pl"], "Wycofaj to."),
    # a "no" answering an offer, and a failure after it
    ("ru", "Я исправил ошибку. Дайте знать, если нужно добавить тесты.", "Нет, всё ещё падает."),
    ("es", "He corregido el error. Avísame si quieres que añada tests.", "No, todavía falla."),
    ("ja", CLAIMS["ja"], "いや、違う。"),
    ("ja", CLAIMS["ja"], "まだ落ちます。"),
    ("fr", CLAIMS["fr"], "Reviens à la version précédente."),
    # thanks, and a failure in the sentence after it
    ("en", CLAIMS["en"], "Thanks! But it crashes on startup."),
    ("ru", CLAIMS["ru"], "Спасибо. Но не работает."),
    ("es", CLAIMS["es"], "¡Gracias! Pero sigue sin funcionar."),
    # casual registers
    ("zh", CLAIMS["zh"], "又挂了"),
    ("zh", CLAIMS["zh"], "没啥变化啊"),
    ("ko", CLAIMS["ko"], "그대로네"),
    ("es", CLAIMS["es"], "sigue igualito"),
    ("fr", CLAIMS["fr"], "ça a rien changé"),
    ("fr", CLAIMS["fr"], "je te l'avais dit"),
    ("de", CLAIMS["de"], "hat sich nix geändert"),
    ("de", CLAIMS["de"], "bringt nix"),
    ("ru", CLAIMS["ru"], "я ж говорил"),
    ("it", CLAIMS["it"], "rimetti com'era"),
    ("vi", CLAIMS["vi"], "chả thay đổi gì"),
    ("ja", CLAIMS["ja"], "直ってないです"),
    ("zh", CLAIMS["zh"], "你改了个寂寞"),
    ("vi", CLAIMS["vi"], "chưa được bạn ơi"),
    # "now it works", and a failure or a question after it or a "still"
    ("en", CLAIMS["en"], "Now it works, but why did you delete the config file?"),
    ("en", CLAIMS["en"], "It works now on Linux, but it still fails on Windows."),
    ("de", CLAIMS["de"], "Jetzt läuft es, aber die Tests schlagen fehl."),
    ("de", CLAIMS["de"], "Vorher ging es, jetzt geht gar nichts mehr."),
    ("pl", CLAIMS["pl"], "Teraz działa, ale nadal jest wolno."),
    ("zh", CLAIMS["zh"], "不，应该改 config.py。"),
]

# (language, what the agent said before, the person's message): each must stay silent
SILENT = [
    # "the same" said of what should stay the same, or glad it is
    ("ko", CLAIMS["ko"], "결과가 똑같아서 다행이에요. 이제 문서도 업데이트해 주세요."),
    ("ko", CLAIMS["ko"], "디자인은 똑같아도 돼요, 버튼 색만 파란색으로 바꿔 주세요."),
    # "if it did not work" sets up a new task
    ("ja", CLAIMS["ja"], "うまくいかなかったら、別のライブラリを試してください。"),
    # "I already said it" to someone else
    ("fr", CLAIMS["fr"], "Je l'ai déjà dit au client, il est d'accord. Maintenant ajoute la pagination."),
    ("it", CLAIMS["it"], "L'ho già detto al cliente, va bene così. Grazie!"),
    ("en", CLAIMS["en"], "I already told the client, he's happy. Now add pagination."),
    ("ru", CLAIMS["ru"], "Я уже сказал начальнику, что релиз завтра. Добавь changelog."),
    ("uk", CLAIMS["uk"], "Я вже казав клієнту, він погодився. Тепер додай пагінацію."),
    ("pl", CLAIMS["pl"], "Już mówiłem szefowi, że wdrożenie jest jutro. Dodaj changelog."),
    ("tr", CLAIMS["tr"], "Müşteriye zaten söyledim, memnun kaldı. Şimdi sayfalama ekle."),
    ("vi", CLAIMS["vi"], "Tôi đã nói với khách hàng rồi, họ đồng ý. Giờ thêm phân trang nhé."),
    ("ja", CLAIMS["ja"], "お客さんにはもう言いました。次はページネーションを追加してください。"),
    # a failure that is over: "it didn't work before, now it does"
    ("en", CLAIMS["en"], "It didn't work before, now it does. Thanks!"),
    ("zh", CLAIMS["zh"], "我之前一直没成功配置好这个，这次搞定了，太好了！"),
    ("ja", CLAIMS["ja"], "ずっとうまくいかなかったのが直りました！ありがとうございます。"),
    ("ko", CLAIMS["ko"], "계속 안 됐던 게 이제 되네요! 감사합니다."),
    ("de", CLAIMS["de"], "Das hat vorher nie geklappt, jetzt läuft's. Danke!"),
    ("pt", CLAIMS["pt"], "Antes não funcionava e agora funciona. Valeu!"),
    ("fr", CLAIMS["fr"], "Avant ça marchait pas, maintenant oui. Merci !"),
    ("it", CLAIMS["it"], "Prima non funzionava, adesso sì. Grazie!"),
    ("ru", CLAIMS["ru"], "Раньше не работало, а теперь работает. Спасибо!"),
    ("uk", CLAIMS["uk"], "Раніше не працювало, а тепер працює. Дякую!"),
    ("pl", CLAIMS["pl"], "Wcześniej nie działało, a teraz działa. Dzięki!"),
    ("vi", CLAIMS["vi"], "Trước không chạy được, giờ chạy rồi. Cảm ơn!"),
    # not tried yet: nothing reported
    ("es", CLAIMS["es"], "Todavía no lo probé, luego te digo. Gracias."),
    ("es", CLAIMS["es"], "Aún no lo pruebo, después te aviso."),
    ("it", CLAIMS["it"], "Non l'ho ancora provato, ti faccio sapere. Grazie."),
    ("it", CLAIMS["it"], "Ancora non l'ho testato, ti dico dopo."),
    ("zh", CLAIMS["zh"], "还没测，等下告诉你结果。"),
    # an undo button named in a spec
    ("tr", CLAIMS["tr"], "Geri al butonuna basınca son değişiklik iptal olsun."),
    ("pl", CLAIMS["pl"], "Dodaj przycisk Wycofaj w edytorze."),
    ("fr", CLAIMS["fr"], "Il n'y a rien à changer dans le README, passe aux tests."),
    # "if you did not run X, do it": a condition
    ("pt", CLAIMS["pt"], "Se você não rodou as migrações, roda antes do deploy."),
    ("ru", CLAIMS["ru"], "Если ты не запускал миграции, запусти их перед деплоем."),
    ("uk", CLAIMS["uk"], "Якщо ти не запускав міграції, запусти їх перед деплоєм."),
    ("pl", CLAIMS["pl"], "Jeśli nie uruchomiłeś migracji, zrób to przed deployem."),
    ("it", CLAIMS["it"], "Se non hai eseguito le migrazioni, falle prima del deploy."),
    ("vi", CLAIMS["vi"], "Nếu bạn chưa chạy migration thì chạy trước khi deploy nhé."),
    ("zh", CLAIMS["zh"], "如果你还没跑迁移，部署前先跑一下。"),
    ("fr", CLAIMS["fr"], "Si tu n'as pas lancé les migrations, fais-le avant le déploiement."),
    # how the person goes back themselves
    ("fr", CLAIMS["fr"], "Comment je reviens à la version précédente si ça casse en prod ?"),
    # thanks, then a new task that names what failed last time
    ("en", CLAIMS["en"], "Thanks! Next: a CSV export. Last time pandas didn't work, use csv."),
    ("de", CLAIMS["de"], "Danke! Als Nächstes CSV-Export. Letztes Mal hat pandas nicht geklappt."),
    ("es", CLAIMS["es"], "¡Gracias! Ahora exportar a CSV. La última vez pandas no funcionó."),
    ("pl", CLAIMS["pl"], "Dzięki! Teraz eksport do CSV. Ostatnio pandas nie zadziałało."),
    ("ru", CLAIMS["ru"], "Спасибо! Теперь экспорт в CSV. В прошлый раз pandas не сработал."),
    ("tr", CLAIMS["tr"], "Teşekkürler! Sırada CSV dışa aktarma. Geçen sefer pandas işe yaramadı."),
    ("vi", CLAIMS["vi"], "Chưa được phép deploy lên production, chỉ deploy lên staging thôi."),
    # "no, use X" answering the agent's question
    ("zh", "你想用哪个数据库？", "不，用 PostgreSQL。"),
    # a person's words quoted the German and Polish way, „…“
    ("pl", CLAIMS["pl"], "Użytkownik napisał: „po aktualizacji nie działa”. Napisz uprzejmą odpowiedź."),
    ("de", CLAIMS["de"], "Ein Nutzer schreibt: „Seit dem Update geht nichts mehr“. Antworte freundlich."),
    # a "no" answering an offer made as "let me know if …"
    ("uk", "Я виправив помилку. Дай знати, якщо треба додати тести.", "Ні, не треба."),
    ("ru", "Я исправил ошибку. Дайте знать, если нужно добавить тесты.", "Нет, не нужно."),
    ("tr", "Hatayı düzelttim. Test eklememi istersen söyle.", "Hayır, gerek yok."),
    ("ja", "バグを修正しました。テストも必要であればお知らせください。", "いいえ、大丈夫です。"),
    ("de", "Fehler behoben. Sag Bescheid, wenn ich Tests hinzufügen soll.", "Nein, nicht nötig."),
    ("es", "He corregido el error. Avísame si quieres que añada tests.", "No, no hace falta."),
    # a "no" declining with thanks: the agent offered more, or its words are unknown
    ("ru", CLAIMS_OFFERING_MORE["ru"], "Нет, всё отлично, спасибо."),
    ("pl", CLAIMS_OFFERING_MORE["pl"], "Nie, wszystko w porządku, dzięki."),
    ("pl", UNKNOWN, "Nie, wszystko w porządku, dzięki."),
    ("uk", UNKNOWN, "Ні, все добре, дякую."),
    ("tr", UNKNOWN, "Hayır, gerek yok, teşekkürler."),
    ("vi", UNKNOWN, "Không, vậy là ổn rồi, cảm ơn."),
    ("de", UNKNOWN, "Nein, passt so, danke."),
    ("en", UNKNOWN, "No, all good, thanks!"),
]


@pytest.mark.parametrize(("lang", "agent_before", "text"), HEARD)
def test_a_correction_the_forms_missed_is_heard(lang, agent_before, text):
    assert hear(load_lexicons(), text, agent_before).correction


@pytest.mark.parametrize(("lang", "agent_before", "text"), SILENT)
def test_a_message_that_corrects_nothing_stays_silent(lang, agent_before, text):
    assert not hear(load_lexicons(), text, agent_before).correction
