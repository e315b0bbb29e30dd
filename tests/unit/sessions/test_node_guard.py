"""The node guard as it runs in a session's job: a real ``python3 guard.py app.json`` process on this machine, in
front of a real app (``http.server``, or ``echo_app.py`` beside this file), reached over real TCP."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from svc_host.sessions import node_guard
from svc_host.testing.waiting import eventually_blocking

GUARD = Path(node_guard.__file__)
ECHO_APP = Path(__file__).with_name("echo_app.py")
SECRET = "s3cret-of-this-session"
PYTHON3 = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3") or "python3"
"""The guard runs under the node's own python3, not svc's interpreter: the distribution's, as a job's PATH finds it on
a node (a pyenv shim earlier on this machine's PATH would put its own folders before the kind's)."""


@dataclass
class RunningGuard:
    process: subprocess.Popen[bytes]
    session_dir: Path

    @property
    def port(self) -> int:
        port = self.endpoint()["port"]
        assert isinstance(port, int)
        return port

    def endpoint(self) -> dict[str, object]:
        found: dict[str, object] = eventually_blocking(
            lambda: json.loads(path.read_text()) if (path := self.session_dir / "endpoint.json").exists() else None,
            what="endpoint.json",
        )
        return found

    def stderr(self) -> str:
        return (self.session_dir / "guard.err").read_text()

    def app_requests(self) -> str:
        log = self.session_dir / "requests.log"
        return log.read_text(errors="replace") if log.exists() else ""


def start_guard(
    session_dir: Path,
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    *,
    strip_base_path: bool = False,
    python: str = PYTHON3,
) -> RunningGuard:
    session_dir.mkdir(parents=True, exist_ok=True)
    (session_dir / "secret").write_text(SECRET + "\n")
    app = {
        "argv": list(argv),
        "env": env or {},
        "path": ["/opt/site/bin"],
        "base_path": "/s/local/{job_id}/",
        "strip_base_path": strip_base_path,
    }
    (session_dir / "app.json").write_text(json.dumps(app))
    environment = {**os.environ, "SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "node7"}
    with (session_dir / "guard.err").open("wb") as err:
        process = subprocess.Popen(
            [python, str(GUARD), str(session_dir / "app.json")], cwd=session_dir, env=environment, stderr=err
        )
    return RunningGuard(process, session_dir)


@pytest.fixture
def guards() -> Iterator[list[RunningGuard]]:
    started: list[RunningGuard] = []
    yield started
    for guard in started:
        if guard.process.poll() is None:
            guard.process.send_signal(signal.SIGTERM)
            guard.process.wait(timeout=60)


def echo_guard(tmp_path: Path, guards: list[RunningGuard], *extra: str) -> RunningGuard:
    guard = start_guard(tmp_path / "session", [PYTHON3, str(ECHO_APP), "{port}", *extra], {"APP_SECRET": "{secret}"})
    guards.append(guard)
    return guard


def exchange(port: int, request: bytes, then: bytes = b"") -> bytes:
    """Send ``request`` (and ``then`` once an answer began), close our side, read until the other side closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(request)
        if not then:
            conn.shutdown(socket.SHUT_WR)
        received = conn.recv(65536)
        if then:
            conn.sendall(then)
            conn.shutdown(socket.SHUT_WR)
        while chunk := conn.recv(65536):
            received += chunk
    return received


def request(path: str, *, secret: str | None = SECRET, extra: str = "") -> bytes:
    header = f"X-Svc-Session-Secret: {secret}\r\n" if secret is not None else ""
    return f"GET {path} HTTP/1.1\r\nHost: node7\r\n{header}{extra}\r\n".encode()


def answered(guard: RunningGuard, path: str) -> bytes:
    """The app's answer once it listens (the guard answers 502 while the app is still starting)."""
    return eventually_blocking(
        lambda: exchange(guard.port, request(path)), until=lambda got: not got.startswith(b"HTTP/1.1 502")
    )


