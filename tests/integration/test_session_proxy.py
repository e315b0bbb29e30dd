"""The sessions' way in with real parts: a real HTTP + WebSocket app (uvicorn, Starlette) reached through the
sessions' origin (uvicorn, on its own port) and a transport's ``open_tcp``: the ``local`` transport's socket, and
a direct-tcpip channel through the dev cluster's sshd (``cluster``). The browser is httpx and a wsproto client.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    Pong,
    RejectConnection,
    TextMessage,
)
from wsproto.events import Request as WsRequest

from svc_host.api.security import ServerSecurity
from svc_host.domain.profiles import SSHProfile
from svc_host.sessions.origin import SessionsOrigin
from svc_host.sessions.target import SessionTarget
from svc_host.testing.waiting import DEADLINE, eventually
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport

SECRET = "the-session-secret-7f3a9c"
JUPYTER = "v1.kernel.websocket.jupyter.org"
CLUSTER = "lab"
APP, DEAD = "101", "102"
"""Job ids: the uvicorn app, a port nothing listens on (raw wsproto servers a test drives: its own id)."""


# --- the app on the "node" ------------------------------------------------------------------------------


def secret_required(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """Like the node guard: no secret, no answer."""

    async def checked(request: Request) -> Response:
        if request.headers.get("x-svc-session-secret") != SECRET:
            return PlainTextResponse("no secret", status_code=403)
        return await handler(request)  # type: ignore[no-any-return]

    return checked


@dataclass
class AppState:
    release: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by GET release (in the app's own loop) to let the streamed response end."""


def make_app(state: AppState) -> Starlette:
    async def hello(request: Request) -> Response:
        return JSONResponse(
            {
                "path": request.url.path,
                "query": request.url.query,
                "secret_seen": request.headers.get("x-svc-session-secret"),
                "authorization": request.headers.get("authorization"),
                "cookie": request.headers.get("cookie"),
            },
            headers={"X-Svc-Session-Secret": "the app echoing it must not reach the browser", "X-App": "yes"},
        )

    async def echo(request: Request) -> Response:
        digest = hashlib.sha256()
        size = 0
        async for chunk in request.stream():
            digest.update(chunk)
            size += len(chunk)
        return JSONResponse({"size": size, "sha256": digest.hexdigest()})

    async def stream(request: Request) -> Response:
        async def chunks() -> AsyncIterator[bytes]:
            yield b"first;"
            await state.release.wait()  # the rest only once the browser has read the first chunk
            yield b"last"

        return StreamingResponse(chunks(), media_type="text/plain")

    async def release(request: Request) -> Response:
        state.release.set()
        return PlainTextResponse("released")

    async def ws(websocket: WebSocket) -> None:
        if websocket.headers.get("x-svc-session-secret") != SECRET:
            await websocket.close(code=1008)
            return
        offered = websocket.scope.get("subprotocols", [])
        await websocket.accept(subprotocol=JUPYTER if JUPYTER in offered else None)
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("text") == "close-4001":
                await websocket.close(code=4001, reason="asked to")
                return
            if message.get("text") is not None:
                await websocket.send_text("echo:" + message["text"])
            else:
                await websocket.send_bytes(b"echo:" + message["bytes"])

    async def ws_refused(websocket: WebSocket) -> None:
        await websocket.close(code=1008)  # before accepting: the handshake is answered 403

    routes: list[Any] = [
        Route(f"/s/{CLUSTER}/{APP}/hello", secret_required(hello)),
        Route(f"/s/{CLUSTER}/{APP}/echo", secret_required(echo), methods=["POST"]),
        Route(f"/s/{CLUSTER}/{APP}/stream", secret_required(stream)),
        Route(f"/s/{CLUSTER}/{APP}/release", secret_required(release)),
        WebSocketRoute(f"/s/{CLUSTER}/{APP}/ws", ws),
        WebSocketRoute(f"/s/{CLUSTER}/{APP}/ws-refused", ws_refused),
    ]
    return Starlette(routes=routes)


def listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets TCP_NODELAY then
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def served_in_thread(main: Callable[[socket.socket, threading.Event], Any]) -> Iterator[int]:
    """Run ``asyncio.run(main(sock, stop))`` in a thread; yield the port once it answers; stop it afterwards."""
    sock = listening_socket()
    port = sock.getsockname()[1]
    stop = threading.Event()
    thread = threading.Thread(target=lambda: asyncio.run(main(sock, stop)), daemon=True)
    thread.start()
    try:
        deadline = DEADLINE
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            deadline -= 0.05
            assert deadline > 0, "the server did not start"
            stop.wait(0.05)
        yield port
    finally:
        stop.set()
        thread.join(DEADLINE)


async def serve_until(server: uvicorn.Server, sock: socket.socket, stop: threading.Event) -> None:
    task = asyncio.create_task(server.serve([sock]))
    stopped = asyncio.ensure_future(asyncio.to_thread(stop.wait))
    await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await task


@pytest.fixture(scope="module")
def app_state() -> AppState:
    return AppState()


@pytest.fixture(scope="module")
def app_port(app_state: AppState) -> Iterator[int]:
    async def main(sock: socket.socket, stop: threading.Event) -> None:
        config = uvicorn.Config(make_app(app_state), log_level="warning", ws="wsproto", lifespan="off")
        await serve_until(uvicorn.Server(config), sock, stop)

    with served_in_thread(main) as port:
        yield port


# --- the sessions' origin, reaching the app through a transport ---------------------------------------


@dataclass
class Way:
    """The origin under test: where it listens, and the ports the test's sessions point at."""

    base: str
    origin: SessionsOrigin
    ports: dict[str, int]
    transport: LocalTransport | SSHTransport
    loop: asyncio.AbstractEventLoop

    def entry(self, job_id: str, path: str = "") -> str:
        return f"{self.base}/s/{CLUSTER}/{job_id}/{path}?svc_code={self.origin.mint_code(CLUSTER, job_id)}"


def dead_port() -> int:
    sock = listening_socket()
    port = int(sock.getsockname()[1])
    sock.close()
    return port


@pytest.fixture(scope="module", params=["local", pytest.param("ssh", marks=pytest.mark.cluster)])
def way(request: pytest.FixtureRequest, app_port: int) -> Iterator[Way]:
    profile: SSHProfile | None = request.getfixturevalue("dev_profile") if request.param == "ssh" else None
    ports = {APP: app_port, DEAD: dead_port()}
    made: list[tuple[SessionsOrigin, LocalTransport | SSHTransport, asyncio.AbstractEventLoop]] = []

    async def main(sock: socket.socket, stop: threading.Event) -> None:
        transport = LocalTransport() if profile is None else SSHTransport("dev", profile)

        async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
            port = ports.get(job_id)
            if cluster != CLUSTER or port is None:
                return None
            return SessionTarget(
                dial=lambda: transport.open_tcp("127.0.0.1", port),
                secret=SECRET,
                headers={"Authorization": f"token {SECRET}"},
                endpoint=f"127.0.0.1:{port}",
            )

        origin = SessionsOrigin(resolve, key=b"k" * 32, host_allowed=ServerSecurity(token=None).host_allowed)
        made.append((origin, transport, asyncio.get_running_loop()))
        config = uvicorn.Config(origin, log_level="warning", ws="wsproto", server_header=False, date_header=False)
        try:
            await serve_until(uvicorn.Server(config), sock, stop)
        finally:
            await transport.close()

    with served_in_thread(main) as port:
        yield Way(f"http://127.0.0.1:{port}", made[0][0], ports, made[0][1], made[0][2])


@pytest.fixture
async def browser(way: Way) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=DEADLINE) as client:
        yield client


async def entered(browser: httpx.AsyncClient, way: Way, job_id: str = APP) -> None:
    landing = await browser.get(way.entry(job_id, "hello"))
    assert landing.status_code == 303, landing.text
    assert landing.headers["location"] == f"/s/{CLUSTER}/{job_id}/hello"
    cookie = landing.headers["set-cookie"]
    assert cookie.startswith(f"svc_s_{CLUSTER}_{job_id}=")
    assert f"Path=/s/{CLUSTER}/{job_id}/" in cookie
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie


# --- HTTP ------------------------------------------------------------------------------------------------


