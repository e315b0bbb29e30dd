"""Frozen records that plugins hand to the host through the registration hooks."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from svc_host.domain.profiles import SSHProfile
    from svc_host.domain.submission import JobDefinition, RenderedScript
    from svc_host.settings.config import SvcConfig
    from svc_host.transports.base import Transport
    from svc_host.transports.sync_backend import SyncBackend

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
    mounts_of: str | None = None
    """(1.2) A transport built on another (``host.transport("gpu")`` in its factory) names the SSH profile whose
    mounts and sync backend it uses, ``mounts_of="gpu"``: its jobs' paths translate and its files sync as that
    profile's do (requires ``mounts``). ``None``: the profile of the transport's own name."""

    def __post_init__(self) -> None:
        _check_name("transport", self.name)
        if self.mounts and not self.remote:
            raise ValueError(f"transport {self.name!r}: mounts=True requires remote=True")
        if self.mounts_of is not None and not self.mounts:
            raise ValueError(f"transport {self.name!r}: mounts_of={self.mounts_of!r} requires mounts=True")


@dataclass(frozen=True)
class SyncBackendSpec:
    """A way to copy a mount's local tree to the cluster."""

    name: str
    factory: Callable[..., Any]
    """``factory(profile_name, profile)`` -> a ``SyncBackend``; ``factory(profile_name, profile, *, transport)`` to be
    given the profile's transport, whose ``run_bytes`` runs the backend's commands on the login node over the one
    connection svc holds to it (opt-in by declaring the keyword, as ``RendererSpec.render`` declares ``config``)."""
    description: str = ""

    def __post_init__(self) -> None:
        _check_name("sync backend", self.name)

    @property
    def takes_transport(self) -> bool:
        """Whether the factory declares ``transport`` (and is to be given the profile's)."""
        return takes_keyword(self.factory, "transport")

    def create(self, profile_name: str, profile: SSHProfile, transport: Transport | None) -> SyncBackend:
        """The backend of one profile; ``transport`` (the profile's) is required when the factory declares it."""
        if not self.takes_transport:
            return self.factory(profile_name, profile)  # type: ignore[no-any-return]
        if transport is None:
            raise ValueError(f"sync backend {self.name!r} is made on the profile's transport: pass it")
        return self.factory(profile_name, profile, transport=transport)  # type: ignore[no-any-return]


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


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class AppLaunch:
    """How a session's web app is started on the node: what a ``SessionKindSpec.launch`` returns.

    ``argv`` runs with no shell. ``env`` is added to the app's environment. ``path`` lists directories put in
    front of the job's ``PATH`` (a virtual environment's ``bin``). ``setup`` is shell lines the batch script runs
    before the app (a site's ``module load cuda``): plugin text only, never a user's field. ``strip_base_path``:
    the app serves at ``/`` and is given each request with the session's base path cut from its target (an app
    that takes a base path, as JupyterLab does, leaves it ``False``).

    Strings of ``argv`` and ``env`` values may hold these placeholders, replaced on the node when the app starts:
    ``{port}`` (the app's own port on 127.0.0.1), ``{base_path}`` (the URL path the session is served under,
    such as ``/s/lab24/1234/``, ending in ``/``), ``{base_prefix}`` (the same without its last ``/``),
    ``{session_dir}`` (the session's directory on the cluster) and
    ``{secret}`` (the session's secret: in ``env`` values only, since any user of the node can read a command line).
    A literal brace in the kind's own text is written twice (``{{`` and ``}}``), as in ``str.format``; nothing is
    ever evaluated. See ``SessionKindSpec`` for how user text is kept from becoming a placeholder.
    """

    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    setup: Sequence[str] = ()
    path: Sequence[str] = ()
    strip_base_path: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.argv, str) or not self.argv or not all(isinstance(word, str) for word in self.argv):
            raise ValueError("AppLaunch.argv must be a non-empty list of strings (no shell runs it)")
        bad = [name for name in self.env if not _ENV_NAME.match(name)]
        if bad:
            raise ValueError(f"AppLaunch.env names must be shell identifiers: {', '.join(map(repr, bad))}")
        texts = [*self.argv, *self.env.values(), *self.setup, *self.path]
        if any(not isinstance(text, str) or "\0" in text for text in texts):
            raise ValueError("AppLaunch strings must be text without NUL")
        if any("\n" in line or "\r" in line for line in self.path):
            raise ValueError("AppLaunch.path entries may not contain line breaks")


