"""tests/agent_clis.py: a registry out of reach skips the conformance tests, anything else fails them."""

from __future__ import annotations

import socket

import pytest

from tests import agent_clis

CONNREFUSED = """npm error code ECONNREFUSED
npm error syscall connect
npm error errno ECONNREFUSED
npm error FetchError: request to http://127.0.0.1:9/@anthropic-ai%2fclaude-code failed, reason: connect \
ECONNREFUSED 127.0.0.1:9
npm error If you are behind a proxy, please make sure that the 'proxy' config is set properly."""
OFFLINE_DNS = "npm error code ENOTFOUND\nnpm error network request to https://registry.npmjs.org/x failed"
NO_SUCH_VERSION = """npm error code ETARGET
npm error notarget No matching version found for @anthropic-ai/claude-code@0.0.1-nope.
npm error notarget In most cases you or one of your dependencies are requesting
npm error notarget a package version that doesn't exist."""


def test_network_failures_are_told_apart_from_broken_pins():
    assert agent_clis.unreachable(CONNREFUSED) and agent_clis.unreachable(OFFLINE_DNS)
    assert not agent_clis.unreachable(NO_SUCH_VERSION)
    assert not agent_clis.unreachable("npm error code E404\nnpm error 404 Not Found - GET https://x/y")


def test_an_unreachable_registry_makes_the_install_unavailable(tmp_path, monkeypatch):
    with socket.socket() as sock:  # bound, not listening: every connection is refused
        sock.bind(("127.0.0.1", 0))
        monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{sock.getsockname()[1]}/")
        monkeypatch.setenv("npm_config_fetch_retries", "0")
        with pytest.raises(agent_clis.Unavailable, match="npm"):
            agent_clis.install(*agent_clis.CLAUDE_CODE, "claude", cache=tmp_path)
    assert not list(tmp_path.glob("@anthropic-ai/*"))  # no partial install left to look finished


def test_without_npm_the_install_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(agent_clis.Unavailable, match="npm is not installed"):
        agent_clis.install(*agent_clis.CLAUDE_CODE, "claude", cache=tmp_path)


SERVER_ERROR = "npm error code E503\nnpm error 503 Service Unavailable - GET http://127.0.0.1:1/x"
OFFLINE_NOT_CACHED = "npm error code ENOTCACHED\nnpm error request to https://registry.npmjs.org/x failed"


def test_a_registry_that_fails_or_is_not_cached_offline_is_out_of_reach_too():
    assert agent_clis.unreachable(SERVER_ERROR) and agent_clis.unreachable(OFFLINE_NOT_CACHED)
    assert agent_clis.unreachable("npm error code E407\nnpm error 407 Proxy Authentication Required")


def test_an_outage_is_remembered_so_one_run_does_not_wait_on_it_again(tmp_path, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{sock.getsockname()[1]}/")
        monkeypatch.setenv("npm_config_fetch_retries", "0")
        with pytest.raises(agent_clis.Unavailable):
            agent_clis.install(*agent_clis.CLAUDE_CODE, "claude", cache=tmp_path)
    monkeypatch.setattr(agent_clis.shutil, "which", lambda name: "/nonexistent/npm")  # npm is not run again
    with pytest.raises(agent_clis.Unavailable, match="s ago; delete .*unavailable to try again now"):
        agent_clis.install(*agent_clis.CODEX, "codex", cache=tmp_path)


def test_a_cached_install_without_its_binary_is_installed_again(tmp_path, monkeypatch):
    package, version = agent_clis.CLAUDE_CODE
    damaged = tmp_path / f"{package}@{version}" / "node_modules"
    damaged.mkdir(parents=True)  # a folder someone emptied by hand
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # nothing listens: out of reach
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    with pytest.raises(agent_clis.Unavailable):
        agent_clis.install(package, version, "claude", cache=tmp_path)
    assert not damaged.exists()  # the damaged folder went; the next reachable run installs afresh
