"""Request dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from svc_host.host import Host


def get_host(request: Request) -> Host:
    host: Host = request.app.state.host
    return host


HostDep = Annotated[Host, Depends(get_host)]
"""Use as a parameter type: ``async def handler(host: HostDep) -> ...``."""
