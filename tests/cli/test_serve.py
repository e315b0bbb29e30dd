"""``svc serve`` as a user starts it: a real uvicorn on a loopback port, lifespan included."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_answers_on_loopback_and_stops_cleanly() -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "svc_host", "serve", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                plugins = httpx.get(f"{base}/api/plugins", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise AssertionError(
                f"svc serve did not answer: {server.stderr.read() if server.poll() is not None else ''}"
            )
        assert plugins.status_code == 200
        assert {"local", "ssh", "rsync"} <= {row["name"] for row in plugins.json()["plugins"]}
        assert httpx.get(f"{base}/docs", timeout=5).status_code == 200
        assert httpx.get(f"{base}/api/history", timeout=5).json() == []
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert server.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err
