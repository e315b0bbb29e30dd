"""An in-process HTTP client for the REST app, authenticated the way any API client is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx
    from fastapi import FastAPI

    from svc_host.api.security import ServerSecurity

TEST_API_TOKEN = "svc-test-token-not-a-secret"  # noqa: S105 (tests only; real servers never use it)
"""The token of ``security_for_tests()``; real servers use ``SVC_API_TOKEN`` or a generated one."""


def security_for_tests() -> ServerSecurity:
    """The security settings of a test server: token ``TEST_API_TOKEN``, loopback names only."""
    from svc_host.api.security import ServerSecurity

    return ServerSecurity(token=TEST_API_TOKEN)


def asgi_client(app: FastAPI) -> httpx.AsyncClient:
    """A client that reaches ``app`` without a socket, as ``http://localhost`` with the Bearer token."""
    import httpx

    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://localhost",
        headers={"Authorization": f"Bearer {TEST_API_TOKEN}"},
    )
