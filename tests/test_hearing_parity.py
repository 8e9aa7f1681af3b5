"""Parity by language: the correction shapes heard in English are heard in every language people use most.

Each shape (a correction the detector hears in English: "that's wrong", "still not working",
"you forgot X" …) is written as a native speaker would type it to a coding agent, in each
language, after the agent's claim of success in that language; the look-alikes (a new
request, a question, a retry after an API error, praise, a spec with "should", a "not" in a
task) must stay silent. Our own sentences, none from the labelled sets.
`python -m tests.test_hearing_parity` prints the matrix (heard / missed per shape × language).
"""

from __future__ import annotations

import sys

import pytest

from evolve.transcripts.hearing import hear
from evolve.transcripts.lexicons import load_lexicons

LANGUAGES = ("en", "zh", "ja", "ko", "es", "pt", "fr", "de", "ru", "it", "tr", "pl", "vi", "uk")

# What the agent said just before: it fixed the bug and it should work now
CLAIMS = {
    "en": "I've fixed the bug in `app.py`. It should work now.",
    "zh": "我已经修复了 `app.py` 里的问题，现在应该可以正常运行了。",
    "ja": "`app.py` のバグを修正しました。これで動くはずです。",
    "ko": "`app.py`의 버그를 수정했습니다. 이제 작동할 거예요.",
    "es": "He corregido el error en `app.py`. Ya debería funcionar.",
    "pt": "Corrigi o bug em `app.py`. Agora deve funcionar.",
    "fr": "J'ai corrigé le bug dans `app.py`. Ça devrait marcher maintenant.",
    "de": "Ich habe den Fehler in `app.py` behoben. Jetzt sollte es funktionieren.",
    "ru": "Я исправил ошибку в `app.py`. Теперь должно работать.",
    "it": "Ho corretto il bug in `app.py`. Ora dovrebbe funzionare.",
    "tr": "`app.py` içindeki hatayı düzelttim. Şimdi çalışması lazım.",
    "pl": "Poprawiłem błąd w `app.py`. Teraz powinno działać.",
    "vi": "Tôi đã sửa lỗi trong `app.py`. Bây giờ nó sẽ hoạt động.",
    "uk": "Я виправив помилку в `app.py`. Тепер має працювати.",
}

