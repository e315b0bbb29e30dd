"""The agent's side of ``svc session open``: a ready session is served on a port of the agent's own on 127.0.0.1
(the one-time link gets the browser in, the app answers through the transport), each call gives a new link on the
same port, the port closes when the session ends; a session not ready yet is answered with its state, an ended one
with why, an unknown one as not found; a request naming another Host is refused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
import pytest

from svc_host.agent.session_ports import SessionPorts
from svc_host.errors import InvalidStateError, NotFoundError
from svc_host.host import Host
from svc_host.sessions import secrets
from svc_host.store import sessions as repo
from svc_host.testing.waiting import eventually

from .conftest import FileTransport

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DIR = "/home/u/.svc/sessions/a"


async def a_session(host: Host, fake: FileTransport, state: str, port: int = 1) -> None:
    await host.store.run(
        repo.add_session,
        cluster="fake",
        job_id="42",
        kind="web",
        fields="{}",
        source="cli",
        session_dir=DIR,
        start_timeout_seconds=60,
        now=NOW,
    )
    changes = {"state": state, "node_host": "node3", "node_port": port}
    if state == "ended":
        changes["end_reason"] = "app_exited"
        changes["end_detail"] = "Traceback...\nOSError: address in use\n"
    await host.store.run(repo.move, "fake", "42", expected="queued", changes=changes, now=NOW)
    fake.files[f"{DIR}/secret"] = b"s3cret\n"
    secrets.forget("fake", "42")


@pytest.fixture
async def app_port() -> AsyncIterator[int]:
    """An app on 127.0.0.1 that answers ``ok`` only to a request carrying the secret, as the node guard lets through
    (header names in any case: the proxy sends them lower-case)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode().lower()
        status = "200 OK" if "\r\nx-svc-session-secret: s3cret\r\n" in head else "403 Forbidden"
        writer.write(f"HTTP/1.1 {status}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


async def refused(port: int) -> bool:
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            await client.get(f"http://127.0.0.1:{port}/")
    except httpx.ConnectError:
        return True
    return False


async def test_a_ready_session_is_served_on_a_port_of_its_own_until_it_ends(
    svc_test_host: Host, fake: FileTransport, web_kind: None, app_port: int
) -> None:
    await a_session(svc_test_host, fake, "ready", app_port)
    ports = SessionPorts(svc_test_host)
    try:
        first = await ports.open("fake", "42")
        url = urlsplit(first["url"])
        assert (url.hostname, url.port, url.path) == ("127.0.0.1", first["port"], "/s/fake/42/")
        assert ports.describe() == [{"cluster": "fake", "job_id": "42", "port": first["port"]}]
        async with httpx.AsyncClient(timeout=30, follow_redirects=True) as browser:
            page = await browser.get(first["url"])
            assert (page.status_code, page.text) == (200, "ok")  # the app saw the secret the agent added
            assert (await browser.get(first["url"])).status_code == 401  # the link is good once
            again = await ports.open("fake", "42")
            assert again["port"] == first["port"]
            assert again["url"] != first["url"]
            assert (await browser.get(again["url"])).status_code == 200
        async with httpx.AsyncClient(timeout=30) as stranger:
            rebound = await stranger.get(again["url"], headers={"Host": f"evil.example:{first['port']}"})
            assert rebound.status_code == 400
        changes = {"state": "ended", "end_reason": "stopped"}
        await svc_test_host.store.run(repo.move, "fake", "42", expected="ready", changes=changes, now=NOW)
        await eventually(lambda: not ports.busy, what="the ended session no longer served")
        assert ports.describe() == []
        assert await refused(first["port"])
    finally:
        await ports.close()


async def test_a_session_not_ready_is_answered_with_its_state_and_nothing_is_served(
    svc_test_host: Host, fake: FileTransport, web_kind: None
) -> None:
    await a_session(svc_test_host, fake, "starting")
    ports = SessionPorts(svc_test_host, wait_seconds=0.5)
    try:
        assert await ports.open("fake", "42", wait=False) == {"state": "starting"}  # at once
        assert await ports.open("fake", "42") == {"state": "starting"}  # after wait_seconds
        assert ports.describe() == []
        assert not ports.busy
    finally:
        await ports.close()


async def test_an_ended_or_unknown_session_is_an_error_in_words(
    svc_test_host: Host, fake: FileTransport, web_kind: None
) -> None:
    await a_session(svc_test_host, fake, "ended")
    ports = SessionPorts(svc_test_host)
    try:
        with pytest.raises(InvalidStateError) as ended:
            await ports.open("fake", "42")
        assert str(ended.value) == "session 42 on 'fake' ended (app_exited): OSError: address in use"
        with pytest.raises(NotFoundError, match="no session 43 on transport 'fake'"):
            await ports.open("fake", "43")
        assert ports.describe() == []
        assert not ports.busy
    finally:
        await ports.close()
