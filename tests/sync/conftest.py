"""Two machines (two homes, Alice's laptop and Bob's desktop) for every sync test."""

from __future__ import annotations

import pytest

from tests.sync_helpers import Machine


@pytest.fixture
def machines(tmp_path, fake_messages_api, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake-server-only")
    return (
        Machine(tmp_path / "laptop", fake_messages_api, capsys, person="Alice"),
        Machine(tmp_path / "desktop", fake_messages_api, capsys, person="Bob"),
    )