# shape -> language -> the ways people say it (each must be heard after the claim)
SHAPES: dict[str, dict[str, tuple[str, ...]]] = {
    "wrong": {
        "en": ("That's wrong.",),
        "zh": ("这不对。", "错了，不是这样的"),
        "ja": ("それは間違ってるよ。", "違います。"),
        "ko": ("그거 틀렸어요.", "틀렸어"),
        "es": ("Eso está mal.", "Eso no está bien."),
        "pt": ("Isso está errado.", "Tá errado isso."),
        "fr": ("C'est faux.", "Non, c'est pas bon."),
        "de": ("Das ist falsch.", "Stimmt so nicht."),
        "ru": ("Это неправильно.", "Неверно."),
        "it": ("È sbagliato.", "Non va bene così."),
        "tr": ("Bu yanlış.", "Yanlış olmuş"),
        "pl": ("To jest źle.", "Źle to zrobiłeś."),
        "vi": ("Sai rồi.", "Không đúng."),
        "uk": ("Це неправильно.", "Невірно."),
    },
    "still not working": {
        "en": ("Still not working.",),
        "zh": ("还是不行。", "还是没用啊"),
        "ja": ("まだ動かないです。", "まだ動きません"),
        "ko": ("여전히 안 돼요.", "아직도 안 되네요"),
        "es": ("Sigue sin funcionar.", "Sigue sin andar."),
        "pt": ("Ainda não funciona.", "Continua sem funcionar."),
        "fr": ("Ça ne marche toujours pas.", "Toujours pas."),
        "de": ("Funktioniert immer noch nicht.", "Geht immer noch nicht."),
        "ru": ("Всё ещё не работает.", "Всё равно не работает"),
        "it": ("Ancora non funziona.", "Continua a non andare."),
        "tr": ("Hâlâ çalışmıyor.", "Hala olmuyor"),
        "pl": ("Nadal nie działa.", "Dalej nie działa."),
        "vi": ("Vẫn không chạy được.", "Vẫn chưa được."),
        "uk": ("Досі не працює.", "Все одно не працює."),
    },
    "still fails with …": {
        "en": ("It still fails with a TypeError on line 12.",),
        "zh": ("还是报 TypeError，第 12 行。", "依然报错：TypeError"),
        "ja": ("まだ12行目で TypeError が出ます。", "相変わらず TypeError が出ています"),
        "ko": ("아직도 12번째 줄에서 TypeError가 나요.", "여전히 TypeError 떠요"),
        "es": (
            "Todavía falla con un TypeError en la línea 12.",
            "Me sigue saliendo un TypeError en la línea 12.",
        ),
        "pt": ("Ainda falha com um TypeError na linha 12.", "Continua dando TypeError na linha 12."),
        "fr": (
            "Ça plante encore avec une TypeError à la ligne 12.",
            "Ça plante toujours avec une TypeError ligne 12.",
        ),
        "de": (
            "Es schlägt immer noch mit einem TypeError in Zeile 12 fehl.",
            "Immer noch TypeError in Zeile 12.",
        ),
        "ru": ("Всё ещё падает с TypeError на 12 строке.", "По-прежнему падает с TypeError"),
        "it": ("Fallisce ancora con un TypeError alla riga 12.", "Mi dà ancora TypeError alla riga 12."),
        "tr": ("Hâlâ 12. satırda TypeError hatası veriyor.", "Hâlâ TypeError hatası alıyorum"),
        "pl": ("Dalej wywala TypeError w linii 12.", "Ciągle wyskakuje TypeError w linii 12."),
        "vi": ("Vẫn bị lỗi TypeError ở dòng 12.", "Vẫn báo TypeError ở dòng 12."),
        "uk": ("Досі падає з TypeError на 12 рядку.", "Досі вилітає TypeError на 12 рядку."),
    },
    "you forgot X": {
        "en": ("You forgot to update the tests.",),
        "zh": ("你忘了更新测试。", "你漏掉了测试的更新"),
        "ja": ("テストの更新を忘れてますよ。", "テストを更新し忘れています"),
        "ko": ("테스트 업데이트하는 걸 잊었네요.", "테스트 업데이트를 빠뜨렸어요"),
        "es": ("Te olvidaste de actualizar los tests.", "Se te olvidaron los tests."),
        "pt": ("Você esqueceu de atualizar os testes.", "Você esqueceu dos testes."),
        "fr": ("Tu as oublié de mettre à jour les tests.", "T'as oublié les tests."),
        "de": ("Du hast vergessen, die Tests anzupassen.", "Du hast die Tests vergessen."),
        "ru": ("Ты забыл обновить тесты.", "Ты забыл про тесты"),
        "it": ("Hai dimenticato di aggiornare i test.", "Ti sei dimenticato dei test."),
        "tr": ("Testleri güncellemeyi unuttun.", "Testleri güncellemeyi unutmuşsun"),
        "pl": ("Zapomniałeś zaktualizować testy.", "Zapomniałeś o testach."),
        "vi": ("Bạn quên cập nhật test rồi.", "Bạn quên chưa cập nhật test."),
        "uk": ("Ти забув оновити тести.", "Ти забув про тести."),
    },
    "why did you delete …?": {
        "en": ("Why did you delete the config file?",),
        "zh": ("你为什么把配置文件删了？", "为啥把配置文件删掉了？"),
        "ja": ("なんで設定ファイルを消したの？", "どうして設定ファイルを削除したんですか？"),
        "ko": ("왜 설정 파일을 삭제했어요?", "설정 파일 왜 지웠어?"),
        "es": (
            "¿Por qué borraste el archivo de configuración?",
            "¿Por qué eliminaste el archivo de configuración?",
        ),
        "pt": ("Por que você apagou o arquivo de configuração?", "Pq vc apagou o arquivo de config?"),
        "fr": (
            "Pourquoi tu as supprimé le fichier de config ?",
            "Pourquoi t'as supprimé le fichier de config ?",
        ),
        "de": ("Warum hast du die Konfigurationsdatei gelöscht?", "Wieso hast du die Config gelöscht?"),
        "ru": ("Зачем ты удалил конфиг?", "Почему ты удалил конфиг?"),
        "it": ("Perché hai cancellato il file di configurazione?", "Perché hai eliminato il file di config?"),
        "tr": ("Config dosyasını neden sildin?", "Neden config dosyasını sildin?"),
        "pl": ("Dlaczego usunąłeś plik konfiguracyjny?", "Czemu usunąłeś plik konfiguracyjny?"),
        "vi": ("Sao bạn lại xóa file config?", "Tại sao bạn xóa file config?"),
        "uk": ("Навіщо ти видалив конфіг?", "Чому ти видалив конфіг?"),
    },
    "I said X, not Y": {
        "en": ("I said pnpm, not npm.",),
        "zh": ("我说的是 pnpm，不是 npm。", "我不是说了用 pnpm 吗，不要用 npm"),
        "ja": ("npm じゃなくて pnpm って言ったよね。", "pnpm を使ってと言いましたよね"),
        "ko": ("npm 말고 pnpm이라고 했잖아요.", "pnpm 쓰라고 했잖아"),
        "es": ("Dije pnpm, no npm.", "Te dije que usaras pnpm, no npm."),
        "pt": ("Eu disse pnpm, não npm.", "Falei pra usar pnpm, não npm."),
        "fr": ("J'ai dit pnpm, pas npm.", "Je t'ai dit pnpm, pas npm."),
        "de": ("Ich sagte pnpm, nicht npm.", "Ich hab doch pnpm gesagt, nicht npm."),
        "ru": ("Я сказал pnpm, а не npm.", "Я же говорил использовать pnpm, а не npm"),
        "it": ("Ho detto pnpm, non npm.", "Ti avevo detto di usare pnpm, non npm."),
        "tr": ("npm değil pnpm dedim.", "pnpm kullan demiştim"),
        "pl": ("Mówiłem pnpm, nie npm.", "Przecież pisałem, żeby użyć pnpm, a nie npm."),
        "vi": ("Tôi nói là pnpm, không phải npm.", "Tôi đã bảo dùng pnpm mà, không phải npm."),
        "uk": ("Я сказав pnpm, а не npm.", "Я ж казав використовувати pnpm, а не npm."),
    },
    "not what I asked": {
        "en": ("That's not what I asked for.",),
        "zh": ("这不是我要的。", "这不是我想要的效果"),
        "ja": ("それは頼んだものと違います。", "そういうことじゃないです"),
        "ko": ("제가 부탁한 건 그게 아니에요.", "이건 제가 원한 게 아니에요"),
        "es": ("Eso no es lo que te pedí.", "No es lo que te pedí."),
        "pt": ("Não foi isso que eu pedi.", "Não era isso que eu queria."),
        "fr": ("Ce n'est pas ce que j'ai demandé.", "C'est pas ce que je voulais."),
        "de": ("Das ist nicht das, was ich wollte.", "Das wollte ich nicht."),
        "ru": ("Это не то, что я просил.", "Я просил не это"),
        "it": ("Non è quello che ho chiesto.", "Non è quello che volevo."),
        "tr": ("Benim istediğim bu değil.", "Ben bunu istemedim"),
        "pl": ("Nie o to prosiłem.", "Nie o to mi chodziło."),
        "vi": ("Đó không phải cái tôi yêu cầu.", "Không phải cái tôi muốn."),
        "uk": ("Це не те, що я просив.", "Я просив не це."),
    },
    "undo that": {
        "en": ("Undo that.",),
        "zh": ("撤销刚才的修改。", "把刚才的修改撤回"),
        "ja": ("今の変更を元に戻して。", "元に戻してください"),
        "ko": ("방금 변경한 거 되돌려 주세요.", "원래대로 돌려놔"),
        "es": ("Deshaz eso.", "Deshazlo."),
        "pt": ("Desfaz isso.", "Desfaça isso."),
        "fr": ("Annule ça.", "Annule tes changements."),
        "de": ("Mach das rückgängig.", "Mach das wieder rückgängig."),
        "ru": ("Отмени это.", "Верни как было"),
        "it": ("Annulla questa modifica.", "Annulla quello che hai fatto."),
        "tr": ("Bunu geri al.", "Değişikliği geri al"),
        "pl": ("Cofnij to.", "Cofnij te zmiany."),
        "vi": ("Hoàn tác thay đổi vừa rồi đi.", "Hoàn tác đi."),
        "uk": ("Скасуй це.", "Поверни як було."),
    },
    "revert your change": {
        "en": ("Revert your last change.",),
        "zh": ("把你刚才的改动回滚掉。", "回滚到之前的版本"),
        "ja": ("さっきの変更をリバートしてください。", "変更を取り消してください"),
        "ko": ("마지막 변경 사항 되돌려.", "변경 사항 되돌려 주세요"),
        "es": ("Revierte tu último cambio.", "Revierte los cambios que hiciste."),
        "pt": ("Reverte a sua última alteração.", "Reverta as suas alterações."),
        "fr": ("Reviens en arrière sur ta dernière modif.", "Remets comme c'était avant."),
        "de": ("Setz deine letzte Änderung zurück.", "Nimm deine Änderungen zurück."),
        "ru": ("Откати свои последние изменения.", "Откатывай изменения"),
        "it": ("Ripristina la versione di prima.", "Rimetti com'era prima."),
        "tr": ("Son değişikliğini geri al.", "Eski haline getir"),
        "pl": ("Wycofaj swoją ostatnią zmianę.", "Przywróć poprzednią wersję pliku."),
        "vi": ("Revert lại thay đổi cuối của bạn đi.", "Khôi phục lại như cũ đi."),
        "uk": ("Відкоти свої останні зміни.", "Відкати зміни."),
    },
    "stop": {
        "en": ("Stop.",),
        "zh": ("停！", "停下"),
        "ja": ("ストップ", "止めて"),
        "ko": ("멈춰", "그만"),
        "es": ("¡Para!", "Detente."),
        "pt": ("Para!", "Pare!"),
        "fr": ("Arrête !", "Stop !"),
        "de": ("Stopp!", "Hör auf!"),
        "ru": ("Стоп!", "Хватит"),
        "it": ("Fermati!", "Basta!"),
        "tr": ("Dur!", "Yeter"),
        "pl": ("Przestań!", "Stop, przestań."),
        "vi": ("Dừng lại!", "Dừng!"),
        "uk": ("Стоп!", "Досить!"),
    },
    "don't touch X": {
        "en": ("Don't touch the tests.",),
        "zh": ("别动测试文件。", "不要改测试"),
        "ja": ("テストには触らないで。", "テストは変更しないでください"),
        "ko": ("테스트는 건드리지 마세요.", "테스트 파일은 수정하지 마"),
        "es": ("No toques los tests.", "No toques nada de los tests."),
        "pt": ("Não mexa nos testes.", "Não mexe nos testes."),
        "fr": ("Ne touche pas aux tests.", "Touche pas aux tests."),
        "de": ("Fass die Tests nicht an.", "Lass die Tests in Ruhe."),
        "ru": ("Не трогай тесты.", "Тесты не трогай"),
        "it": ("Non toccare i test.", "Lascia stare i test."),
        "tr": ("Testlere dokunma.", "Testlere dokunma lütfen"),
        "pl": ("Nie ruszaj testów.", "Nie dotykaj testów."),
        "vi": ("Đừng động vào mấy file test.", "Không được sửa file test."),
        "uk": ("Не чіпай тести.", "Тести не чіпай."),
    },
    "the build is broken": {
        "en": ("The build is broken now.",),
        "zh": ("现在构建失败了。", "编译不通过了"),
        "ja": ("ビルドが壊れました。", "ビルドが通らなくなりました"),
        "ko": ("이제 빌드가 깨져요.", "빌드가 안 돼요"),
        "es": ("Ahora la build está rota.", "La build ya no compila."),
        "pt": ("Agora o build quebrou.", "O build tá quebrado."),
        "fr": ("Le build est cassé maintenant.", "Le build ne passe plus."),
        "de": ("Der Build ist jetzt kaputt.", "Der Build schlägt jetzt fehl."),
        "ru": ("Теперь сборка сломана.", "Сборка падает"),
        "it": ("Adesso la build è rotta.", "La build non compila più."),
        "tr": ("Build şimdi bozuldu.", "Build bozuldu"),
        "pl": ("Build się teraz wysypuje.", "Build jest zepsuty."),
        "vi": ("Giờ build bị hỏng rồi.", "Build lỗi rồi."),
        "uk": ("Тепер збірка зламана.", "Збірка падає."),
    },
    "no, use X": {
        "en": ("No, use pnpm.",),
        "zh": ("不，用 pnpm。", "不对，要用 pnpm"),
        "ja": ("いや、pnpm を使って。", "いいえ、pnpm を使ってください"),
        "ko": ("아니요, pnpm 쓰세요.", "아니, pnpm 써"),
        "es": ("No, usa pnpm.", "No, mejor usa pnpm."),
        "pt": ("Não, usa o pnpm.", "Não, usa pnpm."),
        "fr": ("Non, utilise pnpm.", "Non, prends pnpm."),
        "de": ("Nein, nimm pnpm.", "Nein, verwende pnpm."),
        "ru": ("Нет, используй pnpm.", "Нет, надо pnpm"),
        "it": ("No, usa pnpm.", "No, devi usare pnpm."),
        "tr": ("Hayır, pnpm kullan.", "Hayır, pnpm kullanacaksın"),
        "pl": ("Nie, użyj pnpm.", "Nie, masz użyć pnpm."),
        "vi": ("Không, dùng pnpm.", "Không, phải dùng pnpm."),
        "uk": ("Ні, використовуй pnpm.", "Ні, треба pnpm."),
    },
    "it doesn't work": {
        "en": ("It doesn't work.",),
        "zh": ("这样不行。", "没有效果"),
        "ja": ("動かないです。", "うまく動きません"),
        "ko": ("작동 안 해요.", "안 되는데요"),
        "es": ("No funciona.", "No va."),
        "pt": ("Não funciona.", "Não tá funcionando."),
        "fr": ("Ça ne marche pas.", "Ça marche pas."),
        "de": ("Funktioniert nicht.", "Geht nicht."),
        "ru": ("Не работает.", "Ничего не работает"),
        "it": ("Non funziona.", "Non va."),
        "tr": ("Çalışmıyor.", "Olmuyor"),
        "pl": ("Nie działa.", "Nie działa to."),
        "vi": ("Không chạy được.", "Không hoạt động."),
        "uk": ("Не працює.", "Нічого не працює."),
    },
    "nothing changed": {
        "en": ("Nothing changed.",),
        "zh": ("没有任何变化。", "没有任何改变"),
        "ja": ("何も変わってないです。", "何も変化がありません"),
        "ko": ("아무것도 안 바뀌었어요.", "변화가 없어요"),
        "es": ("No cambió nada.", "No ha cambiado nada."),
        "pt": ("Nada mudou.", "Não mudou nada."),
        "fr": ("Rien n'a changé.", "Ça n'a rien changé."),
        "de": ("Es hat sich nichts geändert.", "Nichts hat sich geändert."),
        "ru": ("Ничего не изменилось.", "Ничего не поменялось"),
        "it": ("Non è cambiato niente.", "Non cambia niente."),
        "tr": ("Hiçbir şey değişmedi.", "Değişen bir şey yok"),
        "pl": ("Nic się nie zmieniło.", "Nic to nie zmieniło."),
        "vi": ("Không có gì thay đổi cả.", "Chẳng thay đổi gì cả."),
        "uk": ("Нічого не змінилося.", "Нічого не помінялось."),
    },
    "same error": {
        "en": ("Same error.",),
        "zh": ("一样的错误。", "还是同样的错误"),
        "ja": ("同じエラーです。", "同じエラーが出ます"),
        "ko": ("같은 에러가 나요.", "똑같은 오류가 나요"),
        "es": ("El mismo error.", "Me da el mismo error."),
        "pt": ("Mesmo erro.", "O mesmo erro."),
        "fr": ("Même erreur.", "Toujours la même erreur."),
        "de": ("Gleicher Fehler.", "Derselbe Fehler."),
        "ru": ("Та же ошибка.", "Та же самая ошибка"),
        "it": ("Stesso errore.", "Sempre lo stesso errore."),
        "tr": ("Aynı hata.", "Yine aynı hata"),
        "pl": ("Ten sam błąd.", "Dalej ten sam błąd."),
        "vi": ("Lỗi y như cũ.", "Vẫn lỗi cũ."),
        "uk": ("Та сама помилка.", "Та сама помилка знову."),
    },
    "you broke X": {
        "en": ("You broke the login page.",),
        "zh": ("你把登录页面搞坏了。", "登录页面被你改坏了"),
        "ja": ("ログイン画面を壊しましたね。", "ログイン画面が壊れました"),
        "ko": ("로그인 페이지를 망가뜨렸어요.", "로그인 페이지가 깨졌어요"),
        "es": ("Rompiste la página de login.", "Has roto el login."),
        "pt": ("Você quebrou a página de login.", "Você quebrou o login."),
        "fr": ("Tu as cassé la page de connexion.", "T'as cassé le login."),
        "de": ("Du hast die Login-Seite kaputt gemacht.", "Du hast das Login kaputt gemacht."),
        "ru": ("Ты сломал страницу логина.", "Ты всё сломал"),
        "it": ("Hai rotto la pagina di login.", "Hai rotto tutto."),
        "tr": ("Giriş sayfasını bozdun.", "Giriş sayfasını bozmuşsun"),
        "pl": ("Zepsułeś stronę logowania.", "Zepsułeś logowanie."),
        "vi": ("Bạn làm hỏng trang đăng nhập rồi.", "Bạn làm hư trang đăng nhập rồi."),
        "uk": ("Ти зламав сторінку логіну.", "Ти все зламав."),
    },
    "didn't work": {
        "en": ("Didn't work.",),
        "zh": ("没成功。", "没起作用"),
        "ja": ("うまくいきませんでした。", "ダメでした"),
        "ko": ("안 됐어요.", "효과가 없어요"),
        "es": ("No funcionó.", "No sirvió de nada."),
        "pt": ("Não funcionou.", "Não deu certo."),
        "fr": ("Ça n'a pas marché.", "Ça n'a servi à rien."),
        "de": ("Hat nicht geklappt.", "Hat nicht funktioniert."),
        "ru": ("Не сработало.", "Не помогло"),
        "it": ("Non ha funzionato.", "Non è servito a niente."),
        "tr": ("Olmadı.", "İşe yaramadı"),
        "pl": ("Nie zadziałało.", "Nie pomogło."),
        "vi": ("Không được.", "Không ăn thua."),
        "uk": ("Не спрацювало.", "Не допомогло."),
    },
    "still slow": {
        "en": ("It's still slow.",),
        "zh": ("还是很慢。", "还是卡"),
        "ja": ("まだ遅いです。", "相変わらず遅いです"),
        "ko": ("아직도 느려요.", "여전히 느려요"),
        "es": ("Sigue igual de lento.", "Todavía va lento."),
        "pt": ("Continua lento.", "Ainda tá lento."),
        "fr": ("C'est toujours lent.", "C'est encore lent."),
        "de": ("Es ist immer noch langsam.", "Immer noch zu langsam."),
        "ru": ("Всё ещё медленно.", "Всё ещё тормозит"),
        "it": ("È ancora lento.", "È sempre lento."),
        "tr": ("Hâlâ yavaş.", "Hala çok yavaş"),
        "pl": ("Dalej działa wolno.", "Nadal jest wolno."),
        "vi": ("Vẫn còn chậm.", "Vẫn chậm."),
        "uk": ("Досі повільно.", "Все ще гальмує."),
    },
    "wrong file": {
        "en": ("Wrong file.",),
        "zh": ("改错文件了。", "你改的不是这个文件"),
        "ja": ("ファイルが違います。", "修正するファイルが違います"),
        "ko": ("엉뚱한 파일을 수정했어요.", "그 파일 아니에요"),
        "es": ("Archivo equivocado.", "Ese no es el archivo que te dije."),
        "pt": ("Arquivo errado.", "Você mexeu no arquivo errado."),
        "fr": ("Mauvais fichier.", "C'est pas le bon fichier."),
        "de": ("Falsche Datei.", "Das ist die falsche Datei."),
        "ru": ("Не тот файл.", "Ты поправил не тот файл"),
        "it": ("File sbagliato.", "Hai modificato il file sbagliato."),
        "tr": ("Yanlış dosya.", "Yanlış dosyayı değiştirmişsin"),
        "pl": ("Zły plik.", "Zmieniłeś nie ten plik."),
        "vi": ("Sai file rồi.", "Bạn sửa nhầm file rồi."),
        "uk": ("Не той файл.", "Ти виправив не той файл."),
    },
    "that's not true, X is Y": {
        "en": ("That's not true, the function is async.",),
        "zh": ("不是这样的，这个函数是异步的。", "不对，这个函数是异步的"),
        "ja": ("それは違います、その関数は非同期です。", "いいえ、その関数は非同期です"),
        "ko": ("그건 사실이 아니에요, 그 함수는 비동기예요.", "아니에요, 그 함수는 비동기예요"),
        "es": ("Eso no es cierto, la función es asíncrona.", "No es cierto, la función es asíncrona."),
        "pt": ("Isso não é verdade, a função é assíncrona.", "Não é bem assim, a função é assíncrona."),
        "fr": ("C'est pas vrai, la fonction est asynchrone.", "Faux, la fonction est asynchrone."),
        "de": ("Das stimmt nicht, die Funktion ist asynchron.", "Stimmt nicht, die Funktion ist async."),
        "ru": ("Это не так, функция асинхронная.", "Неправда, функция асинхронная"),
        "it": ("Non è vero, la funzione è asincrona.", "Falso, la funzione è asincrona."),
        "tr": ("Bu doğru değil, fonksiyon asenkron.", "Doğru değil, fonksiyon asenkron"),
        "pl": ("To nieprawda, ta funkcja jest asynchroniczna.", "To nie jest prawda, funkcja jest async."),
        "vi": ("Không đúng, hàm đó là async.", "Không phải vậy, hàm đó là async."),
        "uk": ("Це не так, функція асинхронна.", "Неправда, функція асинхронна."),
    },
    "you misunderstood": {
        "en": ("You misunderstood me.",),
        "zh": ("你理解错了。", "你没理解我的意思"),
        "ja": ("誤解してますね。", "勘違いしています"),
        "ko": ("잘못 이해하셨어요.", "제 말을 잘못 이해하셨어요"),
        "es": ("No me entendiste.", "Me entendiste mal."),
        "pt": ("Você não entendeu.", "Você entendeu errado."),
        "fr": ("Tu n'as pas compris.", "Tu m'as mal compris."),
        "de": ("Du hast mich falsch verstanden.", "Du hast das falsch verstanden."),
        "ru": ("Ты меня не понял.", "Ты неправильно понял"),
        "it": ("Non hai capito.", "Mi hai frainteso."),
        "tr": ("Yanlış anladın.", "Beni yanlış anladın"),
        "pl": ("Źle mnie zrozumiałeś.", "Nie zrozumiałeś mnie."),
        "vi": ("Bạn hiểu sai ý tôi rồi.", "Bạn hiểu nhầm rồi."),
        "uk": ("Ти мене не зрозумів.", "Ти неправильно зрозумів."),
    },
    "the error again": {
        "en": ("The error is back.",),
        "zh": ("又报错了。", "又出错了"),
        "ja": ("またエラーが出ました。", "またエラーになりました"),
        "ko": ("또 에러가 나요.", "또 오류가 나네요"),
        "es": ("Vuelve a dar error.", "Otra vez el error."),
        "pt": ("Deu erro de novo.", "Voltou a dar erro."),
        "fr": ("Encore une erreur.", "Encore la même erreur."),
        "de": ("Schon wieder der Fehler.", "Wieder derselbe Fehler."),
        "ru": ("Опять ошибка.", "Снова ошибка"),
        "it": ("Dà di nuovo errore.", "Di nuovo errore."),
        "tr": ("Yine hata veriyor.", "Tekrar hata verdi"),
        "pl": ("Znowu błąd.", "Znowu to samo."),
        "vi": ("Lại lỗi nữa rồi.", "Lại bị lỗi."),
        "uk": ("Знову помилка.", "Знову помилка вилазить."),
    },
    "you didn't X": {
        "en": ("You didn't run the tests.",),
        "zh": ("你没有跑测试。", "你根本没跑测试"),
        "ja": ("テストを実行してないですよね。", "テストを実行していませんよね"),
        "ko": ("테스트 안 돌렸잖아요.", "테스트 안 돌렸죠?"),
        "es": ("No ejecutaste los tests.", "No has ejecutado los tests."),
        "pt": ("Você não rodou os testes.", "Vc não testou nada."),
        "fr": ("Tu n'as pas lancé les tests.", "T'as pas lancé les tests."),
        "de": ("Du hast die Tests nicht laufen lassen.", "Du hast die Tests gar nicht ausgeführt."),
        "ru": ("Ты не запустил тесты.", "Ты не запускал тесты"),
        "it": ("Non hai eseguito i test.", "Non hai lanciato i test."),
        "tr": ("Testleri çalıştırmadın.", "Testleri çalıştırmamışsın"),
        "pl": ("Nie uruchomiłeś testów.", "Nie odpaliłeś testów."),
        "vi": ("Bạn chưa chạy test.", "Bạn chưa test gì cả."),
        "uk": ("Ти не запустив тести.", "Ти не запускав тести."),
    },
    "still the same": {
        "en": ("Still the same.",),
        "zh": ("还是一样。", "跟之前一样"),
        "ja": ("まだ同じです。", "変わってないです"),
        "ko": ("아직 똑같아요.", "그대로예요"),
        "es": ("Sigue igual.", "Está igual que antes."),
        "pt": ("Continua igual.", "Tá igual."),
        "fr": ("C'est toujours pareil.", "Toujours pareil."),
        "de": ("Immer noch dasselbe.", "Immer noch gleich."),
        "ru": ("Всё так же.", "Всё то же самое"),
        "it": ("È ancora uguale.", "Tutto uguale."),
        "tr": ("Hâlâ aynı.", "Hala aynı"),
        "pl": ("Dalej to samo.", "Wciąż to samo."),
        "vi": ("Vẫn vậy.", "Vẫn y như cũ."),
        "uk": ("Все так само.", "Все те саме."),
    },
    "back to the previous version": {
        "en": ("Go back to the previous version.",),
        "zh": ("退回到之前的版本。",),
        "ja": ("前のバージョンに戻してください。",),
        "ko": ("이전 버전으로 원복해 주세요.",),
        "es": ("Vuelve a la versión anterior.", "Regresa a la versión anterior."),
        "pt": ("Volta para a versão anterior.", "Volte à versão anterior."),
        "fr": ("Reviens à la version précédente.", "Reviens à l'ancienne version."),
        "de": ("Geh zurück zur vorherigen Version.", "Stell die vorherige Version wieder her."),
        "ru": ("Верни предыдущую версию.",),
        "it": ("Torna alla versione precedente.", "Riporta il codice a prima."),
        "tr": ("Önceki sürüme geri dön.",),
        "pl": ("Wróć do poprzedniej wersji.", "Wróć do poprzedniej wersji kodu."),
        "vi": ("Quay lại phiên bản trước đi.", "Trở lại phiên bản trước đi."),
        "uk": ("Поверни попередню версію.", "Віднови попередню версію."),
    },
    "I already told you": {
        "en": ("I already told you, the port is 8080.",),
        "zh": ("我都说了，端口是 8080。",),
        "ja": ("もう言いましたよね、ポートは 8080 です。",),
        "ko": ("이미 말했잖아요, 포트는 8080이에요.",),
        "es": ("Ya te lo dije, el puerto es 8080.", "Ya te lo había dicho, el puerto es 8080."),
        "pt": ("Eu já falei, a porta é 8080.", "Já te falei, a porta é 8080."),
        "fr": ("Je te l'ai déjà dit, le port c'est 8080.", "Je l'ai déjà dit : le port est 8080."),
        "de": (
            "Ich habe es dir schon gesagt, der Port ist 8080.",
            "Hab ich dir doch schon gesagt, der Port ist 8080.",
        ),
        "ru": ("Я же уже говорил, порт 8080.",),
        "it": ("Te l'ho già detto, la porta è 8080.", "Te l'avevo già scritto, la porta è 8080."),
        "tr": ("Sana zaten söyledim, port 8080.",),
        "pl": ("Już ci mówiłem, port to 8080.", "Przecież ci mówiłem, port to 8080."),
        "vi": ("Tôi đã nói rồi, cổng là 8080.", "Tôi nói rồi mà, cổng là 8080."),
        "uk": ("Я ж уже казав, порт 8080.", "Я вже казав, порт 8080."),
    },
}

