"""A real uvicorn server for an app, in the test's own event loop, on a free loopback port.

In-process clients (``httpx.ASGITransport``) read a whole response before returning it, so a stream that never
ends (``GET /api/events``) needs a socket: this serves the app on one, lifespan included.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI


@asynccontextmanager
async def live_server(app: FastAPI) -> AsyncIterator[str]:
    """Serve ``app`` until the block ends; yields its base URL (``http://127.0.0.1:<port>``)."""
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("the test server stopped before it started")
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        from svc_host.runtime.events import event_hub

        event_hub().end_streams()  # what SIGTERM does in ``svc serve``: open event streams end first
        server.should_exit = True
        await asyncio.wait_for(task, 30)
