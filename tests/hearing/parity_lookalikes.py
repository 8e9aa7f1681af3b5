"""The parity matrix's look-alikes: what must stay silent in each of the fourteen languages.

A new request, a question, a retry after an API error, praise, a spec with "should", a "not"
in a task, a feature that goes back, and a bare "no" to the agent's offer (the offers are here
too). Our own sentences, none from the labelled sets; the corrections are in parity_sentences.py.
"""

from __future__ import annotations

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
