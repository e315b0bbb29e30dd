"""Where ``svc jobs|status|submit|logs`` run their calls: through the svc agent, else in this process.

The agent is asked first unless ``SVC_AGENT`` is ``off``; asking costs a connect to a Unix socket. The agent
declines a transport that runs on this machine (its ``TransportSpec`` is not ``remote``: the command runs in the
caller's environment). Any sign that the agent cannot answer (none listening, stale socket, slow, declined, lost
before a read finished) makes the rest of the command run here instead, exactly as it would without an agent. A
command that found no agent starts one in the background for the next command when its transport is remote (by
the transport's declared capability, never by its name), unless ``SVC_AGENT`` is ``manual`` (only ``svc agent
start`` starts one) or ``off``.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from svc_host.agent.place import Place
    from svc_host.host import Host


class JobSession:
    """The calls of one command on ``transport``."""

    def __init__(self, transport: str) -> None:
        from svc_host.agent.place import agent_mode

        self.transport = transport
        self.mode = agent_mode(os.environ)
        self._place: Place | None = None if self.mode == "off" else _place()
        self._start_for: Place | None = None
        """Where to start an agent once this process knows the transport is remote (no agent was listening)."""
        self._runner: asyncio.Runner | None = None
        self._host: Host | None = None

    def call(self, name: str, **args: Any) -> Any:
        """Call ``name`` (one of ``agent.calls.CALLS``) with ``args`` (JSON values) and return its result."""
        if self._place is not None:
            from svc_host.agent import client

            try:
                return client.call(self._place, name, args)
            except client.AgentUnavailable as exc:
                if exc.absent and self.mode == "auto":
                    self._start_for = self._place
                self._place = None
        return self._direct(name, args)

    def _direct(self, name: str, args: dict[str, Any]) -> Any:
        import asyncio
        from pathlib import Path

        from svc_host.agent.calls import CALLS
        from svc_host.host import Host

        if self._runner is None:
            self._runner = asyncio.Runner()
        if self._host is None:
            self._host = Host.create("cli")
        if self._start_for is not None:
            place, self._start_for = self._start_for, None
            if _is_remote(self._host, self.transport):
                self._start_agent(place)
        return self._runner.run(CALLS[name](self._host, Path.cwd(), **args))

    def _start_agent(self, place: Place) -> None:
        """Best effort: a failure to start leaves this command and the next ones running here."""
        from svc_host.agent import launch
        from svc_host.errors import SvcError

        try:
            place.secure_dir(create=True)
            launch.spawn(place, idle_minutes=launch.DEFAULT_IDLE_MINUTES, connect=[self.transport])
        except (OSError, SvcError):  # an unusable directory, no interpreter to spawn: the command goes on
            return

    def __enter__(self) -> JobSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        runner, host, self._runner, self._host = self._runner, self._host, None, None
        if runner is None:
            return
        try:
            if host is not None:
                runner.run(host.close())
        finally:
            runner.close()


def _is_remote(host: Host, transport: str) -> bool:
    """Whether ``transport`` declares that its jobs run on another machine (``False`` for an unknown name, which the
    call itself reports)."""
    from svc_host.errors import SvcError

    try:
        return host.transports.spec(transport).remote
    except SvcError:
        return False


def _place() -> Place | None:
    from svc_host.agent.place import Place

    try:
        return Place.from_env()
    except (OSError, RuntimeError):  # no home directory to find the setup by: no agent either
        return None