async def test_a_get_reaches_the_app_with_the_secret_which_the_browser_never_sees(
    browser: httpx.AsyncClient, way: Way
) -> None:
    await entered(browser, way)
    browser.cookies.set("svc_session_8000", "the-dashboard-login")  # same host: the browser sends it here too
    browser.cookies.set("theme", "dark")
    response = await browser.get(f"{way.base}/s/{CLUSTER}/{APP}/hello?a=1&b=%2F")
    assert response.status_code == 200, response.text
    seen = response.json()
    assert seen["path"] == f"/s/{CLUSTER}/{APP}/hello"
    assert seen["query"] == "a=1&b=%2F"
    assert seen["secret_seen"] == SECRET
    assert seen["authorization"] == f"token {SECRET}"
    assert seen["cookie"] == "theme=dark"  # svc's own cookies (the dashboard's login, the entry cookie) stay home
    assert response.headers["x-app"] == "yes"
    assert "x-svc-session-secret" not in response.headers
    everything = json.dumps(dict(response.headers)) + json.dumps({k: v for k, v in seen.items() if k == "cookie"})
    assert SECRET not in everything


async def test_a_posted_body_reaches_the_app_whole_streamed_or_with_a_length(
    browser: httpx.AsyncClient, way: Way
) -> None:
    await entered(browser, way)
    body = bytes(range(256)) * 12_000  # 3 MB

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 100_000):
            yield body[start : start + 100_000]

    for content in (body, chunks()):
        response = await browser.post(f"{way.base}/s/{CLUSTER}/{APP}/echo", content=content)
        assert response.status_code == 200, response.text
        assert response.json() == {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}


async def test_a_response_is_streamed_not_held_until_it_ends(
    browser: httpx.AsyncClient, way: Way, app_state: AppState
) -> None:
    await entered(browser, way)
    app_state.release.clear()
    async with browser.stream("GET", f"{way.base}/s/{CLUSTER}/{APP}/stream") as response:
        chunks = response.aiter_raw()
        assert await anext(chunks) == b"first;"  # arrives while the app still holds the rest back
        assert (await browser.get(f"{way.base}/s/{CLUSTER}/{APP}/release")).status_code == 200
        assert b"".join([chunk async for chunk in chunks]) == b"last"


async def test_an_app_that_is_not_there_is_a_502_in_words(browser: httpx.AsyncClient, way: Way) -> None:
    assert (await browser.get(way.entry(DEAD))).status_code == 303
    response = await browser.get(f"{way.base}/s/{CLUSTER}/{DEAD}/")
    assert response.status_code == 502
    assert "cannot reach this session's app" in response.text
    assert f"127.0.0.1:{way.ports[DEAD]}" in response.text


# --- getting in --------------------------------------------------------------------------------------------


async def test_an_entry_code_works_once(browser: httpx.AsyncClient, way: Way) -> None:
    link = way.entry(APP)
    assert (await browser.get(link)).status_code == 303
    async with httpx.AsyncClient(timeout=DEADLINE) as another:
        again = await another.get(link)
        assert again.status_code == 401
        assert "used already" in again.text
        assert "set-cookie" not in again.headers


async def test_no_cookie_a_forged_one_or_another_sessions_is_refused(browser: httpx.AsyncClient, way: Way) -> None:
    url = f"{way.base}/s/{CLUSTER}/{APP}/hello"
    bare = await browser.get(url)
    assert bare.status_code == 401
    assert "open it from the dashboard" in bare.text
    assert "svc session open" in bare.text

    await entered(browser, way, DEAD)  # a cookie for session 102 ...
    other = browser.cookies.get(f"svc_s_{CLUSTER}_{DEAD}")
    assert other
    async with httpx.AsyncClient(timeout=DEADLINE) as thief:
        # ... presented for session 101, under 101's name: the signature names 102
        thief.cookies.set(f"svc_s_{CLUSTER}_{APP}", other)
        assert (await thief.get(url)).status_code == 401
        expires, _, mac = other.partition(".")
        thief.cookies.set(f"svc_s_{CLUSTER}_{APP}", f"{int(expires) + 3600}.{mac}")  # a longer life, same MAC
        assert (await thief.get(url)).status_code == 401
    code_for_other = way.origin.mint_code(CLUSTER, DEAD)
    wrong_session = await browser.get(f"{way.base}/s/{CLUSTER}/{APP}/?svc_code={code_for_other}")
    assert wrong_session.status_code == 401


