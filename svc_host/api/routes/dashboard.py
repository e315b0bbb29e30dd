"""Read-only helpers the dashboard needs beyond the spec's endpoints; any API client may use them.

- ``POST /api/scripts/preview``: the batch script a job definition renders to (nothing is submitted).
- ``GET /api/jobs/{job_id}/script``: the script Slurm keeps for a job (``scontrol write batch_script``).
- ``POST /api/config/ssh/profiles/{name}/test``: connect and run sinfo; a failure is a result with a fix-it message.
- ``GET /api/files/inspect``: what a sync or a mirror of a mount would change.
- ``POST /api/files/mirror``: a mirror (deleting on the cluster what is gone locally), preflighted and capped.
- ``GET /api/config/layers``: every configuration value with the layer it comes from.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from svc_host.api.cluster import ClusterDep
from svc_host.api.deps import HostDep
from svc_host.api.params import JobId, error_responses, sync_error_responses
from svc_host.api.routes.files import no_profile, profile_of, scrub, scrubbed, transport_query, without_local
from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.domain.submission import JobDefinition
from svc_host.errors import NotConfiguredError, NotFoundError, SyncError, TransportError
from svc_host.host import Host
from svc_host.plugin_core.settings import render_job
from svc_host.settings.config import config_layers
from svc_host.settings.mounts import find_mount, guarded_paths, refuse_guarded_root
from svc_host.settings.secrets import REDACTED, mask_config
from svc_host.transports.base import SlurmTransport

router = APIRouter(prefix="/api", tags=["dashboard"])

PROFILE_TEST_SECONDS = 20.0
EXPORT_LINE = re.compile(r"^(\s*export\s+[A-Za-z_][A-Za-z0-9_]*=).*$", re.MULTILINE)
"""The job environment the renderer writes (``export NAME=value``): values are where tokens live, never shown."""


# -- scripts ----------------------------------------------------------------------------------------------


@router.post("/scripts/preview", responses=error_responses(422, 500, 503))
def preview_script(host: HostDep, body: JobDefinition) -> dict[str, str]:
    """Render a job definition (a ``command`` or a ``script``) with its renderer (``renderer``, else the
    configuration's ``rendering.renderer``); submits nothing."""
    rendered = render_job(host.plugins, body, host.config())
    return {"script": rendered.text, "stdout_path": rendered.stdout_path, "stderr_path": rendered.stderr_path}


@router.get("/jobs/{job_id}/script", responses=error_responses(400, 404, 502, 503))
async def job_script(host: HostDep, job_id: JobId, cluster: ClusterDep) -> dict[str, str]:
    """The batch script of a job, as long as Slurm still keeps it (404 once it is gone)."""
    transport = host.transport(cluster)
    if not isinstance(transport, SlurmTransport):
        raise NotFoundError(f"the transport {transport.name!r} cannot read batch scripts")
    result = await transport.run(["scontrol", "write", "batch_script", job_id, "-"])
    if result.exit_code != 0 or not result.stdout.strip():
        raise NotFoundError(f"Slurm no longer keeps the batch script of job {job_id}")
    return {"script": EXPORT_LINE.sub(rf"\1{REDACTED}", result.stdout)}


# -- SSH profiles -----------------------------------------------------------------------------------------


@router.post("/config/ssh/profiles/{name}/test", responses=error_responses(404))
async def test_profile(host: HostDep, name: str) -> dict[str, Any]:
    """Connect with profile ``name`` and run sinfo: ``{ok, message, partitions}``; 404 for an unknown profile."""
    profiles = host.transports.config.profiles
    if name not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise NotFoundError(f"SSH profile {name!r} not found; known profiles: {known}")
    try:
        snapshots = await asyncio.wait_for(host.transport(name).resources(), PROFILE_TEST_SECONDS)
    except TimeoutError:
        message = f"no answer from {name!r} within {PROFILE_TEST_SECONDS:g}s: check hostname, port and proxy_jump"
        return {"ok": False, "message": message, "partitions": []}
    except TransportError as exc:
        return {"ok": False, "message": _diagnosis(name, exc, profiles[name]), "partitions": []}
    except (OSError, ValueError) as exc:  # the key file: unreadable (OSError) or not a key (asyncssh's ValueError)
        message = f"the private key of {name!r} cannot be used: {exc}"
        return {"ok": False, "message": _scrub_key(message, profiles[name]), "partitions": []}
    partitions = [snapshot.partition for snapshot in snapshots]
    return {
        "ok": True,
        "message": f"{name!r} answers; sinfo lists {len(partitions)} partition(s)",
        "partitions": partitions,
    }


def _diagnosis(name: str, exc: TransportError, profile: SSHProfile) -> str:
    """The transport's first line (its messages name host key and key problems), local paths replaced."""
    if exc.exit_code == 127:
        return f"the login node of {name!r} has no `sinfo` on the PATH of a non-interactive shell"
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "failed without a message")
    return _scrub_key(first, profile)


