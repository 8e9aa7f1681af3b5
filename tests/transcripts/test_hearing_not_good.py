"""The agent's work judged not good enough is a correction, as scorn is; what something is good for is not."""

from __future__ import annotations

import pytest

from tests.transcripts.hearing_cases import DONE, heard


@pytest.mark.parametrize(
    "text",
    [
        "the new sidebar is not good, the icons overlap the labels",
        "Not good at all, the dialog still jumps when I scroll",
        "still not satisfactory, the voice cuts mid-word",
        "hmm, that's not great either",
        "设置页的弹窗不好看",
        "这个结果我不满意",
    ],
)
def test_work_judged_not_good_is_a_correction(text):
    assert heard(text, before=DONE).correction, text


@pytest.mark.parametrize(
    "text",
    [
        "I'm not good at CSS, can you walk me through the grid you used?",
        "Is sqlite not good enough for this many writes",
        "it's not good for the tests to hit the network, mock it in the next task",
        "it's not good practice to keep API keys in the repo, move them to a vault in the next step",
        "Not good practice, I know, but hardcode the port for this demo",
    ],
)
def test_what_something_is_good_for_is_no_correction(text):
    assert not heard(text, before=DONE).correction, text


# attack50: a threshold the product checks is a spec, not the agent's work judged
@pytest.mark.parametrize(
    "text",
    [
        "if the OCR confidence is not good, send the page to manual review",
        "Mark the upload red when the checksum is not acceptable",
        "如果用户对推荐结果不满意，就显示一个反馈按钮",
    ],
)
def test_a_threshold_in_a_spec_is_no_correction(text):
    assert not heard(text, before=DONE).correction, text
