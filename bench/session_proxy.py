"""The sessions' way in: what the proxy adds to a request and to a WebSocket round trip.

A small app (uvicorn + Starlette: ``GET /s/lab/1/ping`` and a WebSocket echo) stands in for JupyterLab. Timed, each
as the median (and p95) of ``--rounds`` sequential round trips on kept connections:

- HTTP direct: httpx to the app's port;
- HTTP proxied, local: httpx to the sessions' origin (``SessionsOrigin``, served by uvicorn), which reaches the app
  with the ``local`` transport's ``open_tcp``;
- HTTP over SSH, no proxy: the same request on a direct-tcpip channel through the dev sshd (the floor over SSH);
- HTTP proxied over SSH: the origin reaching the app through the ``ssh`` transport (the dev cluster's profile);
- WebSocket round trip (a 100-byte text message and its echo), direct and proxied (local).

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
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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
from svc_host.sessions.origin import SessionsOrigin
from svc_host.sessions.target import SessionTarget
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport

ROOT = Path(__file__).resolve().parent.parent
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


def bound() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets TCP_NODELAY then
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def in_thread(main: Callable[[socket.socket, threading.Event], Any]) -> Iterator[int]:
    sock = bound()
    port = int(sock.getsockname()[1])
    stop = threading.Event()
    thread = threading.Thread(target=lambda: asyncio.run(main(sock, stop)), daemon=True)
    thread.start()
    for _ in range(600):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            break
        time.sleep(0.05)
    try:
        yield port
    finally:
        stop.set()
        thread.join(30)


async def serve(app: Any, sock: socket.socket, stop: threading.Event, **options: Any) -> None:
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="wsproto", **options))
    task = asyncio.create_task(server.serve([sock]))
    await asyncio.wait({task, asyncio.ensure_future(asyncio.to_thread(stop.wait))}, return_when="FIRST_COMPLETED")
    server.should_exit = True
    await task


def app_server() -> contextlib.AbstractContextManager[int]:
    return in_thread(lambda sock, stop: serve(make_app(), sock, stop, lifespan="off"))


@contextlib.contextmanager
def origin_server(app_port: int, transport_of: Callable[[], Any]) -> Iterator[tuple[int, SessionsOrigin]]:
    """The sessions' origin reaching the app through ``transport_of()``'s ``open_tcp``: its port and itself."""
    origins: list[SessionsOrigin] = []

    async def main(sock: socket.socket, stop: threading.Event) -> None:
        transport = transport_of()

        async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
            return SessionTarget(lambda: transport.open_tcp("127.0.0.1", app_port), SECRET, {}, f"app:{app_port}")

        origin = SessionsOrigin(resolve, key=b"b" * 32, host_allowed=ServerSecurity(token=None).host_allowed)
        origins.append(origin)
        try:
            await serve(origin, sock, stop, server_header=False, date_header=False)
        finally:
            await transport.close()

    with in_thread(main) as port:
        yield port, origins[0]


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


def entry_cookies(origin_port: int, origin: SessionsOrigin) -> dict[str, str]:
    with httpx.Client() as client:
        client.get(f"http://127.0.0.1:{origin_port}{BASE}/?svc_code={origin.mint_code('lab', '1')}")
        return dict(client.cookies)


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
    rounds = parser.parse_args().rounds
    # The app, the origin and the client are threads of this one process (svc serve and a browser are not): with
    # the default 5 ms GIL switch interval a thread woken by the network waits up to 5 ms for another that is busy
    # (seen as 5-8 ms medians over SSH, the time spent outside the proxy). A short interval removes that artefact.
    sys.setswitchinterval(0.0002)
    profile = dev_profile()
    with app_server() as app_port:
        direct = http_times(f"http://127.0.0.1:{app_port}{BASE}/ping", rounds)
        print(line("HTTP GET direct", direct))
        with origin_server(app_port, LocalTransport) as (origin_port, origin):
            cookies = entry_cookies(origin_port, origin)
            proxied = http_times(f"http://127.0.0.1:{origin_port}{BASE}/ping", rounds, cookies)
            print(line("HTTP GET proxied (local transport)", proxied, direct))
            ws_direct = WsClient(app_port, f"{BASE}/ws")
            ws_times = timed(rounds, lambda: ws_direct.round_trip("x" * 100))
            print(line("WebSocket round trip direct", ws_times))
            cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
            ws_proxied = WsClient(origin_port, f"{BASE}/ws", cookie)
            print(
                line(
                    "WebSocket round trip proxied (local)",
                    timed(rounds, lambda: ws_proxied.round_trip("x" * 100)),
                    ws_times,
                )
            )
        if profile is None:
            print("dev cluster not up: no SSH rows (scripts/devcluster up)")
            return
        floor = ssh_floor(profile, app_port, rounds)
        print(line("HTTP GET over SSH, no proxy (the floor)", floor))
        with origin_server(app_port, lambda: SSHTransport("dev", profile)) as (origin_port, origin):
            cookies = entry_cookies(origin_port, origin)
            proxied_ssh = http_times(f"http://127.0.0.1:{origin_port}{BASE}/ping", rounds, cookies)
            print(line("HTTP GET proxied over SSH", proxied_ssh, floor).replace("over direct", "over the floor"))


if __name__ == "__main__":
    main()
