"""svc's pytest plugin in a plugin author's project whose pytest configuration only asks for it (and sets
pytest-asyncio's loop scope, as pytest-asyncio asks every project to): markers are known, the tests asking for
svc's fixtures and their plain async fixtures run in the project's strict mode, every fixture (``svc_*``) does its
job, and the contract suite runs; nothing warns."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

AUTHOR_TESTS = """
import json
from types import SimpleNamespace

import pytest

from svc_host.plugin import ToolSpec, hookimpl


@pytest.fixture
async def greeting():  # a plain async fixture, no pytest-asyncio decorator
    yield "hello"


async def ping() -> dict[str, object]:
    return {"success": True, "pong": True}


@pytest.fixture
def with_tool(svc_register_plugin):
    svc_register_plugin(SimpleNamespace(svc_mcp_tools=hookimpl(lambda: [ToolSpec("ping", ping, "Ping.")])), "mine")


@pytest.mark.slow
async def test_async_test_and_fixture(greeting, svc_paths):
    assert greeting == "hello"


async def test_api_client(svc_api_client):
    assert (await svc_api_client.get("/api/plugins")).status_code == 200


async def test_mcp_client(with_tool, svc_mcp_client):
    async with svc_mcp_client() as client:
        result = await client.call_tool("ping", {})
    assert result.structured_content == {"success": True, "pong": True}


def test_cli(svc_isolated_home, svc_cli):
    result = svc_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    assert "local" in {row["name"] for row in json.loads(result.stdout)}
"""


def author_env() -> dict[str, str]:
    """This environment without what the running pytest set for itself (xdist's worker variables would make the
    author's pytest think it runs under xdist)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}


AUTHOR_CONTRACT = """
import pytest

from svc_host.testing.contract import TransportContract
from svc_plugin_local.transport import LocalTransport


class TestMine(TransportContract):
    @pytest.fixture
    async def transport(self):
        transport = LocalTransport()
        yield transport
        await transport.close()

    @pytest.fixture
    def job_dir(self, tmp_path):
        return str(tmp_path)
"""


OPTED_IN = """
[pytest]
addopts = -p svc_host.testing.plugin
asyncio_default_fixture_loop_scope = function
"""
"""The author's pytest.ini: svc's plugin asked for, pytest-asyncio's own setting, nothing else (strict mode)."""


def run_authors_tests(project: Path, filename: str, tests: str, *pytest_args: str) -> str:
    """Write ``tests`` as ``project/tests/filename`` and run the author's pytest there; returns its output."""
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text(OPTED_IN)
    (project / "tests" / filename).write_text(textwrap.dedent(tests))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--strict-markers", *pytest_args, "tests"],
        cwd=project,
        env=author_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
def test_an_authors_project_needs_only_to_ask_for_the_plugin(tmp_path: Path) -> None:
    output = run_authors_tests(tmp_path / "svc-myplugin", "test_mine.py", AUTHOR_TESTS, "-W", "error")
    assert "4 passed" in output


@pytest.mark.cluster
def test_the_contract_suite_runs_in_an_authors_project(slurm_cluster: None, tmp_path: Path) -> None:
    output = run_authors_tests(
        tmp_path / "svc-mytransport", "test_contract.py", AUTHOR_CONTRACT, "-k", "exit", "-W", "error"
    )
    assert "passed" in output
