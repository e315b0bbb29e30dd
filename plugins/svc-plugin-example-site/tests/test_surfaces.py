"""Installed with pip and nothing else changed, the plugin's transport, renderer, MCP tool, REST route and CLI
command all work: each is found through the ``svc`` entry point, as a site's users would find them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from svc_host.api.app import create_app
from svc_host.domain.profiles import HostConfig
from svc_host.domain.submission import JobDefinition
from svc_host.host import Host
from svc_host.plugin_core.manager import create_plugin_manager
from svc_host.settings.paths import SvcPaths
from svc_host.testing.http import asgi_client, security_for_tests

from svc_example_site.settings import SiteSettings

pytestmark = pytest.mark.cluster


def test_the_entry_point_offers_the_transport_and_the_renderer(site: SiteSettings) -> None:
    manager = create_plugin_manager(strict=True)
    info = {i.name: i for i in manager.plugins()}["example-site"]
    assert (info.distribution, info.status) == ("svc-plugin-example-site", "ok")
    spec = manager.transport_specs(HostConfig())["site"]
    assert spec.remote
    assert spec.description == f"Slurm on {site.login}, account {site.account}, QOS {site.qos}"
    script = manager.renderer("site").render(JobDefinition(command="true"))
    assert script.text.splitlines()[1:3] == [f"#SBATCH --account={site.account}", "#SBATCH --qos=normal"]


async def test_the_rest_route(site: SiteSettings, tmp_path: Path) -> None:
    paths = SvcPaths(tmp_path / "etc.json", tmp_path / "config", tmp_path / "state", tmp_path)
    host = Host.create("web", paths=paths, plugins=create_plugin_manager(strict=True))
    try:
        async with asgi_client(create_app(host, security=security_for_tests())) as http:
            response = await http.get("/api/site/account")
            assert response.status_code == 200, response.text
            assert response.json()["rows"][0]["account"] == site.account
            assert (await http.get("/api/site/account", headers={"Authorization": ""})).status_code == 401
    finally:
        await host.close()


def test_the_cli_command(site: SiteSettings) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "svc_host", "site", "--json"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["account"] == site.account
    unset = {k: v for k, v in os.environ.items() if not k.startswith("SVC_SITE_")}
    result = subprocess.run(
        [sys.executable, "-m", "svc_host", "site"], capture_output=True, text=True, timeout=120, check=False, env=unset
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: the site is not configured: set SVC_SITE_LOGIN and SVC_SITE_ACCOUNT\n"


async def test_the_mcp_tool(site: SiteSettings) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=dict(os.environ))
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["site_account_usage"].annotations is not None
        assert tools["site_account_usage"].annotations.read_only_hint
        result = (await client.call_tool("site_account_usage", {})).structured_content
    assert result is not None
    assert result["success"], result
    assert result["rows"][0]["account"] == site.account
