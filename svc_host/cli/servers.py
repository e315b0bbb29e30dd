"""``svc serve`` (REST API and dashboard) and ``svc mcp`` (MCP tools over stdio)."""

from __future__ import annotations

import click


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--log-level", default="info", show_default=True)
def serve(host: str, port: int, log_level: str) -> None:
    """Run the REST API (OpenAPI docs at /docs)."""
    import uvicorn

    from svc_host.api.app import create_app

    uvicorn.run(create_app(), host=host, port=port, log_level=log_level)


@click.command()
def mcp() -> None:
    """Serve the MCP tools over stdio (for AI agents)."""
    from svc_host.mcp.server import create_server

    create_server().run("stdio")
