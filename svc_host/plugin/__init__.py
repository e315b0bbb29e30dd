"""The public plugin API of svc: every name a plugin may import, and nothing else.

``from svc_host.plugin import hookimpl, TransportSpec, SlurmTransport, CommandResult`` — a plugin imports from
here (and, in its tests, from ``svc_host.testing``); everything else under ``svc_host`` is internal and may
change in any release. ``API_VERSION`` follows semantic versioning: a name or signature listed here changes only
with a new major version, after a minor version in which the old form still works with a ``DeprecationWarning``
(docs/plugins/api.md lists every name; tests/unit/plugin_api/ holds the list against the code). A plugin may declare
the range it supports in its entry-point module, ``SVC_PLUGIN_API = ">=1.0,<2"``: svc refuses to load a plugin whose
range excludes ``API_VERSION``, with one line naming the plugin and the range.

Names load on first use, so a plugin's ``hooks.py`` that imports ``hookimpl`` and a record costs svc's fast paths
(``svc --version``, ``svc mcp``'s first answer) nothing of FastAPI, the MCP SDK or the database layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from svc_host.plugin_core.deprecation import Deprecated, DeprecatedNames
from svc_host.plugin_core.identity import API_VERSION, hookimpl

_WHERE: dict[str, str] = {
    # records hooks return, and the event observers receive
    "TransportSpec": "svc_host.plugin_core.records",
    "SyncBackendSpec": "svc_host.plugin_core.records",
    "RendererSpec": "svc_host.plugin_core.records",
    "ToolSpec": "svc_host.plugin_core.records",
    "TaskSpec": "svc_host.plugin_core.records",
    "HealthReport": "svc_host.plugin_core.records",
    "Event": "svc_host.plugin_core.records",
    "SessionKindSpec": "svc_host.plugin_core.records",
    "AppLaunch": "svc_host.plugin_core.records",
    # the running host, as hooks, tools, routes and commands see it
    "PluginHost": "svc_host.plugin_core.view",
    "JobRecordView": "svc_host.plugin_core.view",
    "cli_host": "svc_host.cli.plugin_host",
    "tool_host": "svc_host.mcp.context",
    "tool_result": "svc_host.mcp.results",
    "HostDep": "svc_host.api.deps",
    "print_json": "svc_host.cli.output",
    "print_table": "svc_host.cli.output",
    # base classes and what they exchange
    "Transport": "svc_host.transports.base",
    "SlurmTransport": "svc_host.transports.base",
    "CommandResult": "svc_host.transports.base",
    "LogChunk": "svc_host.transports.base",
    "ByteReader": "svc_host.transports.streams",
    "ByteWriter": "svc_host.transports.streams",
    "ProcessStarts": "svc_host.transports.processes",
    "kill_process": "svc_host.transports.processes",
    "BytesResult": "svc_host.transports.base",
    "ssh_exec_files": "svc_host.transports.ssh_exec_files",
    # deprecated (``_DEPRECATED``): the SSH client is the ssh plugin's again; these read it from there until 2.0
    "ssh_connect_options": "svc_plugin_ssh.options",
    "open_ssh_connection": "svc_plugin_ssh.connect",
    "SyncBackend": "svc_host.transports.sync_backend",
    "SyncResult": "svc_host.transports.sync_backend",
    "InspectReport": "svc_host.transports.sync_backend",
    "StaleUnknownReason": "svc_host.transports.sync_backend",
    "DELETED_PATHS_CAP": "svc_host.transports.sync_backend",
    "cap_paths": "svc_host.transports.sync_backend",
    "user_excludes": "svc_host.transports.sync_backend",
    # the sync-backend protocol: svc's files on the remote, the claim, the lock, the excludes
    "DEFAULT_EXCLUDES": "svc_host.transports.sync_excludes",
    "MANIFEST_FILE": "svc_host.transports.sync_excludes",
    "OWNER_FILE": "svc_host.transports.sync_excludes",
    "sync_excludes": "svc_host.transports.sync_excludes",
    "is_excluded": "svc_host.transports.sync_excludes",
    "FileState": "svc_host.transports.sync_files",
    "FoundFile": "svc_host.transports.sync_files",
    "OwnerMarker": "svc_host.transports.sync_files",
    "UploadRecord": "svc_host.transports.sync_files",
    "machine_id": "svc_host.transports.sync_files",
    "stale_uploads": "svc_host.transports.sync_files",
    "temporary_name": "svc_host.transports.sync_files",
    "CLAIM_LISTING_LIMIT": "svc_host.transports.sync_claim",
    "claim_mount": "svc_host.transports.sync_claim",
    "SYNC_LOCK_WAIT": "svc_host.transports.sync_lock",
    "sync_lock": "svc_host.transports.sync_lock",
    "render_sbatch": "svc_host.rendering.sbatch",
    "slurm_program": "svc_host.slurm.argv",
    # domain models a plugin receives
    "JobDefinition": "svc_host.domain.submission",
    "Resources": "svc_host.domain.submission",
    "RenderedScript": "svc_host.domain.submission",
    "Environment": "svc_host.domain.submission",
    "JobState": "svc_host.domain.jobs",
    "JobStatus": "svc_host.domain.jobs",
    "JobUsage": "svc_host.domain.usage",
    "NodeInfo": "svc_host.domain.resources",
    "ResourceSnapshot": "svc_host.domain.resources",
    "GpuTypeAvailability": "svc_host.domain.resources",
    "SSHProfile": "svc_host.domain.profiles",
    "Mount": "svc_host.domain.profiles",
    "HostConfig": "svc_host.domain.profiles",
    "cluster_root": "svc_host.domain.profiles",
    "check_exclude_patterns": "svc_host.domain.profiles",
    "check_proxy_jump": "svc_host.domain.profiles",
    "SvcPaths": "svc_host.settings.paths",
    "SvcConfig": "svc_host.settings.config",
    "Notifications": "svc_host.settings.config",
    "Rendering": "svc_host.settings.config",
    "load_config": "svc_host.settings.config",
    "REDACTED": "svc_host.settings.secrets",
    # settings
    "plugin_settings": "svc_host.plugin_core.settings",
    # the error family
    "SvcError": "svc_host.errors",
    "ConfigError": "svc_host.errors",
    "PluginError": "svc_host.errors",
    "RenderError": "svc_host.errors",
    "CommandError": "svc_host.errors",
    "TransportError": "svc_host.errors",
    "OutcomeUnknownError": "svc_host.errors",
    "SyncError": "svc_host.errors",
    "NotFoundError": "svc_host.errors",
    "ConflictError": "svc_host.errors",
    "InvalidRequestError": "svc_host.errors",
}
_RENAMED = {
    "open_ssh_connection": "open_connection",
    "ssh_connect_options": "connect_options",
    "ssh_exec_files": "",
    "kill_process": "kill",
    "slurm_program": "program",
    "HostDep": "PluginHostDep",
}

__all__ = [
    "API_VERSION",
    "CLAIM_LISTING_LIMIT",
    "DEFAULT_EXCLUDES",
    "DELETED_PATHS_CAP",
    "MANIFEST_FILE",
    "OWNER_FILE",
    "REDACTED",
    "SYNC_LOCK_WAIT",
    "AppLaunch",
    "ByteReader",
    "ByteWriter",
    "BytesResult",
    "CommandError",
    "CommandResult",
    "ConfigError",
    "ConflictError",
    "Environment",
    "Event",
    "FileState",
    "FoundFile",
    "GpuTypeAvailability",
    "HealthReport",
    "HostConfig",
    "HostDep",
    "InspectReport",
    "InvalidRequestError",
    "JobDefinition",
    "JobRecordView",
    "JobState",
    "JobStatus",
    "JobUsage",
    "LogChunk",
    "Mount",
    "NodeInfo",
    "NotFoundError",
    "Notifications",
    "OutcomeUnknownError",
    "OwnerMarker",
    "PluginError",
    "PluginHost",
    "ProcessStarts",
    "RenderError",
    "RenderedScript",
    "RendererSpec",
    "Rendering",
    "ResourceSnapshot",
    "Resources",
    "SSHProfile",
    "SessionKindSpec",
    "SlurmTransport",
    "StaleUnknownReason",
    "SvcConfig",
    "SvcError",
    "SvcPaths",
    "SyncBackend",
    "SyncBackendSpec",
    "SyncError",
    "SyncResult",
    "TaskSpec",
    "ToolSpec",
    "Transport",
    "TransportError",
    "TransportSpec",
    "UploadRecord",
    "cap_paths",
    "check_exclude_patterns",
    "check_proxy_jump",
    "claim_mount",
    "cli_host",
    "cluster_root",
    "hookimpl",
    "is_excluded",
    "kill_process",
    "load_config",
    "machine_id",
    "plugin_settings",
    "print_json",
    "print_table",
    "render_sbatch",
    "slurm_program",
    "ssh_exec_files",
    "stale_uploads",
    "sync_excludes",
    "sync_lock",
    "temporary_name",
    "tool_host",
    "tool_result",
    "user_excludes",
]


_DEPRECATED: dict[str, Deprecated] = {
    "open_ssh_connection": Deprecated(
        new=None,
        since="1.2",
        removed_in="2.0",
        advice="a sync backend's factory takes `transport` (the profile's own, on its one SSH connection) and runs "
        "its commands with `await transport.run_bytes(argv, stdin=...)`",
    ),
    "ssh_connect_options": Deprecated(
        new=None,
        since="1.2",
        removed_in="2.0",
        advice="run commands through the profile's transport (`SyncBackendSpec` factory keyword `transport`); "
        "svc's SSH client is the ssh plugin's own",
    ),
}
"""Old public names that still work: old name -> its replacement and the API version that removes it (docs/plugins/
api.md, "Deprecated names"). They are not in ``__all__`` and warn once per process (``DeprecatedNames``)."""

_OLD_NAMES = DeprecatedNames("svc_host.plugin", _DEPRECATED)


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:  # never kept in globals(): each use passes here, the warning is given once
        return _OLD_NAMES.resolve(name, _load)
    value = _load(name)
    globals()[name] = value
    return value


def _load(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"svc_host.plugin has no attribute {name!r} (the public API: docs/plugins/api.md)")
    found = importlib.import_module(module)
    attribute = _RENAMED.get(name, name)
    return getattr(found, attribute) if attribute else found  # "": the name is the module itself


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:
    from svc_host.api.deps import PluginHostDep as HostDep
    from svc_host.cli.output import print_json, print_table
    from svc_host.cli.plugin_host import cli_host
    from svc_host.domain.jobs import JobState, JobStatus
    from svc_host.domain.profiles import (
        HostConfig,
        Mount,
        SSHProfile,
        check_exclude_patterns,
        check_proxy_jump,
        cluster_root,
    )
    from svc_host.domain.resources import GpuTypeAvailability, NodeInfo, ResourceSnapshot
    from svc_host.domain.submission import Environment, JobDefinition, RenderedScript, Resources
    from svc_host.domain.usage import JobUsage
    from svc_host.errors import (
        CommandError,
        ConfigError,
        ConflictError,
        InvalidRequestError,
        NotFoundError,
        OutcomeUnknownError,
        PluginError,
        RenderError,
        SvcError,
        SyncError,
        TransportError,
    )
    from svc_host.mcp.context import tool_host
    from svc_host.mcp.results import tool_result
    from svc_host.plugin_core.records import (
        AppLaunch,
        Event,
        HealthReport,
        RendererSpec,
        SessionKindSpec,
        SyncBackendSpec,
        TaskSpec,
        ToolSpec,
        TransportSpec,
    )
    from svc_host.plugin_core.settings import plugin_settings
    from svc_host.plugin_core.view import JobRecordView, PluginHost
    from svc_host.rendering.sbatch import render_sbatch
    from svc_host.settings.config import Notifications, Rendering, SvcConfig, load_config
    from svc_host.settings.paths import SvcPaths
    from svc_host.settings.secrets import REDACTED
    from svc_host.slurm.argv import program as slurm_program
    from svc_host.transports import ssh_exec_files
    from svc_host.transports.base import BytesResult, CommandResult, LogChunk, SlurmTransport, Transport
    from svc_host.transports.processes import ProcessStarts
    from svc_host.transports.processes import kill as kill_process
    from svc_host.transports.streams import ByteReader, ByteWriter
    from svc_host.transports.sync_backend import (
        DELETED_PATHS_CAP,
        InspectReport,
        StaleUnknownReason,
        SyncBackend,
        SyncResult,
        cap_paths,
        user_excludes,
    )
    from svc_host.transports.sync_claim import CLAIM_LISTING_LIMIT, claim_mount
    from svc_host.transports.sync_excludes import (
        DEFAULT_EXCLUDES,
        MANIFEST_FILE,
        OWNER_FILE,
        is_excluded,
        sync_excludes,
    )
    from svc_host.transports.sync_files import (
        FileState,
        FoundFile,
        OwnerMarker,
        UploadRecord,
        machine_id,
        stale_uploads,
        temporary_name,
    )
    from svc_host.transports.sync_lock import SYNC_LOCK_WAIT, sync_lock