# look-alike -> language -> a message that corrects nothing (after the claim; a retry after an API error)
SILENT: dict[str, dict[str, str]] = {
    "new request": {
        "en": "Now add a dark mode toggle to the settings page.",
        "zh": "接下来在设置页面加一个深色模式开关。",
        "ja": "次に設定画面にダークモードの切り替えを追加してください。",
        "ko": "이제 설정 페이지에 다크 모드 토글을 추가해 주세요.",
        "es": "Ahora añade un interruptor de modo oscuro en la página de ajustes.",
        "pt": "Agora adicione um botão de modo escuro na página de configurações.",
        "fr": "Maintenant ajoute un bouton de mode sombre dans la page des réglages.",
        "de": "Füge jetzt einen Dark-Mode-Schalter auf der Einstellungsseite hinzu.",
        "ru": "Теперь добавь переключатель тёмной темы на страницу настроек.",
        "it": "Ora aggiungi un interruttore per la modalità scura nella pagina delle impostazioni.",
        "tr": "Şimdi ayarlar sayfasına karanlık mod anahtarı ekle.",
        "pl": "Teraz dodaj przełącznik trybu ciemnego na stronie ustawień.",
        "vi": "Giờ thêm nút bật chế độ tối vào trang cài đặt.",
        "uk": "Тепер додай перемикач темної теми на сторінку налаштувань.",
    },
    "neutral question": {
        "en": "How does the cache decide when to refresh?",
        "zh": "缓存是怎么决定什么时候刷新的？",
        "ja": "キャッシュはいつ更新されるんですか？",
        "ko": "캐시는 언제 갱신되나요?",
        "es": "¿Cómo decide la caché cuándo refrescarse?",
        "pt": "Como o cache decide quando atualizar?",
        "fr": "Comment le cache décide-t-il quand se rafraîchir ?",
        "de": "Wie entscheidet der Cache, wann er neu lädt?",
        "ru": "Как кэш решает, когда обновляться?",
        "it": "Come decide la cache quando aggiornarsi?",
        "tr": "Önbellek ne zaman yenileneceğine nasıl karar veriyor?",
        "pl": "Jak cache decyduje, kiedy się odświeżyć?",
        "vi": "Cache quyết định khi nào làm mới như thế nào?",
        "uk": "Як кеш вирішує, коли оновлюватися?",
    },
    "retry after an API error": {
        "en": "Please continue.",
        "zh": "继续",
        "ja": "続けてください",
        "ko": "계속해 주세요",
        "es": "Continúa, por favor.",
        "pt": "Continue, por favor.",
        "fr": "Continue, s'il te plaît.",
        "de": "Bitte mach weiter.",
        "ru": "Продолжай.",
        "it": "Continua, per favore.",
        "tr": "Devam et.",
        "pl": "Kontynuuj.",
        "vi": "Tiếp tục đi.",
        "uk": "Продовжуй.",
    },
    "praise": {
        "en": "Great, it works now, thanks!",
        "zh": "太好了，现在可以用了，谢谢！",
        "ja": "完璧です、ちゃんと動きました。ありがとう！",
        "ko": "좋아요, 이제 잘 돼요. 고마워요!",
        "es": "¡Genial, ya funciona, gracias!",
        "pt": "Ótimo, agora funciona, valeu!",
        "fr": "Super, ça marche maintenant, merci !",
        "de": "Super, jetzt klappt es, danke!",
        "ru": "Отлично, теперь работает, спасибо!",
        "it": "Perfetto, ora funziona, grazie!",
        "tr": "Harika, şimdi çalışıyor, teşekkürler!",
        "pl": "Super, teraz działa, dzięki!",
        "vi": "Tuyệt, giờ chạy rồi, cảm ơn!",
        "uk": "Чудово, тепер працює, дякую!",
    },
    "a spec with should": {
        "en": "Next, the export button should download a CSV and the file name should include the date.",
        "zh": "接下来，导出按钮应该下载一个 CSV，文件名应该包含日期。",
        "ja": "次に、エクスポートボタンで CSV をダウンロードできるようにして、"
        "ファイル名には日付を入れるべきです。",
        "ko": "다음으로, 내보내기 버튼은 CSV를 다운로드해야 하고 파일 이름에는 날짜가 들어가야 해요.",
        "es": (
            "Lo siguiente: el botón de exportar debería descargar un CSV y "
            "el nombre del archivo debería incluir la fecha."
        ),
        "pt": "Agora o botão de exportar deveria baixar um CSV e o nome do arquivo deveria ter a data.",
        "fr": (
            "Ensuite, le bouton d'export devrait télécharger un CSV et "
            "le nom du fichier devrait contenir la date."
        ),
        "de": (
            "Als Nächstes sollte der Export-Button eine CSV herunterladen "
            "und der Dateiname sollte das Datum enthalten."
        ),
        "ru": "Дальше: кнопка экспорта должна скачивать CSV, а в имени файла должна быть дата.",
        "it": (
            "Poi il pulsante di esportazione dovrebbe scaricare un CSV e "
            "il nome del file dovrebbe contenere la data."
        ),
        "tr": "Sonra dışa aktar butonu bir CSV indirmeli ve dosya adında tarih olmalı.",
        "pl": "Dalej: przycisk eksportu powinien pobierać CSV, a nazwa pliku powinna zawierać datę.",
        "vi": "Tiếp theo, nút xuất nên tải về một file CSV và tên file nên có ngày tháng.",
        "uk": "Далі: кнопка експорту має завантажувати CSV, а назва файлу має містити дату.",
    },
    "not inside a task": {
        "en": "Add a check so that uploads larger than 10 MB are not accepted.",
        "zh": "加一个检查，超过 10 MB 的上传文件不要接受。",
        "ja": "10MB を超えるアップロードは受け付けないようにチェックを追加してください。",
        "ko": "10MB가 넘는 업로드는 받지 않도록 검사를 추가해 주세요.",
        "es": "Añade una comprobación para que no se acepten subidas de más de 10 MB.",
        "pt": "Adicione uma verificação para não aceitar uploads maiores que 10 MB.",
        "fr": "Ajoute une vérification pour ne pas accepter les fichiers de plus de 10 Mo.",
        "de": "Füg eine Prüfung hinzu, damit Uploads über 10 MB nicht angenommen werden.",
        "ru": "Добавь проверку, чтобы загрузки больше 10 МБ не принимались.",
        "it": "Aggiungi un controllo così che i caricamenti oltre 10 MB non vengano accettati.",
        "tr": "10 MB'tan büyük yüklemeler kabul edilmesin diye bir kontrol ekle.",
        "pl": "Dodaj sprawdzenie, żeby pliki większe niż 10 MB nie były przyjmowane.",
        "vi": "Thêm kiểm tra để không nhận file tải lên lớn hơn 10 MB.",
        "uk": "Додай перевірку, щоб завантаження понад 10 МБ не приймалися.",
    },
    "a feature that goes back": {
        "en": "Add a button that lets users go back to the previous version.",
        "zh": "加一个按钮，让用户可以回退到之前的版本。",
        "ja": "ユーザーが前のバージョンに戻せるボタンを追加してください。",
        "ko": "사용자가 이전 버전으로 원복할 수 있는 버튼을 추가해 주세요.",
        "es": "Añade un botón para que el usuario vuelva a la versión anterior.",
        "pt": "Adicione um botão para o usuário voltar para a versão anterior.",
        "fr": "Ajoute un bouton pour que l'utilisateur revienne à la version précédente.",
        "de": "Füge einen Button hinzu, mit dem man zur vorherigen Version zurückkehren kann.",
        "ru": "Добавь кнопку, чтобы пользователь мог вернуться к предыдущей версии.",
        "it": "Aggiungi un pulsante per tornare alla versione precedente.",
        "tr": "Kullanıcının önceki sürüme geri dönebileceği bir buton ekle.",
        "pl": "Dodaj przycisk, który pozwala wrócić do poprzedniej wersji.",
        "vi": "Thêm một nút để người dùng quay lại phiên bản trước.",
        "uk": "Додай кнопку, щоб користувач міг повернутися до попередньої версії.",
    },
    "no to the agent's offer": {
        "en": "No, that's not needed.",
        "zh": "不用了，谢谢。",
        "ja": "いいえ、大丈夫です。",
        "ko": "아니요, 필요 없어요.",
        "es": "No, no hace falta.",
        "pt": "Não, não precisa.",
        "fr": "Non, pas besoin.",
        "de": "Nein, nicht nötig.",
        "ru": "Нет, не надо.",
        "it": "No, non serve.",
        "tr": "Hayır, gerek yok.",
        "pl": "Nie, nie trzeba.",
        "vi": "Không, không cần đâu.",
        "uk": "Ні, не треба.",
    },
}

