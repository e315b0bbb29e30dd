"""The proxy's relay of an answer that came whole with its head (the common small answer, one without a body),
and of one cut short inside it, against a real socket app that writes each answer in one piece."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from starlette.types import Message

from svc_host.sessions.proxy import SessionProxy
from svc_host.sessions.target import SessionTarget

ANSWERS = {
    b"/s/c/1/small": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    b"/s/c/1/empty": b"HTTP/1.1 204 No Content\r\n\r\n",
    b"/s/c/1/cut": b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nonly part",
}


@pytest.fixture
async def app() -> AsyncIterator[tuple[int, list[int]]]:
    """An app answering each request in one write (``cut`` then closes); yields its port and the connections
    it accepted."""
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            path = head.split(b" ")[1]
            writer.write(ANSWERS[path])
            await writer.drain()
            if path.endswith(b"cut"):
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1], connections
    server.close()


async def get(proxy: SessionProxy, path: str) -> list[Message]:
    """What the browser side is sent for ``GET path``."""
    sent: list[Message] = []

    async def receive() -> Message:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"app")],
    }
    await proxy(scope, receive, send)
    return sent


def proxy_to(port: int) -> SessionProxy:
    return SessionProxy(SessionTarget(lambda: asyncio.open_connection("127.0.0.1", port), "s3cret", {}, "app"))


async def test_answers_that_came_whole_are_relayed_whole_on_one_kept_connection(app: tuple[int, list[int]]) -> None:
    port, connections = app
    proxy = proxy_to(port)
    for _ in range(3):
        small = await get(proxy, "/s/c/1/small")
        assert [m["type"] for m in small] == ["http.response.start", "http.response.body"]
        assert (small[0]["status"], small[1]["body"], small[1]["more_body"]) == (200, b"hello", False)
        empty = await get(proxy, "/s/c/1/empty")
        assert (empty[0]["status"], empty[-1]["body"], empty[-1]["more_body"]) == (204, b"", False)
    assert len(connections) == 1
    await proxy.close()


async def test_an_answer_cut_short_is_never_finished_and_its_connection_not_kept(app: tuple[int, list[int]]) -> None:
    port, connections = app
    proxy = proxy_to(port)
    cut = await get(proxy, "/s/c/1/cut")
    assert cut[0]["status"] == 200
    assert not any(m["type"] == "http.response.body" and not m.get("more_body") for m in cut)  # a failed download
    assert b"".join(m.get("body", b"") for m in cut[1:]) in (b"", b"only part")
    small = await get(proxy, "/s/c/1/small")
    assert small[1]["body"] == b"hello"
    assert len(connections) == 2  # a new connection for the next request
    await proxy.close()
