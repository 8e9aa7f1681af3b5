"""The smart-HTTP test server passes the backend's bytes on as git writes them.

It held each answer until `git http-backend` exited: while receive-pack worked (slowly,
on a loaded machine), the client saw no byte, not even the keep-alive packets
receive-pack sends for exactly that, and evolve's low-speed limit (`http.lowSpeedLimit=1`
for `http.lowSpeedTime` seconds, evolve.sync.remote) cut the push: "Operation too slow".
Here the server's work is made slow on purpose (a pre-receive hook that sleeps) and the
limit short, so the test shows the silence without waiting a minute.
"""

from __future__ import annotations

import subprocess

import pytest

from evolve.sync import remote
from tests.git_servers import SmartHttp

LOW_SPEED_TIME = 2  # seconds; evolve's is 60
SLOW_HOOK = "#!/bin/sh\nsleep 4\n"  # the server busy twice as long as the client waits for a byte


def network_options() -> list[str]:
    """Evolve's own options for a network command, with its low-speed time made short."""
    options = list(remote.NETWORK)
    options[options.index("http.lowSpeedTime=60")] = f"http.lowSpeedTime={LOW_SPEED_TIME}"
    return options


@pytest.mark.slow  # the server's hook sleeps 4 s on purpose
def test_a_push_the_server_is_slow_to_answer_is_not_cut_for_silence(tmp_path):
    server = SmartHttp(tmp_path / "server")
    server.start()
    try:
        bare = server.bare("agent")
        subprocess.run(["git", "config", "receive.keepAlive", "1"], cwd=bare, check=True)
        hook = bare / "hooks" / "pre-receive"
        hook.write_text(SLOW_HOOK)
        hook.chmod(0o755)
        work = tmp_path / "work"
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        (work / "memo.md").write_text("# Memo\n")
        subprocess.run(["git", "add", "memo.md"], cwd=work, check=True)
        subprocess.run(["git", "commit", "-qm", "first"], cwd=work, check=True)
        pushed = subprocess.run(
            ["git", *network_options(), "push", server.url("agent"), "main"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert pushed.returncode == 0, pushed.stderr
        assert (
            server.git("agent", "rev-parse", "main")
            == subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True
            ).stdout.strip()
        )
    finally:
        server.stop()
