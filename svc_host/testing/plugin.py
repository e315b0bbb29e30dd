"""pytest plugin (entry point ``pytest11: svc``): fixtures for testing svc and svc plugins."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import httpx

    from svc_host.context import Host
    from svc_host.paths import SvcPaths
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


@pytest.fixture
def svc_paths(tmp_path: Path) -> SvcPaths:
    """Config, state and project directories under ``tmp_path`` (nothing of the real user's is touched)."""
    from svc_host.paths import SvcPaths

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return SvcPaths(
        system_config=tmp_path / "etc" / "config.json",
        user_config_dir=tmp_path / "config",
        state_dir=tmp_path / "state",
        project_dir=project,
    )


@pytest.fixture
def host(plugin_manager: PluginManager, svc_paths: SvcPaths) -> Iterator[Host]:
    """A ``Host`` on ``svc_paths`` with ``plugin_manager`` (add plugins with ``register_plugin`` first)."""
    from svc_host.context import Host
    from svc_host.profiles import ProfileStore
    from svc_host.store.database import Store

    made = Host(
        paths=svc_paths,
        plugins=plugin_manager,
        profiles=ProfileStore(svc_paths.profiles_file),
        store=Store(f"sqlite:///{svc_paths.state_dir / 'svc.db'}"),
        source="web",
        read_env=False,
    )
    yield made
    made.store.close()


@pytest.fixture
async def api_client(host: Host) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the REST app built around ``host`` (in-process, no server socket), sending the
    test server's token (``svc_host.testing.http``)."""
    from svc_host.api.app import create_app
    from svc_host.testing.http import asgi_client, security_for_tests

    async with asgi_client(create_app(host, security=security_for_tests())) as client:
        yield client
    await host.monitor.stop()
    await host.transports.close()
