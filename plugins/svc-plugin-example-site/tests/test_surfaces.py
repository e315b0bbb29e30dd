"""Installed with pip and configured in ``plugins.site``, the plugin's settings, transport, renderer, MCP tool, REST
route and CLI command all work, each found through the ``svc`` entry point as a site's users find them; while the
site is not configured each says, in its own shape, exactly what to set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from svc_host.plugin import PluginHost, SlurmTransport, SvcPaths

from svc_example_site.settings import SiteSettings

pytestmark = pytest.mark.cluster

Svc = Callable[..., subprocess.CompletedProcess[str]]
WriteSite = Callable[[dict[str, Any] | None], None]
UNCONFIGURED = (
    "the site is not configured: set plugins.site.login and plugins.site.account"
    " (e.g. svc config set plugins.site.login me@login.example)"
)


def test_the_entry_point_offers_the_settings(site: SiteSettings, svc_cli: Svc, svc_paths: SvcPaths) -> None:
    listed = svc_cli("plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    row = {row["name"]: row for row in json.loads(listed.stdout)}["site"]
    assert (row["distribution"], row["status"]) == ("svc-plugin-example-site", "ok")
    assert {"svc_settings", "svc_transports", "svc_renderers", "svc_mcp_tools", "svc_cli_commands"} <= set(row["hooks"])
    shown = json.loads(svc_cli("config", "show", "--json").stdout)["plugins"]["site"]
    assert shown == site.model_dump()  # the system config's values, the defaults filled in
    before = svc_paths.user_config.read_bytes() if svc_paths.user_config.exists() else None
    refused = svc_cli("config", "set", "plugins.site.login", "no-at-sign")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        "error: plugin 'site' settings (plugins.site): login: 'no-at-sign' must look like user@login.example.org\n"
    )
    assert (svc_paths.user_config.read_bytes() if svc_paths.user_config.exists() else None) == before
    changed = svc_cli("config", "set", "plugins.site.qos", "high")
    assert changed.returncode == 0, changed.stderr
    assert json.loads(svc_cli("config", "show", "--json").stdout)["plugins"]["site"]["qos"] == "high"


async def test_svc_submit_renders_and_charges_for_the_site(
    site: SiteSettings, svc_cli: Svc, site_host: PluginHost
) -> None:
    directory = f"svc-site-{uuid.uuid4().hex[:8]}"
    args = ("submit", "-t", "site", "--renderer", "site", "--work-dir", directory, "--log-dir", directory, "--json")
    submitted = svc_cli(*args, "--", "sleep", "30")
    assert submitted.returncode == 0, submitted.stderr
    job_id = json.loads(submitted.stdout)["job_id"]
    transport = site_host.transport("site")
    assert isinstance(transport, SlurmTransport)
    try:
        script = await transport.check(["scontrol", "write", "batch_script", job_id, "-"])
        assert script.splitlines()[1:3] == [f"#SBATCH --account={site.account}", f"#SBATCH --qos={site.qos}"]
        shown = await transport.check(["squeue", "-h", "-j", job_id, "-o", "%a %q"])
        assert shown.split() == [site.account, site.qos]
    finally:
        await transport.cancel([job_id])
        await transport.run(["rm", "-rf", "--", directory])


async def test_the_rest_route(site: SiteSettings, svc_api_client: httpx.AsyncClient, write_site: WriteSite) -> None:
    response = await svc_api_client.get("/api/site/account")
    assert response.status_code == 200, response.text
    assert response.json()["rows"][0]["account"] == site.account
    assert (await svc_api_client.get("/api/site/account", headers={"Authorization": ""})).status_code == 401
    write_site(None)
    response = await svc_api_client.get("/api/site/account")
    assert (response.status_code, response.json()) == (422, {"detail": UNCONFIGURED})


def test_the_cli_command(site: SiteSettings, svc_cli: Svc, write_site: WriteSite) -> None:
    result = svc_cli("site", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["account"] == site.account
    write_site(None)
    result = svc_cli("site")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"error: {UNCONFIGURED}\n")


async def test_the_mcp_tool(site: SiteSettings, write_site: WriteSite) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "svc_host", "mcp"], env=dict(os.environ))
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["site_account_usage"].annotations is not None
        assert tools["site_account_usage"].annotations.read_only_hint
        result = (await client.call_tool("site_account_usage", {})).structured_content
        assert result is not None
        assert result["success"], result
        assert result["rows"][0]["account"] == site.account
        write_site(None)  # the same server answers the next call from the changed settings
        assert (await client.call_tool("site_account_usage", {})).structured_content == {
            "success": False,
            "error": UNCONFIGURED,
        }
