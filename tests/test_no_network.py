"""Nothing leaves the machine but the model call (reliability item 16).

A socket guard refuses every connection and name lookup; the whole offline loop must run
under it. With a backend configured, the only connection is to the configured base URL.
"""

from __future__ import annotations

import socket

import pytest

from evolve.cli import main
from tests.helpers import make_agent
from tests.reflect.scenarios import corrected_session, transient_session


class Connections(list):
    """Addresses connected to; `allowed` holds the loopback ports a test permits."""

    def __init__(self) -> None:
        super().__init__()
        self.allowed: set[int] = set()


@pytest.fixture
def connections(monkeypatch) -> Connections:
    """Record every outbound connection; refuse all but loopback ones the test allows."""
    seen = Connections()
    allowed = seen.allowed
    real_connect = socket.socket.connect

    def guarded_connect(self, address):
        seen.append(address)
        if isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1") and address[1] in allowed:
            return real_connect(self, address)
        raise OSError(f"network blocked by the test: {address!r}")

    def no_lookup(host, *args, **kwargs):
        if host in ("127.0.0.1", "localhost", "::1"):
            return real_getaddrinfo(host, *args, **kwargs)
        seen.append((host, "lookup"))
        raise OSError(f"name lookup blocked by the test: {host!r}")

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, a: guarded_connect(self, a) or 0)
    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    return seen


def test_the_offline_loop_opens_no_connection(tmp_path, connections) -> None:
    make_agent()
    paths = [str(corrected_session(tmp_path)), str(transient_session(tmp_path))]
    for argv in (
        ["observe", "demo", *paths],
        ["score", "demo"],
        ["reflect", "demo", "--dry-run"],
        ["cycle", "--now"],
        ["log", "demo"],
        ["skills", "demo"],
        ["doctor"],
        ["report", "demo", "--html", str(tmp_path / "r.html")],
        ["prompt", "demo"],
    ):
        assert main(argv) in (0, 1), argv
    assert connections == []


def test_with_a_backend_only_the_configured_url_is_contacted(
    tmp_path, connections, fake_messages_api, monkeypatch
) -> None:
    agent = make_agent()
    connections.allowed.add(fake_messages_api.port)
    (agent.home.config_file).write_text(
        f'[model]\nbackend = "anthropic"\nbase_url = "{fake_messages_api.url}"\nmax_retries = 0\n'
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-only-for-the-fake-server")
    fake_messages_api.reply_tool(
        {"summary": "s", "operations": [{"op": "nothing_to_save", "reason": "fine"}]}
    )
    main(["observe", "demo", str(corrected_session(tmp_path))])
    assert main(["reflect", "demo"]) == 0
    assert connections and all(addr == ("127.0.0.1", fake_messages_api.port) for addr in connections)
    assert len(fake_messages_api.requests) == 1
