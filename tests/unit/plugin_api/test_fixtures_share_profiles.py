"""An SSH profile a test adds the way a user does (``svc_cli("profile", "add", ...)`` in ``svc_isolated_home``) is
the test host's too: ``svc_paths`` and the isolated home are one configuration, nothing to copy by hand
(docs/plugins/README.md, §7)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from svc_host.plugin import PluginHost, SvcPaths


@pytest.fixture
def svc_plugin_manager(svc_installed_plugins: object) -> object:
    """svc as a user runs it: the SSH transports come from the ssh plugin's entry point."""
    return svc_installed_plugins


@pytest.mark.usefixtures("svc_isolated_home")
def test_a_profile_added_with_svc_is_the_test_hosts(
    svc_cli: Callable[..., subprocess.CompletedProcess[str]], svc_paths: SvcPaths, svc_test_host: PluginHost
) -> None:
    added = svc_cli("profile", "add", "gpu", "--hostname", "127.0.0.1", "--port", "2222", "--username", "svcdev")
    assert added.returncode == 0, added.stderr
    assert "gpu" in json.loads(svc_paths.profiles_file.read_text())["profiles"]
    assert svc_test_host.transport("gpu").name == "gpu"
    assert svc_paths.user_config == SvcPaths.from_env().user_config
    assert svc_paths.system_config == SvcPaths.from_env().system_config


def test_svc_paths_stays_under_the_tests_tmp_path(svc_paths: SvcPaths, tmp_path: Path) -> None:
    for path in (svc_paths.system_config, svc_paths.user_config_dir, svc_paths.state_dir, svc_paths.project_dir):
        assert path.is_relative_to(tmp_path)