def test_the_endpoint_names_the_node_the_job_and_a_public_port(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = echo_guard(tmp_path, guards)
    endpoint = guard.endpoint()
    assert endpoint["host"] == "node7"
    assert endpoint["job_id"] == "4242"
    assert isinstance(endpoint["port"], int)
    assert endpoint["port"] > 0
    assert (guard.session_dir / "endpoint.json").stat().st_mode & 0o077 == 0


def test_a_request_without_the_secret_is_refused_and_never_reaches_the_app(
    tmp_path: Path, guards: list[RunningGuard]
) -> None:
    guard = echo_guard(tmp_path, guards)
    answered(guard, "/warm-up")
    for secret in (None, "wrong", SECRET + "x", ""):
        got = exchange(guard.port, request("/stranger", secret=secret))
        assert got.startswith(b"HTTP/1.1 403 Forbidden\r\n"), got
    twice = request("/stranger", extra=f"X-Svc-Session-Secret: {SECRET}\r\n")
    assert exchange(guard.port, twice).startswith(b"HTTP/1.1 403")
    assert "/stranger" not in guard.app_requests()


def test_with_the_secret_the_app_answers_and_never_sees_the_secret(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = echo_guard(tmp_path, guards)
    got = answered(guard, "/hello?x=1")
    assert got.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"GET /hello?x=1 HTTP/1.1\r\nHost: node7" in got  # the app echoes the head it was given
    assert SECRET.encode() not in got
    assert SECRET not in guard.app_requests()
    assert "x-svc-session-secret" not in guard.app_requests().lower()


def test_http_server_behind_the_guard_serves_a_file(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = start_guard(tmp_path / "session", [PYTHON3, "-m", "http.server", "{port}", "--bind", "127.0.0.1"])
    guards.append(guard)
    (guard.session_dir / "page.txt").write_text("served by http.server\n")
    got = eventually_blocking(
        lambda: exchange(guard.port, request("/page.txt")), until=lambda got: not got.startswith(b"HTTP/1.1 502")
    )
    assert got.startswith(b"HTTP/1.0 200 OK\r\n")
    assert got.endswith(b"\r\n\r\nserved by http.server\n")
    assert exchange(guard.port, request("/page.txt", secret=None)).startswith(b"HTTP/1.1 403")


@pytest.mark.parametrize(
    ("target", "app_sees"),
    [
        ("/s/local/4242/page.txt", "/page.txt"),
        ("/s/local/4242/", "/"),
        ("/s/local/4242", "/"),
        ("/s/local/4242?x=1", "/?x=1"),
        ("/s/local/42420/page.txt", "/s/local/42420/page.txt"),
        ("/elsewhere", "/elsewhere"),
    ],
)
def test_an_app_at_the_root_gets_targets_without_the_session_path(
    tmp_path: Path, guards: list[RunningGuard], target: str, app_sees: str
) -> None:
    guard = start_guard(tmp_path / "session", [PYTHON3, str(ECHO_APP), "{port}"], strip_base_path=True)
    guards.append(guard)
    got = answered(guard, target)
    assert got.split(b"\r\n\r\n", 1)[1].startswith(f"GET {app_sees} HTTP/1.1\r\n".encode())


def read_answer(conn: socket.socket) -> bytes:
    """One answer with a Content-Length, read from a kept-alive connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += conn.recv(65536)
    head, body = received.split(b"\r\n\r\n", 1)
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


def test_every_request_of_a_kept_alive_connection_is_checked(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = echo_guard(tmp_path, guards)
    answered(guard, "/warm-up")
    with socket.create_connection(("127.0.0.1", guard.port), timeout=60) as conn:
        conn.sendall(request("/first"))
        assert read_answer(conn).startswith(b"HTTP/1.1 200 OK")
        conn.sendall(request("/second"))
        assert read_answer(conn).startswith(b"HTTP/1.1 200 OK")
        conn.sendall(request("/third", secret=None))
        rest = b""
        while chunk := conn.recv(65536):
            rest += chunk
    assert rest.startswith(b"HTTP/1.1 403 Forbidden")
    log = guard.app_requests()
    assert "GET /first" in log
    assert "GET /second" in log
    assert "/third" not in log
    assert SECRET not in log


def test_a_chunked_body_reaches_the_app_and_the_next_request_is_checked(
    tmp_path: Path, guards: list[RunningGuard]
) -> None:
    guard = echo_guard(tmp_path, guards)
    answered(guard, "/warm-up")
    chunked = request("/upload", extra="Transfer-Encoding: chunked\r\n") + b"5\r\nhello\r\n0\r\n\r\n"
    smuggled = b"GET /smuggled HTTP/1.1\r\nHost: node7\r\n\r\n"
    with socket.create_connection(("127.0.0.1", guard.port), timeout=60) as conn:
        conn.sendall(chunked)
        assert read_answer(conn).startswith(b"HTTP/1.1 200 OK")
        conn.sendall(smuggled)
        rest = b""
        while chunk := conn.recv(65536):
            rest += chunk
    assert rest.startswith(b"HTTP/1.1 403")
    assert "/smuggled" not in guard.app_requests()


def test_bytes_are_piped_both_ways_after_an_upgrade(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = echo_guard(tmp_path, guards)
    answered(guard, "/warm-up")
    upgrade = request("/socket", extra="Connection: Upgrade\r\nUpgrade: echo\r\n")
    got = exchange(guard.port, upgrade, then=b"\x81\x05hello frames, not HTTP\x00\xff")
    assert got.startswith(b"HTTP/1.1 101 Switching Protocols\r\n")
    assert got.endswith(b"\x81\x05hello frames, not HTTP\x00\xff")


@pytest.mark.parametrize(
    ("sent", "status"),
    [
        (request("/x", extra="Content-Length: 3\r\nTransfer-Encoding: chunked\r\n"), b"400"),
        (request("/x", extra="Content-Length: 3\r\nContent-Length: 4\r\n"), b"400"),
        (request("/x", extra="X-Big: " + "a" * 70_000 + "\r\n"), b"431"),
    ],
)
def test_a_head_that_could_smuggle_or_overflow_is_refused(
    tmp_path: Path, guards: list[RunningGuard], sent: bytes, status: bytes
) -> None:
    guard = echo_guard(tmp_path, guards)
    assert exchange(guard.port, sent).startswith(b"HTTP/1.1 " + status)
    assert "/x" not in guard.app_requests()


def test_placeholders_are_replaced_and_the_secret_only_in_the_environment(
    tmp_path: Path, guards: list[RunningGuard]
) -> None:
    guard = echo_guard(tmp_path, guards, "--at", "{base_path}", "{session_dir}", "{{port}} $(touch pwned)")
    info = json.loads(answered(guard, "/info").split(b"\r\n\r\n", 1)[1])
    port, *rest = info["argv"]
    assert int(port) != guard.port  # the app has a port of its own on 127.0.0.1
    assert rest == ["--at", "/s/local/4242/", str(guard.session_dir), "{port} $(touch pwned)"]
    assert info["secret"] == SECRET
    assert info["path"].startswith("/opt/site/bin:")
    assert not (guard.session_dir / "pwned").exists()


def test_the_app_exiting_is_written_down_and_ends_the_guard_with_its_code(
    tmp_path: Path, guards: list[RunningGuard]
) -> None:
    script = "import sys; print('the model file is missing', file=sys.stderr); sys.exit(3)"
    guard = start_guard(tmp_path / "session", [PYTHON3, "-c", script])
    guards.append(guard)
    assert guard.process.wait(timeout=60) == 3
    assert json.loads((guard.session_dir / "exit.json").read_text()) == {"code": 3}
    assert "the model file is missing" in guard.stderr()


def test_an_app_that_cannot_start_ends_the_guard_with_127(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = start_guard(tmp_path / "session", ["no-such-program-anywhere", "{port}"])
    guards.append(guard)
    assert guard.process.wait(timeout=60) == 127
    assert json.loads((guard.session_dir / "exit.json").read_text()) == {"code": 127}
    assert "cannot start 'no-such-program-anywhere'" in guard.stderr()


def test_sigterm_is_forwarded_to_the_app(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = echo_guard(tmp_path, guards)
    answered(guard, "/warm-up")
    guard.process.send_signal(signal.SIGTERM)
    assert guard.process.wait(timeout=60) == 0  # the app's own exit code after its SIGTERM handler
    assert (guard.session_dir / "terminated").read_text() == "yes"
    assert json.loads((guard.session_dir / "exit.json").read_text()) == {"code": 0}


def test_an_app_killed_by_a_signal_exits_with_128_plus_it(tmp_path: Path, guards: list[RunningGuard]) -> None:
    guard = start_guard(
        tmp_path / "session", [PYTHON3, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]
    )
    guards.append(guard)
    assert guard.process.wait(timeout=60) == 128 + signal.SIGKILL
    assert json.loads((guard.session_dir / "exit.json").read_text()) == {"code": 128 + signal.SIGKILL}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--port={port}", "--port=8888"),
        ("{base_path}lab", "/s/c/1/lab"),
        ("{{port}}", "{port}"),
        ("{{{{secret}}}}", "{{secret}}"),
        ("{{}}", "{}"),
        ("$(rm -rf ~) `id` ${HOME}", None),
    ],
)
def test_substitute_replaces_whole_placeholders_and_unescapes_braces(text: str, expected: str | None) -> None:
    values = {"port": "8888", "base_path": "/s/c/1/"}
    if expected is None:
        with pytest.raises(ValueError, match=r"unknown placeholder '\{HOME\}'"):
            node_guard.substitute(text, values)
    else:
        assert node_guard.substitute(text, values) == expected


@pytest.mark.parametrize("text", ["{secret}", "{", "}", "a{port", "{port}}", "{}", "{PORT}"])
def test_substitute_refuses_anything_but_known_placeholders_and_doubled_braces(text: str) -> None:
    with pytest.raises(ValueError, match=r"unknown placeholder|a lone"):
        node_guard.substitute(text, {"port": "1"})


def oldest_python() -> str | None:
    """A Python 3.8 beside the one running the tests (pyenv's versions), the oldest a cluster node may have."""
    found = sorted(Path(sys.executable).resolve().parents[2].glob("3.8*/bin/python3.8"))
    return str(found[0]) if found else None


def test_the_guard_serves_under_python_3_8(tmp_path: Path, guards: list[RunningGuard]) -> None:
    python = oldest_python()
    if python is None:
        pytest.skip("no Python 3.8 on this machine (pyenv install 3.8)")
    argv = [python, str(ECHO_APP), "{port}", "{base_path}"]
    guard = start_guard(tmp_path / "session", argv, {"APP_SECRET": "{secret}"}, strip_base_path=True, python=python)
    guards.append(guard)
    info = json.loads(answered(guard, "/s/local/4242/info").split(b"\r\n\r\n", 1)[1])
    assert info["argv"][1:] == ["/s/local/4242/"]
    assert info["secret"] == SECRET
    assert exchange(guard.port, request("/s/local/4242/info", secret=None)).startswith(b"HTTP/1.1 403")
    guard.process.send_signal(signal.SIGTERM)
    assert guard.process.wait(timeout=60) == 0
    assert (guard.session_dir / "terminated").exists()


def test_the_guard_is_python_3_8_and_stdlib_only() -> None:
    import ast

    tree = ast.parse(GUARD.read_text(), feature_version=(3, 8))
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}
