"""``svc serve`` as a real subprocess on a free loopback port, for tests and benchmarks that need a whole server.

``live_server`` (in-process uvicorn) serves most tests; these need the process itself: its command line, its
signals, its stderr, two of them on one store, or a browser that must not share the test's event loop::

    with running_serve(env={"SVC_API_TOKEN": token}) as server:
        httpx.get(f"{server.base}/api/jobs", headers={"Authorization": f"Bearer {token}"})
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx

from svc_host.testing.waiting import DEADLINE


def isolated_env(root: Path, *, token: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) without ``SVC_*`` settings, with a home, XDG directories and a
    system config file of its own under ``root`` (``root/home``, ``root/etc``) and ``token`` as the API token."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in (os.environ if base is None else base).items() if not key.startswith("SVC_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        SVC_SYSTEM_CONFIG=str(root / "etc" / "config.json"),
        SVC_API_TOKEN=token,
    )
    return env


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServeProcess:
    """A started ``svc serve``; ``base`` is its URL (``http://127.0.0.1:<port>``)."""

    base: str
    process: subprocess.Popen[str]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def stop(self, *, kill: bool = False, timeout: float = 30) -> str:
        """SIGTERM (or SIGKILL) and wait; returns what it wrote to stderr when stderr was a pipe."""
        if self.process.poll() is None:
            self.process.kill() if kill else self.process.terminate()
        _, err = self.process.communicate(timeout=timeout)
        return err or ""


def start_serve(
    *args: str,
    env: Mapping[str, str] | None = None,
    base_env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
    stderr: int | IO[Any] | None = subprocess.PIPE,
    log_level: str = "warning",
    wait: float = DEADLINE,
) -> ServeProcess:
    """Start ``python -m svc_host serve`` with ``args`` and wait until it answers ``/openapi.json``.

    The environment is ``base_env`` (default: this process's) updated with ``env``. Raises ``RuntimeError`` with
    the server's stderr if it exits before answering, or when ``wait`` seconds pass.
    """
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "svc_host", "serve", "--port", str(port), "--log-level", log_level, *args],
        env={**(os.environ if base_env is None else base_env), **(env or {})},
        cwd=cwd,
        stdout=stdout,
        stderr=stderr,
        text=True,
    )
    server = ServeProcess(f"http://127.0.0.1:{port}", process)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"svc serve exited {process.returncode} before answering: {server.stop().strip()}")
        try:
            httpx.get(f"{server.base}/openapi.json", timeout=2)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.stop(kill=True)
    raise RuntimeError(f"svc serve did not answer on {server.base} within {wait:.0f} s")


@contextmanager
def running_serve(*args: str, **options: Any) -> Iterator[ServeProcess]:
    """``start_serve(*args, **options)`` for the length of a ``with`` block; stopped (SIGTERM) at its end."""
    server = start_serve(*args, **options)
    try:
        yield server
    finally:
        server.stop()
