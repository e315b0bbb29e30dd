"""The site transport, as svc builds it from ``plugins.site``, passes svc's TransportContract on the dev cluster,
charges the site account, reads logs byte for byte, and follows a settings change at its next command."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from svc_host.plugin import JobDefinition, PluginHost, TransportError, render_sbatch
from svc_host.testing.contract import TransportContract

from svc_example_site.settings import SiteSettings
from svc_example_site.transport import SiteTransport

pytestmark = pytest.mark.cluster


def site_transport(host: PluginHost) -> SiteTransport:
    transport = host.transport("site")
    assert isinstance(transport, SiteTransport)
    return transport


class TestSiteTransport(TransportContract):
    gpu_partition = "gpu"

    @pytest.fixture
    def transport(self, site_host: PluginHost) -> SiteTransport:
        return site_transport(site_host)

    @pytest.fixture
    async def job_dir(self, transport: SiteTransport) -> AsyncIterator[str]:
        path = f"svc-site-contract-{uuid.uuid4().hex[:8]}"
        yield path
        await transport.run(["rm", "-rf", "--", path])


async def test_every_job_is_charged_to_the_site_account_and_qos(site: SiteSettings, site_host: PluginHost) -> None:
    transport = site_transport(site_host)
    directory = f"svc-site-{uuid.uuid4().hex[:8]}"
    job_id = await transport.submit(render_sbatch(JobDefinition(name="charged", command="sleep 30", log_dir=directory)))
    try:
        shown = await transport.check(["squeue", "-h", "-j", job_id, "-o", "%a %q"])
        assert shown.split() == [site.account, site.qos]
    finally:
        await transport.cancel([job_id])
        await transport.run(["rm", "-rf", "--", directory])


async def test_reads_are_binary_safe(site_host: PluginHost) -> None:
    transport = site_transport(site_host)
    path = f"svc-site-bytes-{uuid.uuid4().hex[:8]}"
    await transport.check(["sh", "-c", r'printf "\377\000\n\200abc" > "$1"', "sh", path])
    try:
        assert await transport.read_bytes(path, 0, 100) == (b"\xff\x00\n\x80abc", 7)
        assert await transport.read_bytes(path, 2, 3) == (b"\n\x80a", 7)
        assert await transport.read_bytes(path + ".missing", 0, 10) is None
    finally:
        await transport.run(["rm", "-f", "--", path])


async def test_a_settings_change_reaches_the_next_command(
    site: SiteSettings, site_host: PluginHost, write_site: Callable[[dict[str, Any]], None]
) -> None:
    transport = site_transport(site_host)
    assert await transport.user() == site.login_node.partition("@")[0]
    write_site({**site.model_dump(exclude_defaults=True), "login": "nobody@127.0.0.1"})
    with pytest.raises(TransportError, match=r"^ssh to nobody@127.0.0.1 failed"):
        await transport.queue()  # the same transport, no restart: the login node it asks is the new one
