"""``svc serve`` (REST API and dashboard) and ``svc mcp`` (MCP tools over stdio)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import socket

    import uvicorn
    from fastapi import FastAPI

    from svc_host.api.security import ServerSecurity
    from svc_host.mcp.server import Loaded
    from svc_host.settings.paths import SvcPaths


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--log-level", default="info", show_default=True)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name this server answers to, e.g. the one a reverse proxy forwards (also SVC_ALLOWED_HOSTS=a,b).",
)
@click.option(
    "--allowed-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    help="Another origin (https://name[:port]) allowed to change state (also SVC_ALLOWED_ORIGINS=a,b).",
)
@click.option("--no-auth", is_flag=True, help="Serve without a token: loopback only, with a warning.")
@click.option(
    "--sessions-port",
    type=click.IntRange(0, 65535),
    envvar="SVC_SESSIONS_PORT",
    help="Port of the interactive sessions' own origin (default: --port + 1, skipped with a warning when busy; "
    "0: no sessions). Also SVC_SESSIONS_PORT.",
)
def serve(
    host: str,
    port: int,
    log_level: str,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    no_auth: bool,
    sessions_port: int | None,
) -> None:
    """Run the dashboard and the REST API (OpenAPI docs at /docs).

    Every API request needs a token: SVC_API_TOKEN, or one generated and kept 0600 in the state directory.
    On a terminal, svc serve prints a login link with a one-time code (good for 10 minutes). Interactive sessions
    are served on a second port, an origin of their own (--sessions-port).
    """
    import asyncio
    import logging

    import uvicorn

    from svc_host.api.app import create_app
    from svc_host.api.launch import server_security, startup_lines
    from svc_host.api.security import TOKEN_QUERY
    from svc_host.api.sessions import LOGIN_QUERY
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.secrets import RedactQueryFilter

    paths = SvcPaths.from_env()
    security = server_security(
        host,
        no_auth=no_auth,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        env=os.environ,
        token_file=paths.api_token_file,
    )
    app = create_app(security=security)
    sessions = app.state.sessions
    to_terminal = sys.stderr.isatty()

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:  # after uvicorn's own banner, so the login link is the last thing on screen
                code = await asyncio.to_thread(sessions.new_code) if sessions and to_terminal else None
                lines = startup_lines(
                    security, bind_host=host, port=port, token_file=paths.api_token_file, login_code=code
                )
                if getattr(app.state, "sessions_port", None):
                    where = f"{host}:{app.state.sessions_port}"
                    lines.append(f"Interactive sessions: their own origin on {where} (links from the dashboard).")
                click.echo("\n".join(lines), err=True)

    logging.getLogger("uvicorn.access").addFilter(RedactQueryFilter(LOGIN_QUERY, TOKEN_QUERY))
    servers: list[tuple[uvicorn.Server, socket.socket | None]] = [
        (Server(uvicorn.Config(app, host=host, port=port, log_level=log_level)), None)
    ]
    chosen = sessions_port is not None
    sessions_port = (port + 1 if port else 0) if sessions_port is None else sessions_port
    listening = bound(host, sessions_port) if sessions_port else None
    if listening is not None:
        origin = sessions_server(app, security, paths, host=host, port=sessions_port, log_level=log_level)
        servers.append((origin, listening))
    elif sessions_port and chosen:
        raise click.ClickException(f"cannot listen on {host}:{sessions_port} for sessions: the port is in use")
    elif sessions_port:
        click.echo(
            f"svc serve: warning: port {sessions_port} is in use: interactive sessions are off "
            "(choose their port with --sessions-port)",
            err=True,
        )
    asyncio.run(serve_together(servers))


def bound(host: str, port: int) -> socket.socket | None:
    """A socket bound to ``host:port`` for a server to listen on, or None when the address is taken."""
    import socket

    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        return None
    return sock


def sessions_server(
    app: FastAPI, security: ServerSecurity, paths: SvcPaths, *, host: str, port: int, log_level: str
) -> uvicorn.Server:
    """The sessions' origin on its own port, in the dashboard's process (it reaches the sessions through the
    dashboard's Host). The dashboard's API finds it as ``app.state.sessions_origin`` (to mint entry codes) and
    ``app.state.sessions_port``; the origin asks ``app.state.resolve_session(cluster, job_id)`` for a session's
    target and tells ``app.state.note_session_traffic(cluster, job_id)`` of its traffic, when they are set."""
    import logging

    import uvicorn

    from svc_host.sessions.entry import KEY_FILE, load_or_create_key
    from svc_host.sessions.origin import CODE_QUERY, SessionsOrigin
    from svc_host.sessions.target import SessionTarget
    from svc_host.settings.secrets import RedactQueryFilter

    async def resolve(cluster: str, job_id: str) -> SessionTarget | None:
        found = getattr(app.state, "resolve_session", None)
        return await found(cluster, job_id) if found is not None else None

    def note(cluster: str, job_id: str) -> None:
        noted = getattr(app.state, "note_session_traffic", None)
        if noted is not None:
            noted(cluster, job_id)

    origin = SessionsOrigin(
        resolve, key=load_or_create_key(paths.state_dir / KEY_FILE), host_allowed=security.host_allowed, on_traffic=note
    )
    app.state.sessions_origin = origin
    app.state.sessions_port = port
    logging.getLogger("uvicorn.access").addFilter(RedactQueryFilter(CODE_QUERY))
    config = uvicorn.Config(
        origin, host=host, port=port, log_level=log_level, ws="wsproto", server_header=False, date_header=False
    )  # the apps' own Server and Date headers go through
    return uvicorn.Server(config)


async def serve_together(servers: list[tuple[uvicorn.Server, socket.socket | None]]) -> None:
    """Run the servers (each on its socket, or binding its own) in one event loop until one stops (Ctrl-C reaches
    the last one started), then stop them all."""
    import asyncio

    tasks = [asyncio.create_task(server.serve([sock] if sock else None)) for server, sock in servers]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for server, _ in servers:
        server.should_exit = True
    await asyncio.gather(*tasks)


@click.command("login-link")
@click.option(
    "--url", default="http://127.0.0.1:8000/", show_default=True, help="The address of the running svc serve."
)
def login_link(url: str) -> None:
    """Print a new login link for the dashboard: one browser, within 10 minutes.

    The code is kept in svc's store with the API token's key (SVC_API_TOKEN, or the token file), so it works with
    the svc serve that shares both.
    """
    from urllib.parse import urlsplit, urlunsplit

    from svc_host.api.sessions import LOGIN_QUERY, WebSessions
    from svc_host.api.token_file import load_or_create_token
    from svc_host.settings.paths import SvcPaths
    from svc_host.store.database import Store

    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise click.BadParameter(
            "give the address svc serve listens on, e.g. http://127.0.0.1:8000/", param_hint="--url"
        )
    paths = SvcPaths.from_env()
    token = os.environ.get("SVC_API_TOKEN") or load_or_create_token(paths.api_token_file)
    store = Store(paths.database_url)
    try:
        code = WebSessions(lambda: store, token).new_code()
    finally:
        store.close()
    click.echo(urlunsplit((parts.scheme, parts.netloc, parts.path or "/", f"{LOGIN_QUERY}={code}", "")))


@click.command()
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="What reaches stderr; info shows every SSH channel (asyncssh).",
)
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Another directory the workflow tools may read and write files in (repeatable), besides the working "
    "directory, the workflows directory and the mounts' local directories.",
)
def mcp(log_level: str, roots: tuple[Path, ...]) -> None:
    """Serve the MCP tools over stdio (for AI agents)."""
    import logging

    import anyio

    from svc_host.mcp.handoff import begin

    def load() -> Loaded:
        from svc_host.mcp.server import load

        return load(roots)

    def warm(loaded: Loaded) -> None:
        from svc_host.mcp.server import prepare

        prepare(loaded.host)

    handoff = begin(load, warm)  # the client's first frame, answered while the SDK and the Host load
    server = handoff.loaded().server
    # The SDK sets the root logger to INFO when the server is built; an agent's stderr wants warnings only.
    logging.getLogger().setLevel(log_level.upper())
    anyio.run(server.run_stdio_async, handoff.consumed, handoff.answered)
