"""MCP tools for configuration: get_config and list_ssh_profiles (read-only)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from svc_host.mcp.context import host_of
from svc_host.mcp.results import tool_result
from svc_host.plugin_core.records import ToolSpec
from svc_host.settings.secrets import mask_config


@tool_result
async def get_config(ctx: Context) -> dict[str, Any]:
    config = host_of(ctx).config()
    return mask_config(
        {
            "resources": config.resources.model_dump(mode="json"),
            "environment": config.environment.model_dump(mode="json", include={"conda", "venv", "env_vars"}),
            "log_dir": config.log_dir,
            "work_dir": config.work_dir,
        }
    )


@tool_result
async def list_ssh_profiles(ctx: Context) -> dict[str, Any]:
    host_config = host_of(ctx).profiles.host_config(env=None)
    current = host_config.current_profile or ""
    profiles = [
        {
            "name": name,
            "hostname": profile.hostname,
            "username": profile.username,
            "port": profile.port,
            "description": profile.description,
            "is_current": name == current,
            "mounts": [mount.model_dump() for mount in profile.mounts],
        }
        for name, profile in sorted(host_config.profiles.items())
    ]
    return {"profiles": profiles, "current": current, "count": len(profiles)}


TOOLS = [
    ToolSpec(
        name="get_config",
        function=get_config,
        description=(
            "Read the job defaults from svc's configuration files (system, user, project): resources, "
            "environment, log_dir, work_dir. submit_job does not apply them: what it submits is its own parameters "
            "and their defaults (pass them from here to follow the configuration). Environment variable values "
            "are shown as '<redacted>' (they often hold tokens)."
        ),
        read_only=True,
    ),
    ToolSpec(
        name="list_ssh_profiles",
        function=list_ssh_profiles,
        description=(
            "List the SSH profiles (clusters) svc knows, with their mounts. Pass a profile's name as "
            "'transport' to other tools to work on that cluster; 'current' is informational only."
        ),
        read_only=True,
    ),
]
