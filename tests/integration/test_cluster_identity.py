"""``GET /api/resources/cluster`` on the real dev clusters: which Slurm cluster a profile reaches, so that two ways
to one cluster (this machine's Slurm and the SSH profile to it) are told to be one."""

from __future__ import annotations

import pytest

from svc_host.api.app import create_app
from svc_host.host import Host
from svc_host.testing.http import asgi_client, security_for_tests
from tests.conftest import SLURM_UNDER_TEST

CLUSTER_NAME = {"22.05": "svcdev", "24.11": "lab24"}


async def test_a_profile_names_the_slurm_cluster_it_reaches(dev_host: Host) -> None:
    async with asgi_client(create_app(dev_host, security=security_for_tests())) as client:
        answer = (await client.get("/api/resources/cluster", params={"transport": "dev"})).json()
        unknown = await client.get("/api/resources/cluster", params={"transport": "nowhere"})
    assert answer["transport"] == "dev"
    assert answer["name"] == CLUSTER_NAME[SLURM_UNDER_TEST]
    assert answer["controllers"]
    assert answer["key"] == f"{answer['name']}@{','.join(answer['controllers'])}:{answer['port']}"
    assert unknown.status_code == 404
    assert "nowhere" in unknown.json()["detail"]


@pytest.mark.local_slurm
async def test_this_machines_slurm_and_the_ssh_profile_to_it_are_one_cluster(dev_host: Host) -> None:
    async with asgi_client(create_app(dev_host, security=security_for_tests())) as client:
        over_ssh = (await client.get("/api/resources/cluster", params={"transport": "dev"})).json()
        local = (await client.get("/api/resources/cluster", params={"transport": "local"})).json()
    assert over_ssh["key"] == local["key"]
    assert (over_ssh["transport"], local["transport"]) == ("dev", "local")
