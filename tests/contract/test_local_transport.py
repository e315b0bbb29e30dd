"""The ``local`` transport against the real dev cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from svc_host.testing.contract import TransportContract
from svc_host.transports.base import Transport
from svc_plugin_local.transport import LocalTransport

pytestmark = pytest.mark.cluster


class TestLocalTransport(TransportContract):
    gpu_partition = "gpu"

    @pytest.fixture
    def transport(self, slurm_cluster: None) -> Transport:
        return LocalTransport()

    @pytest.fixture
    def job_dir(self, tmp_path: Path) -> str:
        return str(tmp_path)
