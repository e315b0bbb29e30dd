"""MCP tools for mounts: sync_files and inspect_mount (shapes exactly as the MCP spec).

Both need an explicit SSH profile as ``transport`` (no current-profile fallback, ``local`` rejected) and
work only on mounts registered in that profile.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from svc_host.domain.profiles import Mount
from svc_host.errors import InvalidRequestError
from svc_host.host import Host
from svc_host.mcp.context import host_of
from svc_host.mcp.results import tool_result
from svc_host.plugin_core.records import ToolSpec
from svc_host.settings.mounts import find_mount, mount_profile


def _profile(host: Host, transport: str) -> str:
    """The SSH profile whose mounts and sync backend ``transport`` uses (``TransportSpec.mounts_of``)."""
    spec = host.transports.specs().get(transport)
    return transport if spec is None else mount_profile(spec)


def _mount(host: Host, transport: str, mount: str) -> Mount:
    if not transport.strip():
        raise InvalidRequestError(
            "transport is required: the SSH profile whose mount to use (see list_ssh_profiles); "
            "there is no current-profile fallback"
        )
    spec = host.transports.specs().get(transport)
    if spec is not None and not spec.mounts:
        raise InvalidRequestError(
            f"transport={transport!r} ({spec.description or 'not an SSH profile'}) has no mounts to sync; pass the "
            "name of an SSH profile (see list_ssh_profiles)"
        )
    return find_mount(host.transports.config.profiles, _profile(host, transport), mount)


_NOT_IN_SPEC = {"transferred_paths", "transferred_paths_omitted"}
"""The sent files' list REST and the dashboard show; the tool's return is the spec's, field for field."""


@tool_result
async def sync_files(
    ctx: Context,
    transport: str,
    mount: str,
    dry_run: bool = False,
    delete: bool = False,
    max_delete: int = 100,
    adopt: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    host = host_of(ctx)
    found = _mount(host, transport, mount)
    result = await host.sync_backend(_profile(host, transport)).sync(
        found, dry_run=dry_run, delete=delete, max_delete=max_delete, adopt=adopt, force=force
    )
    return result.model_dump(mode="json", exclude=_NOT_IN_SPEC)


@tool_result
async def inspect_mount(ctx: Context, transport: str, mount: str, max_paths: int = 1000) -> dict[str, Any]:
    host = host_of(ctx)
    found = _mount(host, transport, mount)
    report = await host.sync_backend(_profile(host, transport)).inspect(found, max_paths=max_paths)
    return report.model_dump(mode="json")


TOOLS = [
    ToolSpec(
        name="inspect_mount",
        function=inspect_mount,
        description=(
            "Report, without changing anything, what sync_files would do for a mount of an SSH profile "
            "(transport is required; 'local' has no mounts): files_would_transfer, mirror_delete_candidates "
            "(cluster files missing locally: job outputs as well as leftovers, for human review, not a delete "
            "list), stale uploads (uploaded by svc, since deleted locally; stale_uploads_known false means "
            "undetermined, with the reason) and the exclude patterns. Takes no lock, so it may be slightly "
            "stale. Lists are omitted past max_paths (the _omitted flag is set); counts stay exact."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="sync_files",
        function=sync_files,
        description=(
            "Copy a registered mount's local directory to the cluster of an SSH profile with rsync (transport "
            "is required; 'local' has no mounts). Additive by default: nothing on the cluster is deleted. "
            "delete=true mirrors (deletes cluster files missing locally, excluded paths spared) and is refused, "
            "changing nothing, when more than max_delete (>= 1) files and directories would go; run "
            "inspect_mount or dry_run=true first. A mount another machine synced last is refused, even a dry run, "
            "unless force=true, which takes the mount over for this machine (with dry_run=true it changes nothing: "
            "see what the takeover would send first). The first "
            "mirror into a cluster directory that already holds files svc never synced is refused too unless "
            "adopt=true (check with inspect_mount that it is the right directory first)."
        ),
        destructive=True,
    ),
]
