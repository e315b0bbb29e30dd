"""Frozen records that plugins hand to the host through the registration hooks."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svc_host.domain.submission import JobDefinition, RenderedScript
    from svc_host.settings.config import SvcConfig
    from svc_host.transports.base import Transport

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


def _check_name(kind: str, name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(
            f"{kind} name {name!r} is invalid: use lowercase letters, digits, '.', '_' or '-' (at most 64)"
        )


@dataclass(frozen=True)
class TransportSpec:
    """A way to reach a Slurm cluster. ``factory`` builds the transport; the host keeps one instance per name.

    A factory that declares a keyword parameter ``host`` is given the running host (``PluginHost``) that makes
    the instance, to read its settings there (``host.plugin_settings(...)``) rather than from global state.

    The host decides by these capabilities, never by a transport's name. Pooling needs no flag: a transport
    that can spread a sweep over several sessions overrides ``Transport.pooled``.
    """

    name: str
    factory: Callable[..., Transport]
    description: str = ""
    remote: bool = False
    """Jobs run on another machine: their paths are cluster paths (``work_dir`` is required, never this
    machine's working directory) and ``squeue`` is not filtered by the local user."""
    mounts: bool = False
    """The SSH profile of the same name has mounts that apply to this transport: ``mount=`` translates paths
    and sync copies files (requires ``remote``)."""

    def __post_init__(self) -> None:
        _check_name("transport", self.name)
        if self.mounts and not self.remote:
            raise ValueError(f"transport {self.name!r}: mounts=True requires remote=True")


@dataclass(frozen=True)
class SyncBackendSpec:
    """A way to copy a mount's local tree to the cluster."""

    name: str
    factory: Callable[..., Any]
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("sync backend", self.name)


@dataclass(frozen=True)
class RendererSpec:
    """Turns a job definition into a batch script."""

    name: str
    render: Callable[..., RenderedScript]
    """``render(definition)``, or ``render(definition, *, config)`` to be given the configuration of the process
    that renders (a ``SvcConfig``: ``config.plugins`` holds every plugin's settings section)."""
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("renderer", self.name)

    def render_for(self, definition: JobDefinition, config: SvcConfig) -> RenderedScript:
        """The script of ``definition`` under ``config`` (passed to ``render`` when it declares ``config``)."""
        if takes_keyword(self.render, "config"):
            return self.render(definition, config=config)
        return self.render(definition)


def takes_keyword(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function`` accepts the keyword argument ``name`` (by name, or through ``**kwargs``)."""
    parameters = inspect.signature(function).parameters
    found = parameters.get(name)
    if found is not None:
        return found.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool. ``function`` is an async function whose typed parameters become the tool's schema.

    ``waits_for_start``: a call waits until the server's host has started (its store opened and migrated, the
    monitor and run services running). ``False`` is for a tool that only asks the scheduler through
    ``tool_host(ctx).transport(name)``: ``svc mcp`` then answers it as soon as the MCP SDK has loaded, while the
    store still loads (an agent's first ``list_jobs`` right after spawn)."""

    name: str
    function: Callable[..., Awaitable[dict[str, Any]]]
    description: str
    read_only: bool = False
    destructive: bool = False
    waits_for_start: bool = True

    def __post_init__(self) -> None:
        if not re.match(r"^[a-z][a-z0-9_]{0,63}$", self.name):
            raise ValueError(f"tool name {self.name!r} is invalid: use lowercase letters, digits and '_'")


@dataclass(frozen=True)
class TaskSpec:
    """Long-running work of a plugin: a server runs ``run()`` as an asyncio task from start until it closes."""

    name: str
    run: Callable[[], Coroutine[Any, Any, None]]

    def __post_init__(self) -> None:
        _check_name("background task", self.name)


@dataclass(frozen=True)
class HealthReport:
    """How a plugin is doing: ``ok`` False means it needs attention; ``summary`` is one line for people."""

    ok: bool
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "summary": self.summary, "details": dict(self.details)}


@dataclass(frozen=True)
class Event:
    """Something that happened, broadcast to every ``svc_event`` implementation.

    ``name`` is one of ``job.status_changed``, ``workflow_run.status_changed``, ``sweep_run.status_changed``.
    """

    name: str
    payload: Mapping[str, Any]
    at: datetime = field(default_factory=lambda: datetime.now(UTC))
