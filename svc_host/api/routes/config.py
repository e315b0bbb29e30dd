"""``/api/config``: the layered configuration, its files, the server's ``SVC_*`` variables, and project configs."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Response

from svc_host.api.deps import HostDep, SharedReadsDep
from svc_host.api.encoding import encode_json, json_body
from svc_host.api.params import error_responses
from svc_host.api.routes.files import no_profile, profile_name_of, transport_query
from svc_host.domain.profiles import Mount
from svc_host.errors import InvalidRequestError, NotFoundError
from svc_host.host import Host
from svc_host.plugin_core.settings import check_config, shown
from svc_host.settings.config import (
    SvcConfig,
    config_paths,
    init_project_config,
    load_config,
    project_config_file,
    read_project_config,
    reset_user_config,
    save_user_config,
    write_project_config,
)
from svc_host.settings.secrets import mask_config, mask_env_value
from svc_host.settings.warnings import config_warnings

router = APIRouter(prefix="/api/config", tags=["config"])

JsonObject = Annotated[dict[str, Any], Body()]
"""A partial configuration; validated by ``svc_host.settings.config`` so errors name the field (422)."""

ENV_DESCRIPTIONS = {
    "SVC_SSH_PROFILE": "SSH profile the server uses (default: the current profile)",
    "SVC_SSH_HOSTNAME": "direct SSH hostname; defines the profile 'env' and makes it current",
    "SVC_SSH_USERNAME": "direct SSH username (with SVC_SSH_HOSTNAME)",
    "SVC_SSH_KEY": "path to the SSH private key (with SVC_SSH_HOSTNAME)",
    "SVC_SSH_PORT": "SSH port (with SVC_SSH_HOSTNAME; default 22)",
    "SVC_TRANSPORT": "transport the REST API uses (default: the current SSH profile, else local)",
    "SVC_DATABASE_URL": "URL of the job store: sqlite:///... (default: SQLite in the state directory) or postgresql://...",
    "SVC_DISABLE_PLUGINS": "comma-separated plugin names not to load",
    "SVC_PLUGINS_STRICT": "1 makes a plugin that fails to load fatal",
    "SVC_SYSTEM_CONFIG": "path of the system configuration file (default /etc/svc/config.json)",
    "CHAT_WEBHOOK_URL": "chat webhook that receives status notifications",
    "SVC_API_TOKEN": "API token of svc serve (always shown redacted)",
    "SVC_AGENT": "whether svc's SSH commands go through the svc agent: auto (default), manual or off",
}
"""Descriptions of the variables the server knows; ``SVC_<FIELD>[__<FIELD>]`` variables override config keys."""


def _env(host: Host) -> Mapping[str, str] | None:
    return os.environ if host.read_env else None


def _write_failed(exc: OSError) -> HTTPException:
    return HTTPException(status_code=500, detail=f"could not write the configuration: {exc.strerror or exc}")


# -- the layered configuration ------------------------------------------------------------------------


@router.get("", response_model=dict[str, Any])
async def get_config(host: HostDep, reads: SharedReadsDep) -> Response:
    """The merged configuration: system, then user, then project file, then ``SVC_*`` variables.

    Job environment variable values and the webhook URL are ``<redacted>``; a PUT sending them back as
    ``<redacted>`` keeps what is stored. ``warnings`` (not a configuration key) lists what is configured but will
    do nothing, such as a webhook with no plugin installed to deliver it."""

    def merged() -> bytes:
        return encode_json(_with_warnings(host, load_config(host.paths, env=_env(host))))

    async def read() -> bytes:
        return await asyncio.to_thread(merged)

    return json_body(await reads.run(("GET /api/config",), read))


def _with_warnings(host: Host, config: SvcConfig) -> dict[str, Any]:
    return {**mask_config(shown(host.plugins, config)), "warnings": config_warnings(config, host.plugins.delivered())}


@router.put("", responses=error_responses(422, 500))
def put_config(host: HostDep, body: JsonObject) -> dict[str, Any]:
    """Lay a full or partial configuration over the user file; returns the merged configuration (with
    ``warnings``, as GET). ``warnings`` in the body (GET's answer sent back whole) is not configuration: ignored."""

    body = {key: value for key, value in body.items() if key != "warnings"}
    try:
        saved = save_user_config(host.paths, body, env=_env(host), check=functools.partial(check_config, host.plugins))
        return _with_warnings(host, saved)
    except OSError as exc:
        raise _write_failed(exc) from None


@router.get("/paths")
def get_config_paths(host: HostDep) -> list[dict[str, Any]]:
    """The configuration files (system, user, both project candidates) and whether each exists."""

    return config_paths(host.paths)


@router.post("/reset", responses=error_responses(500))
def reset_config(host: HostDep) -> dict[str, Any]:
    """Overwrite the user file with the default configuration and return the defaults (as the spec says),
    not the merged configuration: project files and ``SVC_*`` variables may still change what GET answers."""
    try:
        return mask_config(shown(host.plugins, reset_user_config(host.paths)))
    except OSError as exc:
        raise _write_failed(exc) from None


# -- the server's environment -------------------------------------------------------------------------


@router.get("/env")
def get_env() -> list[dict[str, str]]:
    """``SVC_*`` and ``CHAT_WEBHOOK_URL`` variables of the server process; secret-looking values are redacted
    (``SVC_API_TOKEN`` always)."""
    return [
        {"name": name, "value": mask_env_value(name, value), "description": describe_env_var(name)}
        for name, value in sorted(os.environ.items())
        if name.startswith("SVC_") or name == "CHAT_WEBHOOK_URL"
    ]


def describe_env_var(name: str) -> str:
    """What a variable does; ``""`` for one svc does not know."""
    if name in ENV_DESCRIPTIONS:
        return ENV_DESCRIPTIONS[name]

    keys = name.removeprefix("SVC_").lower().split("__")
    if name.startswith("SVC_") and keys[0] in SvcConfig.model_fields:
        return f"overrides configuration key {'.'.join(keys)}"
    return ""


# -- project configurations ---------------------------------------------------------------------------


def _current_mounts(host: Host, transport: str | None) -> list[Mount] | None:
    """Mounts of the profile the cluster ``transport`` names (404 when none is on offer; ``None`` for ``local``,
    which has no profile), else of the server's current profile (``None`` when no profile is active)."""
    config = host.profiles.host_config(env=_env(host))
    name = config.current_profile if transport is None else profile_name_of(host, transport)
    if name is None or name not in config.profiles:
        return None
    return config.profiles[name].mounts


def _mount(host: Host, mount_name: str, transport: str | None) -> Mount:
    mounts = _current_mounts(host, transport)
    if mounts is None:
        raise InvalidRequestError(
            "no active SSH profile; activate one with POST /api/config/ssh/profiles/{name}/activate"
            if transport is None
            else no_profile(transport)
        )
    for mount in mounts:
        if mount.name == mount_name:
            return mount
    where = "the active SSH profile" if transport is None else f"SSH profile {transport!r}"
    raise NotFoundError(f"mount {mount_name!r} not found in {where}")


def _project_response(mount: Mount, path: Path, exists: bool, config: dict[str, Any]) -> dict[str, Any]:
    return {
        "mount_name": mount.name,
        "local_path": mount.local,
        "config_path": str(path),
        "exists": exists,
        "config": mask_config(config),
    }


@router.get("/projects", responses=error_responses(404))
def list_projects(host: HostDep, transport: str | None = transport_query()) -> list[dict[str, Any]]:
    """One entry per mount of the profile (``?transport=``'s, else the current one); empty when there is none."""

    entries = []
    for mount in _current_mounts(host, transport) or []:
        path = project_config_file(Path(mount.local))
        entries.append(
            {
                "mount_name": mount.name,
                "local_path": mount.local,
                "remote_path": mount.remote,
                "config_exists": path.is_file(),
                "config_path": str(path),
            }
        )
    return entries


@router.get("/projects/{mount_name}", responses=error_responses(400, 404))
def get_project(host: HostDep, mount_name: str, transport: str | None = transport_query()) -> dict[str, Any]:
    """The project config file in the mount's local directory, as stored (partial)."""

    mount = _mount(host, mount_name, transport)
    project = read_project_config(Path(mount.local))
    return _project_response(mount, project.path, project.exists, project.config)


@router.put("/projects/{mount_name}", responses=error_responses(400, 404, 422, 500))
def put_project(
    host: HostDep, mount_name: str, body: JsonObject, transport: str | None = transport_query()
) -> dict[str, Any]:
    """Replace the mount's project config with ``body`` (a full or partial configuration)."""

    mount = _mount(host, mount_name, transport)
    try:
        project = write_project_config(
            Path(mount.local), body, check=functools.partial(check_config, host.plugins), trusted_by=host.paths
        )
    except OSError as exc:
        raise _write_failed(exc) from None
    return _project_response(mount, project.path, project.exists, project.config)


@router.post("/projects/{mount_name}/init", responses=error_responses(400, 404, 409, 500))
def init_project(host: HostDep, mount_name: str, transport: str | None = transport_query()) -> dict[str, Any]:
    """Create ``.svc.json`` in the mount's local directory with example values."""

    mount = _mount(host, mount_name, transport)
    try:
        project = init_project_config(Path(mount.local), trusted_by=host.paths)
    except OSError as exc:
        raise _write_failed(exc) from None
    return _project_response(mount, project.path, project.exists, project.config)
