"""Test isolation: every test runs with a fake HOME, EVOLVE_HOME, CODEX_HOME and git config.

The real home is recorded in EVOLVE_FORBID_HOME; evolve.home refuses to resolve any
path inside it while that variable is set, so a test that would touch the real home
fails loudly instead of writing there.
"""

from __future__ import annotations

import gc
import os
import ssl
import sys
from pathlib import Path

import pytest

# Shared fixtures: pytest finds them here (imported, so every test module may ask for them).
from tests.conformance import closed_port, watcher_reaper  # noqa: F401
from tests.fake_claude_api import fake_claude_api  # noqa: F401
from tests.fake_codex_api import fake_codex_api  # noqa: F401
from tests.fake_messages_server import fake_messages_api  # noqa: F401
from tests.git_servers import cut_proxy, git_daemon, git_server  # noqa: F401
from tests.shared_data import CLAUDE_DATA, CODEX_DATA
from tests.skip_summary import pytest_terminal_summary  # noqa: F401

REAL_HOME = str(Path("~").expanduser())

# The Python processes the tests start (hooks, pre-commit, the CLI: a few thousand) read evolve
# compiled once from the git-ignored __pycache__/ instead of compiling it again each time when
# the environment sets PYTHONDONTWRITEBYTECODE (about a tenth of the suite's CPU). Set here, at
# import, so pytest-xdist's workers inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_collection_finish(session) -> None:
    """Freeze what collection built out of the cyclic garbage collector, and collect less often.

    The imported modules, their functions and the test items live as long as the process, yet
    each full collection walked them all again; and the default threshold (700 allocations) ran
    ~2,200 collections over 480 in-process tests. Frozen, with a threshold of 10,000, those tests
    spend ~0.5 s of CPU in the collector instead of ~1.7 s, for ~30 MB more memory per process.
    The tests' own cyclic garbage is still collected, in larger batches.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)


# What a test is expected to take, for the order `make test` starts the files in (the means of a
# clean run on two cores, four workers): one driving the real agent CLIs or marked slow ~5.5 s,
# one against a real git server (two machines syncing) ~1.5 s, one with an evolve home or a
# folder of its own ~0.2 s, the rest ~0.03 s.
SLOW_S, GIT_SERVER_S, IN_A_FOLDER_S, OTHER_S = 5.5, 1.5, 0.2, 0.03
GIT_SERVERS = {"machines", "git_server", "git_daemon"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The test files ordered by their expected time, longest first; each file's tests keep their order.

    `make test`'s workers take a whole file at a time (`--dist loadfile --no-loadscope-reorder`).
    xdist's own order, the files of most tests first, left those of a few long tests (the demo,
    the home-isolation sweep, the agent CLIs' conformance) to the end, where two workers mostly
    waiting on them left the two cores half idle; started first, their waits are filled by the
    files that follow.
    """
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    cost = {name: sum(map(_expected_s, tests)) for name, tests in files.items()}
    items[:] = [item for name in sorted(files, key=lambda name: -cost[name]) for item in files[name]]


def _expected_s(item: pytest.Item) -> float:
    if item.get_closest_marker("conformance") or item.get_closest_marker("slow"):
        return SLOW_S
    fixtures = set(getattr(item, "fixturenames", ()))
    if fixtures & GIT_SERVERS:
        return GIT_SERVER_S
    return IN_A_FOLDER_S if fixtures & {"evolve_home", "tmp_path"} else OTHER_S


@pytest.fixture(scope="session")
def one_ca_file(tmp_path_factory) -> Path | None:
    """A trust store holding one CA of the system's, for SSL_CERT_FILE (None: no system bundle).

    The anthropic SDK builds a TLS context for each client, one per reflection, and loading
    the system's whole CA bundle into it costs ~30 ms of CPU. The tests' fake APIs and git
    servers all speak plain HTTP on 127.0.0.1: no test verifies a certificate.
    """
    bundle = Path(ssl.get_default_verify_paths().openssl_cafile)
    end = "-----END CERTIFICATE-----"
    text = bundle.read_text(errors="replace") if bundle.is_file() else ""
    if end not in text:
        return None
    path = tmp_path_factory.mktemp("trust") / "one-ca.pem"
    path.write_text(text[: text.index(end) + len(end)] + "\n")
    return path


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch, one_ca_file):
    """Point HOME, EVOLVE_HOME, XDG dirs and git's config at tmp dirs."""
    root = tmp_path_factory.mktemp("env")
    home = root / "home"
    home.mkdir()
    gitconfig = root / "gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test Person\n\temail = person@example.test\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        # no `git maintenance run --auto` after each commit, merge or fetch of a test (nor
        # `gc --auto` after each push a test's git daemon receives): a process each, ~3 ms of
        # CPU, that never has anything to do in a repository of a few dozen objects
        "[maintenance]\n\tauto = false\n[receive]\n\tautogc = false\n"
    )
    for var in list(os.environ):
        if var.startswith(("GIT_", "EVOLVE_", "ANTHROPIC_", "CLAUDE_", "CODEX_")):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("EVOLVE_HOME", str(root / "evolve-home"))
    monkeypatch.setenv("EVOLVE_FORBID_HOME", REAL_HOME)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("TZ", "UTC")
    if one_ca_file is not None:
        monkeypatch.setenv("SSL_CERT_FILE", str(one_ca_file))
    yield root


@pytest.fixture
def evolve_home(isolated_environment) -> Path:
    """The EVOLVE_HOME of this test (not yet created)."""
    return isolated_environment / "evolve-home"


@pytest.fixture
def claude_data() -> Path:
    """The shared real Claude Code transcripts; skips when ../shared is absent."""
    if not CLAUDE_DATA.is_dir():
        pytest.skip("../shared/data/claude-code is not present")
    return CLAUDE_DATA


@pytest.fixture
def codex_data() -> Path:
    """The shared real Codex rollouts; skips when ../shared is absent."""
    if not CODEX_DATA.is_dir():
        pytest.skip("../shared/data/codex is not present")
    return CODEX_DATA
