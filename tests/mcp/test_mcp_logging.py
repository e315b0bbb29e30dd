"""``svc mcp`` keeps an agent's stderr for warnings: no per-channel SSH chatter (asyncssh INFO) by default."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from svc_host.domain.profiles import SSHProfile

CLIENT = textwrap.dedent(
    """
    import asyncio, os, sys
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def main():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "svc_host", "mcp", *sys.argv[1:]], env=dict(os.environ)
        )
        async with Client(params) as client:
            result = await client.call_tool("list_jobs", {"transport": "dev"})
            print(result.structured_content["success"])

    asyncio.run(main())
    """
)


@pytest.mark.cluster
@pytest.mark.parametrize(("args", "chatty"), [((), False), (("--log-level", "info"), True)])
def test_ssh_channels_do_not_flood_stderr(
    dev_profile: SSHProfile,
    write_profiles: Callable[[dict[str, Any]], None],
    svc_home: dict[str, str],
    args: tuple[str, ...],
    chatty: bool,
) -> None:
    write_profiles({"current": None, "profiles": {"dev": dev_profile.model_dump(mode="json")}})
    run = subprocess.run(
        [sys.executable, "-c", CLIENT, *args], env=svc_home, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.stdout.strip() == "True", run.stderr
    assert ("Connected to SSH server" in run.stderr) is chatty, run.stderr
    assert "Traceback" not in run.stderr