# The agent's offer a bare "no" answers (an answer, not a correction)
OFFERS = {
    "en": "Shall I also add tests?",
    "zh": "需要我再加上测试吗？",
    "ja": "テストも追加しましょうか？",
    "ko": "테스트도 추가할까요?",
    "es": "¿Quieres que añada también tests?",
    "pt": "Quer que eu adicione testes também?",
    "fr": "Tu veux que j'ajoute aussi des tests ?",
    "de": "Soll ich auch Tests hinzufügen?",
    "ru": "Добавить ещё тесты?",
    "it": "Vuoi che aggiunga anche dei test?",
    "tr": "Testleri de ekleyeyim mi?",
    "pl": "Czy mam dodać też testy?",
    "vi": "Bạn có muốn tôi thêm test không?",
    "uk": "Додати ще тести?",
}

# (shape, language) cells not heard yet, and why: each one a gap the rules have not closed
NOT_YET: dict[tuple[str, str], str] = {
    ("you forgot X", "ko"): "잊었네요 says the person forgot (말씀드리는 걸 잊었네요) as often as the agent",
}


def heard(text: str, lang: str) -> bool:
    """Whether the correction is heard after the agent's claim of success in that language."""
    return hear(load_lexicons(), text, CLAIMS[lang]).correction


def silent(look_alike: str, lang: str) -> bool:
    """Whether a look-alike stays silent (after the claim; a retry after an error; "no" to an offer)."""
    text = SILENT[look_alike][lang]
    if look_alike == "retry after an API error":
        return not hear(load_lexicons(), text, after_error=True).correction
    agent_before = OFFERS[lang] if look_alike == "no to the agent's offer" else CLAIMS[lang]
    return not hear(load_lexicons(), text, agent_before).correction


