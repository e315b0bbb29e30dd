"""Where a CLI job command runs: an agent is started for the next command only when the transport declares that it
is remote (``TransportSpec.remote``), never by the transport's name."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from svc_host.agent.calls import CALLS
from svc_host.cli import job_session
from svc_host.cli.job_session import JobSession
from svc_host.host import Host
from svc_host.plugin_core.identity import hookimpl
from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import TransportSpec
from svc_host.testing.fake import FakeTransport


def sites_plugin(*, remote: bool) -> SimpleNamespace:
    """A plugin offering transport ``site``, declared remote or not."""
    transport = FakeTransport("site")
    return SimpleNamespace(
        svc_transports=hookimpl(lambda config: [TransportSpec("site", lambda: transport, remote=remote)])
    )


@pytest.mark.parametrize("remote", [False, True])
def test_an_agent_is_started_only_for_a_transport_declared_remote(
    remote: bool,
    svc_plugin_manager: PluginManager,
    svc_test_host: Host,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    svc_plugin_manager.register(sites_plugin(remote=remote), "site")
    started: list[str] = []
    monkeypatch.setenv("SVC_AGENT", "auto")
    monkeypatch.setattr(job_session, "_place", lambda: SimpleNamespace(name="nobody listens here"))
    monkeypatch.setattr(JobSession, "_start_agent", lambda self, place: started.append(self.transport))
    monkeypatch.setattr(Host, "create", classmethod(lambda cls, source, **_: svc_test_host))

    from svc_host.agent import client

    def no_agent(place: Any, name: str, args: Any) -> Any:
        raise client.AgentUnavailable("no agent is listening", absent=True)

    monkeypatch.setattr(client, "call", no_agent)

    async def transport_name(host: Host, cwd: Path, *, transport: str) -> str:
        return host.transport(transport).name

    monkeypatch.setitem(CALLS, "transport_name", transport_name)
    with JobSession("site") as session:
        assert session.call("transport_name", transport="site") == "site"  # the call ran here
    assert started == (["site"] if remote else [])
