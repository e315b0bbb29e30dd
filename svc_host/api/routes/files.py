"""``/api/files``: the server's mounts, browse and read under a mount's local root, sync (REST spec "Files and mounts").

Every route takes an optional ``?transport=<cluster>``: the mounts are that SSH profile's (``local``, this machine's
Slurm, has none); without it they are the server's profile's, its current one (``SVC_SSH_PROFILE`` /
``SVC_SSH_HOSTNAME`` applied), so a tab showing another cluster browses that cluster's mounts. No answer of
these endpoints carries a local path, except ``/mounts/config`` and the mount echoed by ``POST /mounts``,
which the spec defines with their local directory; error details have local paths replaced by placeholders.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from svc_host.api.cluster import named_cluster
from svc_host.api.deps import HostDep
from svc_host.api.params import error_responses, sync_error_responses
from svc_host.domain.profiles import PROFILE_NAME_PATTERN, Mount, SSHProfile
from svc_host.errors import ConfigError, InvalidRequestError, NotConfiguredError, NotFoundError, SyncError
from svc_host.host import Host
from svc_host.settings.mounts import (
    PathForbiddenError,
    clean_relative,
    find_mount,
    guarded_paths,
    list_directory,
    mount_profile,
    read_file,
    refuse_guarded_root,
)
from svc_host.settings.profiles import ProfileStore

router = APIRouter(prefix="/api/files", tags=["files"])

NO_PROFILE = (
    "no SSH profile is configured on the server; create one (POST /api/config/ssh/profiles) and activate it, "
    "or start the server with SVC_SSH_PROFILE or SVC_SSH_HOSTNAME"
)


class SyncRequest(BaseModel):
    """POST /api/files/sync: the mount of the server's profile to copy to the cluster (additively)."""

    model_config = ConfigDict(extra="forbid")

    mount: str
    adopt: bool = False
    """Claim a remote directory that already holds files svc did not put there (see ``SyncBackend.sync``)."""
    force: bool = False
    """Take over a mount another machine synced last (refused otherwise, 502 naming that machine)."""
    dry_run: bool = False
    """Change nothing; answer what the sync would send (``status: "dry_run"`` and the sync report)."""


def transport_query() -> Any:
    """``?transport=``: the cluster whose SSH profile's mounts a request is about; the server's by default."""
    return Query(
        None,
        pattern=PROFILE_NAME_PATTERN,
        description="The cluster: an SSH profile name or `local` (no mounts). Default: the server's profile.",
    )


def no_profile(transport: str | None) -> str:
    """Why there are no mounts to act on: the server has no profile, or the named cluster is not an SSH profile."""
    if transport is None:
        return NO_PROFILE
    return f"cluster {transport!r} is not an SSH profile (this machine's Slurm reads files where they are): no mounts"


def profile_name_of(host: Host, transport: str | None) -> str | None:
    """The name of the SSH profile whose mounts a request is about: the one the cluster ``transport`` uses (its
    own, or its spec's ``mounts_of``; 404 when no such cluster is on offer; ``None`` for one without mounts, such
    as ``local``), else the server's current profile (``None`` when there is none)."""
    if transport is None:
        return host.transports.config.current_profile
    spec = host.transports.spec(named_cluster(host, transport))
    return mount_profile(spec) if spec.mounts else None


def profile_of(host: Host, transport: str | None) -> tuple[str, SSHProfile] | None:
    """The SSH profile whose mounts a request is about (see ``profile_name_of``), or ``None``."""
    profiles = host.transports.config.profiles
    name = profile_name_of(host, transport)
    if name is None or name not in profiles:
        return None
    return name, profiles[name]


def _configured_profile(host: Host, transport: str | None) -> tuple[str, SSHProfile]:
    found = profile_of(host, transport)
    if found is None:
        raise NotConfiguredError(no_profile(transport))
    return found