_CELLS = [(shape, lang) for shape in SHAPES for lang in LANGUAGES if (shape, lang) not in NOT_YET]


@pytest.mark.parametrize(("shape", "lang"), _CELLS)
def test_a_correction_shape_is_heard_in_every_language(shape, lang):
    missed = [text for text in SHAPES[shape][lang] if not heard(text, lang)]
    assert not missed


@pytest.mark.parametrize(("look_alike", "lang"), [(kind, lang) for kind in SILENT for lang in LANGUAGES])
def test_a_look_alike_stays_silent_in_every_language(look_alike, lang):
    assert silent(look_alike, lang)


def test_every_shape_and_look_alike_is_written_in_every_language():
    written = [*SHAPES.values(), *SILENT.values(), CLAIMS, OFFERS]
    assert all(set(by_language) == set(LANGUAGES) for by_language in written)
    assert set(NOT_YET) <= {(shape, lang) for shape in SHAPES for lang in LANGUAGES}


def matrix() -> str:
    """Heard / missed per shape × language ("+" heard, "." missed, "!" a look-alike that fired)."""
    lines = [f"{'':26}" + " ".join(f"{lang:>2}" for lang in LANGUAGES)]
    totals = dict.fromkeys(LANGUAGES, 0)
    for shape, by_language in SHAPES.items():
        cells = []
        for lang in LANGUAGES:
            hits = sum(heard(text, lang) for text in by_language[lang])
            totals[lang] += hits == len(by_language[lang])
            cells.append(" +" if hits == len(by_language[lang]) else " ." if not hits else " ~")
        lines.append(f"{shape[:26]:26}" + " ".join(cells))
    lines.append(
        f"{'heard (of ' + str(len(SHAPES)) + ')':26}" + " ".join(f"{totals[lang]:>2}" for lang in LANGUAGES)
    )
    for look_alike in SILENT:
        cells = [" ." if silent(look_alike, lang) else " !" for lang in LANGUAGES]
        lines.append(f"silent: {look_alike[:18]:18}" + " ".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(matrix() + "\n")
