"""Request dependencies shared by the routers."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Annotated

from fastapi import Depends, Request

from svc_host.concurrency.shared_reads import SharedReads
from svc_host.host import Host
from svc_host.plugin_core.view import PluginHost


async def get_host(request: Request) -> Host:
    """The app's ``Host``. A coroutine, so FastAPI resolves it on the event loop: a plain function dependency is
    run in a worker thread, a thread hop on every request."""
    host: Host = request.app.state.host
    return host


HostDep = Annotated[Host, Depends(get_host)]
"""Use as a parameter type: ``async def handler(host: HostDep) -> ...``."""

PluginHostDep = Annotated[PluginHost, Depends(get_host)]
"""A plugin's route parameter type (``svc_host.plugin.HostDep``): the server's host as plugins see it."""


async def get_shared_reads(request: Request) -> SharedReads[Hashable, bytes]:
    """The app's shared reads (``svc_host.concurrency.shared_reads``): encoded answers of read-only routes that
    concurrent requests with the same parameters share."""
    state = request.app.state
    reads: SharedReads[Hashable, bytes] | None = getattr(state, "shared_reads", None)
    if reads is None:
        reads = state.shared_reads = SharedReads()
    return reads


SharedReadsDep = Annotated[SharedReads[Hashable, bytes], Depends(get_shared_reads)]