@dataclass(frozen=True)
class SessionKindSpec:
    """A kind of interactive session (JupyterLab, TensorBoard...): a web app a Slurm job runs, reached through svc.

    ``fields`` is the pydantic model of the kind's form: a start request's ``fields`` object is validated with it,
    and the dashboard draws the form from its JSON schema. ``launch(fields)`` returns the ``AppLaunch`` of one
    session. Paths are relative to the session's base path: ``ready_path`` is what svc GETs through its way in
    (2xx or 3xx means ready; ``""`` is the root), ``open_path`` what "Open" opens, ``busy_path`` (optional) a
    JSON list of objects with ``execution_state`` (Jupyter's ``api/kernels``): a busy one keeps the session from
    idling. ``start_timeout``: seconds from the job's start to ready before svc ends the session.
    ``idle_minutes``: the default idle timeout (``None``: off). ``proxy_headers``: headers svc's way in adds to
    every request it sends the app (its probes included), replacing any the browser sent; a value may hold
    ``{secret}`` (Jupyter's ``{"Authorization": "token {secret}"}``), never shown to the browser.

    **User text never becomes a placeholder.** ``launch`` is given the validated fields with every ``{`` and ``}``
    of user text doubled, so a field value ``{secret}`` reaches the node as ``{{secret}}`` and the app as the
    literal ``{secret}``. Insert field values into ``argv``/``env`` as they are (join, prefix, never slice), write
    your own literal braces twice, and the only placeholders are the ones you wrote. svc refuses a launch whose
    text is not of that form (a lone brace, an unknown placeholder, ``{secret}`` in ``argv``) with a
    ``PluginError`` naming the kind. Nothing in a launch is given to a shell but ``setup``.

    Example::

        class Fields(BaseModel):
            logdir: str

        SessionKindSpec(
            name="tensorboard",
            description="TensorBoard on a log directory",
            fields=Fields,
            launch=lambda f: AppLaunch(argv=["tensorboard", "--logdir", f.logdir, "--port", "{port}"]),
        )
    """

    name: str
    description: str
    fields: type[BaseModel]
    launch: Callable[[Any], AppLaunch]
    ready_path: str = ""
    open_path: str = ""
    start_timeout: float = 300.0
    idle_minutes: int | None = None
    busy_path: str | None = None
    proxy_headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from pydantic import BaseModel

        _check_name("session kind", self.name)
        if not (isinstance(self.fields, type) and issubclass(self.fields, BaseModel)):
            raise ValueError(f"session kind {self.name!r}: fields must be a pydantic model class")
        paths = {"ready_path": self.ready_path, "open_path": self.open_path, "busy_path": self.busy_path}
        for what, path in paths.items():
            if path is not None and not _RELATIVE_URL_PATH.match(path):
                raise ValueError(
                    f"session kind {self.name!r}: {what} {path!r} must be a URL path relative to the session "
                    "(no leading '/', no '..', no scheme, no '?' or '#')"
                )
        if not self.start_timeout > 0:
            raise ValueError(f"session kind {self.name!r}: start_timeout must be more than 0 seconds")
        if self.idle_minutes is not None and self.idle_minutes < 1:
            raise ValueError(f"session kind {self.name!r}: idle_minutes must be 1 or more, or None for off")
        for header, value in self.proxy_headers.items():
            if not _HEADER_NAME.match(header) or not isinstance(value, str) or not _HEADER_VALUE.match(value):
                raise ValueError(
                    f"session kind {self.name!r}: proxy_headers {header!r} must be a header name with a value on "
                    "one line (printable text; {secret} is the one placeholder)"
                )


_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[\x20-\x7e]*$")
_RELATIVE_URL_PATH = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9._~!$&'()*+,;=@%/-]*$")
