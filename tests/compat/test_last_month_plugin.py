"""A plugin written against the API svc documented before plugin API 1.0 keeps working for one more release: its
old import paths import (with a DeprecationWarning that names the new place), and its transport, whose ``run`` does
not take ``idempotent``, passes svc's whole contract suite in a project with no pytest configuration of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

DOCUMENTED_BEFORE = {
    "svc_host.transport": "CommandResult",
    "svc_host.plugin_types": "TransportSpec",
    "svc_host.plugin_config": "plugin_settings",
    "svc_host.config": "load_config",
    "svc_host.processes": "ProcessStarts",
    "svc_host.sync": "user_excludes",
    "svc_host.plugins": "create_plugin_manager",
}

CONTRACT = """
import pytest

from svc_host.testing.contract import TransportContract
from last_month_transport import LastMonthTransport


class TestLastMonth(TransportContract):
    gpu_partition = "gpu"

    @pytest.fixture
    async def transport(self, slurm_cluster):
        transport = LastMonthTransport()
        yield transport
        await transport.close()

    @pytest.fixture
    def job_dir(self, tmp_path):
        return str(tmp_path)
"""


def python(code: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *options, "-c", code], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(("module", "name"), sorted(DOCUMENTED_BEFORE.items()))
def test_an_old_import_path_still_imports_and_says_where_to_go(module: str, name: str) -> None:
    result = python(f"from {module} import {name}", "-W", "always::DeprecationWarning")
    assert result.returncode == 0, result.stderr
    assert f"{module} is deprecated and will be removed in svc 0.3: import public names from svc_host.plugin" in (
        result.stderr
    )
    refused = python(f"from {module} import {name}", "-W", "error::DeprecationWarning")
    assert refused.returncode != 0  # the warning is a real DeprecationWarning


def test_an_old_path_leaves_the_real_module_as_it_was() -> None:
    """The alias is a module of its own: the real module keeps its ``__spec__`` and name, so it still reloads and
    pickles by its own path, and the old path gives the very same objects."""
    code = (
        "import importlib, pickle, warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "import svc_host.transports.base as real\n"
        "import svc_host.transport as old\n"
        "from svc_host.transport import CommandResult\n"
        "assert CommandResult is real.CommandResult\n"
        "print(real.__spec__.name, real.__name__, old.__spec__.name)\n"
        "importlib.reload(real)\n"
        "print(pickle.loads(pickle.dumps(real.CommandResult)).__module__)\n"
    )
    result = python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "svc_host.transports.base svc_host.transports.base svc_host.transport",
        "svc_host.transports.base",
    ]


def test_a_run_without_idempotent_is_called_without_it_and_warned_about() -> None:
    code = (
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from last_month_transport import LastMonthTransport\n"
        "result = asyncio.run(LastMonthTransport().run(['echo', 'hi'], idempotent=False))\n"
        "print(result.stdout.strip())\n"
    )
    result = python(code, "-W", "always::DeprecationWarning")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n"
    assert "LastMonthTransport.run() does not take idempotent (plugin API 1.0)" in result.stderr


@pytest.mark.cluster
@pytest.mark.slow
def test_last_months_transport_passes_the_contract_suite(slurm_cluster: None, tmp_path: Path) -> None:
    project = tmp_path / "svc-lastmonth"
    (project / "tests").mkdir(parents=True)
    shutil.copy(HERE / "last_month_transport.py", project / "last_month_transport.py")
    (project / "tests" / "test_contract.py").write_text(CONTRACT)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(project)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert " passed" in summary
    assert "failed" not in summary
    assert "skipped" not in summary
