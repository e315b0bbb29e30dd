"""Open a profile's SSH connection hop by hop, so a failure names the hop that failed.

asyncssh can follow a ``ProxyJump`` itself, but then a key the bastion refuses, or a bastion's unknown host
key, surfaces as if the target had refused: here every jump host is a connection of its own, opened in turn
(each through the one before), and an error says which hop, which host and what to fix. Handshakes are
limited per process (``MAX_HANDSHAKES``): a stock sshd starts dropping unauthenticated connections beyond
``MaxStartups 10``, and a sweep's pool would otherwise open eight at once.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import TYPE_CHECKING, Any

from svc_host.plugin import SSHProfile, TransportError
from svc_plugin_ssh.options import Hop, connect_options, jump_hops

if TYPE_CHECKING:  # asyncssh (0.1-0.2 s of CPU) is imported by the first connection, not by importing this module
    import asyncssh

MAX_HANDSHAKES = 4
"""Connections of one process in their handshake at the same time (OpenSSH's MaxStartups starts at 10)."""
RECONNECT_DELAYS = (0.5, 1.0, 2.0)
"""A restarting sshd refuses connections for a moment, and a busy one drops new ones beyond MaxStartups: a
refused or dropped handshake is tried again after these pauses."""

_handshakes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def _handshake_slot() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    if loop not in _handshakes:
        _handshakes[loop] = asyncio.Semaphore(MAX_HANDSHAKES)
    return _handshakes[loop]


async def open_connection(name: str, profile: SSHProfile) -> asyncssh.SSHClientConnection:
    """The profile's connection to its login node, through its jump hosts (the profile's ``proxy_jump``, else
    the ``ProxyJump`` of its ``~/.ssh/config`` entry); ``TransportError`` naming the hop that failed."""
    import asyncssh

    host, options = connect_options(profile)
    _agent_for_encrypted_key(name, options)
    tunnel = options.pop("tunnel", None)
    if tunnel is None:
        # the ProxyJump of the host's ~/.ssh/config entry (config=() reads the default files, as connect does)
        tunnel = asyncssh.SSHClientConnectionOptions(host=host, port=options.get("port", ()), config=()).tunnel
    hops = jump_hops(tunnel) if isinstance(tunnel, str) else []
    previous: asyncssh.SSHClientConnection | None = None
    try:
        for index, hop in enumerate(hops, start=1):
            where = f"jump host {hop.label} (hop {index} of {len(hops)})"
            hop_options: dict[str, Any] = {"port": hop.port or (), "username": hop.user or (), "tunnel": previous or ()}
            hop_options.update(connect_timeout=options["connect_timeout"])
            previous = _chained(await _handshake(name, where, hop.host, hop_options, jump=True), previous)
        target = Hop(user=options.get("username"), host=host, port=options.get("port")).label
        where = f"{target} via {hops[-1].label}" if hops else target
        final = {**options, "tunnel": previous} if previous is not None else options
        return _chained(await _handshake(name, where, host, final, jump=False), previous)
    except BaseException:
        if previous is not None:
            previous.close()
        raise


def _agent_for_encrypted_key(name: str, options: dict[str, Any]) -> None:
    """A ``key_filename`` protected by a passphrase is used through ssh-agent (svc never asks for passphrases):
    its ``client_keys`` option is dropped so asyncssh offers the agent's keys, as ``ssh`` does for such a key."""
    keys = options.get("client_keys") or []
    if not keys:
        return
    import asyncssh

    try:
        asyncssh.read_private_key(keys[0])
    except asyncssh.KeyImportError as exc:
        if "passphrase" not in str(exc).lower():
            raise TransportError(f"cannot read the key_filename {keys[0]} of profile {name!r}: {exc}") from exc
        if not os.environ.get("SSH_AUTH_SOCK"):
            raise TransportError(
                f"the key_filename {keys[0]} of profile {name!r} is encrypted and no ssh-agent is reachable: run "
                f"`ssh-add {keys[0]}` in an agent and start svc with its SSH_AUTH_SOCK (svc never asks for passphrases)"
            ) from exc
        del options["client_keys"]
    except OSError as exc:
        raise TransportError(f"cannot read the key_filename {keys[0]} of profile {name!r}: {exc}") from exc


def _chained(
    conn: asyncssh.SSHClientConnection, tunnel: asyncssh.SSHClientConnection | None
) -> asyncssh.SSHClientConnection:
    """Closing ``conn`` closes the jump connections it runs through (asyncssh does so for the hops it opens)."""
    if tunnel is not None:
        conn.set_tunnel(tunnel)
    return conn


async def _handshake(
    name: str, where: str, host: str, options: dict[str, Any], *, jump: bool
) -> asyncssh.SSHClientConnection:
    import asyncssh

    port = options.get("port") or 22
    try:
        for delay in (*RECONNECT_DELAYS, None):
            try:
                async with _handshake_slot():
                    return await asyncssh.connect(host, **options)
            except (ConnectionRefusedError, ConnectionResetError, asyncssh.ConnectionLost):
                if delay is None:
                    raise
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")
    except asyncssh.HostKeyNotVerifiable as exc:
        known = "its known_hosts (~/.ssh/known_hosts or its UserKnownHostsFile)" if jump else "known_hosts"
        raise TransportError(
            f"host key of {where} is not known (profile {name!r}); add it to {known}, e.g. "
            f"`ssh-keyscan -p {port} {host} >> ~/.ssh/known_hosts`"
            + ("" if jump else ", or set the profile's known_hosts file")
        ) from exc
    except asyncssh.PermissionDenied as exc:
        fix = (
            "give that host its key with an IdentityFile in ~/.ssh/config (or load it into ssh-agent)"
            if jump
            else "check username and key_filename"
        )
        raise TransportError(f"{where} refused the key of profile {name!r}; {fix}") from exc
    except (OSError, asyncssh.Error) as exc:
        raise TransportError(f"cannot connect to {where} for profile {name!r}: {exc}") from exc
