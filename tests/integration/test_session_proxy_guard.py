"""The whole way in, node side included: the sessions' origin -> a transport's ``open_tcp`` (the local socket, or a
direct-tcpip channel through the dev sshd) -> the real node guard (``python3 guard.py app.json``, as the batch job
runs it) -> a real app on the port the guard gave it, under the session's base path."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from wsproto.events import TextMessage

from svc_host.api.security import ServerSecurity
from svc_host.domain.profiles import SSHProfile
from svc_host.sessions import node_guard
from svc_host.sessions.origin import SessionsOrigin
from svc_host.sessions.target import SessionTarget
from svc_host.testing.waiting import DEADLINE, eventually_blocking
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport
from tests.integration.test_session_proxy import JUPYTER, WsClient, serve_until, served_in_thread

SECRET = "guarded-secret-5b8e21"
CLUSTER, JOB = "lab", "201"
APP = f"""
import sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute

async def hello(request):
    return JSONResponse({{"path": request.url.path, "secret_seen": request.headers.get("x-svc-session-secret")}})

async def ws(websocket):
    await websocket.accept(subprotocol="{JUPYTER}")
    while True:
        await websocket.send_text("echo:" + await websocket.receive_text())

routes = [Route("/s/{CLUSTER}/{JOB}/hello", hello), WebSocketRoute("/s/{CLUSTER}/{JOB}/ws", ws)]
uvicorn.run(Starlette(routes=routes), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", ws="wsproto")
"""


@pytest.fixture(scope="module")
def guard_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The node guard running the app, as a session's batch job runs it; its public port."""
    session_dir = tmp_path_factory.mktemp("session")
    (session_dir / "secret").write_text(SECRET + "\n")
    (session_dir / "app.py").write_text(APP)
    (session_dir / "guard.py").write_text(Path(node_guard.__file__).read_text())
    app = {"argv": [sys.executable, str(session_dir / "app.py"), "{port}"], "base_path": f"/s/{CLUSTER}/{JOB}/"}
    (session_dir / "app.json").write_text(json.dumps(app))
    guard = subprocess.Popen([sys.executable, str(session_dir / "guard.py"), str(session_dir / "app.json")])
    try:
        endpoint = eventually_blocking(
            lambda: (
                (session_dir / "endpoint.json").exists() and json.loads((session_dir / "endpoint.json").read_text())
            ),
            what="the guard writes endpoint.json",
        )
        port = int(endpoint["port"])

        def app_answers() -> bool:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(f"GET /s/{CLUSTER}/{JOB}/hello HTTP/1.1\r\nHost: x\r\nX-Svc-Session-Secret: {SECRET}\r\n"
                             "Connection: close\r\n\r\n".encode())  # fmt: skip
                return sock.recv(100).startswith(b"HTTP/1.1 200")

        eventually_blocking(lambda: _quietly(app_answers), what="the app answers through the guard")
        yield port
    finally:
        guard.terminate()
        guard.wait(DEADLINE)


def _quietly(check: object) -> bool:
    try:
        return bool(check())  # type: ignore[operator]
    except OSError:
        return False


@pytest.fixture(scope="module", params=["local", pytest.param("ssh", marks=pytest.mark.cluster)])
def origin_base(request: pytest.FixtureRequest, guard_port: int) -> Iterator[tuple[str, SessionsOrigin]]:
    profile: SSHProfile | None = request.getfixturevalue("dev_profile") if request.param == "ssh" else None
    made: list[SessionsOrigin] = []

    async def main(sock: socket.socket, stop: threading.Event) -> None:
        transport = LocalTransport() if profile is None else SSHTransport("dev", profile)

        async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
            return SessionTarget(lambda: transport.open_tcp("127.0.0.1", guard_port), SECRET, {}, f"node:{guard_port}")

        origin = SessionsOrigin(resolve, key=b"g" * 32, host_allowed=ServerSecurity(token=None).host_allowed)
        made.append(origin)
        try:
            await serve_until(uvicorn.Server(uvicorn.Config(origin, log_level="warning", ws="wsproto")), sock, stop)
        finally:
            await transport.close()

    with served_in_thread(main) as port:
        yield f"http://127.0.0.1:{port}", made[0]


@pytest.fixture
async def browser(origin_base: tuple[str, SessionsOrigin]) -> AsyncIterator[httpx.AsyncClient]:
    base, origin = origin_base
    async with httpx.AsyncClient(timeout=DEADLINE) as client:
        code = origin.mint_code(CLUSTER, JOB)
        assert (await client.get(f"{base}/s/{CLUSTER}/{JOB}/?svc_code={code}")).status_code == 303
        yield client


async def test_http_and_a_websocket_reach_the_app_through_the_node_guard(
    browser: httpx.AsyncClient, origin_base: tuple[str, SessionsOrigin]
) -> None:
    base, _ = origin_base
    for _ in range(3):  # kept connections: each request of one is checked by the guard
        answer = await browser.get(f"{base}/s/{CLUSTER}/{JOB}/hello")
        assert answer.status_code == 200
        assert answer.json() == {"path": f"/s/{CLUSTER}/{JOB}/hello", "secret_seen": None}  # the guard removed it
    name = f"svc_s_{CLUSTER}_{JOB}"
    client = WsClient(base)
    try:
        accepted = await client.connect(
            f"/s/{CLUSTER}/{JOB}/ws", cookie=f"{name}={browser.cookies.get(name)}", subprotocols=[JUPYTER]
        )
        assert accepted == JUPYTER
        await client.send(TextMessage(data="print(6*7)"))
        assert await client.message() == "echo:print(6*7)"
    finally:
        client.close()


async def test_the_nodes_port_without_the_secret_is_refused(guard_port: int) -> None:
    """What another user of the cluster gets from the node's port: 403, nothing of the app."""
    async with httpx.AsyncClient(timeout=DEADLINE) as stranger:
        answer = await stranger.get(f"http://127.0.0.1:{guard_port}/s/{CLUSTER}/{JOB}/hello")
        assert answer.status_code == 403
        assert "path" not in answer.text
    reader, writer = await asyncio.open_connection("127.0.0.1", guard_port)
    writer.write(
        f"GET /s/{CLUSTER}/{JOB}/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".encode()
    )
    await writer.drain()
    assert (await reader.read(100)).startswith(b"HTTP/1.1 403")
    writer.close()
