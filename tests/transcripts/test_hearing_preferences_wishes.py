"""A wish, "我希望" ("I wish"), asks for this task's result unless its sentence says every time."""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import preference


@pytest.mark.parametrize(
    "text",
    [
        "我希望以后每次提交前都先跑一遍测试。",
        "我希望你总是先列出要改的文件，再动手。",
        "我希望每次改完代码都顺便更新文档。",
    ],
)
def test_a_wish_for_every_time_states_a_preference(text):
    assert preference(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "我希望能把导出的报表直接发到我的邮箱里。",
        "我希望设置页面用 Vue 重新写一遍。",
        "我希望能尽快看到结果，部署的事情我来处理。",
    ],
)
def test_a_wish_for_one_result_states_none(text):
    assert preference(text) is None
