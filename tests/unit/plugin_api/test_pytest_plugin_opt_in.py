"""svc's pytest plugin is opt-in: installing svc changes nothing in a project's pytest run (options, asyncio mode,
fixtures, warnings), a project that asks for it gets its fixtures and contract tests in asyncio whatever its own
pytest-asyncio mode, and a project written before the opt-in still works, told to opt in. Each case is a real
pytest run in a project of its own (a subprocess: the plugin's hooks act at configure and collection time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from svc_host.testing import plugin

CONFIGURED = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
"""A project that configured pytest-asyncio's loop scope (else pytest-asyncio itself warns) and nothing of svc."""

OWN_TESTS = """
import pytest


async def test_unmarked_async_is_left_to_the_project():
    pass


@pytest.mark.asyncio
async def test_marked_async_runs():
    pass


def test_sync():
    pass
"""

HOST_TEST = """
async def test_the_host_fixture(svc_test_host, svc_paths):
    assert svc_test_host.paths == svc_paths
"""

ALIAS_TEST = """
async def test_the_old_name_still_works(svc_host, svc_test_host):
    assert svc_host is svc_test_host
"""

PLAIN_ASYNC_TEST = """
async def test_a_plain_async_test_of_the_project():
    pass
"""


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def make_project(tmp_path: Path, tests: str, ini: str = CONFIGURED, conftest: str | None = None) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text(ini)
    (project / "test_it.py").write_text(tests)
    if conftest is not None:
        (project / "conftest.py").write_text(conftest)
    return project


def outcome_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The per-test outcomes (``-rA``) and the asyncio header, without timings."""
    lines = result.stdout.splitlines()
    return sorted(
        line.split(" - ")[0] for line in lines if line.startswith(("PASSED ", "FAILED ", "ERROR ", "asyncio:"))
    )


def test_a_project_that_opts_in_lists_exactly_the_fixtures_svc_names(tmp_path: Path) -> None:
    project = make_project(
        tmp_path, "def test_nothing():\n    pass\n", CONFIGURED + "addopts = -p svc_host.testing.plugin\n"
    )
    listed = run_pytest(project, "--fixtures", "-W", "error")
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr
    section = listed.stdout.split("fixtures defined from svc_host.testing.plugin", 1)[1].split(" fixtures defined ")[0]
    names = {line.split()[0] for line in section.splitlines()[1:] if line and not line.startswith((" ", "-", "="))}
    assert names == plugin.FIXTURES


def test_a_project_that_does_not_use_svc_sees_no_change_and_no_warning(tmp_path: Path) -> None:
    project = make_project(tmp_path, OWN_TESTS)
    with_svc = run_pytest(project, "-W", "error")
    without_svc = run_pytest(project, "-W", "error", "-p", "no:svc")
    assert outcome_lines(with_svc) == outcome_lines(without_svc), with_svc.stdout[-3000:]
    assert "mode=Mode.STRICT" in with_svc.stdout  # its pytest-asyncio mode is its own
    assert "FAILED test_it.py::test_unmarked_async_is_left_to_the_project" in with_svc.stdout
    assert "PASSED test_it.py::test_marked_async_runs" in with_svc.stdout
    assert "warning" not in with_svc.stdout.lower()
    fixtures = run_pytest(project, "--fixtures")
    assert "svc_" not in fixtures.stdout
    assert "slurm_cluster" not in fixtures.stdout


def test_a_project_that_opts_in_gets_the_fixtures_in_its_own_strict_mode_warning_free(tmp_path: Path) -> None:
    project = make_project(
        tmp_path, HOST_TEST + PLAIN_ASYNC_TEST, CONFIGURED + "addopts = -p svc_host.testing.plugin\n"
    )
    result = run_pytest(project, "-W", "error")
    assert "PASSED test_it.py::test_the_host_fixture" in result.stdout, result.stdout[-3000:] + result.stderr
    # the project's own unmarked async test is still the project's business: strict mode leaves it unrun
    assert "FAILED test_it.py::test_a_plain_async_test_of_the_project" in result.stdout
    assert "mode=Mode.STRICT" in result.stdout


def test_the_old_fixture_name_warns_once_naming_the_new_one(tmp_path: Path) -> None:
    tests = ALIAS_TEST + ALIAS_TEST.replace("def test_", "def test_again_")
    project = make_project(tmp_path, tests, CONFIGURED + "addopts = -p svc_host.testing.plugin\n")
    result = run_pytest(project)
    assert "PASSED test_it.py::test_the_old_name_still_works" in result.stdout, result.stdout[-3000:]
    assert "PASSED test_it.py::test_again_the_old_name_still_works" in result.stdout
    warning = "the svc_host fixture is deprecated (plugin API 1.2.0) and goes in 2.0: ask for svc_test_host"
    assert result.stdout.count(warning) == 1


@pytest.mark.parametrize("where", ["test module", "conftest"])
def test_a_project_from_before_the_opt_in_still_works_and_is_told_to_opt_in(tmp_path: Path, where: str) -> None:
    """No pytest configuration at all, as last month's plugin's project (tests/compat runs its contract suite)."""
    if where == "test module":
        project = make_project(tmp_path, HOST_TEST + ALIAS_TEST, ini="[pytest]\n")
    else:
        conftest = "import pytest\n\n\n@pytest.fixture\ndef host(svc_test_host):\n    return svc_test_host\n"
        project = make_project(tmp_path, "async def test_host(host):\n    assert host\n", "[pytest]\n", conftest)
    result = run_pytest(project, "-W", "error::pytest.PytestUnraisableExceptionWarning")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "uses svc's pytest fixtures or contract suites without asking for svc's pytest plugin" in result.stdout
    assert 'add addopts = "-p svc_host.testing.plugin" to your pytest configuration' in result.stdout
    refused = run_pytest(project, "-W", "error::DeprecationWarning")  # a real DeprecationWarning
    # a collection error naming the file, pytest's own report: not an INTERNALERROR (exit 3) with a traceback
    assert refused.returncode == pytest.ExitCode.INTERRUPTED, refused.stdout[-3000:] + refused.stderr
    assert "INTERNALERROR" not in refused.stdout + refused.stderr
    assert "ERROR collecting test_it.py" in refused.stdout
    assert "DeprecationWarning: " in refused.stdout
    assert "without asking for svc's pytest plugin" in refused.stdout
