"""``/api/config/ssh/profiles``: SSH profiles and their mounts. Every change makes the transports follow."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from starlette.concurrency import run_in_threadpool

from svc_host.api.deps import HostDep
from svc_host.api.params import error_responses
from svc_host.domain.profiles import Mount, SSHProfile, check_exclude_patterns
from svc_host.errors import ConfigError
from svc_host.host import Host
from svc_host.settings.profiles import UPDATABLE_FIELDS, check_profile_name, refuse_unknown_host
from svc_host.settings.secrets import mask_values

router = APIRouter(prefix="/api/config/ssh/profiles", tags=["profiles"])

T = TypeVar("T")


class ProfileCreate(SSHProfile):
    """A new profile: ``name`` plus the SSH profile fields; ``hostname`` (or an ``ssh_host`` alias) is required."""

    name: str

    @field_validator("name")
    @classmethod
    def _profile_name(cls, value: str) -> str:
        """Said against ``name`` (the form shows it by that field), in the words the store's own check uses."""
        try:
            check_profile_name(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value


async def _change(host: Host, work: Callable[..., T], *args: Any) -> T:
    """Run a store change off the event loop (it fsyncs), then rebuild transports from the new profiles; a new
    server default cluster is told to every open dashboard at once (``server.default_changed``)."""
    watch = host.default_watch  # made before the change: it knows the default of before
    result = await run_in_threadpool(work, *args)
    await host.reload_profiles()
    watch.check()
    return result


def _profile_json(profile: SSHProfile) -> dict[str, Any]:
    """The profile as JSON, its env var values ``<redacted>`` (a PUT sending them back keeps them)."""
    return {**profile.model_dump(mode="json"), "env_vars": mask_values(profile.env_vars)}


@router.get("")
def list_profiles(host: HostDep) -> dict[str, Any]:
    """``{current, profiles}`` as the server sees them (``SVC_SSH_*`` applied); ``current`` is ``""`` for none."""
    config = host.profiles.host_config(env=os.environ if host.read_env else None)
    return {
        "current": config.current_profile or "",
        "profiles": {name: _profile_json(profile) for name, profile in sorted(config.profiles.items())},
    }


@router.post("", responses=error_responses(409, 422, 500))
async def create_profile(host: HostDep, body: ProfileCreate) -> dict[str, Any]:
    """Create a profile (409 if the name exists, 422 for an invalid name or missing hostname).

    ``accept_unknown_host: true`` is refused (422) like in an update: host key checking stays on over the API."""
    refuse_unknown_host(body.accept_unknown_host)
    profile = SSHProfile.model_validate(body.model_dump(exclude={"name"}))
    return _profile_json(await _change(host, host.profiles.create, body.name, profile))


@router.put("/{name}", responses=error_responses(404, 422, 500))
async def update_profile(host: HostDep, name: str, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Apply hostname, username, key_filename, port, description, ssh_host, proxy_jump and env_vars.

    Other keys are ignored, except ``accept_unknown_host: true``, refused (422) like in a create."""
    refuse_unknown_host(body.get("accept_unknown_host"))
    _check_changes(host, name, body)
    return _profile_json(await _change(host, host.profiles.update, name, body))


def _check_changes(host: Host, name: str, body: dict[str, Any]) -> None:
    """A bad value is a 422 naming its field in words (``errors``: "port: must be at most 65535"), as a create's
    is, so the edit form says it under the field; the store checks again under its lock."""
    changes = {key: value for key, value in body.items() if key in UPDATABLE_FIELDS and key != "env_vars"}
    try:
        SSHProfile.model_validate({**host.profiles.get(name).model_dump(), **changes})
    except ValidationError as exc:
        raise RequestValidationError([{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]) from None


@router.delete("/{name}", responses=error_responses(404, 500))
async def delete_profile(host: HostDep, name: str) -> dict[str, bool]:
    """Delete a profile and its mounts."""
    await _change(host, host.profiles.delete, name)
    return {"ok": True}


@router.post("/{name}/activate", responses=error_responses(404, 500))
async def activate_profile(host: HostDep, name: str) -> dict[str, bool]:
    """Make the profile current, the server's default cluster (``SVC_SSH_PROFILE`` / ``SVC_SSH_HOSTNAME`` still win
    where set); ``local`` makes this machine's Slurm the default again."""
    await _change(host, host.profiles.activate, name)
    return {"ok": True}


@router.post("/{name}/mounts", responses=error_responses(404, 409, 422, 500))
async def add_mount(host: HostDep, name: str, body: Mount) -> dict[str, Any]:
    """Add a mount; its local directory must exist and is stored resolved."""
    mount = await _change(host, host.profiles.add_mount, name, body)
    return mount.model_dump(mode="json")


class MountExclude(BaseModel):
    """A mount's exclude patterns, all of them: rsync patterns syncs never upload nor delete (``[]``: none)."""

    model_config = ConfigDict(extra="forbid")

    exclude: list[str]

    @field_validator("exclude")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        """Said against ``exclude`` (the form shows it under that field), in the mount's own words."""
        return check_exclude_patterns(value)


@router.put("/{name}/mounts/{mount_name}/exclude", responses=error_responses(404, 422, 500))
async def set_mount_exclude(host: HostDep, name: str, mount_name: str, body: MountExclude) -> dict[str, Any]:
    """Replace a mount's exclude patterns (``svc profile mount exclude`` over REST); answers the Mount."""
    mount = await _change(host, host.profiles.set_mount_exclude, name, mount_name, body.exclude)
    return mount.model_dump(mode="json")


@router.delete("/{name}/mounts/{mount_name}", responses=error_responses(404, 500))
async def remove_mount(host: HostDep, name: str, mount_name: str) -> dict[str, bool]:
    """Remove a mount (its local files are left alone)."""
    await _change(host, host.profiles.remove_mount, name, mount_name)
    return {"ok": True}
