"""Fixtures shared by the engine and sweep integration tests: Hosts on one store with the ``local`` transport."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

import svc_plugin_local.hooks
from svc_host.domain.profiles import SSHProfile
from svc_host.host import Host
from svc_host.plugin_core.manager import PluginManager
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore
from svc_host.store import jobs as job_repo
from svc_host.store.database import Store


@pytest.fixture
def host_plugins(svc_plugin_manager: PluginManager, svc_register_plugin: Callable[..., None]) -> PluginManager:
    """The built-ins and the ``local`` transport: what every host of these tests has (no Slurm needed to make it)."""
    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")
    return svc_plugin_manager


@pytest.fixture
def plugins(host_plugins: PluginManager, slurm_cluster: None) -> PluginManager:
    """``host_plugins`` for tests whose jobs run on this machine's Slurm through the ``local`` transport."""
    return host_plugins


@pytest.fixture
def work() -> Path:
    """The test's working directory (a fresh tmp dir, see tests/conftest.py): jobs run and log here."""
    return Path.cwd()


@contextlib.asynccontextmanager
async def host_factory(plugins: PluginManager, paths: SvcPaths, url: str) -> AsyncIterator[Callable[[], Host]]:
    """Make Hosts on one store; afterwards each host is closed in the caller's event loop, as a server closes it
    (nothing of it is left running when that loop ends), and live local jobs of this store are cancelled."""
    made: list[Host] = []

    def make() -> Host:
        host = Host(
            paths=paths,
            plugins=plugins,
            profiles=ProfileStore(paths.profiles_file),
            store=Store(url),
            source="web",
            read_env=False,
        )
        made.append(host)
        return host

    try:
        yield make
    finally:
        for host in made:
            await host.close()
        await asyncio.to_thread(_cancel_live_local_jobs, url)


@pytest.fixture
async def make_host(
    plugins: PluginManager, svc_paths: SvcPaths, svc_database_url: str
) -> AsyncIterator[Callable[[], Host]]:
    """Hosts on one store, ``svc_database_url`` (a second one is the restarted server; modules that test the
    store's users override it with ``database_url`` to run on PostgreSQL too), closed afterwards (``host_factory``)."""
    async with host_factory(plugins, svc_paths, svc_database_url) as make:
        yield make


def _cancel_live_local_jobs(url: str) -> None:
    store = Store(url)
    local = [record.job_id for record in store.call(job_repo.live_jobs) if record.transport == "local"]
    if local:
        subprocess.run(["scancel", *local], check=False, timeout=60)
    store.close()


@pytest.fixture
async def dev_host(
    host_plugins: PluginManager, svc_paths: SvcPaths, svc_database_url: str, dev_profile: SSHProfile
) -> AsyncIterator[Host]:
    """A host with the SSH transport and the dev cluster's profile ``dev``: the cluster ``SVC_TEST_SLURM`` picks
    (tests/conftest.py), reached only over SSH."""
    import svc_plugin_ssh.hooks

    async with host_factory(host_plugins, svc_paths, svc_database_url) as make:
        host = make()
        host.plugins.register(svc_plugin_ssh.hooks, "ssh", distribution="svc", version="0")
        host.profiles.create("dev", dev_profile)
        await host.reload_profiles()
        yield host