def _browsable_mount(host: Host, name: str, transport: str | None) -> Mount:
    """Browse and read answer 404 (not 503) when there is no profile, 403 for a mount of a guarded place
    (a mount added before the refusal, or through the profiles API)."""
    found = profile_of(host, transport)
    if found is None:
        raise NotFoundError(f"Mount '{name}' not found: {no_profile(transport)}")
    return _unguarded(host, find_mount(host.transports.config.profiles, found[0], name))


def _unguarded(host: Host, mount: Mount) -> Mount:
    """``mount``, unless its local root reaches svc's state or config directory or ``~/.ssh`` (403): a browser
    session must not read the API token or the user's keys through it, nor have them synced to the cluster."""
    refuse_guarded_root(mount, guarded_paths(host.paths))
    return mount


def scrub(message: str, placeholders: dict[str, str]) -> str:
    """``message`` with every given local path replaced by its placeholder (longest paths first)."""
    for path in sorted((path for path in placeholders if len(path) > 1), key=len, reverse=True):
        message = message.replace(path, placeholders[path])
    return message


def scrubbed(exc: SyncError, placeholders: dict[str, str]) -> SyncError:
    """``exc`` with local paths replaced (its ``remedy`` kept), to raise ``from None``."""
    return SyncError(scrub(str(exc), placeholders), remedy=exc.remedy)


def without_local(data: dict[str, Any], mount: Mount) -> dict[str, Any]:
    """A sync report minus the local directory (no answer of the files API names local paths)."""
    data.pop("local", None)
    return {k: scrub(v, {mount.local: "<LOCAL_PATH>"}) if isinstance(v, str) else v for k, v in data.items()}


def _local_placeholders(profile: SSHProfile | None, mount: Mount | None) -> dict[str, str]:
    found: dict[str, str] = {}
    if profile is not None:
        for path, label in ((profile.key_filename, "<SSH_KEY_PATH>"), (profile.known_hosts, "<KNOWN_HOSTS_PATH>")):
            if path:
                found[path] = found[os.path.expanduser(path)] = label
    if mount is not None:
        found[mount.local] = found[os.path.realpath(os.path.expanduser(mount.local))] = "<LOCAL_PATH>"
    found[os.path.expanduser("~")] = "~"
    return found


def decode_text(data: bytes, where: str) -> str:
    """File content as text: a NUL byte means binary (400); other invalid UTF-8 becomes U+FFFD."""
    if b"\0" in data:
        raise InvalidRequestError(f"{where} is not a text file (binary content)")
    return data.decode("utf-8", errors="replace")


# -- mounts -------------------------------------------------------------------------------------------------


@router.get("/mounts", responses=error_responses(404))
def list_mounts(host: HostDep, transport: str | None = transport_query()) -> list[dict[str, str]]:
    """Name and cluster directory of every mount of the profile; never the local directory."""
    found = profile_of(host, transport)
    return [{"name": mount.name, "remote": mount.remote} for mount in (found[1].mounts if found else [])]


@router.get("/mounts/config", responses=error_responses(404))
def list_mount_config(host: HostDep, transport: str | None = transport_query()) -> list[dict[str, Any]]:
    """Every mount of the profile with its local directory."""
    found = profile_of(host, transport)
    return [mount.model_dump(mode="json") for mount in (found[1].mounts if found else [])]


def _add_mount(store: ProfileStore, profile_name: str, profile: SSHProfile, mount: Mount) -> Mount:
    try:
        if profile_name not in store.list():
            # The profile SVC_SSH_HOSTNAME defines is stored with its first mount (one write), so the mount
            # outlives the process; the environment's settings keep winning (see ProfileStore.host_config).
            return store.create(profile_name, profile.model_copy(update={"mounts": [mount]})).mounts[0]
        return store.add_mount(profile_name, mount)
    except ConfigError as exc:
        raise ConfigError(scrub(str(exc), {repr(mount.local): "<LOCAL_PATH>", mount.local: "<LOCAL_PATH>"})) from None