async def test_websocket_handshake_without_the_cookie_is_refused(way: Way) -> None:
    client = WsClient(way.base)
    status = await client.connect(f"/s/{CLUSTER}/{APP}/ws", cookie="", subprotocols=[JUPYTER])
    assert status == 401


# --- WebSockets ----------------------------------------------------------------------------------------


class WsClient:
    """A browser's WebSocket, spoken with wsproto over a plain socket."""

    def __init__(self, base: str) -> None:
        self.base = httpx.URL(base)
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.events: list[Event] = []
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def connect(self, path: str, *, cookie: str, subprotocols: list[str]) -> int | str | None:
        """The accepted sub-protocol (or None), or the HTTP status of a refused handshake."""
        assert self.base.port is not None
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.base.port)
        extra = [(b"cookie", cookie.encode())] if cookie else []
        await self.send(
            WsRequest(host=f"127.0.0.1:{self.base.port}", target=path, subprotocols=subprotocols, extra_headers=extra)
        )
        event = await self.receive()
        if isinstance(event, AcceptConnection):
            return event.subprotocol
        assert isinstance(event, RejectConnection), event
        return event.status_code

    async def send(self, event: Event) -> None:
        self.writer.write(self.ws.send(event))
        await self.writer.drain()

    async def receive(self) -> Event:
        while not self.events:
            data = await asyncio.wait_for(self.reader.read(65536), DEADLINE)
            self.ws.receive_data(data or None)
            self.events.extend(self.ws.events())
            assert data or self.events, "the connection closed without a close frame"
        return self.events.pop(0)

    async def message(self) -> str | bytes | CloseConnection:
        """The next whole message (wsproto hands it out in pieces as they arrive), or the close."""
        parts: list[Any] = []
        while True:
            event = await self.receive()
            if isinstance(event, CloseConnection):
                assert not parts
                return event
            assert isinstance(event, TextMessage | BytesMessage), event
            parts.append(event.data)
            if event.message_finished:
                return "".join(parts) if isinstance(event, TextMessage) else b"".join(parts)

    def close(self) -> None:
        self.writer.close()


def session_cookie(browser: httpx.AsyncClient, job_id: str) -> str:
    name = f"svc_s_{CLUSTER}_{job_id}"
    return f"{name}={browser.cookies.get(name)}"


async def test_a_websocket_echoes_text_and_binary_with_jupyters_subprotocol_and_close_codes(
    browser: httpx.AsyncClient, way: Way
) -> None:
    await entered(browser, way)
    client = WsClient(way.base)
    try:
        accepted = await client.connect(
            f"/s/{CLUSTER}/{APP}/ws", cookie=session_cookie(browser, APP), subprotocols=["other", JUPYTER]
        )
        assert accepted == JUPYTER
        await client.send(TextMessage(data="hello ✓"))
        assert await client.message() == "echo:hello ✓"
        await client.send(BytesMessage(data=b"\x00\xff" * 40_000))
        assert await client.message() == b"echo:" + b"\x00\xff" * 40_000
        await client.send(TextMessage(data="close-4001"))
        closed = await client.message()
        assert isinstance(closed, CloseConnection)
        assert (closed.code, closed.reason) == (4001, "asked to")
    finally:
        client.close()


