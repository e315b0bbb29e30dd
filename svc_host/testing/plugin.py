"""pytest plugin (entry point ``pytest11: svc``): fixtures for testing svc and svc plugins."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from svc_host.plugins import PluginManager


def in_ci() -> bool:
    """CI sets ``CI=true``; there a test that needs the dev cluster must run, never skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(reason: str) -> None:
    """Skip on a developer machine; fail under CI, where a skipped integration test hides a broken setup."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: integration tests must run)")
    pytest.skip(reason)


@pytest.fixture
def plugin_manager() -> PluginManager:
    """A fresh, strict plugin manager with the host's built-ins and no entry points."""
    from svc_host.plugins import create_plugin_manager

    return create_plugin_manager(strict=True, entry_points_too=False)


@pytest.fixture
def register_plugin(plugin_manager: PluginManager) -> Callable[..., None]:
    """Register a module or object with hookimpls into ``plugin_manager``: ``register_plugin(obj, "name")``."""

    def _register(plugin: object, name: str | None = None, **kwargs: Any) -> None:
        plugin_manager.register(plugin, name or str(getattr(plugin, "__name__", repr(plugin))), **kwargs)

    return _register


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    """A reachable Slurm controller on this machine (``sinfo`` answers), or skip (fail under CI)."""
    if shutil.which("sinfo") is None:
        skip_or_fail("Slurm is not installed (run scripts/devcluster up)")
    probe = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True, timeout=30, check=False)
    if probe.returncode != 0:
        skip_or_fail(f"Slurm does not answer: {probe.stderr.strip()}")
