"""A transport that keeps session files in memory and reaches a session's app on this machine, and a session
kind for the tests (``web``: a form with one ``command`` field)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

import pytest
from pydantic import BaseModel, Field

from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.records import AppLaunch, SessionKindSpec
from svc_host.sessions import endpoints
from svc_host.testing.fake import FakeTransport, transport_plugin
from svc_host.transports.base import CommandResult


class FileTransport(FakeTransport):
    """``FakeTransport`` plus what sessions need: commands (the writes ``svc_host.sessions.files`` runs), file
    reads, a login directory, and connections (to this machine, whatever host is named)."""

    def __init__(self, name: str = "fake") -> None:
        super().__init__(name)
        self.files: dict[str, bytes] = {}
        self.commands: list[list[str]] = []

    async def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None, idempotent: bool = True
    ) -> CommandResult:
        self.commands.append(list(argv))
        if argv[:2] == ["sh", "-c"] and "cat >" in argv[2]:
            self.files[argv[4]] = (stdin or "").encode()
        if argv[:3] == ["sh", "-c", endpoints.READ_ALL]:  # each directory's endpoint.json as one line
            lines = (self.files.get(f"{d}/endpoint.json", b"").decode().replace("\n", "") for d in argv[4:])
            return CommandResult(argv=list(argv), exit_code=0, stdout="".join(f"{line}\n" for line in lines), stderr="")
        return CommandResult(argv=list(argv), exit_code=0, stdout="", stderr="")

    async def read_bytes(self, path: str, offset: int, limit: int) -> tuple[bytes, int] | None:
        data = self.files.get(path)
        return None if data is None else (data[offset : offset + limit], len(data))

    async def login_dir(self) -> str:
        return "/home/u"

    async def open_tcp(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", port)


@pytest.fixture
def fake(svc_register_plugin: Callable[..., None]) -> FileTransport:
    transport = FileTransport("fake")
    svc_register_plugin(transport_plugin(transport), "fake-transport")
    return transport


class WebFields(BaseModel):
    command: str = Field(min_length=1, description="A shell command that serves HTTP on $SVC_SESSION_PORT.")


class WebKind:
    @hookimpl
    def svc_session_kinds(self) -> list[SessionKindSpec]:
        return [
            SessionKindSpec(
                name="web",
                description="a test app",
                fields=WebFields,
                launch=lambda fields: AppLaunch(argv=["bash", "-lc", fields.command]),
                ready_path="ready",
                start_timeout=60,
                idle_minutes=10,
            )
        ]


@pytest.fixture
def web_kind(svc_register_plugin: Callable[..., None]) -> None:
    svc_register_plugin(WebKind(), "web-kind")


@dataclass
class App:
    """An HTTP app on 127.0.0.1 that answers 200 only to requests carrying the secret, as the node guard would."""

    secret: str
    port: int = 0
    answering: bool = True
    seen: list[str] = field(default_factory=list)


@pytest.fixture
async def app() -> AsyncIterator[App]:
    found = App(secret="s3cret")

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        found.seen.append(head.split("\r\n")[0])
        if not found.answering:
            writer.close()
            return
        status = "200 OK" if f"X-Svc-Session-Secret: {found.secret}" in head else "403 Forbidden"
        writer.write(f"HTTP/1.1 {status}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    found.port = server.sockets[0].getsockname()[1]
    yield found
    server.close()
    await server.wait_closed()
