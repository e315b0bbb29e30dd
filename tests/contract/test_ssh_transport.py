"""The ``ssh`` transport over the dev cluster's loopback sshd, as its non-root user."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from svc_host.domain.profiles import SSHProfile
from svc_host.testing.contract import TransportContract
from svc_host.transports.base import Transport
from svc_plugin_ssh.transport import SSHTransport

pytestmark = pytest.mark.cluster


class TestSSHTransport(TransportContract):
    gpu_partition = "gpu"

    @pytest.fixture
    async def transport(self, dev_profile: SSHProfile) -> AsyncIterator[Transport]:
        transport = SSHTransport("dev", dev_profile)
        yield transport
        await transport.close()

    @pytest.fixture
    async def job_dir(self, transport: SSHTransport) -> AsyncIterator[str]:
        path = f"svc-contract-{uuid.uuid4().hex[:8]}"
        yield path
        await transport.run(["rm", "-rf", "--", path])
