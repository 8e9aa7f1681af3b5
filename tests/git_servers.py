"""Real git servers on 127.0.0.1 for the sync tests, each started by the test and stopped after.

- `GitDaemon`: `git daemon --export-all --enable=receive-pack` (git://) on a free port;
- `SmartHttp`: `git http-backend` (smart HTTP, protocol v2, gzip and chunked bodies) behind a
  small threaded Python HTTP server, with REMOTE_USER set so pushes are allowed; the bodies
  stream both ways, so the client sees each byte the backend writes as it writes it;
- `CutProxy`: a TCP proxy in front of a server that can be told to drop the connection once a
  client has sent N bytes (the server going away in the middle of a push).

Fixtures: `git_server` (parametrised: daemon, http), `git_daemon`, `cut_proxy`.
"""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class Server:
    """Bare repositories under `root`, served at `url(name)`."""

    scheme = ""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.port = 0

    def bare(self, name: str = "agent") -> Path:
        """The bare repository `name` on the server (created empty when missing)."""
        path = self.root / f"{name}.git"
        if not path.exists():
            subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
        return path

    def url(self, name: str = "agent", port: int | None = None) -> str:
        self.bare(name)
        return f"{self.scheme}://127.0.0.1:{port or self.port}/{name}.git"

    def git(self, name: str, *args: str) -> str:
        """A git command in the server's bare repository (what an admin does on the server)."""
        out = subprocess.run(["git", *args], cwd=self.bare(name), capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class GitDaemon(Server):
    scheme = "git"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.port = self.port or free_port()
        self.process = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--informative-errors",
                f"--base-path={self.root}",
                "--listen=127.0.0.1",
                f"--port={self.port}",
                str(self.root),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        self.process = None


class SmartHttp(Server):
    scheme = "http"

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.httpd: ThreadingHTTPServer | None = None
        self.requests: list[str] = []

    def start(self) -> None:
        server = self
        backend = _http_backend()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._cgi()

            def do_POST(self) -> None:  # noqa: N802
                self._cgi()

            def _feed(self, stdin) -> None:
                """The request body into the backend as it arrives (chunked or not), then EOF.

                Read whole even if the backend stops reading (its answer says why): what is
                left would be taken for the connection's next request.
                """
                for data in self._body_parts():
                    try:
                        stdin.write(data)
                        stdin.flush()
                    except OSError:
                        pass
                try:
                    stdin.close()
                except OSError:
                    pass

            def _body_parts(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    while size := int(self.rfile.readline().strip().split(b";")[0], 16):
                        yield self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()  # the empty line after the last chunk
                    return
                left = int(self.headers.get("Content-Length") or 0)
                while left > 0 and (data := self.rfile.read(min(left, 65536))):
                    yield data
                    left -= len(data)

            def _send_chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

            def _cgi(self) -> None:
                # the backend's bytes go to the client as it writes them (chunked, the connection
                # kept alive): an answer held until the backend exited left the client without a
                # byte, even receive-pack's keep-alive packets, while a loaded machine ran it, and
                # the client's low-speed limit cut the push ("Operation too slow")
                path, _, query = self.path.partition("?")
                server.requests.append(f"{self.command} {path}")
                env = {
                    "PATH": os.environ.get("PATH", ""),
                    "GIT_PROJECT_ROOT": str(server.root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "REMOTE_USER": "tester",
                    "REMOTE_ADDR": "127.0.0.1",
                    "REQUEST_METHOD": self.command,
                    "PATH_INFO": path,
                    "QUERY_STRING": query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                    "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                    "GIT_CONFIG_NOSYSTEM": "1",
                    "HOME": str(server.root),
                }
                if self.command == "POST" and self.headers.get("Content-Length"):
                    env["CONTENT_LENGTH"] = self.headers["Content-Length"]  # else read to EOF (chunked)
                proc = subprocess.Popen(
                    [backend],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
                assert proc.stdin is not None and proc.stdout is not None
                feeder = threading.Thread(target=self._feed, args=(proc.stdin,), daemon=True)
                if self.command == "POST":
                    feeder.start()
                else:
                    proc.stdin.close()
                head = b""
                while b"\r\n\r\n" not in head and (data := proc.stdout.read1(65536)):
                    head += data
                head, _, payload = head.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    key, _, value = line.partition(":")
                    if key.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif key:
                        headers.append((key, value.strip()))
                self.send_response(status)
                for key, value in headers:
                    self.send_header(key, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if payload:
                    self._send_chunk(payload)
                while data := proc.stdout.read1(65536):
                    self._send_chunk(data)
                self.wfile.write(b"0\r\n\r\n")
                proc.stdout.close()
                proc.wait()
                if self.command == "POST":
                    feeder.join()  # the body read whole: the connection's next request follows it

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
        self.httpd = None


@functools.cache
def _http_backend() -> str:
    """The path of git's `git-http-backend`: asked of git once per process, not once per server."""
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True).stdout.strip()
    return str(Path(exec_path) / "git-http-backend")


class CutProxy:
    """127.0.0.1:`port` → the server's port; `cut_after(n)`: drop a connection once it sent n bytes."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.limit: int | None = None
        self.cuts = 0
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]
        self._open = True
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_after(self, limit: int | None) -> None:
        self.limit = limit

    def _accept(self) -> None:
        while self._open:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            state = {"sent": 0, "closed": False}
            threading.Thread(target=self._pump, args=(client, upstream, state, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, state, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, state: dict, counted: bool) -> None:
        try:
            while not state["closed"]:
                data = source.recv(65536)
                if not data:
                    break
                if counted:
                    state["sent"] += len(data)
                    if self.limit is not None and state["sent"] > self.limit:
                        self.cuts += 1
                        break
                sink.sendall(data)
        except OSError:
            pass
        state["closed"] = True
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self) -> None:
        self._open = False
        self._listener.close()


@pytest.fixture(params=["daemon", "http"])
def git_server(request, tmp_path):
    """A real git server (git daemon, or smart HTTP through git http-backend), stopped after."""
    kind = GitDaemon if request.param == "daemon" else SmartHttp
    server: Server = kind(tmp_path / "server")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def git_daemon(tmp_path):
    server = GitDaemon(tmp_path / "server")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def cut_proxy(git_daemon):
    proxy = CutProxy(git_daemon.port)
    yield proxy
    proxy.close()
