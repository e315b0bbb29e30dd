"""The site's REST route, ``GET /api/site/account`` (behind svc's token like every ``/api`` route)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from svc_host.plugin import HostDep

from svc_example_site.usage import site_usage

router = APIRouter(prefix="/api/site", tags=["site"])


@router.get("/account")
async def get_account_usage(host: HostDep) -> dict[str, Any]:
    """The site account's fair-share standing (``sshare``); 404 when Slurm does not know the account, 422 while
    the site is not configured."""
    return await site_usage(host)