@contextlib.asynccontextmanager
async def raw_app(
    way: Way, job_id: str, handle: Callable[[WSConnection, asyncio.StreamReader, asyncio.StreamWriter], Any]
) -> Any:
    """A WebSocket app spoken with wsproto by the test (pings, a drop without a close frame), as session ``job_id``."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        while True:
            ws.receive_data(await reader.read(65536))
            requests = [event for event in ws.events() if isinstance(event, WsRequest)]
            if requests:
                break
        writer.write(ws.send(AcceptConnection(subprotocol=requests[0].subprotocols[0] or None)))
        await writer.drain()
        await handle(ws, reader, writer)

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    way.ports[job_id] = server.sockets[0].getsockname()[1]
    try:
        yield
    finally:
        server.close()


async def test_the_apps_pings_are_answered_and_a_dropped_app_closes_the_browser_side_with_1011(
    browser: httpx.AsyncClient, way: Way
) -> None:
    pongs: list[bytes] = []

    async def ping_then_drop(ws: WSConnection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(ws.send(Ping(payload=b"are you there")))
        await writer.drain()
        while not pongs:
            data = await reader.read(65536)
            if not data:
                return
            ws.receive_data(data)
            pongs.extend(event.payload for event in ws.events() if isinstance(event, Pong))
        writer.write(ws.send(TextMessage(data="pong seen")))
        await writer.drain()
        writer.transport.abort()  # gone without a close frame (the app crashed, the node rebooted)

    async with raw_app(way, "103", ping_then_drop):
        await entered(browser, way, "103")
        client = WsClient(way.base)
        try:
            accepted = await client.connect(
                f"/s/{CLUSTER}/103/ws", cookie=session_cookie(browser, "103"), subprotocols=[JUPYTER]
            )
            assert accepted == JUPYTER
            assert await client.message() == "pong seen"
            closed = await client.message()
            assert isinstance(closed, CloseConnection)
            assert closed.code in (1011, 1012)
            assert "went away" in (closed.reason or "") or "broke" in (closed.reason or "")
        finally:
            client.close()
    assert pongs == [b"are you there"]


async def test_a_browser_leaving_closes_the_apps_websocket(browser: httpx.AsyncClient, way: Way) -> None:
    closes: list[int] = []

    async def wait_for_close(ws: WSConnection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            ws.receive_data(data)
            closes.extend(event.code for event in ws.events() if isinstance(event, CloseConnection))
        writer.close()

    async with raw_app(way, "104", wait_for_close):
        await entered(browser, way, "104")
        client = WsClient(way.base)
        try:
            accepted = await client.connect(
                f"/s/{CLUSTER}/104/ws", cookie=session_cookie(browser, "104"), subprotocols=[JUPYTER]
            )
            assert accepted == JUPYTER
            await client.send(CloseConnection(code=4002, reason="tab closed"))
            await eventually(lambda: closes, what="the app sees the close")
        finally:
            client.close()
    assert closes == [4002]


async def test_an_apps_refusal_of_a_websocket_reaches_the_browser(browser: httpx.AsyncClient, way: Way) -> None:
    await entered(browser, way)
    client = WsClient(way.base)
    try:
        refused = await client.connect(
            f"/s/{CLUSTER}/{APP}/ws-refused", cookie=session_cookie(browser, APP), subprotocols=[JUPYTER]
        )
        assert refused == 403
    finally:
        client.close()


@pytest.mark.parametrize("way", [pytest.param("ssh", marks=pytest.mark.cluster)], indirect=True)
async def test_a_dropped_ssh_connection_closes_websockets_with_1012_and_the_next_ones_reconnect(
    browser: httpx.AsyncClient, way: Way
) -> None:
    """The network drops svc's SSH connection mid-session: the browser's WebSocket is closed (1012: try again), not
    left hanging, and the page's next WebSocket and request go through a new connection."""
    assert isinstance(way.transport, SSHTransport)
    await entered(browser, way)
    path, cookie = f"/s/{CLUSTER}/{APP}/ws", session_cookie(browser, APP)
    client = WsClient(way.base)
    try:
        assert await client.connect(path, cookie=cookie, subprotocols=[JUPYTER]) == JUPYTER
        await client.send(TextMessage(data="before"))
        assert await client.message() == "echo:before"
        conn = asyncio.run_coroutine_threadsafe(way.transport.connection(), way.loop).result(DEADLINE)
        way.loop.call_soon_threadsafe(conn.abort)
        closed = await client.message()
        assert isinstance(closed, CloseConnection)
        assert closed.code in (1011, 1012)
        assert "went away" in (closed.reason or "") or "broke" in (closed.reason or "")
    finally:
        client.close()
    again = WsClient(way.base)
    try:
        assert await again.connect(path, cookie=cookie, subprotocols=[JUPYTER]) == JUPYTER
        await again.send(TextMessage(data="after"))
        assert await again.message() == "echo:after"
    finally:
        again.close()
    assert (await browser.get(f"{way.base}/s/{CLUSTER}/{APP}/hello")).json()["secret_seen"] == SECRET
