"""``Transport.open_tcp``: the local transport's socket and the SSH transport's direct-tcpip channel through the real
dev sshd, to a real port; refusals name the login node and the target; channels leave the command slots free."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.errors import TransportError
from svc_host.testing.fake import FakeTransport
from svc_plugin_local.transport import LocalTransport
from svc_plugin_ssh.transport import SSHTransport


@pytest.fixture
async def echo_port() -> AsyncIterator[int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data.upper())
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def round_trip(transport: LocalTransport | SSHTransport, port: int) -> bytes:
    reader, writer = await transport.open_tcp("127.0.0.1", port)
    try:
        writer.write(b"hello node")
        await writer.drain()
        return await reader.readexactly(10)
    finally:
        writer.close()


async def test_local_transport_connects_and_names_a_refused_target(echo_port: int) -> None:
    transport = LocalTransport()
    assert await round_trip(transport, echo_port) == b"HELLO NODE"
    port = closed_port()
    with pytest.raises(TransportError, match=rf"cannot connect to 127\.0\.0\.1:{port} on transport 'local'"):
        await transport.open_tcp("127.0.0.1", port)


async def test_a_transport_without_connections_says_so() -> None:
    with pytest.raises(TransportError, match="cannot open connections"):
        await FakeTransport().open_tcp("node1", 8888)


@pytest.mark.cluster
async def test_ssh_channels_reach_the_port_from_the_login_node_beside_every_command_slot(
    dev_profile: SSHProfile, echo_port: int
) -> None:
    transport = SSHTransport("dev", dev_profile.model_copy(update={"max_channels": 2}))
    try:
        many = [await transport.open_tcp("127.0.0.1", echo_port) for _ in range(12)]  # past MaxSessions (10)
        for _, writer in many:
            writer.write(b"hello node")
        for reader, _ in many:
            assert await reader.readexactly(10) == b"HELLO NODE"
        ran = await asyncio.gather(*(transport.run(["echo", str(i)]) for i in range(4)))  # commands still run
        assert [result.stdout for result in ran] == ["0\n", "1\n", "2\n", "3\n"]
        for _, writer in many:
            writer.close()
        port = closed_port()
        with pytest.raises(TransportError) as refused:
            await transport.open_tcp("127.0.0.1", port)
        message = str(refused.value)
        assert f"the login node of 'dev' ({dev_profile.hostname}:{dev_profile.port})" in message
        assert f"127.0.0.1:{port}" in message
        conn = await transport.connection()
        conn.abort()  # the network drops the connection: the next channel opens on a new one
        assert await round_trip(transport, echo_port) == b"HELLO NODE"
    finally:
        await transport.close()
