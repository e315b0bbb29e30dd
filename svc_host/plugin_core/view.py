"""The running host as a plugin sees it: a narrow, documented Protocol (``svc_host.plugin.PluginHost``), not ``Host``.

Hooks (``svc_background_tasks``), MCP tools (``tool_host(ctx)``), REST routes (``HostDep``) and CLI commands
(``async with cli_host() as host``) all receive this view. It offers what plugins need and nothing that ties them
to svc's internals: the paths and settings of this process, a transport by name, and a read of one recorded job.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

if TYPE_CHECKING:
    from svc_host.settings.config import SvcConfig
    from svc_host.settings.paths import SvcPaths
    from svc_host.transports.base import Transport

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class JobRecordView:
    """What svc recorded of one job it submitted (read-only; identified by ``(transport, job_id)``)."""

    transport: str
    job_id: str
    name: str
    source: str
    """Who submitted it: ``web``, ``mcp``, ``cli`` or ``workflow``."""
    state: str
    exit_code: int | None
    submitted_at: datetime
    ended_at: datetime | None


@runtime_checkable
class PluginHost(Protocol):
    """The running svc process, as hooks, MCP tools, REST routes and CLI commands of plugins see it."""

    @property
    def paths(self) -> SvcPaths:
        """Where this process keeps its configuration and state (``paths.state_dir`` for a plugin's files)."""

    @property
    def read_env(self) -> bool:
        """Whether this process reads ``SVC_*`` variables (``svc mcp`` does not, for a user's own variables)."""

    def config(self) -> SvcConfig:
        """The merged configuration of this process (system, user, project files; ``SVC_*`` if ``read_env``)."""

    def plugin_settings(self, name: str, model: type[M]) -> M:
        """The section ``plugins.<name>`` of this process's configuration as ``model`` (``ConfigError`` if invalid)."""

    def transport(self, name: str | None = None) -> Transport:
        """A transport by name (``None`` or ``local``: this machine's Slurm); an unknown one raises ``NotFoundError``
        (REST 404, its message listing the choices; it is also a ``PluginError``)."""

    async def find_job(self, transport: str, job_id: str) -> JobRecordView | None:
        """The latest record of job ``job_id`` on ``transport``, or ``None`` if svc did not submit it."""
