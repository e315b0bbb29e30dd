"""The sessions' way in: what the proxy adds to a request and to a WebSocket round trip.

A small app (uvicorn + Starlette: ``GET /s/lab/1/ping`` and a WebSocket echo) stands in for JupyterLab. Timed, each
as the median (and p95) of ``--rounds`` sequential round trips on kept connections:

- HTTP direct: httpx to the app's port;
- HTTP proxied, local: httpx to the sessions' origin (``SessionsOrigin``, served by uvicorn), which reaches the app
  with the ``local`` transport's ``open_tcp``;
- HTTP over SSH, no proxy: the same request on a direct-tcpip channel through the dev sshd (the floor over SSH);
- HTTP proxied over SSH: the origin reaching the app through the ``ssh`` transport (the dev cluster's profile);
- WebSocket round trip (a 100-byte text message and its echo), direct and proxied (local).

The app and the origin run as processes of their own (as a node's app and ``svc serve`` do), the client here.

Run from the repository root: ``python bench/session_proxy.py`` (the SSH rows need ``scripts/devcluster up``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import h11
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Event, TextMessage
from wsproto.events import Request as WsRequest

from svc_host.api.security import ServerSecurity
from svc_host.domain.profiles import SSHProfile
from svc_host.sessions.entry import CookieSigner, cookie_name
from svc_host.sessions.origin import SessionsOrigin
from svc_host.sessions.target import SessionTarget
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport

ROOT = Path(__file__).resolve().parent.parent
KEY = b"bench-key-" * 4
SECRET = "bench-secret-0123456789"  # noqa: S105 - the stand-in app's, not a real one
BASE = "/s/lab/1"


def make_app() -> Starlette:
    async def ping(request: Request) -> Response:
        return PlainTextResponse("pong")

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        with contextlib.suppress(Exception):
            while True:
                await websocket.send_text(await websocket.receive_text())

    return Starlette(routes=[Route(f"{BASE}/ping", ping), WebSocketRoute(f"{BASE}/ws", echo)])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_app(port: int) -> None:
    """The stand-in app, as its own process (a node's app is not a thread of svc)."""
    uvicorn.run(make_app(), host="127.0.0.1", port=port, log_level="warning", ws="wsproto", lifespan="off")


def serve_origin(port: int, app_port: int, via: str) -> None:
    """The sessions' origin as ``svc serve`` runs it (its own process), reaching the app through ``via``."""
    profile = dev_profile() if via == "ssh" else None
    transport = LocalTransport() if profile is None else SSHTransport("dev", profile)

    async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
        return SessionTarget(lambda: transport.open_tcp("127.0.0.1", app_port), SECRET, {}, f"app:{app_port}")

    origin = SessionsOrigin(resolve, key=KEY, host_allowed=ServerSecurity(token=None).host_allowed)
    uvicorn.run(origin, host="127.0.0.1", port=port, log_level="warning", ws="wsproto", server_header=False)


@contextlib.contextmanager
def process(*args: str) -> Iterator[int]:
    """``python bench/session_proxy.py *args --port P`` until the block ends; yields P once it answers."""
    port = free_port()
    child = subprocess.Popen([sys.executable, __file__, *args, "--port", str(port)])
    try:
        for _ in range(1200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert child.poll() is None, f"{args} exited"
            time.sleep(0.05)
        yield port
    finally:
        child.terminate()
        child.wait(30)


def entry_cookies() -> dict[str, str]:
    """The session's cookie, signed with the origin's key (what trading an entry code gives a browser)."""
    return {cookie_name("lab", "1"): CookieSigner(KEY).sign("lab", "1", int(time.time()) + 3600)}


def timed(rounds: int, once: Callable[[], object]) -> list[float]:
    for _ in range(20):  # warm up: connections opened, code paths loaded
        once()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        once()
        times.append((time.perf_counter() - start) * 1000)
    return times


def http_times(url: str, rounds: int, cookies: dict[str, str] | None = None) -> list[float]:
    with httpx.Client(cookies=cookies) as client:

        def once() -> None:
            assert client.get(url).text == "pong"

        return timed(rounds, once)


class WsClient:
    def __init__(self, port: int, path: str, cookie: str = "") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.ws = WSConnection(ConnectionType.CLIENT)
        extra = [(b"cookie", cookie.encode())] if cookie else []
        self.sock.sendall(self.ws.send(WsRequest(host=f"127.0.0.1:{port}", target=path, extra_headers=extra)))
        assert isinstance(self.next(), AcceptConnection)

    def next(self) -> Event:
        while True:
            for event in self.ws.events():
                return event
            self.ws.receive_data(self.sock.recv(65536))

    def round_trip(self, text: str) -> None:
        self.sock.sendall(self.ws.send(TextMessage(data=text)))
        parts = []
        while True:
            event = self.next()
            assert isinstance(event, TextMessage)
            parts.append(event.data)
            if event.message_finished:
                break
        assert "".join(parts) == text


def ssh_floor(profile: SSHProfile, app_port: int, rounds: int) -> list[float]:
    """The same GET written by hand on one kept direct-tcpip channel: SSH's own cost, without the proxy."""

    async def main() -> list[float]:
        transport = SSHTransport("dev", profile)
        reader, writer = await transport.open_tcp("127.0.0.1", app_port)
        conn = h11.Connection(h11.CLIENT)

        async def once() -> None:
            request = h11.Request(method="GET", target=f"{BASE}/ping", headers=[("host", "app")])
            writer.write(conn.send(request) + conn.send(h11.EndOfMessage()))
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                elif isinstance(event, h11.EndOfMessage):
                    conn.start_next_cycle()
                    return

        for _ in range(20):
            await once()
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            await once()
            times.append((time.perf_counter() - start) * 1000)
        writer.close()
        await transport.close()
        return times

    return asyncio.run(main())


def dev_profile() -> SSHProfile | None:
    script = ROOT / "scripts" / "devcluster"
    if subprocess.run([script, "status"], capture_output=True, check=False).returncode != 0:
        return None
    out = subprocess.run([script, "env"], capture_output=True, text=True, check=True).stdout
    env = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return SSHProfile(
        hostname=env["SVC_DEV_SSH_HOST"],
        port=int(env["SVC_DEV_SSH_PORT"]),
        username=env["SVC_DEV_SSH_USER"],
        key_filename=env["SVC_DEV_SSH_KEY"],
        known_hosts=env["SVC_DEV_SSH_KNOWN_HOSTS"],
    )


def line(label: str, times: list[float], base: list[float] | None = None) -> str:
    median = statistics.median(times)
    p95 = statistics.quantiles(times, n=20)[-1]
    added = f"   +{median - statistics.median(base):.2f} ms over {'direct' if base else ''}" if base else ""
    return f"{label:<44} median {median:7.2f} ms   p95 {p95:7.2f} ms{added}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--serve", choices=["app", "local", "ssh"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--app-port", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve == "app":
        serve_app(options.port)
        return
    if options.serve:
        serve_origin(options.port, options.app_port, options.serve)
        return
    rounds = options.rounds
    profile = dev_profile()
    cookies = entry_cookies()
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    with process("--serve", "app") as app_port:
        direct = http_times(f"http://127.0.0.1:{app_port}{BASE}/ping", rounds)
        print(line("HTTP GET direct", direct))
        with process("--serve", "local", "--app-port", str(app_port)) as origin_port:
            proxied = http_times(f"http://127.0.0.1:{origin_port}{BASE}/ping", rounds, cookies)
            print(line("HTTP GET proxied (local transport)", proxied, direct))
            ws_direct = WsClient(app_port, f"{BASE}/ws")
            ws_times = timed(rounds, lambda: ws_direct.round_trip("x" * 100))
            print(line("WebSocket round trip direct", ws_times))
            ws_proxied = WsClient(origin_port, f"{BASE}/ws", cookie)
            proxied_ws = timed(rounds, lambda: ws_proxied.round_trip("x" * 100))
            print(line("WebSocket round trip proxied (local)", proxied_ws, ws_times))
        if profile is None:
            print("dev cluster not up: no SSH rows (scripts/devcluster up)")
            return
        floor = ssh_floor(profile, app_port, rounds)
        print(line("HTTP GET over SSH, no proxy (the floor)", floor))
        with process("--serve", "ssh", "--app-port", str(app_port)) as origin_port:
            proxied_ssh = http_times(f"http://127.0.0.1:{origin_port}{BASE}/ping", rounds, cookies)
            print(line("HTTP GET proxied over SSH", proxied_ssh, floor).replace("over direct", "over the floor"))


if __name__ == "__main__":
    main()