def _scrub_key(message: str, profile: SSHProfile) -> str:
    return scrub(message, {path: "<SSH_KEY_PATH>" for path in (profile.key_filename,) if path})


# -- mounts: inspect and mirror ---------------------------------------------------------------------------


def _server_mount(host: Host, name: str, transport: str | None) -> tuple[str, Mount]:
    """Mount ``name`` of the cluster's profile (the server's by default); 403 when its local root reaches svc's
    state or config directory or ``~/.ssh``, as browse, read and sync answer: a mirror would upload the token, an
    inspection list its name."""
    profile = profile_of(host, transport)
    if profile is None:
        raise NotConfiguredError(no_profile(transport))
    profile_name = profile[0]
    found = find_mount(host.transports.config.profiles, profile_name, name)
    refuse_guarded_root(found, guarded_paths(host.paths))
    return profile_name, found


@router.get("/files/inspect", responses=error_responses(404, 502, 503))
async def inspect_mount(
    host: HostDep,
    mount: str = Query(description="Mount name in the profile."),
    max_paths: int = Query(200, ge=1, le=1000, description="List at most this many paths per list."),
    transport: str | None = transport_query(),
) -> dict[str, Any]:
    """What a sync would send, what a mirror would delete, and files uploaded earlier but gone locally."""
    profile_name, found = _server_mount(host, mount, transport)
    try:
        report = await host.sync_backend(profile_name).inspect(found, max_paths=max_paths)
    except SyncError as exc:
        raise scrubbed(exc, {found.local: "<LOCAL_PATH>"}) from None
    return without_local(report.model_dump(mode="json"), found)


class MirrorRequest(BaseModel):
    """POST /api/files/mirror: ``dry_run`` lists the deletions; the real run deletes at most ``max_delete``."""

    model_config = ConfigDict(extra="forbid")

    mount: str
    dry_run: bool = True
    max_delete: int = Field(default=100, ge=1, le=100_000)
    adopt: bool = False
    """Claim a cluster directory holding files svc never synced (a first mirror there is refused otherwise)."""
    force: bool = False
    """Take over a mount another machine synced last; with ``dry_run`` nothing changes (the takeover's list)."""


@router.post("/files/mirror", responses=sync_error_responses(404, 503))
async def mirror_mount(host: HostDep, body: MirrorRequest, transport: str | None = transport_query()) -> dict[str, Any]:
    """Make the cluster copy equal to the local tree. Refused (502, nothing changed) past ``max_delete``."""
    profile_name, found = _server_mount(host, body.mount, transport)
    try:
        result = await host.sync_backend(profile_name).sync(
            found, dry_run=body.dry_run, delete=True, max_delete=body.max_delete, adopt=body.adopt, force=body.force
        )
    except SyncError as exc:
        raise scrubbed(exc, {found.local: "<LOCAL_PATH>"}) from None
    return without_local(result.model_dump(mode="json"), found)


# -- configuration layers ---------------------------------------------------------------------------------


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and key != "env_vars":
            flat.update(_flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


@router.get("/config/layers")
def config_layer_values(host: HostDep) -> dict[str, Any]:
    """``{layers: [{source, origin, keys, ignored?}], values: [{key, value, source}]}``: the merged value of every
    key and the highest layer that sets it (``default`` when none does), lowest precedence first; ``ignored`` says
    why a present project file adds nothing (it is not trusted)."""
    layers = config_layers(host.paths, env=os.environ if host.read_env else None)
    values = _flatten(mask_config(host.config().model_dump(mode="json")))
    sources = dict.fromkeys(values, "default")
    described = []
    for layer in layers:
        keys = sorted(_flatten(layer.data))
        for key in keys:
            sources[key] = layer.source
        entry = {"source": layer.source, "origin": layer.origin, "keys": keys}
        described.append(entry if layer.ignored is None else {**entry, "ignored": layer.ignored})
    return {
        "layers": described,
        "values": [{"key": key, "value": values[key], "source": sources.get(key, "default")} for key in values],
    }
