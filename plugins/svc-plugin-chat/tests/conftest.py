"""A real HTTP receiver on loopback for the chat plugin's tests, and an isolated svc home per test."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


class Receiver:
    """A chat webhook on ``127.0.0.1:port``: records every JSON body it accepts; can be down, slow or refusing."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/T000/B000/secret-part"
        self.bodies: list[dict[str, Any]] = []
        self.hits = 0
        self.status = 200
        self.delay = 0.0
        self.hurry = threading.Event()
        """Set: a request still held for ``delay`` is answered now."""
        self._server: ThreadingHTTPServer | None = None

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                receiver.hits += 1
                status, delay = receiver.status, receiver.delay  # as the receiver was when the request came
                receiver.hurry.wait(delay)
                if status == 200:
                    receiver.bodies.append(json.loads(body))
                try:
                    self.send_response(status)
                    self.end_headers()
                    self.wfile.write(b"ok")
                except BrokenPipeError:  # the client gave up waiting, as it should with a slow webhook
                    return

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def texts(self) -> list[str]:
        return [str(body.get("text") or body.get("content")) for body in self.bodies]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.down()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real user's svc files, and no chat setting leaks in from the shell."""
    import os

    for key in [k for k in os.environ if k.startswith("SVC_") or k == "CHAT_WEBHOOK_URL"]:
        monkeypatch.delenv(key)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("SVC_SYSTEM_CONFIG", str(tmp_path / "etc" / "config.json"))
    monkeypatch.chdir(tmp_path)
    return home