@router.post("/mounts", responses=error_responses(404, 409, 422, 503))
async def add_mount(host: HostDep, body: Mount, transport: str | None = transport_query()) -> dict[str, Any]:
    """Add a mount to the server's profile (the one SVC_SSH_HOSTNAME defines too): 409 name taken, 422 invalid
    (a local directory that is, holds or lies in svc's state or config directory or ~/.ssh too), 503 no profile."""
    profile_name, profile = _configured_profile(host, transport)
    if all(mount.name != body.name for mount in profile.mounts):  # a taken name is a 409 first
        try:
            _unguarded(host, body)
        except PathForbiddenError as exc:
            raise ConfigError(str(exc)) from None
    created = await run_in_threadpool(_add_mount, host.profiles, profile_name, profile, body)
    await host.reload_profiles()
    return created.model_dump(mode="json")


@router.delete("/mounts/{mount_name}", responses=error_responses(404, 503))
async def delete_mount(host: HostDep, mount_name: str, transport: str | None = transport_query()) -> dict[str, str]:
    """Remove a mount of the profile (its files are left alone): 404 unknown, 503 no profile."""
    profile_name, _ = _configured_profile(host, transport)
    find_mount(host.transports.config.profiles, profile_name, mount_name)
    await run_in_threadpool(host.profiles.remove_mount, profile_name, mount_name)
    await host.reload_profiles()
    return {"status": "deleted", "name": mount_name}


# -- browse and read ----------------------------------------------------------------------------------------


@router.get("/browse", responses=error_responses(400, 403, 404))
def browse(
    host: HostDep,
    mount: str = Query(max_length=1000, description="Mount name in the profile."),
    path: str = Query("", description="Directory relative to the mount root; the root by default."),
    transport: str | None = transport_query(),
) -> dict[str, Any]:
    """A directory of the mount: directories first, then files, by name; symlinks say if they can be followed.

    At most 5,000 entries of a directory are read; ``truncated`` is true when it holds more."""
    found = _browsable_mount(host, mount, transport)
    listing = list_directory(found, path)
    return {
        "entries": [entry.as_json() for entry in listing.entries],
        "remote_prefix": found.remote,
        "mount_name": found.name,
        "truncated": listing.truncated,
    }


@router.get("/read", responses=error_responses(400, 403, 404, 413, e413="the file is over 1 MB"))
def read(
    host: HostDep,
    mount: str = Query(max_length=1000, description="Mount name in the profile."),
    path: str | None = Query(None, description="File relative to the mount root."),
    transport: str | None = transport_query(),
) -> dict[str, str]:
    """A text file of the mount (at most 1 MB); binary files (with NUL bytes) are refused with 400."""
    if not path:
        raise InvalidRequestError("path is required: the file to read, relative to the mount root")
    found = _browsable_mount(host, mount, transport)
    shown = clean_relative(path)
    content = decode_text(read_file(found, shown), f"{shown!r} in mount {found.name!r}")
    return {"content": content, "path": shown, "mount": found.name}


# -- sync ---------------------------------------------------------------------------------------------------


@router.post("/sync", responses=sync_error_responses(404, 503))
async def sync_mount(host: HostDep, body: SyncRequest, transport: str | None = transport_query()) -> dict[str, Any]:
    """Copy a mount to the cluster, additively: 404 unknown mount, 502 sync failed or refused (rsync missing too;
    ``remedy`` names the flag that overrides a refusal), 503 no profile. ``dry_run`` changes nothing and answers
    ``{status: "dry_run", mount, files_transferred, transferred_paths, ...}``: what the sync would send."""
    profile_name, profile = _configured_profile(host, transport)
    mount = _unguarded(host, find_mount(host.transports.config.profiles, profile_name, body.mount))
    try:
        result = await host.sync_backend(profile_name).sync(
            mount, dry_run=body.dry_run, adopt=body.adopt, force=body.force
        )
    except SyncError as exc:
        raise scrubbed(exc, _local_placeholders(profile, mount)) from None
    if body.dry_run:
        return {"status": "dry_run", **without_local(result.model_dump(mode="json"), mount)}
    return {"status": "synced", "mount": mount.name}
