"""The SSH transport runs a command again after a dropped connection only when it is idempotent."""

from __future__ import annotations

from typing import Any

import asyncssh
import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.errors import OutcomeUnknownError, TransportError
from svc_plugin_ssh.transport import SSHTransport


class Completed:
    exit_status = 0
    exit_signal = None
    stdout = "ok\n"
    stderr = ""


class DroppingConnection:
    """Fails the first ``drops`` commands with ``error``, then answers; records every command line."""

    def __init__(self, error: Exception, drops: int = 1) -> None:
        self.error = error
        self.drops = drops
        self.lines: list[str] = []

    async def run(self, line: str, **_: Any) -> Completed:
        self.lines.append(line)
        if len(self.lines) <= self.drops:
            raise self.error
        return Completed()

    def abort(self) -> None:
        pass

    def is_closed(self) -> bool:
        return False


def transport_over(conn: DroppingConnection, monkeypatch: pytest.MonkeyPatch) -> SSHTransport:
    transport = SSHTransport("hpc", SSHProfile(hostname="login.example.org"))

    async def connection() -> DroppingConnection:
        return conn

    monkeypatch.setattr(transport, "connection", connection)
    return transport


LOST = asyncssh.ConnectionLost("Connection lost")


async def test_an_idempotent_command_is_run_again_after_a_drop(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = DroppingConnection(LOST)
    result = await transport_over(conn, monkeypatch).run(["squeue", "--me"])
    assert result.stdout == "ok\n"
    assert conn.lines == ["squeue --me", "squeue --me"]


async def test_sbatch_is_never_run_again_after_a_drop(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = DroppingConnection(LOST)
    with pytest.raises(OutcomeUnknownError, match=r"connection to 'hpc' lost while sbatch ran \(not run again\)"):
        await transport_over(conn, monkeypatch).run(["sbatch", "--parsable"], stdin="#!/bin/bash\n", idempotent=False)
    assert conn.lines == ["sbatch --parsable"]


async def test_a_refused_channel_never_started_the_command_so_even_sbatch_goes_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conn = DroppingConnection(asyncssh.ChannelOpenError(asyncssh.OPEN_CONNECT_FAILED, "refused"))
    result = await transport_over(conn, monkeypatch).run(["sbatch", "--parsable"], idempotent=False)
    assert result.exit_code == 0
    assert len(conn.lines) == 2


async def test_a_timeout_is_an_unknown_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = DroppingConnection(asyncssh.TimeoutError(None, None, None, 0, None, None, None, None), drops=5)
    with pytest.raises(OutcomeUnknownError) as caught:
        await transport_over(conn, monkeypatch).run(["squeue"], timeout=3)
    assert caught.value.timed_out
    assert str(caught.value) == "squeue timed out after 3 s on 'hpc'"
    assert conn.lines == ["squeue"]


async def test_two_drops_of_an_idempotent_command_are_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = DroppingConnection(LOST, drops=2)
    with pytest.raises(TransportError, match="connection to 'hpc' lost running squeue"):
        await transport_over(conn, monkeypatch).run(["squeue"])
    assert len(conn.lines) == 2


@pytest.mark.parametrize("error", [ConnectionResetError(104, "Connection reset by peer"), BrokenPipeError(32, "pipe")])
async def test_a_reset_under_a_command_is_a_drop_never_a_crash(error: OSError, monkeypatch: pytest.MonkeyPatch) -> None:
    # asyncssh hands a channel the socket's own error when sshd goes away (an sshd restart that ends its sessions)
    squeue = DroppingConnection(error)
    assert (await transport_over(squeue, monkeypatch).run(["squeue", "--me"])).stdout == "ok\n"
    sbatch = DroppingConnection(error)
    with pytest.raises(OutcomeUnknownError, match="not run again"):
        await transport_over(sbatch, monkeypatch).run(["sbatch"], idempotent=False)
