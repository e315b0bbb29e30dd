"""``svc serve`` (REST API and dashboard) and ``svc mcp`` (MCP tools over stdio)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from svc_host.mcp.server import Loaded


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
def serve(
    host: str,
    port: int,
    log_level: str,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    no_auth: bool,
) -> None:
    """Run the dashboard and the REST API (OpenAPI docs at /docs).

    Every API request needs a token: SVC_API_TOKEN, or one generated and kept 0600 in the state directory.
    On a terminal, svc serve prints a login link with a one-time code (good for 10 minutes).
    """
    import asyncio
    import logging
    import socket

    import uvicorn

    from svc_host.api.app import create_app
    from svc_host.api.launch import RedactTokenFilter, server_security, startup_lines
    from svc_host.settings.paths import SvcPaths

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
                click.echo("\n".join(lines), err=True)

    logging.getLogger("uvicorn.access").addFilter(RedactTokenFilter())
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level)
    Server(config).run()


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
