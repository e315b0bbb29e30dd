"""``svc serve`` runs the sessions' own origin on a second port of the same process."""

from __future__ import annotations

import signal
import socket

import httpx
import pytest

from svc_host.testing.serve import free_port, start_serve

TOKEN = "serve-test-token-0123456789"


def test_the_sessions_port_answers_in_words_and_checks_the_host_name() -> None:
    port = free_port()
    server = start_serve("--sessions-port", str(port), env={"SVC_API_TOKEN": TOKEN})
    try:
        base = f"http://127.0.0.1:{port}"
        locked = httpx.get(f"{base}/s/lab/12/lab", timeout=10)
        assert locked.status_code == 401
        assert "open it from the dashboard" in locked.text
        assert httpx.get(f"{base}/", timeout=10).status_code == 404
        assert httpx.get(f"{base}/s/lab/12/", headers={"Host": "evil.example"}, timeout=10).status_code == 400
        assert "server" not in httpx.get(f"{base}/", timeout=10).headers  # an app's own Server header goes through
    finally:
        err = server.stop()
    assert server.process.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err


def test_a_sessions_port_in_use_is_said_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(
            RuntimeError, match=rf"cannot listen on 127\.0\.0\.1:{port} for sessions: the port is in use"
        ):
            start_serve(env={"SVC_API_TOKEN": TOKEN, "SVC_SESSIONS_PORT": str(port)})
