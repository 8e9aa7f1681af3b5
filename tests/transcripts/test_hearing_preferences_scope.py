"""A rule led by its scope: "In this repo, always use pnpm", 在这个项目里永远用 pnpm.

The repo, the project or the house's way ("in general", "when in doubt") opening a sentence before
its "always" / "never" opens the rule, in a short reply and deep in a long task alike; a place in the
product ("In the login form, always …", "On mobile, never …") is the task's spec.
"""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference
from tests.transcripts.test_hearing_preferences_long import LOGIN_TASK

SPANISH_TASK = (
    "Necesito una página de inicio de sesión para el panel de administración. Debe tener un campo de "
    "correo, un campo de contraseña con un botón para mostrarla, una casilla de recordarme y un enlace "
    "al flujo de restablecimiento. Usa los componentes Button e Input de src/ui y conecta el envío a "
    "POST /api/session; con un 401 muestra el error debajo del formulario. "
)

JAPANESE_TASK = (
    "管理画面のログインページを作ってください。メールアドレスとパスワードの入力欄、パスワード表示の切り替え、"
    "ログイン状態を保持するチェックボックス、パスワード再設定へのリンクが必要です。src/ui の Button と Input "
    "を使って、送信は POST /api/session にしてください。401 のときはフォームの下にエラーを表示してください。"
)


@pytest.mark.parametrize(
    "text",
    [
        "In this repo, always use pnpm.",
        "For this project, never use npm.",
        "In this codebase we never use default exports.",
        "In general, always ask before deleting files.",
        "在这个项目里永远用 pnpm，不要用 npm。",
        "这个仓库里一律用 pnpm。",
        "このプロジェクトでは必ずテストを先に書いて。",
    ],
)
def test_a_rule_led_by_its_scope_is_heard(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    ("text", "first"),
    [
        (LOGIN_TASK + "In this repo, always use pnpm.", True),
        (SPANISH_TASK + "En este proyecto usamos pnpm, nunca npm.", True),
        (JAPANESE_TASK + "このリポジトリでは常に pnpm を使ってください。", True),
    ],
)
def test_a_rule_led_by_its_scope_deep_in_a_long_task_is_heard(text, first):
    assert preference(text, first=first) is not None


@pytest.mark.parametrize(
    "text",
    [
        "In the login form, always show the error inline.",
        "On mobile, never show the sidebar.",
        LOGIN_TASK + "In the header, always show the user's avatar.",
    ],
)
def test_a_place_in_the_product_before_always_is_the_spec(text):
    assert preference(text) is None


# What fails there, always: a report, not a rule ("这个项目里总是出现这个错误" is "in this project this
# error always shows up")
@pytest.mark.parametrize(
    "text",
    [
        "这个项目里总是出现这个错误。",
        "In general, it always crashes on startup.",
        "In this repo, I always get a lint error.",
    ],
)
def test_what_always_fails_in_the_repo_is_no_rule(text):
    assert preference(text) is None
