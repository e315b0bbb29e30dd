"""What plugins add shows up where users look: REST routes, MCP tools (over real stdio), renderers."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from svc_host import hookimpl
from svc_host.api.app import create_app
from svc_host.domain.submission import JobDefinition, RenderedScript
from svc_host.errors import PluginError
from svc_host.host import Host
from svc_host.mcp.server import create_server
from svc_host.plugin_core.manager import PluginManager
from svc_host.plugin_core.records import RendererSpec, ToolSpec
from svc_host.testing.http import asgi_client, security_for_tests
from svc_host.testing.waiting import eventually

FAKE_SITE = Path(__file__).parent.parent / "fixtures" / "plugins" / "site"


async def test_svc_api_routers_of_a_plugin_are_mounted(svc_plugin_manager: PluginManager, svc_test_host: Host) -> None:
    sys.path.insert(0, str(FAKE_SITE))
    try:
        import svc_fake_tools
    finally:
        sys.path.remove(str(FAKE_SITE))
        sys.modules.pop("svc_fake_tools", None)
    svc_plugin_manager.register(svc_fake_tools, "tools")
    async with asgi_client(create_app(svc_test_host, security=security_for_tests())) as http:
        assert (await http.get("/api/fake/ping")).json() == {"pong": True}


async def test_svc_mcp_tools_carry_their_hints(svc_plugin_manager: PluginManager, svc_test_host: Host) -> None:
    async def wipe(target: str) -> dict[str, object]:
        return {"success": False, "error": f"refusing to wipe {target}"}

    tool = ToolSpec(name="wipe", function=wipe, description="Wipe a thing.", destructive=True)
    svc_plugin_manager.register(SimpleNamespace(svc_mcp_tools=hookimpl(lambda: [tool])), "wiper")
    async with Client(create_server(svc_test_host)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["wipe"].annotations is not None
        assert tools["wipe"].annotations.destructive_hint is True
        assert tools["wipe"].annotations.read_only_hint is False
        result = await client.call_tool("wipe", {"target": "x"})
    assert result.structured_content == {"success": False, "error": "refusing to wipe x"}


async def test_svc_mcp_serves_a_third_party_tool_over_stdio() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(FAKE_SITE), os.environ.get("PYTHONPATH", "")]),
        "SVC_DISABLE_PLUGINS": "broken,dup",
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=env)
    async with Client(params) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "shout" in names
        result = await client.call_tool("shout", {"text": "hi"})
    assert result.structured_content == {"success": True, "text": "HI"}


def test_svc_renderers_duplicate_default_is_refused(svc_plugin_manager: PluginManager) -> None:
    def render(definition: JobDefinition) -> RenderedScript:
        return RenderedScript(text="", log_dir=".", stdout_path="o", stderr_path="e")

    svc_plugin_manager.register(
        SimpleNamespace(svc_renderers=hookimpl(lambda: [RendererSpec("default", render)])), "mine"
    )
    with pytest.raises(PluginError, match=r"'default' from mine \(local 0\) and svc_host\.rendering\.hooks \(svc "):
        svc_plugin_manager.renderer("default")


def hello_plugin() -> SimpleNamespace:
    import click

    @click.command()
    @click.argument("who")
    def hello(who: str) -> None:
        """Greet someone."""
        click.echo(f"hello {who}")

    @click.command()
    def jobs() -> None:
        """A plugin's command may not take a built-in's name."""
        click.echo("not svc's jobs")

    return SimpleNamespace(svc_cli_commands=hookimpl(lambda: [hello, jobs]))


def test_svc_cli_commands_add_subcommands(svc_plugin_manager: PluginManager, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from svc_host.cli import cli
    from svc_host.plugin_core import manager as plugin_module

    svc_plugin_manager.register(hello_plugin(), "greeter")
    monkeypatch.setattr(plugin_module, "get_plugin_manager", lambda: svc_plugin_manager)
    result = CliRunner().invoke(cli, ["hello", "world"])
    assert (result.exit_code, result.output) == (0, "hello world\n")
    listing = CliRunner().invoke(cli, ["--help"]).output
    assert "hello" in listing
    assert "Greet someone." in listing
    assert "not svc's jobs" not in CliRunner().invoke(cli, ["jobs", "--help"]).output


def test_version_and_builtin_commands_never_load_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from svc_host.cli import cli
    from svc_host.plugin_core import manager as plugin_module

    def refuse() -> PluginManager:
        raise AssertionError("plugins were loaded")

    monkeypatch.setattr(plugin_module, "get_plugin_manager", refuse)
    assert CliRunner().invoke(cli, ["--version"]).exit_code == 0
    assert CliRunner().invoke(cli, ["config", "--help"]).exit_code == 0


async def test_svc_background_tasks_run_while_a_server_runs(
    svc_plugin_manager: PluginManager, svc_test_host: Host
) -> None:
    import asyncio

    from svc_host.plugin_core.records import TaskSpec

    seen: list[str] = []

    def tasks(host: Host) -> list[TaskSpec]:
        async def work() -> None:
            seen.append(f"started for {host.source}")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen.append("stopped")
                raise

        return [TaskSpec(name="worker", run=work)]

    svc_plugin_manager.register(SimpleNamespace(svc_background_tasks=hookimpl(tasks)), "busy")
    svc_test_host.source = "mcp"
    await svc_test_host.start()
    await eventually(lambda: seen, what="the task's start")
    assert svc_test_host.plugin_tasks.names() == ["worker"]
    await svc_test_host.close()
    assert seen == ["started for mcp", "stopped"]


async def test_svc_health_shows_in_the_api_and_the_cli(
    svc_plugin_manager: PluginManager, svc_test_host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from click.testing import CliRunner

    from svc_host.cli import cli
    from svc_host.plugin_core import manager as plugin_module
    from svc_host.plugin_core.records import HealthReport

    def health(paths: object) -> HealthReport:
        return HealthReport(ok=False, summary="3 messages waiting", details={"waiting": 3})

    svc_plugin_manager.register(SimpleNamespace(svc_health=hookimpl(health)), "outboxy")
    async with asgi_client(create_app(svc_test_host, security=security_for_tests())) as http:
        listed = {p["name"]: p for p in (await http.get("/api/plugins")).json()["plugins"]}
    assert listed["outboxy"]["health"] == {"ok": False, "summary": "3 messages waiting", "details": {"waiting": 3}}
    assert listed["svc_host.rendering.hooks"]["health"] is None
    monkeypatch.setattr(plugin_module, "get_plugin_manager", lambda: svc_plugin_manager)
    rows = {row["name"]: row for row in json.loads(CliRunner().invoke(cli, ["plugins", "--json"]).output)}
    assert rows["outboxy"]["health"]["summary"] == "3 messages waiting"
    table = CliRunner().invoke(cli, ["plugins"]).output
    assert table.endswith("\noutboxy: needs attention: 3 messages waiting\n")


async def test_a_tool_whose_signature_cannot_be_read_is_left_out(
    svc_plugin_manager: PluginManager, svc_test_host: Host
) -> None:
    async def unreadable(thing: NoSuchType) -> dict[str, object]:  # type: ignore[name-defined]  # noqa: F821
        return {"success": True}

    tool = ToolSpec(name="unreadable", function=unreadable, description="Cannot be described.")
    svc_plugin_manager.register(SimpleNamespace(svc_mcp_tools=hookimpl(lambda: [tool])), "sloppy")
    async with Client(create_server(svc_test_host)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "unreadable" not in names
    assert "submit_job" in names


async def test_each_profile_chooses_its_sync_backend(svc_plugin_manager: PluginManager, svc_test_host: Host) -> None:
    from svc_host.domain.profiles import HostConfig, SSHProfile
    from svc_host.plugin_core.records import SyncBackendSpec

    made: list[str] = []

    class Recorder:
        def __init__(self, profile_name: str, profile: SSHProfile) -> None:
            made.append(profile_name)

        async def close(self) -> None:
            return None

    svc_plugin_manager.register(
        SimpleNamespace(svc_sync_backends=hookimpl(lambda: [SyncBackendSpec("recorder", Recorder)])), "recorders"
    )
    await svc_test_host.transports.reload(
        HostConfig(
            profiles={
                "site": SSHProfile(hostname="a.example", sync_backend="recorder"),
                "typo": SSHProfile(hostname="b.example", sync_backend="rsinc"),
            }
        )
    )
    assert isinstance(svc_test_host.sync_backend("site"), Recorder)
    assert made == ["site"]
    with pytest.raises(PluginError, match=r"unknown sync backend 'rsinc'; choose one of: recorder \(from recorders"):
        svc_test_host.sync_backend("typo")


async def test_a_sync_backend_that_asks_for_it_is_made_on_the_profiles_transport(
    svc_plugin_manager: PluginManager, svc_register_plugin: Callable[..., Any], svc_test_host: Host
) -> None:
    """A factory declaring ``transport`` gets the profile's own (the one svc holds the connection of); a new one is
    made when the profile's transport is replaced."""
    from svc_host.domain.profiles import HostConfig, SSHProfile
    from svc_host.plugin_core.records import SyncBackendSpec
    from svc_plugin_ssh import hooks as ssh_hooks

    given: list[object] = []

    class OnTransport:
        def __init__(self, profile_name: str, profile: SSHProfile, *, transport: object) -> None:
            given.append(transport)

        async def close(self) -> None:
            return None

    svc_register_plugin(ssh_hooks, "ssh")
    svc_plugin_manager.register(
        SimpleNamespace(svc_sync_backends=hookimpl(lambda: [SyncBackendSpec("on-transport", OnTransport)])), "mine"
    )
    site = SSHProfile(hostname="a.example", sync_backend="on-transport")
    await svc_test_host.transports.reload(HostConfig(profiles={"site": site}))
    first = svc_test_host.sync_backend("site")
    assert given == [svc_test_host.transport("site")]
    assert svc_test_host.sync_backend("site") is first  # kept while the transport is
    await svc_test_host.transports.reload(HostConfig(profiles={"site": site.model_copy(update={"port": 2200})}))
    assert svc_test_host.sync_backend("site") is not first
    assert given[1] is svc_test_host.transport("site") is not given[0]
