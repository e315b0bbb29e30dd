"""The site transport passes svc's TransportContract on the dev cluster, charges the site account, and reads
logs byte for byte."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from svc_host.domain.submission import JobDefinition
from svc_host.rendering.sbatch import render_sbatch
from svc_host.testing.contract import TransportContract

from svc_example_site.settings import SiteSettings
from svc_example_site.transport import SiteTransport

pytestmark = pytest.mark.cluster


class TestSiteTransport(TransportContract):
    gpu_partition = "gpu"

    @pytest.fixture
    def transport(self, site: SiteSettings) -> SiteTransport:
        return SiteTransport(site)

    @pytest.fixture
    async def job_dir(self, transport: SiteTransport) -> AsyncIterator[str]:
        path = f"svc-site-contract-{uuid.uuid4().hex[:8]}"
        yield path
        await transport.run(["rm", "-rf", "--", path])


async def test_every_job_is_charged_to_the_site_account_and_qos(site: SiteSettings) -> None:
    transport = SiteTransport(site)
    directory = f"svc-site-{uuid.uuid4().hex[:8]}"
    job_id = await transport.submit(render_sbatch(JobDefinition(name="charged", command="sleep 30", log_dir=directory)))
    try:
        shown = await transport.check(["squeue", "-h", "-j", job_id, "-o", "%a %q"])
        assert shown.split() == [site.account, site.qos]
    finally:
        await transport.cancel([job_id])
        await transport.run(["rm", "-rf", "--", directory])


async def test_reads_are_binary_safe(site: SiteSettings) -> None:
    transport = SiteTransport(site)
    path = f"svc-site-bytes-{uuid.uuid4().hex[:8]}"
    await transport.check(["sh", "-c", r'printf "\377\000\n\200abc" > "$1"', "sh", path])
    try:
        assert await transport.read_bytes(path, 0, 100) == (b"\xff\x00\n\x80abc", 7)
        assert await transport.read_bytes(path, 2, 3) == (b"\n\x80a", 7)
        assert await transport.read_bytes(path + ".missing", 0, 10) is None
    finally:
        await transport.run(["rm", "-f", "--", path])


async def test_a_login_node_that_refuses_is_a_clear_error(site: SiteSettings) -> None:
    from svc_host.errors import TransportError

    wrong = SiteTransport(SiteSettings(login="nobody@127.0.0.1", account="x", port=site.port, key=site.key))
    with pytest.raises(TransportError, match=r"ssh to nobody@127.0.0.1 failed"):
        await wrong.queue()
