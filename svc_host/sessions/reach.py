"""How svc reaches one ready session's app, for the sessions' origin (``svc serve``) and ``svc session open``.

``resolve`` turns (cluster, job id) into a ``SessionTarget``: the store's row says where the node guard listens
(node and port, read from ``endpoint.json`` by the watch), the transport dials it (``open_tcp``: a direct-tcpip
channel through the held SSH connection, or a local socket), the secret comes from ``secrets.secret_of`` and the
kind adds its own headers (``SessionKindSpec.proxy_headers``, e.g. Jupyter's token). ``note`` is the one record
of traffic (``traffic.note``), which the watch moves into the store for the idle timeout.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from svc_host.errors import SvcError
from svc_host.runtime.ports import Ports
from svc_host.sessions import files, secrets, traffic
from svc_host.sessions.target import SessionTarget

if TYPE_CHECKING:
    from svc_host.plugin_core.records import SessionKindSpec
    from svc_host.store.tables import InteractiveSessionRecord
    from svc_host.transports.base import Transport

READY = "ready"


def kind_headers(spec: SessionKindSpec | None, secret: str) -> dict[str, str]:
    """The headers the kind asks the way in to add, with ``{secret}`` replaced (exact token, never formatted)."""
    if spec is None:
        return {}
    return {name: value.replace("{secret}", secret) for name, value in spec.proxy_headers.items()}


def target_of(
    transport: Transport, row: InteractiveSessionRecord, secret: str, headers: Mapping[str, str]
) -> SessionTarget | None:
    """The target of a session whose guard's endpoint is known; ``None`` before."""
    host, port = row.node_host, row.node_port
    if host is None or port is None:
        return None
    return SessionTarget(
        dial=functools.partial(transport.open_tcp, host, port),
        secret=secret,
        headers=dict(headers),
        endpoint=f"{host}:{port}",
    )


async def resolve(ports: Ports, cluster: str, job_id: str) -> SessionTarget | None:
    """The target of session (cluster, job id) when it is ready; ``None`` for no such session, one not ready
    (or ended), or a cluster out of reach (the origin answers in words)."""
    from svc_host.store import sessions as repo

    row = await ports.store.run(repo.find_session, cluster, job_id)
    if row is None or row.state != READY:
        return None
    try:
        transport = ports.transport(cluster)
        if not isinstance(transport, files.SessionFiles):
            return None
        secret = await secrets.secret_of(transport, cluster, job_id, row.session_dir)
        spec = ports.plugins.session_kinds().get(row.kind)
    except SvcError:
        return None
    return target_of(transport, row, secret, kind_headers(spec, secret))


def resolver(ports: Ports) -> Callable[[str, str], Awaitable[SessionTarget | None]]:
    """``resolve`` bound to ``ports``: what ``app.state.resolve_session`` is."""

    async def resolving(cluster: str, job_id: str) -> SessionTarget | None:
        return await resolve(ports, cluster, job_id)

    return resolving


note = traffic.note
"""What ``app.state.note_session_traffic`` is: the proxy's traffic, for the idle timeout."""


def entry_url(server: str, cluster: str, job_id: str, open_path: str, code: str) -> str:
    """The one-time address that opens a session: ``server`` (``http://name:port``), the session's base path, the
    kind's ``open_path`` and the entry code, which the origin trades for the session's cookie."""
    from urllib.parse import quote, urlencode

    from svc_host.sessions.entry import cookie_path
    from svc_host.sessions.origin import CODE_QUERY

    return f"{server.rstrip('/')}{cookie_path(cluster, job_id)}{quote(open_path)}?{urlencode({CODE_QUERY: code})}"


def server_address(host: str, port: int, scheme: str = "http") -> str:
    """``scheme://host:port``, an IPv6 address in brackets."""
    name = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"{scheme}://{name}:{port}"
