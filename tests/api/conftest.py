"""REST tests talk to a Host whose ``local`` transport reaches the dev cluster."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import svc_plugin_local.hooks


@pytest.fixture
def local_transport(svc_register_plugin: Callable[..., None], slurm_cluster: None) -> None:
    """Offer the ``local`` transport to the test host (the fixtures' manager loads no entry points)."""
    svc_register_plugin(svc_plugin_local.hooks, "local", distribution="svc", version="0")
